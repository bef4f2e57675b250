"""`Storage`: the one object the service holds; it opens the database, applies the migrations and
holds one repository per table group (`storage.councils`, `.channels`, `.events`, `.rate_limits`,
`.owners`, `.slots`, `.stats`, `.jobs`, `.messages`), which callers use directly. Its own methods
are only those that span repositories (pruning) or wrap one (a single result, reviewer totals).

Everything of a council is kept: the full result as JSON for an exact round trip, and normalised
rows for history, leaderboards and SQL users. Secrets never reach the database: the config
snapshot is a `CouncilConfig` (model ids and knobs only).
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from core.models import CouncilResult
from core.storage import migrations, reviewer_totals
from core.storage.browse import BrowseRepository
from core.storage.channels import ChannelRepository
from core.storage.councils import CouncilRepository
from core.storage.database import WAIT_S, Database, open_database
from core.storage.evals import EvalRepository
from core.storage.events import EventRepository
from core.storage.idempotency import IdempotencyRepository
from core.storage.jobs import JobRepository
from core.storage.messages import MessageRepository
from core.storage.owners import OwnerRepository
from core.storage.rate_limits import RateLimitRepository
from core.storage.reviewer_totals import ReviewerTotals
from core.storage.slots import SlotRepository
from core.storage.stats import StatsRepository
from core.storage.web_sessions import WebSessionRepository


class Storage:
    """The council database. Open with `await Storage.open(url_or_path)`; the service is the only caller."""

    def __init__(self, db: Database):
        self.db = db
        self.councils = CouncilRepository(db)
        self.browse = BrowseRepository(db)  # the browser's history: search and keyset pages (bot/web)
        self.stats = StatsRepository(db)
        self.channels = ChannelRepository(db)
        self.events = EventRepository(db)
        self.rate_limits = RateLimitRepository(db)
        self.owners = OwnerRepository(db)
        self.jobs = JobRepository(db)  # durable councils (core/durable)
        self.slots = SlotRepository(db)
        self.messages = MessageRepository(db)  # the messages we post, by council (bot/history.py reads it)
        self.evals = EvalRepository(db)  # `council eval` runs and samples (core/eval/session.py)
        self.idempotency = IdempotencyRepository(db)  # the API's Idempotency-Key header (core/records/idempotency.py)
        self.web_sessions = WebSessionRepository(db)  # the browser app's sign-ins (core/channels/sessions.py)

    @classmethod
    async def open(
        cls, url: str, migrations_dir: Path = migrations.MIGRATIONS_DIR, *, wait_s: float = WAIT_S
    ) -> Storage:
        """Open `sqlite:///path`, a plain SQLite path, `:memory:` or `postgresql://…`, and apply
        pending migrations; `wait_s`: how long an operation waits for the database (DATABASE_WAIT_S)."""
        db = await open_database(url, wait_s)
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

    async def save_result(self, result: CouncilResult) -> None:
        await self.councils.save([result])

    async def prune(self, older_than: datetime) -> int:
        removed = await self.councils.prune(older_than)
        await self.jobs.forget_finished()
        await self.messages.forget_pruned()
        return removed

    async def reviewer_totals(self, **filters) -> dict[str, ReviewerTotals]:
        """Per reviewer: the sums the bias audit and the `auto` weights read (core/storage/reviewer_totals.py)."""
        return await reviewer_totals.read(self.db, **filters)
