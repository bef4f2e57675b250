"""What the stage runner (core/engine/runner.py) passes around: the calls of a batch, how each
ended, and the policy that says when a stage stops waiting for them."""

from __future__ import annotations

import asyncio
import math
import statistics
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from core.models import Attempt, Completion, ErrorInfo

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
    began: bool = False  # not an end: a call announced as waiting for memory has started (`Batch.announce`)
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
    """Calls running in parallel: task -> key (its seat), and when their time limit expires.

    A call that waits for its endpoint's memory or concurrency slot (core/providers/scheduling.py)
    is not a straggler: while any call waits the stage has no time limit, and once it starts its
    time limit and its grace are shifted by the time it waited (`starts`): a member of a later
    memory batch gets the time a member of the first got. The calls in `announce` were told to
    followers as waiting: the stage's wait says when each begins (an Outcome with `began`)."""

    tasks: dict[asyncio.Task[Outcome], str]
    deadline: float
    started: float = 0.0  # loop time of the launch
    attempts: dict[str, list[Attempt]] = field(default_factory=dict)  # per seat, failed so far
    late: dict[asyncio.Task[Outcome], str] = field(default_factory=dict)  # left running by a decision
    timeout_s: float = math.inf
    waiting: set[str] = field(default_factory=set)  # keys whose call waits for a slot
    starts: dict[str, float] = field(default_factory=dict)  # key -> loop time its call started after waiting
    listeners: list[Callable[[], None]] = field(default_factory=list)  # woken when a waiting call starts
    announce: set[str] = field(default_factory=set)  # keys told to followers as waiting, not yet begun
    begun: set[str] = field(default_factory=set)  # keys whose call holds its slot (or never needed one)

    @property
    def time_limit(self) -> float:
        return math.inf if self.waiting else self.deadline

    def queued(self, key: str) -> None:
        self.waiting.add(key)

    def waited_s(self, key: str) -> float:
        """How long the call of `key` waited for its slot (0 if it did not)."""
        return self.starts[key] - self.started if key in self.starts else 0.0

    def call_started(self, key: str, now: float) -> None:
        self.begun.add(key)
        if key not in self.waiting:
            if key in self.announce:
                for listener in self.listeners:
                    listener()
            return  # it never waited: the batch's own deadline holds
        self.waiting.discard(key)
        self.starts[key] = now
        self.deadline = max(self.deadline, now + self.timeout_s)
        for listener in self.listeners:
            listener()


@dataclass
class StartHook:
    """Tells a batch that one of its calls waits for a slot, then starts (scheduling.CALL_HOOK)."""

    batch: Batch
    key: str
    started_at: float | None = None  # perf_counter time of the start, for the call's latency

    def queued(self) -> None:
        self.batch.queued(self.key)

    def started(self) -> None:
        self.started_at = time.perf_counter()
        self.batch.call_started(self.key, asyncio.get_running_loop().time())
