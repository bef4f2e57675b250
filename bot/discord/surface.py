"""Discord's surface for the council runner (bot/following.py): REST writes and the embed drawing.

Everything goes through the bot token's REST API (a partial channel and message by id), never
an interaction token (those expire after 15 minutes), so `discord_surface(settings)` can build
it without a gateway connection and any process can follow a council into its thread. Every
message is sent with `AllowedMentions.none()`: model text must not ping anyone.
"""

from __future__ import annotations

from typing import Any

import discord

from bot.councils import AnswerFile
from bot.discord import render
from bot.discord.api_base import ApiBaseClient
from bot.discord.interactions import NO_MENTIONS
from bot.links import renderer
from bot.surface import Renderer
from bot.throttle import DISCORD_PACE, ChannelPacer
from core.models import CouncilRequest, Destination, Platform
from core.settings import Settings

EDIT_INTERVAL_S = 1.5  # between two edits of the status message


def retry_after_of(exc: Exception) -> float | None:
    """Seconds Discord asked us to wait (a 429 discord.py gave up on), else None."""
    if isinstance(exc, discord.RateLimited):
        return exc.retry_after
    if not isinstance(exc, discord.HTTPException) or exc.status != 429:
        return None
    try:
        return max(0.0, float(exc.response.headers.get("Retry-After", 1.0)))
    except (TypeError, ValueError, AttributeError):
        return 1.0


class DiscordSurface:
    """Discord's writes for the runner, through `client`'s REST API (no gateway needed)."""

    platform = Platform.DISCORD

    def __init__(
        self,
        client: discord.Client,
        *,
        pacer: ChannelPacer | None = None,
        interval: float = EDIT_INTERVAL_S,
        settings: Settings | None = None,
    ):
        self.client = client
        self.pacer = pacer or ChannelPacer(DISCORD_PACE)  # shared by every council in a channel
        self.interval = interval
        self.render: Renderer = renderer(render, settings)  # with links to the browser app when configured

    def retry_after(self, exc: Exception) -> float | None:
        return retry_after_of(exc)

    def _channel(self, channel_id: str) -> discord.PartialMessageable:
        return self.client.get_partial_messageable(int(channel_id))

    async def post(self, destination: Destination, message: dict[str, Any]) -> str:
        # NO_MENTIONS unless the message names its own (the unsure mention's one role)
        sent = await self._channel(destination.channel_id).send(**{"allowed_mentions": NO_MENTIONS, **message})
        return str(sent.id)

    async def edit(self, channel_id: str, message_id: str, message: dict[str, Any]) -> None:
        partial = self._channel(channel_id).get_partial_message(int(message_id))
        await partial.edit(allowed_mentions=NO_MENTIONS, **message)

    async def delete(self, channel_id: str, message_id: str) -> None:
        await self._channel(channel_id).get_partial_message(int(message_id)).delete()

    async def attach(self, destination: Destination, file: AnswerFile, caption: str) -> None:
        upload = render.markdown_file(file.content, file.filename)
        await self._channel(destination.channel_id).send(caption, file=upload, allowed_mentions=NO_MENTIONS)

    async def open_live(self, destination: Destination, request: CouncilRequest) -> None:
        return None  # Discord has no streamed message: the status message shows the progress

    async def end_live(self, channel_id: str, message_id: str) -> bool:
        return False  # no live display to end: a resumed council edits its status message

    async def aclose(self) -> None:
        """Log out a client `discord_surface` made (a bot's own client is the bot's to close)."""
        await self.client.close()


async def discord_surface(settings: Settings, *, pacer: ChannelPacer | None = None) -> DiscordSurface:
    """Discord's surface from settings (DISCORD_TOKEN, DISCORD_API_URL) alone: a client logged in
    for REST, without a gateway connection. Close it with `aclose()`."""
    if settings.discord.token is None:
        raise RuntimeError("DISCORD_TOKEN is not set (see docs/discord.md).")
    client = ApiBaseClient(settings.discord.api_url, intents=discord.Intents.none())
    await client.login(settings.discord.token.get_secret_value())
    return DiscordSurface(client, pacer=pacer, settings=settings)
