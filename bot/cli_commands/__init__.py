"""The `council` commands by concern; `bot.commands` dispatches to them."""
