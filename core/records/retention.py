"""COUNCIL_RETENTION_DAYS: councils older than the retention are pruned at start-up and then daily,
since bots run for months."""

from __future__ import annotations

import asyncio
import logging
from datetime import timedelta

from core.records.queries import CouncilQueries

log = logging.getLogger(__name__)

_DAY_S = 86400


class Retention:
    def __init__(self, queries: CouncilQueries) -> None:
        self.queries = queries
        self._task: asyncio.Task[None] | None = None

    async def start(self, age: timedelta) -> None:
        await self.queries.prune(age)
        self._task = asyncio.create_task(self._prune_daily(age), name="council-retention")

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()

    async def _prune_daily(self, age: timedelta) -> None:
        while True:
            await asyncio.sleep(_DAY_S)
            try:
                removed = await self.queries.prune(age)
                log.info("retention: pruned %d council(s) older than %s", removed, age)
            except Exception:
                log.exception("retention pruning failed; will retry tomorrow")
