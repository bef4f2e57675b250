"""`Storage`: the one object the service holds; it opens the database, applies the migrations and
hands each call to the repository of its table group.

Everything of a council is kept: the full result as JSON for an exact round trip, and normalised
rows for history, leaderboards and SQL users. Secrets never reach the database: the config
snapshot is a `CouncilConfig` (model ids and knobs only).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from core.models import (
    AuditEntry,
    BallotCounts,
    BallotOrders,
    ChannelSettings,
    CouncilRequest,
    CouncilResult,
    CouncilSummary,
    DailyUsage,
    ModelStats,
)
from core.storage import migrations, reviewer_totals
from core.storage.channels import ChannelRepository
from core.storage.councils import CouncilRepository
from core.storage.database import Database, open_database
from core.storage.events import EventRepository
from core.storage.jobs import JobRepository
from core.storage.messages import MessageRepository
from core.storage.owners import OwnerRepository
from core.storage.rate_limits import FullWindow, RateLimitRepository
from core.storage.reviewer_totals import ReviewerTotals
from core.storage.slots import SlotRepository
from core.storage.stats import StatsRepository


class Storage:
    """The council database. Open with `await Storage.open(url_or_path)`; the service is the only caller."""

    def __init__(self, db: Database):
        self.db = db
        self.councils = CouncilRepository(db)
        self.stats = StatsRepository(db)
        self.channels = ChannelRepository(db)
        self.events = EventRepository(db)
        self.rate_limits = RateLimitRepository(db)
        self.owners = OwnerRepository(db)
        self.jobs = JobRepository(db)  # durable councils: used by core/durable directly
        self.slots = SlotRepository(db)
        self.messages = MessageRepository(db)  # the messages we post, by council (bot/history.py reads it)

    @classmethod
    async def open(cls, url: str, migrations_dir: Path = migrations.MIGRATIONS_DIR) -> Storage:
        """Open `sqlite:///path`, a plain SQLite path, `:memory:` or `postgresql://…`, and apply
        pending migrations."""
        db = await open_database(url)
        try:
            await migrations.migrate(db, migrations_dir)
            storage = cls(db)
            await storage.events.forget_old()
        except BaseException:
            await db.close()
            raise
        return storage

    @property
    def backend(self) -> str:
        """ "sqlite" or "postgresql"."""
        return self.db.dialect

    @property
    def location(self) -> str:
        """Where the data lives, never with a password."""
        return self.db.display

    async def close(self) -> None:
        await self.db.close()

    async def __aenter__(self) -> Storage:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def schema_version(self) -> int:
        """The newest migration applied to this database."""
        return await migrations.schema_version(self.db)

    # councils
    async def save_council_started(self, request: CouncilRequest, owner_id: str | None = None) -> None:
        await self.councils.save_started(request, owner_id)

    async def save_result(self, result: CouncilResult) -> None:
        await self.councils.save([result])

    async def get_result(self, council_id: str) -> CouncilResult | None:
        return await self.councils.get(council_id)

    async def council_ids_starting_with(self, prefix: str, limit: int = 2) -> list[str]:
        return await self.councils.ids_starting_with(prefix, limit)

    async def mark_interrupted(self, now: float | None = None) -> int:
        return await self.councils.mark_interrupted(now)

    # owners of running councils
    async def renew_owner(self, owner_id: str, lease_s: float, *, host: str = "", pid: int = 0) -> None:
        await self.owners.renew(owner_id, lease_s, host=host, pid=pid)

    async def drop_owner(self, owner_id: str) -> None:
        await self.owners.drop(owner_id)

    # the global cap on running councils
    async def take_slot(self, slot_id: str, owner_id: str, limit: int) -> bool:
        return await self.slots.take(slot_id, owner_id, limit)

    async def give_back_slot(self, slot_id: str) -> None:
        await self.slots.give_back(slot_id)

    async def list_councils(self, **filters) -> list[CouncilSummary]:
        return await self.councils.history(**filters)

    async def prune(self, older_than: datetime) -> int:
        removed = await self.councils.prune(older_than)
        await self.jobs.forget_finished()
        await self.messages.forget_pruned()
        return removed

    async def spent_since(self, channel_key: str | None, since: datetime) -> float:
        return await self.councils.spent_since(channel_key, since)

    async def usage_by_day(self, channel_key: str | None = None, days: int = 30) -> list[DailyUsage]:
        return await self.councils.usage_by_day(channel_key, days)

    # leaderboard reads
    async def ballot_orders(self, **filters) -> BallotOrders:
        return await self.stats.ballot_orders(**filters)

    async def ballot_counts(self, **filters) -> BallotCounts:
        return await self.stats.ballot_counts(**filters)

    async def model_stats(self, **filters) -> dict[str, ModelStats]:
        return await self.stats.model_stats(**filters)

    async def reviewer_totals(self, **filters) -> dict[str, ReviewerTotals]:
        """Per reviewer: the sums the bias audit and the `auto` weights read (core/storage/reviewer_totals.py)."""
        return await reviewer_totals.read(self.db, **filters)

    # channel settings and audit
    async def get_channel_settings(self, channel_key: str) -> ChannelSettings | None:
        return await self.channels.get(channel_key)

    async def put_channel_settings(self, settings: ChannelSettings, actor_id: str) -> None:
        await self.channels.put(settings, actor_id)

    async def update_channel_settings(
        self, channel_key: str, changes: dict[str, Any], actor_id: str, action: str
    ) -> ChannelSettings:
        return await self.channels.update(channel_key, changes, actor_id, action)

    async def delete_channel_settings(self, channel_key: str, actor_id: str | None = None) -> None:
        await self.channels.delete(channel_key, actor_id)

    async def audit(self, channel_key: str, actor_id: str, action: str, detail: dict) -> None:
        await self.channels.audit(channel_key, actor_id, action, detail)

    async def audit_log(self, channel_key: str | None = None, limit: int = 50) -> list[AuditEntry]:
        return await self.channels.audit_log(channel_key, limit)

    # events and rate limits
    async def claim_event(self, platform: str, event_id: str) -> bool:
        return await self.events.claim(platform, event_id)

    async def admit_hits(
        self, windows: Sequence[tuple[str, int]], at: float, since: float, *, forget_before: float, record: bool = True
    ) -> FullWindow | None:
        return await self.rate_limits.admit(windows, at, since, forget_before=forget_before, record=record)

    async def record_hits(self, keys: Iterable[str], at: float) -> None:
        await self.rate_limits.record(keys, at)

    async def hits_since(self, key: str, since: float) -> list[float]:
        return await self.rate_limits.hits_since(key, since)
