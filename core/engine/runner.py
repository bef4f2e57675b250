"""Parallel model calls for one council: launching them, and the stage runner that waits for them.

    calls = Calls(council_id, control)
    batch = calls.launch({"m1": call_1, "m2": call_2}, "answer", policy.timeout_s)
    async for outcome in calls.gather(batch, policy, "answer", "members"):
        ...                     # one Outcome per call: as it arrives, then one per call cut short

A stage ends when every call has ended, or is cut short: at `timeout_s` after the launch, at the
end of the grace period that starts once a quorum of calls has succeeded, or when the user stops
or asks to synthesize now. Every wait goes through one `Wakeup`: the tasks' done-callbacks, the
control and (for a streamed synthesis) each delta set it, and `asyncio.timeout_at` bounds it by
the nearest deadline. The callbacks are registered once per task, not at every wake-up as
`asyncio.wait` would: that re-registration is what bench/bench_engine.py measured stretching
the critical path of a few hundred concurrent councils.

Issue 12:
- fallback seats: `launch_seats` runs each seat's chain in one task: a model that fails hands
  the seat to the next one (each but the last gets an equal share of the time left), all
  within the batch's deadline; the outcome names the model that answered and the `attempts`.
- adaptive grace: `StagePolicy.grace_after(arrived)` is max(grace_min_s, grace_factor x median
  latency of the answers so far), capped at grace_s. The cut reason quotes the value used.
- early decision: `StagePolicy.decided(pending)` is asked after every arrival; True ends the
  stage and leaves the calls still running in `batch.late` (they finish in the background; the
  caller collects them with `Calls.collect_late`).
"""

from __future__ import annotations

import asyncio
import logging
import math
import statistics
import time
from collections.abc import AsyncGenerator, Awaitable, Callable, Coroutine, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from core.engine import notices
from core.engine.control import CouncilControl
from core.engine.notices import Cut
from core.models import Attempt, Completion, ErrorInfo, ErrorKind, Usage
from core.providers.base import ProviderError

log = logging.getLogger(__name__)

_SHUTDOWN_WAIT_S = 2.0  # how long cleanup waits for cancelled calls to unwind

Call = Callable[[], Awaitable[Completion]]
ModelCall = Callable[[str], Awaitable[Completion]]  # one seat's call, given the model of its chain to ask


@dataclass(frozen=True)
class SeatCall:
    """A seat's chain of models and the call each of them would make."""

    models: Sequence[str]
    call: ModelCall


@dataclass
class Outcome:
    """How one parallel call ended."""

    key: str = ""
    completion: Completion | None = None
    error: ErrorInfo | None = None
    latency_s: float | None = None
    skipped: bool = False  # cut short by stop()/synthesize_now(): the user's choice, not a failure
    model: str | None = None  # the seat's model that gave this outcome (seat calls only)
    attempts: list[Attempt] = field(default_factory=list)  # the seat's models that failed before it


@dataclass(frozen=True)
class StagePolicy:
    """When a parallel stage stops waiting: quorum, grace period and hard time limit."""

    quorum: float
    grace_s: float  # the most grace a straggler gets
    timeout_s: float
    grace_min_s: float = 0.0
    grace_factor: float = 0.0  # 0: always grace_s (no adaptation)
    decide: Callable[[Sequence[str]], bool] | None = None  # pending keys -> outcome already decided

    def needed(self, total: int) -> int:
        """How many calls must succeed before the grace period starts."""
        return max(1, math.ceil(self.quorum * total))

    def grace_after(self, arrived: Sequence[Outcome]) -> float:
        """Stragglers get max(grace_min_s, grace_factor x median latency of the answers so far),
        capped by grace_s: a council of fast models does not wait 20 s for a hung one."""
        if not self.grace_factor:
            return self.grace_s
        latencies = [o.latency_s for o in arrived if o.completion is not None and o.latency_s is not None]
        adaptive = self.grace_factor * statistics.median(latencies) if latencies else self.grace_s
        return min(self.grace_s, max(self.grace_min_s, adaptive))

    def decided(self, pending: Sequence[str]) -> bool:
        """Whether the calls still pending (their keys) can no longer change the outcome."""
        return self.decide is not None and self.decide(pending)


@dataclass
class Batch:
    """Calls running in parallel: task -> key (its seat), and when their time limit expires."""

    tasks: dict[asyncio.Task[Outcome], str]
    deadline: float
    started: float = 0.0  # loop time of the launch
    attempts: dict[str, list[Attempt]] = field(default_factory=dict)  # per seat, failed so far
    late: dict[asyncio.Task[Outcome], str] = field(default_factory=dict)  # left running by a decision


class Wakeup:
    """One future that any source (a finished call, a delta, the control) can resolve.

    A set() while nobody waits is dropped: waiters re-check their conditions before waiting.
    """

    def __init__(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._future: asyncio.Future[None] | None = None

    def set(self, *_: object) -> None:
        if self._future is not None and not self._future.done():
            self._future.set_result(None)

    async def wait(self, deadline: float) -> None:
        """Until set() or loop time `deadline`, whichever comes first."""
        self._future = self._loop.create_future()
        try:
            async with asyncio.timeout_at(deadline):
                await self._future
        except TimeoutError:
            pass
        finally:
            self._future = None


class Calls:
    """The calls of one council: started as named tasks, measured, and cancelled together."""

    def __init__(self, council_id: str, control: CouncilControl) -> None:
        self.council_id = council_id
        self.control = control
        self.usage = Usage()
        self._tasks: set[asyncio.Task[Any]] = set()

    def spawn(self, coro: Coroutine[Any, Any, Outcome], what: str) -> asyncio.Task[Outcome]:
        # Named after the council so that a leak would be easy to attribute (tests check it).
        task = asyncio.create_task(coro, name=f"council-{self.council_id}-{what}")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def outcome(self, call: Call) -> Outcome:
        """One model call as an outcome; never raises (except cancellation)."""
        start = time.perf_counter()
        try:
            completion = await call()
        except ProviderError as exc:
            return Outcome(error=exc.info(), latency_s=time.perf_counter() - start)
        except Exception as exc:  # a provider bug must cost one member, not the whole council
            log.exception("model call crashed")
            return Outcome(error=notices.crash(exc), latency_s=time.perf_counter() - start)
        self.usage += completion.usage
        if not completion.text.strip():
            error = ErrorInfo(kind=ErrorKind.BAD_RESPONSE, message="the model returned an empty answer")
            return Outcome(error=error, latency_s=time.perf_counter() - start)
        return Outcome(completion=completion, latency_s=time.perf_counter() - start)

    def launch(self, calls: dict[str, Call], noun: str, timeout_s: float) -> Batch:
        """Start `calls` in parallel (as tasks, so they run while events are being consumed)."""
        now = asyncio.get_running_loop().time()
        tasks = {self.spawn(self.outcome(call), f"{noun}:{key}"): key for key, call in calls.items()}
        return Batch(tasks, now + timeout_s, started=now)

    def launch_seats(self, seats: dict[str, SeatCall], noun: str, timeout_s: float) -> Batch:
        """Start each seat's chain in parallel: one task per seat, under the batch's deadline."""
        now = asyncio.get_running_loop().time()
        deadline = now + timeout_s
        batch = Batch({}, deadline, started=now, attempts={key: [] for key in seats})
        for key, seat in seats.items():
            task = self.spawn(self.seat_outcome(seat, deadline, batch.attempts[key]), f"{noun}:{key}")
            batch.tasks[task] = key
        return batch

    async def seat_outcome(self, seat: SeatCall, deadline: float, attempts: list[Attempt]) -> Outcome:
        """The first model of the chain that answers; each failure is appended to `attempts`.
        A model with a successor gets an equal share of the time left, so a hung primary leaves
        its fallback time to answer."""
        loop = asyncio.get_running_loop()
        outcome = Outcome()
        for index, model in enumerate(seat.models):
            left = len(seat.models) - index
            share = (deadline - loop.time()) / left
            try:
                async with asyncio.timeout(share) if left > 1 else nullcontext():
                    outcome = await self.outcome(partial(seat.call, model))
            except TimeoutError:
                outcome = Outcome(error=notices.timed_out(round(share, 1)), latency_s=share)
            outcome.model = model
            if outcome.completion is not None or left == 1:
                break
            assert outcome.error is not None
            attempts.append(Attempt(model=model, error=outcome.error))
        outcome.attempts = list(attempts)
        return outcome

    async def collect_late(self, batch: Batch) -> AsyncGenerator[Outcome, None]:
        """The outcomes of the calls a decision left running, as they end (cut at the batch's
        deadline or by stop())."""
        loop = asyncio.get_running_loop()
        pending = dict(batch.late)
        wakeup = Wakeup()
        for task in pending:
            task.add_done_callback(wakeup.set)
        unsubscribe = self.control.subscribe(wakeup.set)
        try:
            while pending and not self.control.stopped and loop.time() < batch.deadline:
                for task in [t for t in pending if t.done()]:
                    yield self._settle(task, pending)
                if pending:
                    await wakeup.wait(batch.deadline)
            stopped = self.control.stopped
            reason = notices.stopped() if stopped else notices.timed_out(round(batch.deadline - batch.started, 1))
            for task, key in list(pending.items()):
                task.cancel()
                del pending[task]
                yield Outcome(key=key, error=reason, skipped=stopped)
        finally:
            unsubscribe()
            for task in pending:
                task.cancel()

    async def gather(self, batch: Batch, policy: StagePolicy, noun: str, plural: str) -> AsyncGenerator[Outcome, None]:
        """Yield each outcome of `batch` as it arrives, then one per call cut short (see module doc)."""
        loop = asyncio.get_running_loop()
        pending, total = dict(batch.tasks), len(batch.tasks)
        needed = policy.needed(total)
        arrived: list[Outcome] = []
        succeeded = 0
        grace_s, grace_until = policy.grace_s, math.inf
        cut: Cut | None = None
        wakeup = Wakeup()
        for task in pending:
            task.add_done_callback(wakeup.set)
        unsubscribe = self.control.subscribe(wakeup.set)
        try:
            while pending:
                cut = self._interruption()
                if cut is not None:
                    break
                done = [task for task in pending if task.done()]
                if not done:
                    deadline = min(batch.deadline, grace_until)
                    if loop.time() >= deadline:
                        cut = Cut.GRACE if grace_until <= loop.time() else Cut.TIMEOUT
                        break
                    await wakeup.wait(deadline)
                    continue
                for task in done:
                    outcome = self._settle(task, pending)
                    arrived.append(outcome)
                    succeeded += outcome.completion is not None
                    yield outcome
                if succeeded >= needed and grace_until == math.inf:
                    grace_s = policy.grace_after(arrived)
                    grace_until = loop.time() + grace_s
                if pending and policy.decided(list(pending.values())):
                    batch.late, pending = pending, {}  # they finish in the background
                    break
            if pending and cut is not None:
                reason = notices.cut_reason(cut, noun, plural, succeeded, total, grace_s, policy.timeout_s)
                for task, key in list(pending.items()):
                    task.cancel()
                    del pending[task]
                    yield Outcome(
                        key=key,
                        error=reason,
                        skipped=reason.kind is ErrorKind.CANCELLED,
                        attempts=list(batch.attempts.get(key, [])),
                    )
        finally:
            unsubscribe()
            for task in pending:
                task.cancel()

    @staticmethod
    def _settle(task: asyncio.Task[Outcome], pending: dict[asyncio.Task[Outcome], str]) -> Outcome:
        """A finished task's outcome, labelled with its seat (the place for a seat's fallback)."""
        outcome = task.result()
        outcome.key = pending.pop(task)
        return outcome

    def _interruption(self) -> Cut | None:
        if self.control.stopped:
            return Cut.STOPPED
        if self.control.synthesize_requested:
            return Cut.SYNTHESIZE
        return None

    async def shutdown(self) -> None:
        """Cancel every call still running (the consumer went away, or a stage was cut short)."""
        pending = [task for task in self._tasks if not task.done()]
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.wait(pending, timeout=_SHUTDOWN_WAIT_S)
