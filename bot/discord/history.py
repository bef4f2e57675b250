"""A follow-up's context from Discord: the thread's earlier messages, or the council a reply answers.
Which of our messages is a council's question or answer is the message map's (bot/history.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import discord

from bot.discord import render
from bot.discord.interactions import strip_mention
from bot.history import ThreadCouncils, ThreadMessage, conversation, turn_of
from bot.render_text import ZWSP
from core.models import ConversationTurn, Platform

if TYPE_CHECKING:
    from bot.discord.host import CouncilHost

HISTORY_LIMIT = 50  # thread messages read for a follow-up


def thread_message(bot: CouncilHost, message: discord.Message) -> ThreadMessage | None:
    """A Discord message as history reads it (None: never context: other bots, system messages)."""
    if bot.user is not None and message.author.id == bot.user.id:
        return ThreadMessage(str(message.id), ours=True, author=None, text=_shown_text(message))
    if message.author.bot or message.type not in (discord.MessageType.default, discord.MessageType.reply):
        return None
    text = strip_mention(message.content, bot.user)
    return ThreadMessage(str(message.id), ours=False, author=message.author.display_name, text=text)


def _shown_text(message: discord.Message) -> str:
    """What one of our messages shows: an answer's embeds, or the question a status message quotes."""
    if message.embeds:
        shown = "\n\n".join(e.description or "" for e in message.embeds)
    else:
        shown = render.question_from_status(message.content) or ""
    return shown.replace(ZWSP, "").strip()


async def _conversation(bot: CouncilHost, channel_id: int, messages: list[discord.Message]) -> list[ConversationTurn]:
    read = [m for m in (thread_message(bot, message) for message in messages) if m is not None]
    return await conversation(bot.service, Platform.DISCORD, str(channel_id), read)


async def reply_context(bot: CouncilHost, message: discord.Message) -> list[ConversationTurn]:
    """A reply to one of our messages outside a thread: that council's question and answer (while
    it is not stored, the message itself, as thread history reads it)."""
    refs = await bot.service.messages.lookup(Platform.DISCORD, str(message.channel.id), [str(message.id)])
    ref = refs.get(str(message.id))
    councils = ThreadCouncils(bot.service)
    stored = await councils.stored(ref.council_id) if ref is not None else None
    if stored is not None:
        turns = [ConversationTurn(role="user", content=stored.request.question)]
        if stored.synthesis is not None:
            turns.append(ConversationTurn(role="assistant", content=stored.synthesis.text, author="council"))
        return turns
    read = thread_message(bot, message)
    turn = await turn_of(councils, read, ref, set()) if read is not None else None
    return [turn] if turn else []


async def thread_history(
    bot: CouncilHost, thread: discord.Thread, before: discord.abc.Snowflake
) -> list[ConversationTurn]:
    """The thread's earlier messages, its starter first (a /council's status message, which the
    map keeps under the thread, the channel it opened)."""
    messages = [m async for m in thread.history(limit=HISTORY_LIMIT, before=before)]
    messages.reverse()
    starter = thread.starter_message
    if starter is None and thread.parent_id and not any(m.id == thread.id for m in messages):
        try:  # a thread started from a message has that message's id; it lives in the parent
            starter = await thread.parent.fetch_message(thread.id) if thread.parent else None  # type: ignore[union-attr]
        except discord.HTTPException:
            starter = None
    return await _conversation(bot, thread.id, ([starter] if starter else []) + messages)
