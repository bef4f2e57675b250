"""The Slack adapter's background work: every listener acknowledges at once and does its work in
a task started here, so shutdown (and tests) can wait for it or cancel it."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable
from typing import Any

log = logging.getLogger(__name__)


class BackgroundTasks:
    """The tasks the listeners started and that are still running."""

    def __init__(self) -> None:
        self.running: set[asyncio.Task[Any]] = set()

    def spawn(self, coro: Awaitable[Any], name: str) -> asyncio.Task[Any]:
        async def guarded() -> Any:
            try:
                return await coro
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("Slack task %s failed", name)

        task = asyncio.create_task(guarded(), name=f"slack-{name}")
        self.running.add(task)
        task.add_done_callback(self.running.discard)
        return task

    async def drain(self, within_s: float | None = None) -> None:
        """Wait for the background work started so far (tests, shutdown), at most `within_s`."""
        deadline = None if within_s is None else time.monotonic() + within_s
        while self.running:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                break
            await asyncio.wait(list(self.running), timeout=left)

    async def aclose(self, grace_s: float = 5.0) -> None:
        await self.drain(grace_s)
        for task in list(self.running):
            task.cancel()
        if self.running:
            await asyncio.gather(*self.running, return_exceptions=True)
