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
from functools import partial
from typing import TYPE_CHECKING, Any

import discord
from discord import app_commands

from bot.discord import buttons, feedback, questions, render
from bot.discord.admin import build_admin_group
from bot.discord.api_base import ApiBaseClient
from bot.discord.commands import register_commands
from bot.discord.interactions import NO_MENTIONS, report_command_error
from bot.discord.surface import DiscordSurface
from bot.following import running_worker
from bot.throttle import DISCORD_PACE, ChannelPacer, Pace
from core.models import Platform
from core.settings import Settings

if TYPE_CHECKING:
    from core.service import CouncilService

log = logging.getLogger(__name__)
INVITE_PERMISSIONS = discord.Permissions(
    view_channel=True,
    send_messages=True,
    create_public_threads=True,
    send_messages_in_threads=True,
    embed_links=True,
    attach_files=True,
    read_message_history=True,
)


class CouncilBot(ApiBaseClient):
    """The bot's connection to Discord: it wires the commands (bot/discord/commands.py, admin.py),
    the mentions (questions.py) and the buttons (buttons.py, feedback.py) to the service."""

    def __init__(self, service: CouncilService, settings: Settings, *, pace: Pace = DISCORD_PACE, **options: Any):
        intents = discord.Intents.default()
        intents.message_content = True  # privileged: enable it in the Developer Portal
        super().__init__(settings.discord.api_url, intents=intents, allowed_mentions=NO_MENTIONS, **options)
        self.service = service
        self.settings = settings
        # What a council shows in its thread (bot/following.py); one pacer per bot: every
        # council in a channel shares its pace.
        self.surface = DiscordSurface(self, pacer=ChannelPacer(pace))
        # Durable councils are shown and answered by whichever process runs them (core/durable).
        service.register_deliverer(Platform.DISCORD, partial(questions.deliver, self))
        self.tree = app_commands.CommandTree(self)
        self.tree.error(report_command_error)
        register_commands(self)
        self.tree.add_command(build_admin_group(self))

    async def setup_hook(self) -> None:
        self.add_dynamic_items(render.CouncilButton, *feedback.DYNAMIC_ITEMS)
        if self.settings.discord.guild_id:
            guild = discord.Object(id=self.settings.discord.guild_id)
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

    async def on_message(self, message: discord.Message) -> None:
        await questions.on_message(self, message)

    async def on_council_button(self, interaction: discord.Interaction, action: str, council_id: str) -> None:
        """render.CouncilButton's press (its state is in the custom_id, so it works after a restart)."""
        await buttons.on_council_button(self.service, interaction, action, council_id)


# --------------------------------------------------------------------------- entry points


class ShardedCouncilBot(CouncilBot, discord.AutoShardedClient):
    """The bot over several gateway shards in this process (DISCORD_SHARD_COUNT, and
    DISCORD_SHARD_IDS when each process runs its own range). discord.py opens the shards one
    after another and waits between IDENTIFYs as Discord's max_concurrency allows."""


def shard_options(settings: Settings) -> dict[str, Any] | None:
    """discord.AutoShardedClient's shard arguments; None: one unsharded connection."""
    count = settings.discord.shard_count
    if count is None:
        return None
    if count == "auto":
        return {}  # shard_count None: the client asks Discord how many (GET /gateway/bot)
    return {"shard_count": count, "shard_ids": settings.discord.shard_ids}


def build_discord_client(service: CouncilService, settings: Settings, **options: Any) -> CouncilBot:
    """The bot, not yet started (`options` go to discord.Client, e.g. guild_ready_timeout)."""
    sharding = shard_options(settings)
    if sharding is None:
        return CouncilBot(service, settings, **options)
    return ShardedCouncilBot(service, settings, **sharding, **options)


async def run_discord(service: CouncilService, settings: Settings, *, worker: bool = True) -> None:
    """Run the Discord bot until cancelled. With `worker`, this process also runs councils
    (core/durable); without, workers elsewhere do."""
    if settings.discord.token is None:
        raise RuntimeError("DISCORD_TOKEN is not set (see the README, section Discord).")
    client = build_discord_client(service, settings)
    await service.start_lease()  # councils a dead process left running are marked now
    async with client, running_worker(service, worker):
        await client.start(settings.discord.token.get_secret_value())
