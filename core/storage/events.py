"""Platform event ids already handled: a Slack retry or Discord replay starts nothing twice, also
when it lands on another process (the primary key decides, in the database)."""

from __future__ import annotations

import time

from core.storage.database import Database
from core.storage.values import plain

EVENT_TTL_S = 86400.0  # processed event ids older than this are forgotten
_PRUNE_EVERY = 500  # claims between two clean-ups of processed_events


class EventRepository:
    def __init__(self, db: Database):
        self._db = db
        self._claims = 0

    async def claim(self, platform: str, event_id: str) -> bool:
        """True only the first time (platform, event_id) is seen, across every process on the database.

        Ids older than a day are forgotten at start-up and every few hundred claims.
        """
        now = time.time()
        claimed = await self._db.execute(
            "INSERT INTO processed_events (platform, event_id, at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
            (plain(platform), event_id, now),
        )
        self._claims += 1
        if self._claims % _PRUNE_EVERY == 0:
            await self.forget_old(now)
        return claimed == 1

    async def forget_old(self, now: float | None = None) -> None:
        now = time.time() if now is None else now
        await self._db.execute("DELETE FROM processed_events WHERE at < ?", (now - EVENT_TTL_S,))
