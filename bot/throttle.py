"""Pacing of the writes that keep one chat message up to date, for every adapter.

Chat platforms allow about one write per second to a message (Slack per channel, Discord per
route), while a council emits events far faster. So at most one write goes out per `interval`;
whatever changed meanwhile rides on the next write, which reads the latest state when it
happens. A platform's Retry-After postpones the next write. The adapter supplies the write and
says how it went; this module only decides when.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable


class Throttle:
    """Runs `write` in the background, at most once per `interval`, coalescing requests.

    `write` reads the latest state itself and returns False to be tried again (rate limited);
    the adapter calls `pause` after each attempt, so that its own final writes (which go
    through `wait_turn`, not the background) keep the same pace."""

    def __init__(self, write: Callable[[], Awaitable[bool]], interval: float):
        self.interval = interval
        self.closed = False  # the message is given up on: no more background writes
        self._write = write
        self._not_before = 0.0
        self._pending = False
        self._task: asyncio.Task[None] | None = None
        self._sleeping = False

    def request(self) -> None:
        """Ask for a write; one already waiting will carry this change too."""
        self._pending = True
        if not self.closed and (self._task is None or self._task.done()):
            self._task = asyncio.create_task(self._run())

    def pause(self, retry_after: float = 0.0) -> None:
        """No write before `interval` from now, or `retry_after` if the platform asked for longer."""
        self._not_before = time.monotonic() + max(retry_after, self.interval)

    def close(self) -> None:
        self.closed = True

    async def wait_turn(self) -> None:
        wait = self._not_before - time.monotonic()
        if wait > 0:
            await asyncio.sleep(wait)

    async def _run(self) -> None:
        while self._pending and not self.closed:
            self._sleeping = True  # only while waiting: `settle` may then drop this write
            try:
                await self.wait_turn()
            finally:
                self._sleeping = False
            self._pending = False
            if not await self._write():
                self._pending = True  # the same change, and anything newer, after the pause

    async def settle(self, *, cancel_running: bool = False) -> None:
        """Before the last write: drop the waiting write (the last one shows everything), but
        let one already talking to the platform finish so the two cannot cross, unless
        `cancel_running` (the message is about to go)."""
        self._pending = False
        task = self._task
        if task is not None and not task.done():
            if self._sleeping or cancel_running:
                task.cancel()
            try:
                await task
            except asyncio.CancelledError:
                pass
