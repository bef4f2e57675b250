"""Moved to bot/history.py (thread history from the message map); the adapters import
`append_turn` from here until they read their threads through `bot.history.conversation`."""

from bot.history import append_turn

__all__ = ["append_turn"]
