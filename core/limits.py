"""Input limits, per-user and per-channel rate limits, and the global concurrency cap."""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

from core.errors import InputRejected, Overloaded, RateLimited

if TYPE_CHECKING:
    from core.storage import Storage

WINDOW_S = 3600.0
log = logging.getLogger(__name__)


def validate_question(text: str, max_chars: int) -> str:
    """The question stripped of surrounding whitespace, or InputRejected saying what is wrong."""
    question = (text or "").strip()
    if not question:
        raise InputRejected(
            "Ask a question after the command or the mention, e.g. `/council What are the trade-offs of Rust vs Go?` "
            "(the question was empty)."
        )
    if len(question) > max_chars:
        raise InputRejected(
            f"Your question is {len(question):,} characters; the limit is {max_chars:,}. Shorten it and ask again."
        )
    return question


def _when(seconds: float) -> str:
    """A human wait, rounded up: "1 second", "45 seconds", "12 minutes"."""
    if seconds < 90:
        n = max(1, math.ceil(seconds))
        return f"{n} second{'s' if n != 1 else ''}"
    return f"{math.ceil(seconds / 60)} minutes"


class RateLimiter:
    """Sliding one-hour windows over hits persisted in storage, so a restart resets nothing."""

    def __init__(self, storage: Storage, window_s: float = WINDOW_S):
        self.storage = storage
        self.window_s = window_s

    async def check_and_record(
        self,
        *,
        user_key: str,
        channel_key: str,
        user_limit_per_hour: int,
        channel_limit_per_hour: int,
        now: float | None = None,
    ) -> None:
        now = time.time() if now is None else now
        users, channels = f"user:{user_key}", f"channel:{channel_key}"
        # Check and record are one transaction in storage: replicas on one database count each hit once.
        full = await self.storage.admit_hits(
            [(users, user_limit_per_hour), (channels, channel_limit_per_hour)],
            now,
            now - self.window_s,
            forget_before=now - 2 * self.window_s,
        )
        if full is not None:
            who = "You have" if full.key == users else "This channel has"
            hits, limit = full.hits, full.limit
            # The window frees a slot when the hit that makes us over the limit ages out.
            retry_after = hits[len(hits) - limit] + self.window_s - now
            raise RateLimited(
                f"{who} asked {len(hits)} councils in the last hour (limit {limit}). "
                f"Try again in {_when(retry_after)}.",
                retry_after_s=max(retry_after, 1.0),
            )


class ConcurrencyGate:
    """At most `max_concurrent` councils run; up to `max_queued` wait in FIFO order.

    `async with gate.slot(on_queued)`: enters at once when a slot is free and nobody waits,
    otherwise queues (calling `on_queued(position)`, 1-based) or raises Overloaded when
    `max_queued` are already waiting. A releasing holder hands its slot straight to the oldest
    waiter. Cancellation-safe: a cancelled waiter leaves the queue, and one cancelled just after
    being handed a slot passes it on, so no slot leaks.
    """

    def __init__(self, max_concurrent: int, max_queued: int):
        self.max_concurrent = max_concurrent
        self.max_queued = max_queued
        self._running = 0
        self._waiters: deque[asyncio.Future[None]] = deque()

    @property
    def running(self) -> int:
        return self._running

    @property
    def waiting(self) -> int:
        return len(self._waiters)

    def check_capacity(self) -> None:
        """Refuse early (before a council is accepted) when even the queue is full."""
        if self._running >= self.max_concurrent and len(self._waiters) >= self.max_queued:
            n = len(self._waiters)
            if n == 0:
                raise Overloaded("Every council slot is busy right now; try again in a few minutes.")
            raise Overloaded(
                f"{n} council{'s are' if n != 1 else ' is'} already waiting for a free slot; "
                "try again in a few minutes."
            )

    @asynccontextmanager
    async def slot(self, on_queued: Callable[[int], Awaitable[None]] | None = None) -> AsyncIterator[None]:
        if self._running < self.max_concurrent and not self._waiters:
            self._running += 1
        else:
            self.check_capacity()
            waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            try:
                if on_queued is not None:
                    try:
                        await on_queued(len(self._waiters))
                    except Exception:  # a failed "you are queued" notice must not lose the council its place
                        log.warning("on_queued callback failed", exc_info=True)
                await waiter  # the releasing council hands its slot over (running count unchanged)
            except BaseException:
                if waiter.done() and not waiter.cancelled():
                    self._release()  # we were handed a slot but will not use it: pass it on
                elif waiter in self._waiters:
                    self._waiters.remove(waiter)
                raise
        try:
            yield
        finally:
            self._release()

    def _release(self) -> None:
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return
        self._running -= 1
