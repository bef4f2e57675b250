"""Where councils are stored, and how durable councils are leased and queued (core/durable)."""

from __future__ import annotations

from pydantic import Field

from core.database_url import DatabaseTarget, parse_database_url
from core.errors import ConfigurationError
from core.paths import default_database_url
from core.settings.group import SettingsGroup


class StorageSettings(SettingsGroup):
    # Empty: council.db in the user's data directory, so history does not depend on the working directory.
    database_url: str = Field(
        default_factory=default_database_url,
        alias="DATABASE_URL",
        description="The database: sqlite:///path or postgresql://user:password@host/db "
        "(empty: council.db in the user data directory).",
    )
    retention_days: int | None = Field(
        None,
        alias="COUNCIL_RETENTION_DAYS",
        description="Councils older than this many days are deleted at start-up (empty: kept forever).",
    )

    @property
    def database(self) -> DatabaseTarget:
        """Where DATABASE_URL points (backend, location, a display form without the password),
        or ConfigurationError saying what forms it takes."""
        try:
            return parse_database_url(self.database_url)
        except ValueError as exc:
            raise ConfigurationError(f"{exc}. Unset it to use {default_database_url()}.") from None


class DurableSettings(SettingsGroup):
    lease_s: float = Field(
        30.0,
        alias="COUNCIL_LEASE_S",
        ge=1,
        description="A process that stops renewing its lease this long (seconds) is dead: its councils are "
        "resumed or marked interrupted.",
    )
    worker_concurrency: int | None = Field(
        None,
        alias="COUNCIL_WORKER_CONCURRENCY",
        ge=1,
        description="PostgreSQL: councils one worker process runs at once (empty: COUNCIL_MAX_CONCURRENT).",
    )
    queue_heartbeat_s: float = Field(
        5.0, alias="COUNCIL_QUEUE_HEARTBEAT_S", gt=0, description="PostgreSQL: a worker's heartbeat period, seconds."
    )
    queue_stalled_s: float = Field(
        15.0,
        alias="COUNCIL_QUEUE_STALLED_S",
        gt=0,
        description="PostgreSQL: the silence (seconds) after which another worker resumes a worker's councils.",
    )
