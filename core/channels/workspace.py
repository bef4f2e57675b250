"""The channels of one workspace (Slack team, Discord server) that have their own council
settings, with the configuration in effect in each: what the Slack Home tab lists."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from core.models import ChannelSettings, CouncilConfig, Origin, Platform

if TYPE_CHECKING:
    from core.storage import Storage


class ChannelConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    channel_id: str
    settings: ChannelSettings
    config: CouncilConfig


class WorkspaceChannels:
    def __init__(
        self, storage: Storage, config_at: Callable[[Origin, ChannelSettings | None], Awaitable[CouncilConfig]]
    ):
        self.storage = storage
        self._config_at = config_at  # Admission.effective_config: the channel's, its tenant's, the operator's

    async def default_config(self, platform: Platform, workspace_id: str | None) -> CouncilConfig:
        """The council of the workspace's channels without settings of their own."""
        return await self._config_at(Origin(platform=platform, workspace_id=workspace_id), None)

    async def configured(self, platform: Platform, workspace_id: str | None) -> list[ChannelConfig]:
        """Every channel of the workspace with overrides, by channel key (plain SQL: SQLite and PostgreSQL)."""
        prefix = f"{platform.value}:{workspace_id or '-'}:"
        rows = await self.storage.db.fetchall(
            "SELECT channel_key FROM channel_settings WHERE substr(channel_key, 1, ?) = ? ORDER BY channel_key",
            (len(prefix), prefix),
        )
        found = []
        for row in rows:
            settings = await self.storage.channels.get(row[0])
            channel = row[0][len(prefix) :]
            if settings is not None:
                found.append(
                    ChannelConfig(
                        channel_id=channel,
                        settings=settings,
                        config=await self._config_at(
                            Origin(platform=platform, workspace_id=workspace_id, channel_id=channel), settings
                        ),
                    )
                )
        return found
