"""The channels of one workspace (Slack team, Discord server) that have their own council
settings, with the configuration in effect in each: what the Slack Home tab lists."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from core.models import ChannelSettings, CouncilConfig, Platform

if TYPE_CHECKING:
    from core.storage import Storage


class ChannelConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    channel_id: str
    settings: ChannelSettings
    config: CouncilConfig


class WorkspaceChannels:
    def __init__(self, storage: Storage, config_for: Callable[[ChannelSettings | None], CouncilConfig]):
        self.storage = storage
        self._config_for = config_for

    def default_config(self) -> CouncilConfig:
        return self._config_for(None)

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
            if settings is not None:
                found.append(
                    ChannelConfig(
                        channel_id=row[0][len(prefix) :], settings=settings, config=self._config_for(settings)
                    )
                )
        return found
