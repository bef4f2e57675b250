"""Memory-aware scheduling of model calls: a GPU serving several large models cannot
hold them all at once, and an endpoint that serves one request at a time queues the rest.

- `COUNCIL_MEMORY_BUDGET_GB`: the memory of an endpoint's models that may be in use at once (a
  number for every endpoint, or a JSON object of endpoint to GB: `local`, `openrouter`, or the
  endpoint's base URL). `MODEL_MEMORY_GB`: each model's size (a JSON object of model id to GB);
  a `local:` model without one weighs its GGUF file plus its context's key-value cache (from the
  file's header as the runtime reads it, else estimated: `local_size_gb`); any other model without
  one weighs nothing (it is not held back).
- `LLM_MAX_CONCURRENT`: calls in flight at once per endpoint (a number, or JSON as above).

Each call holds its model's weight on its endpoint's `WeightedSemaphore` (first come, first served,
so a large model is never starved by small ones) and a concurrency slot, for as long as it runs.
The gates are per endpoint and per event loop, shared by every council and router of the process
that use the same budget: two councils in one process never overcommit one GPU. Other processes
(more bot replicas, durable workers) each hold their own budget: give each its share.

`plan_batches` is the plan a stage shows in its progress (largest first, first fit); the calls are
queued in that order, so they run in those batches when nothing else holds the endpoint. A model
larger than the whole budget runs alone. A call that waits tells the stage runner through
`CALL_HOOK` (queued, then started), so its time limit and grace count from its own start.
"""

from __future__ import annotations

import asyncio
import weakref
from collections import deque
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Protocol

from core.settings import Settings
from core.settings.providers import per_endpoint

GB = 1024**3
# Key-value cache per token of context, estimated for the small GGUF models this product bundles
# (2 x layers x KV width x 2 bytes is 40-80 KB for them): generous, since the estimate only orders.
KV_BYTES_PER_TOKEN = 96 * 1024


class CallHook(Protocol):
    """What the stage runner learns about one call: it waits for a slot, then it starts."""

    def queued(self) -> None: ...
    def started(self) -> None: ...


CALL_HOOK: ContextVar[CallHook | None] = ContextVar("council_call_hook", default=None)


class WeightedSemaphore:
    """`capacity` units shared by weighted holders, served first come, first served. A weight above
    the capacity is taken as the whole capacity (it runs alone)."""

    def __init__(self, capacity: float) -> None:
        self.capacity = capacity
        self.used = 0.0
        self._waiters: deque[tuple[float, asyncio.Future[None]]] = deque()

    def _clamp(self, weight: float) -> float:
        return min(max(weight, 0.0), self.capacity)

    async def acquire(self, weight: float) -> None:
        weight = self._clamp(weight)
        if not self._waiters and self.used + weight <= self.capacity:
            self.used += weight
            return
        future = asyncio.get_running_loop().create_future()
        entry = (weight, future)
        self._waiters.append(entry)
        try:
            await future
        except BaseException:
            if future.done() and not future.cancelled():
                self.release(weight)  # granted as it was cancelled: give it back
            elif entry in self._waiters:
                self._waiters.remove(entry)
                self._wake()
            raise

    def release(self, weight: float) -> None:
        self.used = max(0.0, self.used - self._clamp(weight))
        self._wake()

    def _wake(self) -> None:
        while self._waiters:
            weight, future = self._waiters[0]
            if future.done():
                self._waiters.popleft()
                continue
            if self.used + weight > self.capacity:
                return
            self._waiters.popleft()
            self.used += weight
            future.set_result(None)


@dataclass
class EndpointGate:
    memory: WeightedSemaphore | None = None
    calls: asyncio.Semaphore | None = None


# loop -> (endpoint, budget, max concurrent) -> gate: one gate per endpoint and setting in a process.
_GATES: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[tuple[str, float | None, int | None], EndpointGate]]
_GATES = weakref.WeakKeyDictionary()


def _gate(endpoint: str, budget_gb: float | None, max_calls: int | None) -> EndpointGate:
    gates = _GATES.setdefault(asyncio.get_running_loop(), {})
    key = (endpoint, budget_gb, max_calls)
    if key not in gates:
        gates[key] = EndpointGate(
            WeightedSemaphore(budget_gb) if budget_gb else None,
            asyncio.Semaphore(max_calls) if max_calls else None,
        )
    return gates[key]


def _for(value: dict[str, float] | float | None, endpoint: str, name: str) -> float | None:
    if isinstance(value, dict):
        return value.get(endpoint.rstrip("/"), value.get(name))
    return value


@dataclass
class Scheduling:
    """The gates of one router's settings (see the module doc)."""

    budgets: dict[str, float] | float | None = None
    max_calls: dict[str, float] | float | None = None
    sizes: Mapping[str, float] = field(default_factory=dict)  # model id -> GB

    @classmethod
    def from_settings(cls, settings: Settings) -> Scheduling:
        return cls(
            per_endpoint(settings.providers.memory_budget_gb, "COUNCIL_MEMORY_BUDGET_GB"),
            per_endpoint(settings.providers.max_concurrent, "LLM_MAX_CONCURRENT"),
            settings.providers.model_memory_gb,
        )

    @property
    def enabled(self) -> bool:
        return self.budgets is not None or self.max_calls is not None

    def budget_for(self, endpoint: str, name: str) -> float | None:
        return _for(self.budgets, endpoint, name)

    def gate(self, endpoint: str, name: str) -> EndpointGate | None:
        budget = self.budget_for(endpoint, name)
        calls = _for(self.max_calls, endpoint, name)
        if budget is None and calls is None:
            return None
        return _gate(endpoint, budget, int(calls) if calls else None)

    @asynccontextmanager
    async def slot(self, endpoint: str, name: str, weight_gb: float) -> AsyncIterator[None]:
        """Hold a concurrency slot and `weight_gb` of the endpoint's budget for one call."""
        gate = self.gate(endpoint, name) if self.enabled else None
        if gate is None:
            yield
            return
        hook = CALL_HOOK.get()
        if hook is not None:
            hook.queued()
        weight = weight_gb if gate.memory is not None else 0.0
        if gate.calls is not None:
            await gate.calls.acquire()
        try:
            if gate.memory is not None:
                await gate.memory.acquire(weight)
            try:
                if hook is not None:
                    hook.started()
                yield
            finally:
                if gate.memory is not None:
                    gate.memory.release(weight)
        finally:
            if gate.calls is not None:
                gate.calls.release()


def plan_batches(sizes: Mapping[str, float], budget_gb: float) -> list[list[str]]:
    """Largest first, first fit: the batches of `sizes` (key -> GB) within `budget_gb`; a key that
    alone exceeds the budget is a batch of its own. Ties keep the given order."""
    order = sorted(sizes, key=lambda k: -sizes[k])
    batches: list[list[str]] = []
    room: list[float] = []
    for key in order:
        size = min(sizes[key], budget_gb)
        for i, free in enumerate(room):
            if size <= free + 1e-9:
                batches[i].append(key)
                room[i] -= size
                break
        else:
            batches.append([key])
            room.append(budget_gb - size)
    return batches


def local_size_gb(path_size_bytes: int, n_ctx: int, kv_bytes: int | None = None) -> float:
    """A local model's memory: its GGUF file and its context's key-value cache (`kv_bytes`, from the
    file's header: core/providers/gguf_info.py; else estimated)."""
    return (path_size_bytes + (kv_bytes if kv_bytes is not None else n_ctx * KV_BYTES_PER_TOKEN)) / GB
