"""A question to the council, from `/council` or from a mention (or a reply to the bot), made a
durable council shown in its thread; a refused mention is answered privately (a direct message,
else a reply that deletes itself)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import discord

from bot.discord import render
from bot.discord.history import reply_context, thread_history
from bot.discord.interactions import NO_MENTIONS, incoming_file, origin_of, strip_mention
from bot.following import deliver_durable
from bot.surface import paced_write
from bot.throttle import Priority
from core.errors import CouncilError
from core.models import ConversationTurn, CouncilMode, Destination, Origin, Platform, new_council_id
from core.models.files import AttachmentBatch, IncomingFile
from core.models.keywords import Keywords, split_keywords
from core.models.voice import files_notice

if TYPE_CHECKING:
    from bot.discord.host import CouncilHost
    from core.service import CouncilRun

log = logging.getLogger(__name__)
REFUSAL_VISIBLE_S = 60.0  # a refusal that could not go by DM is deleted from the channel after this


def chosen(
    question: str,
    *,
    search: bool | None = None,
    mode: CouncilMode | None = None,
    members: list[str] | None = None,
    chairman: str | None = None,
) -> tuple[Keywords, bool | None]:
    """The question's leading keywords (mode, `search:`, `members: ...; chairman: ...`); a keyword
    chooses only what the asker did not choose already with the command's options. Also the search:
    True, False, or None (the channel's)."""
    words = split_keywords(question)
    search = True if search is None and words.search else search
    picked = Keywords(
        words.question, mode or words.mode, bool(search), members or words.members, chairman or words.chairman
    )
    return picked, search


async def council_from_interaction(
    bot: CouncilHost,
    interaction: discord.Interaction,
    question: str,
    *,
    files: list[IncomingFile] | None = None,
    search: bool | None = None,
    mode: CouncilMode | None = None,
    members: list[str] | None = None,
    chairman: str | None = None,
) -> None:
    channel = interaction.channel
    words, search = chosen(question, search=search, mode=mode, members=members, chairman=chairman)
    question = words.question
    origin = origin_of(interaction.user, channel, interaction.guild_id)
    # The deferred response becomes the status message (and the thread's starter).
    status = await interaction.edit_original_response(
        content=render.status_content(question, "…", interaction.user.mention, None)
    )
    history: list[ConversationTurn] = []
    if isinstance(channel, discord.Thread):
        history = await thread_history(bot, channel, before=status)
    else:
        origin.thread_id = str(status.id)  # a thread started from a message has the message's id
    batch = await bot.service.reading.read_files(files or [], Platform.DISCORD)
    if batch.user_notices():
        await interaction.followup.send(
            files_notice(batch.user_notices()), ephemeral=True, allowed_mentions=NO_MENTIONS
        )
    try:
        # The status message is edited with the bot token (the interaction's expires in 15 minutes).
        await submit(bot, words, origin, history, (channel, status), batch, search=search, status=status)
    except CouncilError as exc:
        try:
            await interaction.delete_original_response()
        except discord.HTTPException:
            pass
        await interaction.followup.send(exc.user_message, ephemeral=True, allowed_mentions=NO_MENTIONS)


async def on_message(bot: CouncilHost, message: discord.Message) -> None:
    """A message that mentions the bot or replies to one of its messages asks a council (once,
    whichever process sees the event first)."""
    if message.author.bot or message.guild is None or bot.user is None:
        return
    me = bot.user
    mentioned = any(u.id == me.id for u in message.mentions)
    ref = message.reference.resolved if message.reference else None
    replied_to = ref if isinstance(ref, discord.Message) and ref.author.id == me.id else None
    if not (mentioned or replied_to is not None):
        return
    if not await bot.service.events.claim("discord", str(message.id)):
        return
    await council_from_message(bot, message, message.guild.id, replied_to)


async def council_from_message(
    bot: CouncilHost, message: discord.Message, guild_id: int, replied_to: discord.Message | None
) -> None:
    """`message`'s council; `replied_to`: the bot's message it replies to outside a thread, whose
    council is the context."""
    channel = await _full_channel(bot, message)
    question = strip_mention(message.content, bot.user)
    history: list[ConversationTurn] = []
    if isinstance(channel, discord.Thread):
        history = await thread_history(bot, channel, before=message)
    elif replied_to is not None:
        history = await reply_context(bot, replied_to)
    origin = origin_of(message.author, channel, guild_id)
    if origin.thread_id is None:
        origin.thread_id = str(message.id)
    words, search = chosen(question)
    batch = await bot.service.reading.read_files([incoming_file(a) for a in message.attachments], Platform.DISCORD)
    if batch.user_notices():
        await refuse_privately(bot, message, files_notice(batch.user_notices()))
    try:
        await submit(bot, words, origin, history, (channel, message), batch, search=search)
    except CouncilError as exc:
        await refuse_privately(bot, message, exc.user_message)


async def _full_channel(bot: CouncilHost, message: discord.Message) -> Any:
    """The message's channel as a thread or text channel (a partial one is fetched), when Discord lets us."""
    channel: Any = message.channel
    if not isinstance(channel, (discord.Thread, discord.TextChannel)):
        try:
            channel = await bot.fetch_channel(channel.id)
        except discord.HTTPException:
            pass
    return channel


async def open_thread(bot: CouncilHost, channel: Any, starter: discord.Message, question: str) -> Any:
    """The council's thread: `channel` when it is one, else started from `starter` (the
    question, or a /council's status message); without the permission to, the channel."""
    if isinstance(channel, discord.Thread):
        return channel
    try:
        return await paced_write(
            bot.surface,
            str(channel.id),
            Priority.START,
            lambda: starter.create_thread(name=render.thread_name(question), auto_archive_duration=1440),
        )
    except discord.HTTPException as exc:
        log.warning("could not create a thread: %s", exc)
        return channel


async def submit(
    bot: CouncilHost,
    words: Keywords,
    origin: Origin,
    history: list[ConversationTurn],
    where: tuple[Any, discord.Message],
    batch: AttachmentBatch,
    *,
    search: bool | None,
    status: discord.Message | None = None,
) -> None:
    """The council as a durable job (core/durable: this process runs it on SQLite, any worker
    on PostgreSQL), shown in the thread `open_thread(*where)` opens once it is admitted;
    `status`: its status message, when it was posted before the council started (a
    /council's deferred response)."""

    council_id = new_council_id()
    question = words.question

    async def destination() -> Destination:
        thread = await open_thread(bot, *where, question)
        shown = Destination(platform=Platform.DISCORD, channel_id=str(thread.id))
        if status is None:
            return shown
        # The status message quotes the question. It shows in its channel (a reply to it there
        # asks about this council) and starts the thread (whose history begins with it).
        for channel_id in {str(status.channel.id), shown.channel_id}:
            await bot.service.messages.record(Platform.DISCORD, channel_id, str(status.id), council_id, "question")
        return shown.model_copy(update={"status_id": str(status.id), "status_channel_id": str(status.channel.id)})

    await bot.service.submit_council(
        question,
        origin,
        history,
        destination=destination,
        council_id=council_id,
        attachments=batch.attachments,
        search=search,
        mode=words.mode,
        members=words.members,
        chairman=words.chairman,
    )


async def deliver(bot: CouncilHost, run: CouncilRun, destination: Destination, resumed: bool) -> None:
    """A durable Discord council, wherever it was accepted, in its thread (the service's
    deliverer for Discord; bot/following.py)."""
    await deliver_durable(bot.service, bot.surface, run, destination, resumed)


async def refuse_privately(bot: CouncilHost, message: discord.Message, text: str) -> None:
    """A refusal only the asker sees: a direct message; where DMs are closed, a reply that
    deletes itself (a mention has no ephemeral reply)."""
    try:
        await message.author.send(text, allowed_mentions=NO_MENTIONS)
        return
    except discord.HTTPException as exc:
        log.info("could not send a refusal by DM (%s); replying briefly instead", exc)
    try:
        await paced_write(
            bot.surface,
            str(message.channel.id),
            Priority.ANSWER,
            lambda: message.reply(
                text, mention_author=False, allowed_mentions=NO_MENTIONS, delete_after=REFUSAL_VISIBLE_S
            ),
        )
    except discord.HTTPException as exc:
        log.warning("could not tell %s why the council was refused: %s", message.author.id, exc)
