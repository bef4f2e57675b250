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

What a stage may do beyond waiting:
- fallback seats: `launch_seats` runs each seat's chain in one task: a model that fails hands
  the seat to the next one (each but the last gets an equal share of the time left), all
  within the batch's deadline; the outcome names the model that answered and the `attempts`.
- adaptive grace: `StagePolicy.grace_after(arrived)` is max(grace_min_s, grace_factor x median
  latency of the answers so far), capped at grace_s. The cut reason quotes the value used.
- early decision: `StagePolicy.decided(pending)` is asked after every arrival; True ends the
  stage and leaves the calls still running in `batch.late` (they finish in the background; the
  caller collects them with `Calls.collect_late`).

Where the pieces live: this module launches the calls (`Calls`); core/engine/batch.py holds what
is passed around (Outcome, StagePolicy, Batch, SeatCall); core/engine/waiting.py the waits
(`Wakeup`, the stage's `gather` and its bookkeeping, `collect_late`).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncGenerator, Coroutine
from contextlib import nullcontext
from functools import partial
from typing import Any

from core.engine import notices, waiting
from core.engine.batch import Batch, Call, Outcome, SeatCall, StagePolicy, StartHook
from core.engine.control import CouncilControl
from core.models import Attempt, ErrorInfo, ErrorKind, Usage
from core.providers.base import ProviderError
from core.providers.scheduling import CALL_HOOK
from core.telemetry.tracing import StageTrace

log = logging.getLogger(__name__)

_SHUTDOWN_WAIT_S = 2.0  # how long cleanup waits for cancelled calls to unwind


class Calls:
    """The calls of one council: started as named tasks, measured, and cancelled together."""

    def __init__(self, council_id: str, control: CouncilControl) -> None:
        self.council_id = council_id
        self.control = control
        self.usage = Usage()
        self._tasks: set[asyncio.Task[Any]] = set()
        self.stage: StageTrace | None = None  # the stage whose calls are being launched (run_council sets it)

    def spawn(self, coro: Coroutine[Any, Any, Outcome], what: str) -> asyncio.Task[Outcome]:
        # Named after the council so that a leak would be easy to attribute (tests check it).
        # A late review keeps the context of the stage that launched it.
        context = self.stage.context() if self.stage is not None else None
        task = asyncio.create_task(coro, name=f"council-{self.council_id}-{what}", context=context)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def outcome(self, call: Call, hook: StartHook | None = None) -> Outcome:
        """One model call as an outcome; never raises (except cancellation). Its latency counts
        from its start: after the wait for its endpoint's slot, if it had to wait (`hook`)."""
        start = time.perf_counter()
        if hook is not None:
            CALL_HOOK.set(hook)  # this task's context only: the router tells it when the call starts

        def latency() -> float:
            return time.perf_counter() - (hook.started_at if hook and hook.started_at else start)

        try:
            completion = await call()
        except ProviderError as exc:
            return Outcome(error=exc.info(), latency_s=latency())
        except Exception as exc:  # a provider bug must cost one member, not the whole council
            log.exception("model call crashed")
            return Outcome(error=notices.crash(exc), latency_s=latency())
        self.usage += completion.usage
        if not completion.text.strip():
            error = ErrorInfo(kind=ErrorKind.BAD_RESPONSE, message="the model returned an empty answer")
            return Outcome(error=error, latency_s=latency())
        return Outcome(completion=completion, latency_s=latency())

    def launch(self, calls: dict[str, Call], noun: str, timeout_s: float) -> Batch:
        """Start `calls` in parallel (as tasks, so they run while events are being consumed)."""
        now = asyncio.get_running_loop().time()
        batch = Batch({}, now + timeout_s, started=now, timeout_s=timeout_s)
        for key, call in calls.items():
            batch.tasks[self.spawn(self.outcome(call, StartHook(batch, key)), f"{noun}:{key}")] = key
        return batch

    def launch_seats(self, seats: dict[str, SeatCall], noun: str, timeout_s: float) -> Batch:
        """Start each seat's chain in parallel: one task per seat, under the batch's deadline."""
        now = asyncio.get_running_loop().time()
        batch = Batch({}, now + timeout_s, started=now, attempts={key: [] for key in seats}, timeout_s=timeout_s)
        for key, seat in seats.items():
            outcome = self.seat_outcome(seat, batch, batch.attempts[key], StartHook(batch, key))
            batch.tasks[self.spawn(outcome, f"{noun}:{key}")] = key
        return batch

    async def seat_outcome(self, seat: SeatCall, batch: Batch, attempts: list[Attempt], hook: StartHook) -> Outcome:
        """The first model of the chain that answers; each failure is appended to `attempts`.
        A model with a successor gets an equal share of the time left, so a hung primary leaves
        its fallback time to answer."""
        loop = asyncio.get_running_loop()
        outcome = Outcome()
        for index, model in enumerate(seat.models):
            left = len(seat.models) - index
            share = (batch.deadline - loop.time()) / left
            try:
                async with asyncio.timeout(share) if left > 1 else nullcontext():
                    outcome = await self.outcome(partial(seat.call, model), hook)
            except TimeoutError:
                outcome = Outcome(error=notices.timed_out(round(share, 1)), latency_s=share)
            outcome.model = model
            if outcome.completion is not None or left == 1:
                break
            assert outcome.error is not None
            attempts.append(Attempt(model=model, error=outcome.error))
        outcome.attempts = list(attempts)
        return outcome

    def gather(self, batch: Batch, policy: StagePolicy, noun: str, plural: str) -> AsyncGenerator[Outcome, None]:
        """Yield each outcome of `batch` as it arrives, then one per call cut short (see module doc)."""
        # The generator itself, not a wrapper: each level an outcome passes through costs CPU.
        return waiting.gather(batch, policy, self.control, noun, plural)

    def collect_late(self, batch: Batch) -> AsyncGenerator[Outcome, None]:
        """The outcomes of the calls a decision left running, as they end (cut at the batch's
        deadline or by stop())."""
        return waiting.collect_late(batch, self.control)

    async def shutdown(self) -> None:
        """Cancel every call still running (the consumer went away, or a stage was cut short)."""
        pending = [task for task in self._tasks if not task.done()]
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.wait(pending, timeout=_SHUTDOWN_WAIT_S)
