"""Rate-limit hits, persisted so that a restart resets nobody's window, and admitted atomically so
that several processes on one database count each hit once and never let a window overfill."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from core.storage.database import Database
from core.storage.reconnect import reconnecting


@dataclass(frozen=True)
class FullWindow:
    """The first window that refused: its key, limit and the times of its hits, oldest first."""

    key: str
    limit: int
    hits: list[float]


class RateLimitRepository:
    def __init__(self, db: Database):
        self._db = db

    @reconnecting
    async def admit(
        self, windows: Sequence[tuple[str, int]], at: float, since: float, *, forget_before: float, record: bool = True
    ) -> FullWindow | None:
        """Check each (key, limit) window (limit <= 0: unlimited) over hits since `since`; when all
        have room, record one hit per key at `at` (unless not `record`) and return None, otherwise
        return the first full window and record nothing. One transaction: on PostgreSQL the keys'
        advisory locks (taken in a fixed order) serialise concurrent admissions of the same keys,
        on SQLite the file's write lock does."""
        async with self._db.transaction() as tx:
            for key in sorted({key for key, _ in windows}):
                await tx.lock(f"rate:{key}")
            for key, limit in windows:
                if limit <= 0:
                    continue
                rows = await tx.fetchall("SELECT at FROM rate_hits WHERE key = ? AND at >= ? ORDER BY at", (key, since))
                if len(rows) >= limit:
                    return FullWindow(key, limit, [r[0] for r in rows])
            if record:
                await tx.executemany("INSERT INTO rate_hits (key, at) VALUES (?, ?)", [(k, at) for k, _ in windows])
                await tx.execute("DELETE FROM rate_hits WHERE at < ?", (forget_before,))
        return None

    @reconnecting
    async def record(self, keys: Iterable[str], at: float) -> None:
        """Record one hit per key at `at` (imports and tests; admission goes through `admit`)."""
        async with self._db.transaction() as tx:
            await tx.executemany("INSERT INTO rate_hits (key, at) VALUES (?, ?)", [(k, at) for k in keys])

    async def hits_since(self, key: str, since: float) -> list[float]:
        """Times of the hits of `key` since `since`, oldest first."""
        rows = await self._db.fetchall("SELECT at FROM rate_hits WHERE key = ? AND at >= ? ORDER BY at", (key, since))
        return [r[0] for r in rows]
