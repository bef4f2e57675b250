"""Discord adapter: discord.py wiring for the council.

`/council question:` and `@bot question` start a council in a thread; one status message shows
progress (edited at most every 1.5 s) with Stop / Synthesize-now buttons; the answer arrives as
embeds with buttons that reveal each stage. Every decision is the service's; this module only
translates Discord events into service calls and renders the events back.

Every write to a channel waits for that channel's turn (`bot.throttle.ChannelPacer`: Discord
allows 5 messages per 5 s per channel), answers before progress edits; a 429 that discord.py
gives up on stops the channel for its Retry-After and the answer is sent again until Discord
takes it. A refused mention is answered privately (a direct message, else a reply that
deletes itself).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Literal

import discord
from discord import app_commands

from bot.conversation import append_turn
from bot.councils import HISTORY_SCOPES, control_reply, own_turn, stored_result
from bot.discord import feedback, render
from bot.discord.admin import build_admin_group
from bot.discord.api_base import ApiBaseClient
from bot.discord.surface import NO_MENTIONS, DiscordSurface
from bot.following import Destination, deliver, deliver_durable, running_worker
from bot.render_text import history_lines, leaderboard_table
from bot.throttle import DISCORD_PACE, ChannelPacer, Pace, Priority
from core.attachments import AttachmentBatch, IncomingFile
from core.errors import CouncilError
from core.material import files_notice
from core.models import MODES, Actor, ConversationTurn, CouncilMode, CouncilResult, Origin, Platform
from core.modes import parse_mode, split_mode_keyword
from core.research import split_search_keyword
from core.settings import Settings

if TYPE_CHECKING:
    from core.service import CouncilRun, CouncilService

log = logging.getLogger(__name__)
REFUSAL_VISIBLE_S = 60.0  # a refusal that could not go by DM is deleted from the channel after this
HISTORY_LIMIT = 50  # thread messages read for a follow-up
INVITE_PERMISSIONS = discord.Permissions(
    view_channel=True,
    send_messages=True,
    create_public_threads=True,
    send_messages_in_threads=True,
    embed_links=True,
    attach_files=True,
    read_message_history=True,
)

HELP = """**LLM Council** — several models answer, review each other anonymously, a chairman synthesizes.

`/council question:` — convene a council (in a new thread, or in the current thread).
`@{name} question` — the same from a message; inside a council thread it continues the conversation.
Attach files (PDF, Word, text, CSV, code, images) to the message or the `attachment:` option: the council reads them.
Start a question with `search:` (or set the `search:` option) to search the web first, and with
`quick:` (or set the `mode:` option) for a quick council: two members answer, the chairman compares them.
Buttons under the answer show each stage: **Answers**, **Reviews** (with the extracted ballot), **Ranking**.
While it runs: **Stop**, or **Synthesize now** with the answers that have arrived.
`/council-history` · `/council-leaderboard` · `/council-export id:`
`/council-admin show|members|chairman|limits|search|mode|reset|audit` — per-channel settings (Manage Server)."""


# --------------------------------------------------------------------------- helpers


def incoming_file(attachment: discord.Attachment) -> IncomingFile:
    """A Discord attachment for the council to read; fetched from Discord's CDN only (signed URLs, no token)."""
    return IncomingFile(
        name=attachment.filename, declared_type=attachment.content_type, size=attachment.size, url=attachment.url
    )


def origin_of(user: discord.abc.User, channel: Any, guild_id: int | None) -> Origin:
    thread = channel if isinstance(channel, discord.Thread) else None
    channel_id = thread.parent_id if thread else getattr(channel, "id", None)
    return Origin(
        platform=Platform.DISCORD,
        workspace_id=str(guild_id) if guild_id else None,
        channel_id=str(channel_id) if channel_id else None,
        thread_id=str(thread.id) if thread else None,
        user_id=str(user.id),
        user_name=getattr(user, "display_name", None) or user.name,
    )


def actor_of(interaction: discord.Interaction) -> Actor:
    """Manage Server (from the interaction's resolved permissions) makes a platform admin."""
    user = interaction.user
    admin = interaction.permissions.manage_guild
    if isinstance(user, discord.Member):
        admin = admin or user.guild_permissions.manage_guild
    return Actor(user_id=str(user.id), is_platform_admin=bool(admin))


async def reply(interaction: discord.Interaction, content: str | None = None, **kwargs: Any) -> None:
    """An ephemeral answer whether or not the interaction was already responded to."""
    kwargs.setdefault("allowed_mentions", NO_MENTIONS)
    if content is not None:
        kwargs["content"] = content
    if interaction.response.is_done():
        await interaction.followup.send(ephemeral=True, **kwargs)
    else:
        await interaction.response.send_message(ephemeral=True, **kwargs)


# --------------------------------------------------------------------------- the client


class CouncilBot(ApiBaseClient):
    def __init__(self, service: CouncilService, settings: Settings, *, pace: Pace = DISCORD_PACE, **options: Any):
        intents = discord.Intents.default()
        intents.message_content = True  # privileged: enable it in the Developer Portal
        super().__init__(settings.discord_api_url, intents=intents, allowed_mentions=NO_MENTIONS, **options)
        self.service = service
        self.settings = settings
        # What a council shows in its thread (bot/following.py); one pacer per bot: every
        # council in a channel shares its pace.
        self.surface = DiscordSurface(self, pacer=ChannelPacer(pace))
        # Durable councils are shown and answered by whichever process runs them (core/durable).
        service.register_deliverer(Platform.DISCORD, self.deliver)
        self.tree = app_commands.CommandTree(self)
        self.tree.error(self.on_app_command_error)
        self._register_commands()
        self.tree.add_command(build_admin_group(self))

    # ----------------------------------------------------------------- lifecycle

    async def setup_hook(self) -> None:
        self.add_dynamic_items(render.CouncilButton, *feedback.DYNAMIC_ITEMS)
        if self.settings.discord_guild_id:
            guild = discord.Object(id=self.settings.discord_guild_id)
            self.tree.copy_global_to(guild=guild)
            synced = await self.tree.sync(guild=guild)
            log.info("synced %d commands to guild %s", len(synced), guild.id)
        else:
            synced = await self.tree.sync()
            log.info("synced %d global commands (they can take a while to appear)", len(synced))

    async def on_ready(self) -> None:
        log.info(
            "Discord: logged in as %s; invite URL: %s",
            self.user,
            discord.utils.oauth_url(
                self.application_id or 0, permissions=INVITE_PERMISSIONS, scopes=("bot", "applications.commands")
            ),
        )

    async def on_app_command_error(self, interaction: discord.Interaction, error: app_commands.AppCommandError) -> None:
        cause = error.original if isinstance(error, app_commands.CommandInvokeError) else error
        if isinstance(cause, CouncilError):
            message = cause.user_message
        elif isinstance(cause, app_commands.CheckFailure):
            message = "You can't use this command here."
        else:
            log.error("command %s failed", interaction.command and interaction.command.name, exc_info=cause)
            message = f"Something went wrong: {type(cause).__name__}."
        try:
            await reply(interaction, message)
        except discord.HTTPException:
            log.warning("could not report an error to the user")

    # ----------------------------------------------------------------- commands

    def _register_commands(self) -> None:
        tree = self.tree

        @tree.command(name="council", description="Ask the LLM council a question")
        @app_commands.describe(
            question="What should the council answer?",
            attachment="A file for the council to read (PDF, Word, text, CSV, code, or an image)",
            search="Search the web first (default: this channel's setting)",
            mode="standard: answers, peer reviews, synthesis; quick: two answers compared (default: the channel's)",
        )
        @app_commands.choices(mode=[app_commands.Choice(name=m, value=m) for m in MODES])
        @app_commands.guild_only()
        async def council(
            interaction: discord.Interaction,
            question: str,
            attachment: discord.Attachment | None = None,
            search: bool | None = None,
            mode: app_commands.Choice[str] | None = None,
        ) -> None:
            await interaction.response.defer(thinking=True)
            files = [incoming_file(attachment)] if attachment is not None else []
            chosen = parse_mode(mode.value) if mode is not None else None
            await self.council_from_interaction(interaction, question, files=files, search=search, mode=chosen)

        @tree.command(name="council-help", description="How to use the LLM council")
        async def council_help(interaction: discord.Interaction) -> None:
            await reply(interaction, HELP.format(name=self.user.name if self.user else "bot"))

        @tree.command(name="council-history", description="Recent councils")
        @app_commands.describe(scope="Whose councils", limit="How many (max 25)")
        @app_commands.guild_only()
        async def council_history(
            interaction: discord.Interaction,
            scope: Literal["channel", "server", "mine"] = "channel",
            limit: app_commands.Range[int, 1, 25] = 10,
        ) -> None:
            await interaction.response.defer(ephemeral=True, thinking=True)
            origin = origin_of(interaction.user, interaction.channel, interaction.guild_id)
            summaries = await self.service.history(origin, HISTORY_SCOPES[scope], limit)
            text = render.safe("\n".join(history_lines(summaries)))
            embeds = render.pack(render.text_embeds(text, title=f"Councils ({scope})"))[0]
            await interaction.followup.send(embeds=embeds, ephemeral=True, allowed_mentions=NO_MENTIONS)

        @tree.command(name="council-leaderboard", description="Model ratings from the councils' peer reviews")
        @app_commands.describe(scope="Which councils to count")
        @app_commands.guild_only()
        async def council_leaderboard(
            interaction: discord.Interaction, scope: Literal["server", "channel", "all"] = "server"
        ) -> None:
            await interaction.response.defer(thinking=True)
            origin = origin_of(interaction.user, interaction.channel, interaction.guild_id)
            board = await self.service.leaderboard(origin, HISTORY_SCOPES[scope])
            embed = discord.Embed(
                title="Council leaderboard",
                color=render.COLOR_INFO,
                description=render.clip(leaderboard_table(board), render.DESCRIPTION_MAX),
            )
            await interaction.followup.send(embed=embed, allowed_mentions=NO_MENTIONS)

        @tree.command(name="council-export", description="Download a council as Markdown or JSON")
        @app_commands.describe(council_id="The council id (shown under each answer)", format="File format")
        @app_commands.rename(council_id="id")
        async def council_export(
            interaction: discord.Interaction, council_id: str, format: Literal["markdown", "json"] = "markdown"
        ) -> None:
            await interaction.response.defer(ephemeral=True, thinking=True)
            viewer = origin_of(interaction.user, interaction.channel, interaction.guild_id)
            text = await self.service.as_viewer(
                lambda admin: self.service.export(council_id, format, viewer=viewer, admin=admin), actor_of(interaction)
            )
            ext = "md" if format == "markdown" else "json"
            file = render.markdown_file(text, f"council-{council_id.strip()}.{ext}")
            await interaction.followup.send(f"Council `{council_id.strip()}`", file=file, ephemeral=True)

    # ----------------------------------------------------------------- councils

    async def council_from_interaction(
        self,
        interaction: discord.Interaction,
        question: str,
        *,
        files: list[IncomingFile] | None = None,
        search: bool | None = None,
        mode: CouncilMode | None = None,
    ) -> None:
        channel = interaction.channel
        question, keyword_mode = split_mode_keyword(question)
        mode = mode or keyword_mode
        question, searched = split_search_keyword(question)
        if search is None and searched:
            search = True
        origin = origin_of(interaction.user, channel, interaction.guild_id)
        # The deferred response becomes the status message (and the thread's starter).
        status = await interaction.edit_original_response(
            content=render.status_content(question, "…", interaction.user.mention, None)
        )
        history: list[ConversationTurn] = []
        if isinstance(channel, discord.Thread):
            history = await self.thread_history(channel, before=status)
        else:
            origin.thread_id = str(status.id)  # a thread started from a message has the message's id
        batch = await self.service.read_files(files or [], Platform.DISCORD)
        if batch.user_notices():
            await interaction.followup.send(
                files_notice(batch.user_notices()), ephemeral=True, allowed_mentions=NO_MENTIONS
            )
        try:
            # The status message is edited with the bot token (the interaction's expires in 15 minutes).
            await self.submit(
                question, origin, history, (channel, status), batch, search=search, mode=mode, status=status
            )
        except CouncilError as exc:
            try:
                await interaction.delete_original_response()
            except discord.HTTPException:
                pass
            await interaction.followup.send(exc.user_message, ephemeral=True, allowed_mentions=NO_MENTIONS)

    async def on_message(self, message: discord.Message) -> None:
        if message.author.bot or message.guild is None or self.user is None:
            return
        me = self.user
        mentioned = any(u.id == me.id for u in message.mentions)
        ref = message.reference.resolved if message.reference else None
        replying = isinstance(ref, discord.Message) and ref.author.id == me.id
        if not (mentioned or replying):
            return
        if not await self.service.claim_event("discord", str(message.id)):
            return
        channel: Any = message.channel
        if not isinstance(channel, (discord.Thread, discord.TextChannel)):
            try:
                channel = await self.fetch_channel(channel.id)
            except discord.HTTPException:
                pass
        question = self.strip_mention(message.content)
        history: list[ConversationTurn] = []
        if isinstance(channel, discord.Thread):
            history = await self.thread_history(channel, before=message)
        elif replying and isinstance(ref, discord.Message):
            history = await self.reply_context(ref)
        origin = origin_of(message.author, channel, message.guild.id)
        if origin.thread_id is None:
            origin.thread_id = str(message.id)
        question, mode = split_mode_keyword(question)
        question, searched = split_search_keyword(question)
        batch = await self.service.read_files([incoming_file(a) for a in message.attachments], Platform.DISCORD)
        if batch.user_notices():
            await self.refuse_privately(message, files_notice(batch.user_notices()))
        try:
            searching = True if searched else None
            await self.submit(question, origin, history, (channel, message), batch, search=searching, mode=mode)
        except CouncilError as exc:
            await self.refuse_privately(message, exc.user_message)

    async def open_thread(self, channel: Any, starter: discord.Message, question: str) -> Any:
        """The council's thread: `channel` when it is one, else started from `starter` (the
        question, or a /council's status message); without the permission to, the channel."""
        if isinstance(channel, discord.Thread):
            return channel
        try:
            return await deliver(
                self.surface,
                str(channel.id),
                Priority.START,
                lambda: starter.create_thread(name=render.thread_name(question), auto_archive_duration=1440),
            )
        except discord.HTTPException as exc:
            log.warning("could not create a thread: %s", exc)
            return channel

    async def submit(
        self,
        question: str,
        origin: Origin,
        history: list[ConversationTurn],
        where: tuple[Any, discord.Message],
        batch: AttachmentBatch,
        *,
        search: bool | None,
        mode: CouncilMode | None,
        status: discord.Message | None = None,
    ) -> None:
        """The council as a durable job (core/durable: this process runs it on SQLite, any worker
        on PostgreSQL), shown in the thread `open_thread(*where)` opens once it is admitted;
        `status`: its status message, when it was posted before the council started (a
        /council's deferred response)."""

        async def destination() -> Destination:
            thread = await self.open_thread(*where, question)
            shown = Destination(platform=Platform.DISCORD, channel_id=str(thread.id))
            if status is None:
                return shown
            return shown.model_copy(update={"status_id": str(status.id), "status_channel_id": str(status.channel.id)})

        await self.service.submit_council(
            question,
            origin,
            history,
            destination=destination,
            attachments=batch.attachments,
            search=search,
            mode=mode,
        )

    async def deliver(self, run: CouncilRun, destination: Destination, resumed: bool) -> None:
        """A durable Discord council, wherever it was accepted, in its thread (the service's
        deliverer for Discord; bot/following.py)."""
        await deliver_durable(self.service, self.surface, run, destination, resumed)

    async def refuse_privately(self, message: discord.Message, text: str) -> None:
        """A refusal only the asker sees: a direct message; where DMs are closed, a reply that
        deletes itself (a mention has no ephemeral reply)."""
        try:
            await message.author.send(text, allowed_mentions=NO_MENTIONS)
            return
        except discord.HTTPException as exc:
            log.info("could not send a refusal by DM (%s); replying briefly instead", exc)
        try:
            await deliver(
                self.surface,
                str(message.channel.id),
                Priority.ANSWER,
                lambda: message.reply(
                    text, mention_author=False, allowed_mentions=NO_MENTIONS, delete_after=REFUSAL_VISIBLE_S
                ),
            )
        except discord.HTTPException as exc:
            log.warning("could not tell %s why the council was refused: %s", message.author.id, exc)

    def strip_mention(self, content: str) -> str:
        if self.user is not None:
            for token in (f"<@{self.user.id}>", f"<@!{self.user.id}>"):
                content = content.replace(token, " ")
        return content.strip()

    async def turn_of(self, message: discord.Message, seen: set[str] | None = None) -> ConversationTurn | None:
        """A thread message as conversation context: our answers as assistant, people as user.

        For our own messages the stored council (full question and answer) is preferred over
        the rendered, possibly cut, text; `seen` skips the further parts of a split answer."""
        seen = set() if seen is None else seen
        if message.author.id == (self.user.id if self.user else None):
            own = render.own_message(message)
            return await own_turn(self.service, own, seen) if own is not None else None
        if message.author.bot or message.type not in (discord.MessageType.default, discord.MessageType.reply):
            return None
        text = self.strip_mention(message.content)
        return ConversationTurn(role="user", content=text, author=message.author.display_name) if text else None

    async def reply_context(self, message: discord.Message) -> list[ConversationTurn]:
        """A reply to one of our messages outside a thread: that council's question and answer."""
        council_id = render.council_id_of_embeds(message.embeds) or render.council_id_of_status(message.content)
        stored = await stored_result(self.service, council_id) if council_id else None
        if stored is not None:
            turns = [ConversationTurn(role="user", content=stored.request.question)]
            if stored.synthesis is not None:
                turns.append(ConversationTurn(role="assistant", content=stored.synthesis.text, author="council"))
            return turns
        turn = await self.turn_of(message)
        return [turn] if turn else []

    async def thread_history(self, thread: discord.Thread, before: discord.abc.Snowflake) -> list[ConversationTurn]:
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
            append_turn(turns, await self.turn_of(message, seen))
        return turns

    # ----------------------------------------------------------------- buttons

    async def on_council_button(self, interaction: discord.Interaction, action: str, council_id: str) -> None:
        if action in ("stop", "synth"):
            try:
                stopped = await self.service.stop(council_id, actor_of(interaction), synthesize=action == "synth")
            except CouncilError as exc:
                await reply(interaction, exc.user_message)
                return
            await reply(interaction, control_reply(stopped, synthesize=action == "synth"))
            return
        await interaction.response.defer(ephemeral=True, thinking=True)
        viewer = origin_of(interaction.user, interaction.channel, interaction.guild_id)

        async def read(admin: bool) -> tuple[CouncilResult, str | None]:
            result = await self.service.result_for(council_id, viewer, admin)
            wanted = action != "ranking"  # the export carries what does not fit in three messages
            return result, await self.service.export(council_id, viewer=viewer, admin=admin) if wanted else None

        try:
            result, markdown = await self.service.as_viewer(read, actor_of(interaction))
        except CouncilError as exc:
            await reply(interaction, exc.user_message)
            return
        for kwargs in render.stage_messages(result, action, markdown):
            await interaction.followup.send(ephemeral=True, allowed_mentions=NO_MENTIONS, **kwargs)


# --------------------------------------------------------------------------- entry points


class ShardedCouncilBot(CouncilBot, discord.AutoShardedClient):
    """The bot over several gateway shards in this process (DISCORD_SHARD_COUNT, and
    DISCORD_SHARD_IDS when each process runs its own range). discord.py opens the shards one
    after another and waits between IDENTIFYs as Discord's max_concurrency allows."""


def shard_options(settings: Settings) -> dict[str, Any] | None:
    """discord.AutoShardedClient's shard arguments; None: one unsharded connection."""
    count = settings.discord_shard_count
    if count is None:
        return None
    if count == "auto":
        return {}  # shard_count None: the client asks Discord how many (GET /gateway/bot)
    return {"shard_count": count, "shard_ids": settings.discord_shard_ids}


def build_discord_client(service: CouncilService, settings: Settings, **options: Any) -> CouncilBot:
    """The bot, not yet started (`options` go to discord.Client, e.g. guild_ready_timeout)."""
    sharding = shard_options(settings)
    if sharding is None:
        return CouncilBot(service, settings, **options)
    return ShardedCouncilBot(service, settings, **sharding, **options)


async def run_discord(service: CouncilService, settings: Settings, *, worker: bool = True) -> None:
    """Run the Discord bot until cancelled. With `worker`, this process also runs councils
    (core/durable); without, workers elsewhere do."""
    if settings.discord_token is None:
        raise RuntimeError("DISCORD_TOKEN is not set (see the README, section Discord).")
    client = build_discord_client(service, settings)
    await service.start_lease()  # councils a dead process left running are marked now
    async with client, running_worker(service, worker):
        await client.start(settings.discord_token.get_secret_value())
