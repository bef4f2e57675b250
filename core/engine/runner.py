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

Extension points (issue 12: fallback seats, adaptive grace, early decision):
- adaptive grace: `StagePolicy.grace_after(arrived)` returns the grace period once the quorum is
  reached, given the outcomes so far (their `latency_s`); override it for
  max(minimum, factor x median latency) capped at a maximum. The cut reason quotes the value used.
- early decision: `StagePolicy.decided(arrived)` is asked after every arrival; True cuts the
  remaining calls short with `Cut.DECIDED` (their outcomes are skipped, not failures).
- fallback seats: a key is a seat, not a model. `gather` settles each finished task in
  `_settle`; a seat whose call failed can be given its next Call there (start it with
  `self.spawn`, add its done-callback to the wakeup and put it back in `pending` under the same
  key) instead of yielding the failure: the seat keeps the batch's hard deadline.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import AsyncGenerator, Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass
from typing import Any

from core.engine import notices
from core.engine.control import CouncilControl
from core.engine.notices import Cut
from core.models import Completion, ErrorInfo, ErrorKind, Usage
from core.providers.base import ProviderError

log = logging.getLogger(__name__)

_SHUTDOWN_WAIT_S = 2.0  # how long cleanup waits for cancelled calls to unwind

Call = Callable[[], Awaitable[Completion]]


@dataclass
class Outcome:
    """How one parallel call ended."""

    key: str = ""
    completion: Completion | None = None
    error: ErrorInfo | None = None
    latency_s: float | None = None
    skipped: bool = False  # cut short by stop()/synthesize_now(): the user's choice, not a failure


@dataclass(frozen=True)
class StagePolicy:
    """When a parallel stage stops waiting: quorum, grace period and hard time limit."""

    quorum: float
    grace_s: float
    timeout_s: float

    def needed(self, total: int) -> int:
        """How many calls must succeed before the grace period starts."""
        return max(1, math.ceil(self.quorum * total))

    def grace_after(self, arrived: Sequence[Outcome]) -> float:
        """The grace period to grant once the quorum is reached (fixed here; see the module doc)."""
        return self.grace_s

    def decided(self, arrived: Sequence[Outcome]) -> bool:
        """Whether the remaining calls can no longer change the outcome (never, here)."""
        return False


@dataclass
class Batch:
    """Calls running in parallel: task -> key (its seat), and when their time limit expires."""

    tasks: dict[asyncio.Task[Outcome], str]
    deadline: float


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
        deadline = asyncio.get_running_loop().time() + timeout_s
        return Batch({self.spawn(self.outcome(call), f"{noun}:{key}"): key for key, call in calls.items()}, deadline)

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
                if pending and policy.decided(arrived):
                    cut = Cut.DECIDED
                    break
            if pending and cut is not None:
                reason = notices.cut_reason(cut, noun, plural, succeeded, total, grace_s, policy.timeout_s)
                for task, key in list(pending.items()):
                    task.cancel()
                    del pending[task]
                    yield Outcome(key=key, error=reason, skipped=reason.kind is ErrorKind.CANCELLED)
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
