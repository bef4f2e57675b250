"""The stage runner's waits (see core/engine/runner.py's docstring): `gather` schedules one
stage's wait, `_StageTally` keeps its per-call bookkeeping (pending, arrived, quorum, grace), and
`collect_late` awaits what an early decision left running. Every wait goes through one `Wakeup`."""

from __future__ import annotations

import asyncio
import math
from collections.abc import AsyncGenerator, Iterator

from core.engine import notices
from core.engine.batch import Batch, Outcome, StagePolicy
from core.engine.control import CouncilControl
from core.engine.notices import Cut
from core.models import ErrorKind


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


async def gather(
    batch: Batch, policy: StagePolicy, control: CouncilControl, noun: str, plural: str
) -> AsyncGenerator[Outcome, None]:
    """Yield each outcome of `batch` as it arrives, then one per call cut short (see runner.py)."""
    loop = asyncio.get_running_loop()
    tally = _StageTally(batch, policy)
    cut: Cut | None = None
    wakeup = Wakeup()
    for task in tally.pending:
        task.add_done_callback(wakeup.set)
    batch.listeners.append(wakeup.set)  # a call that waited for its slot starts: new deadlines
    unsubscribe = control.subscribe(wakeup.set)
    try:
        while tally.pending:
            cut = _interruption(control)
            if cut is not None:
                break
            for key in tally.newly_begun():
                yield Outcome(key=key, began=True)
            done = [task for task in tally.pending if task.done()]
            if not done:
                if tally.leave_decided(loop.time()):
                    break
                cut = tally.expired(loop)
                if cut is not None:
                    break
                await wakeup.wait(tally.deadline)
                continue
            for task in done:
                yield tally.settle(task)
            tally.start_grace_at_quorum(loop.time())
            if tally.leave_decided(loop.time()):
                break
        if tally.pending and cut is not None:
            for outcome in tally.cut_short(cut, noun, plural):
                yield outcome
    finally:
        unsubscribe()
        batch.listeners.remove(wakeup.set)
        for task in tally.pending:
            task.cancel()


class _StageTally:
    """What one stage's wait has seen: the calls still pending, the outcomes so far, its grace."""

    def __init__(self, batch: Batch, policy: StagePolicy) -> None:
        self.batch = batch
        self.policy = policy
        self.pending = dict(batch.tasks)
        self.total = len(batch.tasks)
        self.needed = policy.needed(self.total)
        self.arrived: list[Outcome] = []
        self.succeeded = 0
        self.grace_s = policy.grace_s
        self.grace_until = math.inf
        self.decided_for: frozenset[str] | None = None  # the pending keys the decision was asked about
        self.decided = False
        self.straggler_s = math.inf  # the grace of the calls a decision left: grace_after when it was made

    @property
    def deadline(self) -> float:
        """The loop time at which the stage stops waiting: its time limit, its grace's end, or the
        moment the calls a decision made irrelevant become stragglers."""
        return min(self.batch.time_limit, self.grace_end, self.leave_at)

    @property
    def leave_at(self) -> float:
        """When the pending calls may be left running (once decided): each has run for the grace
        a straggler gets (`grace_after`) since its own start. A decision does not race calls about
        to arrive, only stragglers: a council of equally fast reviewers keeps every ballot, and
        which ballots the chairman is given does not hang on a few milliseconds of scheduling."""
        if not self.decided:
            return math.inf
        return self._shifted_by_waits(self.batch.started + self.straggler_s)

    def _shifted_by_waits(self, moment: float) -> float:
        """`moment` for the calls still pending, shifted by the longest any of them waited for its
        slot (it gets the time the calls that did not wait got); never while one still waits."""
        keys = self.pending.values()
        if any(key in self.batch.waiting for key in keys):
            return math.inf
        return moment + max((self.batch.waited_s(k) for k in keys), default=0.0)

    @property
    def grace_end(self) -> float:
        """The grace's end: for a call still pending that started after waiting for its slot, shifted
        by the time it waited (it gets the grace the calls that did not wait got); one still
        waiting is not cut by grace at all."""
        if self.grace_until == math.inf or (not self.batch.starts and not self.batch.waiting):
            return self.grace_until
        return self._shifted_by_waits(self.grace_until)

    def newly_begun(self) -> list[str]:
        """The calls announced as waiting that have begun since the last look."""
        batch = self.batch
        if not batch.announce:
            return []
        begun = [key for key in batch.announce if key in batch.begun and key in self.pending.values()]
        batch.announce.difference_update(begun)
        return begun

    def expired(self, loop: asyncio.AbstractEventLoop) -> Cut | None:
        if loop.time() < self.deadline:
            return None
        return Cut.GRACE if self.grace_end <= loop.time() else Cut.TIMEOUT

    def settle(self, task: asyncio.Task[Outcome]) -> Outcome:
        outcome = _settle(task, self.pending)
        self.arrived.append(outcome)
        self.succeeded += outcome.completion is not None
        return outcome

    def start_grace_at_quorum(self, now: float) -> None:
        if self.succeeded >= self.needed and self.grace_until == math.inf:
            self.grace_s = self.policy.grace_after(self.arrived)
            self.grace_until = now + self.grace_s

    def leave_decided(self, now: float) -> bool:
        """True when the pending calls can no longer change the outcome and have become stragglers
        (`leave_at`): they are left running in batch.late (they finish in the background)."""
        if not self.pending or self.policy.decide is None:
            return False
        keys = frozenset(self.pending.values())
        if keys != self.decided_for:  # asked again only when a call has ended
            self.decided_for, self.decided = keys, self.policy.decided(list(keys))
            if self.decided:  # its grace from the arrivals it was decided on
                self.straggler_s = self.policy.grace_after(self.arrived)
        if now < self.leave_at:
            return False
        self.batch.late, self.pending = self.pending, {}
        return True

    def cut_short(self, cut: Cut, noun: str, plural: str) -> Iterator[Outcome]:
        """Cancel each call still pending, as an outcome that says why."""
        policy = self.policy
        reason = notices.cut_reason(cut, noun, plural, self.succeeded, self.total, self.grace_s, policy.timeout_s)
        for task, key in list(self.pending.items()):
            task.cancel()
            del self.pending[task]
            yield Outcome(
                key=key,
                error=reason,
                skipped=reason.kind is ErrorKind.CANCELLED,
                attempts=list(self.batch.attempts.get(key, [])),
            )


async def collect_late(batch: Batch, control: CouncilControl) -> AsyncGenerator[Outcome, None]:
    """The outcomes of the calls a decision left running, as they end (cut at the batch's
    deadline or by stop())."""
    loop = asyncio.get_running_loop()
    pending = dict(batch.late)
    wakeup = Wakeup()
    for task in pending:
        task.add_done_callback(wakeup.set)
    unsubscribe = control.subscribe(wakeup.set)
    try:
        while pending and not control.stopped and loop.time() < batch.deadline:
            for task in [t for t in pending if t.done()]:
                yield _settle(task, pending)
            if pending:
                await wakeup.wait(batch.deadline)
        stopped = control.stopped
        reason = notices.stopped() if stopped else notices.timed_out(round(batch.deadline - batch.started, 1))
        for task, key in list(pending.items()):
            task.cancel()
            del pending[task]
            yield Outcome(key=key, error=reason, skipped=stopped)
    finally:
        unsubscribe()
        for task in pending:
            task.cancel()


def _settle(task: asyncio.Task[Outcome], pending: dict[asyncio.Task[Outcome], str]) -> Outcome:
    """A finished task's outcome, labelled with its seat (the place for a seat's fallback)."""
    outcome = task.result()
    outcome.key = pending.pop(task)
    return outcome


def _interruption(control: CouncilControl) -> Cut | None:
    if control.stopped:
        return Cut.STOPPED
    if control.synthesize_requested:
        return Cut.SYNTHESIZE
    return None
