"""A follow-up's context from Discord: the thread's earlier messages, or the council a reply answers."""

from __future__ import annotations

from typing import TYPE_CHECKING

import discord

from bot.conversation import append_turn
from bot.councils import own_turn, stored_result
from bot.discord import render
from bot.discord.interactions import strip_mention
from core.models import ConversationTurn

if TYPE_CHECKING:
    from bot.discord.client import CouncilBot

HISTORY_LIMIT = 50  # thread messages read for a follow-up


async def turn_of(bot: CouncilBot, message: discord.Message, seen: set[str] | None = None) -> ConversationTurn | None:
    """A thread message as conversation context: our answers as assistant, people as user.

    For our own messages the stored council (full question and answer) is preferred over
    the rendered, possibly cut, text; `seen` skips the further parts of a split answer."""
    seen = set() if seen is None else seen
    if message.author.id == (bot.user.id if bot.user else None):
        own = render.own_message(message)
        return await own_turn(bot.service, own, seen) if own is not None else None
    if message.author.bot or message.type not in (discord.MessageType.default, discord.MessageType.reply):
        return None
    text = strip_mention(message.content, bot.user)
    return ConversationTurn(role="user", content=text, author=message.author.display_name) if text else None


async def reply_context(bot: CouncilBot, message: discord.Message) -> list[ConversationTurn]:
    """A reply to one of our messages outside a thread: that council's question and answer."""
    council_id = render.council_id_of_embeds(message.embeds) or render.council_id_of_status(message.content)
    stored = await stored_result(bot.service, council_id) if council_id else None
    if stored is not None:
        turns = [ConversationTurn(role="user", content=stored.request.question)]
        if stored.synthesis is not None:
            turns.append(ConversationTurn(role="assistant", content=stored.synthesis.text, author="council"))
        return turns
    turn = await turn_of(bot, message)
    return [turn] if turn else []


async def thread_history(
    bot: CouncilBot, thread: discord.Thread, before: discord.abc.Snowflake
) -> list[ConversationTurn]:
    messages = [m async for m in thread.history(limit=HISTORY_LIMIT, before=before)]
    messages.reverse()
    starter = thread.starter_message
    if starter is None and thread.parent_id and not any(m.id == thread.id for m in messages):
        try:  # a thread started from a message has that message's id; it lives in the parent
            starter = await thread.parent.fetch_message(thread.id) if thread.parent else None  # type: ignore[union-attr]
        except discord.HTTPException:
            starter = None
    turns: list[ConversationTurn] = []
    seen: set[str] = set()
    for message in ([starter] if starter else []) + messages:
        append_turn(turns, await turn_of(bot, message, seen))
    return turns
