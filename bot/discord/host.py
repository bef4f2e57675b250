"""What the Discord modules need of the running client, so that none of them imports client.py back."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

import discord
from discord import app_commands

if TYPE_CHECKING:
    from bot.discord.surface import DiscordSurface
    from core.service import CouncilService


class CouncilHost(Protocol):
    """The council bot as its commands, questions, history and admin modules see it (client.py)."""

    service: CouncilService
    surface: DiscordSurface
    tree: app_commands.CommandTree[Any]

    @property
    def user(self) -> discord.ClientUser | None: ...

    async def fetch_channel(self, channel_id: int, /) -> Any: ...
