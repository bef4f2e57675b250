"""Input limits, per-user and per-channel rate limits, and the global concurrency cap."""

from __future__ import annotations

import asyncio
import logging
import math
import time
import uuid
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Protocol

from core.errors import InputRejected, Overloaded, RateLimited
from core.models import counted
from core.telemetry import metrics

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
        record: bool = True,
    ) -> None:
        """RateLimited when either window is full; otherwise one hit for each (unless not `record`:
        a dry run for an adapter that checks before it shows anything)."""
        now = time.time() if now is None else now
        users, channels = f"user:{user_key}", f"channel:{channel_key}"
        # Check and record are one transaction in storage: replicas on one database count each hit once.
        full = await self.storage.rate_limits.admit(
            [(users, user_limit_per_hour), (channels, channel_limit_per_hour)],
            now,
            now - self.window_s,
            forget_before=now - 2 * self.window_s,
            record=record,
        )
        if full is not None:
            who = "You have" if full.key == users else "This channel has"
            hits, limit = full.hits, full.limit
            # The window frees a slot when the hit that makes us over the limit ages out.
            retry_after = hits[len(hits) - limit] + self.window_s - now
            raise RateLimited(
                f"{who} asked {counted(len(hits), 'council')} in the last hour (limit {limit}). "
                f"Try again in {_when(retry_after)}.",
                retry_after_s=max(retry_after, 1.0),
            )


class SharedSlots(Protocol):
    """Slots shared with other processes (core/admission/shared_cap.py): the cap across all of them."""

    poll_s: float

    async def take(self, slot_id: str) -> bool: ...
    def give_back(self, slot_id: str) -> None: ...


class Ticket:
    """A council's admission: a running slot now, or a place in the queue held until `wait()`
    returns. Taken synchronously by `ConcurrencyGate.admit`, so check and enqueue are one step.
    With shared slots, a running slot also needs one of those (`take_shared_now`, `wait`).
    `release()` (idempotent) gives back whatever the ticket holds, at any point of its life."""

    def __init__(self, gate: ConcurrencyGate, waiter: asyncio.Future[None] | None, position: int | None):
        self._gate = gate
        self._waiter = waiter
        self._released = False
        self.position = position  # 1-based place in the queue at admission; None: runs at once
        self.slot_id = uuid.uuid4().hex
        self._shared_held = gate.shared is None  # nothing to take when the cap is this process's

    @property
    def waiting(self) -> bool:
        if self._released:
            return False
        return (self._waiter is not None and not self._waiter.done()) or not self._shared_held

    async def take_shared_now(self) -> None:
        """A ticket that runs at once tries for a shared slot now: when every one is busy in other
        processes it is queued (position 1) and `wait` keeps trying."""
        if self.position is None and not await self._try_shared():
            self.position = 1

    async def wait(self) -> bool:
        """Until the slot is ours (the releasing council hands it over, running count unchanged),
        and then a shared slot if there are any: True; False when the ticket was withdrawn
        (released) while it waited."""
        if self._waiter is not None:
            try:
                await self._waiter
            except asyncio.CancelledError:
                task = asyncio.current_task()
                if self._released and task is not None and not task.cancelling():
                    return False  # withdrawn, not cancelled
                raise
        shared = self._gate.shared
        if shared is not None:
            await self._wait_shared(shared)
        return not self._released

    async def _wait_shared(self, shared: SharedSlots) -> None:
        # Polled: another process's release has no way to wake us (a slot frees within `poll_s`).
        while True:
            if self._released or await self._try_shared():
                return
            await asyncio.sleep(shared.poll_s)

    async def _try_shared(self) -> bool:
        shared = self._gate.shared
        if shared is None or self._shared_held:
            return True
        held = await shared.take(self.slot_id)
        if held and self._released:  # withdrawn while asking: not ours to keep
            shared.give_back(self.slot_id)
            return False
        self._shared_held = held
        return held

    def release(self) -> None:
        if self._released:
            return
        self._released = True
        if self._gate.shared is not None and self._shared_held:
            self._gate.shared.give_back(self.slot_id)
        waiter = self._waiter
        if waiter is None or (waiter.done() and not waiter.cancelled()):
            self._gate._release()  # we hold a slot (maybe handed over just now): pass it on
        else:
            waiter.cancel()
            if waiter in self._gate._waiters:
                self._gate._waiters.remove(waiter)
                self._gate.report()


class ConcurrencyGate:
    """At most `max_concurrent` councils run; up to `max_queued` wait in FIFO order.

    `gate.admit()` takes a Ticket at once (no await between the check and the enqueue, so a
    burst can never over-fill the queue) or raises Overloaded when `max_queued` already wait.
    `async with gate.slot(on_queued)` is the same for one block of code. A releasing holder hands
    its slot straight to the oldest waiter. Cancellation-safe: a cancelled waiter leaves the
    queue, and one cancelled just after being handed a slot passes it on, so no slot leaks.
    """

    def __init__(self, max_concurrent: int, max_queued: int, shared: SharedSlots | None = None):
        self.max_concurrent = max_concurrent
        self.max_queued = max_queued
        self.shared = shared  # the cap across processes (PostgreSQL), on top of this process's
        self._running = 0
        self._waiters: deque[asyncio.Future[None]] = deque()
        self._reported = (0, 0)  # (running, waiting) as last added to this process's gauges

    @property
    def running(self) -> int:
        return self._running

    @property
    def waiting(self) -> int:
        return len(self._waiters)

    def check_capacity(self) -> None:
        """Refuse when even the queue is full (the wording carries the retry hint)."""
        if self._running >= self.max_concurrent and len(self._waiters) >= self.max_queued:
            n = len(self._waiters)
            if n == 0:
                raise Overloaded("Every council slot is busy right now; try again in a few minutes.")
            raise Overloaded(
                f"{n} council{'s are' if n != 1 else ' is'} already waiting for a free slot; "
                "try again in a few minutes."
            )

    def admit(self) -> Ticket:
        """A slot now, a place in the queue, or Overloaded; synchronous, hence atomic."""
        if self._running < self.max_concurrent and not self._waiters:
            self._running += 1
            self.report()
            return Ticket(self, None, None)
        self.check_capacity()
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        self.report()
        return Ticket(self, waiter, len(self._waiters))

    def report(self) -> None:
        """This gate's change since the last report, added to the process's gauges (several gates
        add up: the service's and a worker's queue)."""
        running, waiting = self._running, len(self._waiters)
        before_running, before_waiting = self._reported
        if running != before_running:
            metrics.SLOTS_IN_USE.inc(running - before_running)
        if waiting != before_waiting:
            metrics.ADMISSION_WAITING.inc(waiting - before_waiting)
        self._reported = (running, waiting)

    @asynccontextmanager
    async def slot(self, on_queued: Callable[[int], Awaitable[None]] | None = None) -> AsyncIterator[None]:
        ticket = self.admit()
        try:
            if ticket.position is not None and on_queued is not None:
                try:
                    await on_queued(ticket.position)
                except Exception:  # a failed "you are queued" notice must not lose the council its place
                    log.warning("on_queued callback failed", exc_info=True)
            await ticket.wait()
            yield
        finally:
            ticket.release()

    def _release(self) -> None:
        try:
            while self._waiters:
                waiter = self._waiters.popleft()
                if not waiter.done():
                    waiter.set_result(None)
                    return
            self._running -= 1
        finally:
            self.report()
