"""The Prometheus metrics (prometheus-client), and the text an HTTP server answers /metrics with.

Label values are bounded: platforms, modes, statuses, outcomes (`ok` or an ErrorKind) and stages
are fixed sets, and a model id becomes a label only when it is configured or among the first
`MAX_MODEL_LABELS` ids seen (else `other`). A workspace (tenant) is a label only on its budget's
gauge, and only once it has a budget. No question, user or channel is ever a label.

Several processes on one host (workers beside a bot) add up through prometheus-client's
multiprocess mode: with PROMETHEUS_MULTIPROC_DIR set (before the process starts) every process
writes its values there and any of them serves the sum. Gauges are per process (`livesum`: a
dead process's share goes with it) except the queue depth, which is read from the database at
scrape time (`mostrecent`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from prometheus_client import Counter, Gauge, Histogram

# The metrics, made on first use (`__getattr__` below): annotated, not assigned, so that these
# names are what `__annotations__` lists and what the type checker knows.
COUNCILS_STARTED: Counter
COUNCILS_FINISHED: Counter
COUNCILS_RUNNING: Gauge
COUNCIL_DURATION: Histogram
STAGE_DURATION: Histogram
FIRST_TOKEN: Histogram
MODEL_CALLS: Counter
MODEL_CALL_DURATION: Histogram
MODEL_FIRST_TOKEN: Histogram
MODEL_TOKENS: Counter
MODEL_COST: Counter
QUEUE_DEPTH: Gauge
ADMISSION_WAITING: Gauge
SLOTS_IN_USE: Gauge
PLATFORM_WRITES: Counter
READY: Gauge
LOCAL_RUNTIME_CRASHES: Counter
TENANT_BUDGET_USED: Gauge

MULTIPROCESS_DIR_ENV = "PROMETHEUS_MULTIPROC_DIR"
MAX_MODEL_LABELS = 64
OTHER = "other"

# Councils last seconds to minutes; stages and calls seconds; first tokens sub-second to a minute.
_COUNCIL_BUCKETS = (1, 2.5, 5, 10, 20, 30, 45, 60, 90, 120, 180, 300, 600, float("inf"))
_CALL_BUCKETS = (0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60, 120, 300, float("inf"))


def _define() -> dict[str, Any]:
    """Every metric, by name (prometheus-client imported only now: see the module docstring)."""
    return {**_council_metrics(), **_model_metrics(), **_process_metrics()}


def _council_metrics() -> dict[str, Any]:
    from prometheus_client import Counter, Gauge, Histogram

    return {
        "COUNCILS_STARTED": Counter("council_councils_started", "Councils started", ["platform", "mode"]),
        "COUNCILS_FINISHED": Counter("council_councils_finished", "Councils finished", ["platform", "mode", "status"]),
        "COUNCILS_RUNNING": Gauge("council_councils_running", "Councils running now", multiprocess_mode="livesum"),
        "COUNCIL_DURATION": Histogram(
            "council_duration_seconds", "From stage 1 until the answer was complete", ["mode"], buckets=_COUNCIL_BUCKETS
        ),
        "STAGE_DURATION": Histogram(
            "council_stage_duration_seconds", "Duration of each stage of a council", ["stage"], buckets=_CALL_BUCKETS
        ),
        "FIRST_TOKEN": Histogram(
            "council_first_token_seconds",
            "From the council's start until the first token of its answer was shown",
            ["mode"],
            buckets=_COUNCIL_BUCKETS,
        ),
    }


def _model_metrics() -> dict[str, Any]:
    from prometheus_client import Counter, Histogram

    return {
        "MODEL_CALLS": Counter("council_model_calls", "Model calls, by how they ended", ["model", "outcome"]),
        "MODEL_CALL_DURATION": Histogram(
            "council_model_call_duration_seconds", "Latency of one model call", ["model"], buckets=_CALL_BUCKETS
        ),
        "MODEL_FIRST_TOKEN": Histogram(
            "council_model_first_token_seconds",
            "Time to a streamed call's first token",
            ["model"],
            buckets=_CALL_BUCKETS,
        ),
        "MODEL_TOKENS": Counter(
            "council_model_tokens", "Tokens used, by model and type (input, output)", ["model", "type"]
        ),
        "MODEL_COST": Counter("council_model_cost_usd", "Cost in US dollars, by model", ["model"]),
    }


def _process_metrics() -> dict[str, Any]:
    """The process's queues, slots and platform writes."""
    from prometheus_client import Counter, Gauge

    return {
        "QUEUE_DEPTH": Gauge(
            "council_queue_depth",
            "Council jobs waiting in each durable queue",
            ["queue"],
            multiprocess_mode="mostrecent",
        ),
        "ADMISSION_WAITING": Gauge(
            "council_admission_waiting", "Councils waiting for a concurrency slot", multiprocess_mode="livesum"
        ),
        "SLOTS_IN_USE": Gauge(
            "council_slots_in_use", "Concurrency slots held by running councils", multiprocess_mode="livesum"
        ),
        "PLATFORM_WRITES": Counter(
            "council_platform_writes",
            "Writes to a chat platform, by outcome (ok, rate_limited, error)",
            ["platform", "outcome"],
        ),
        # /ready's answer at the last scrape (alerts: deploy/prometheus/alerts.yml); on a host of
        # several processes the least ready one's.
        "READY": Gauge(
            "council_ready", "1 when /ready answers 200, 0 when it answers 503", multiprocess_mode="livemin"
        ),
        "LOCAL_RUNTIME_CRASHES": Counter(
            "council_local_runtime_crashes",
            "Local model runtimes that crashed or did not load, by model file",
            ["model"],
        ),
        "TENANT_BUDGET_USED": Gauge(
            "council_tenant_budget_used_ratio",
            "Share of its daily budget a workspace or server has spent, when it has one (at its last question)",
            ["tenant"],
            multiprocess_mode="mostrecent",
        ),
    }


class _Uncounted:
    """What a metric is in a process that counts nothing: every update is dropped."""

    def labels(self, *values: str) -> _Uncounted:
        return self

    def inc(self, amount: float = 1) -> None:
        pass

    def dec(self, amount: float = 1) -> None:
        pass

    def set(self, value: float) -> None:
        pass

    def observe(self, value: float) -> None:
        pass


class _Metrics:
    """The metrics, registered with prometheus-client on first use. A process that serves no
    /metrics (the terminal's commands: `collect(False)`) never imports prometheus-client, which
    would cost its start-up ~25 ms before the first line."""

    def __init__(self) -> None:
        self.collecting = True
        self._defined: dict[str, Any] | None = None

    def get(self, name: str) -> Any:
        return self.registered()[name] if self.collecting else _UNCOUNTED

    def registered(self) -> dict[str, Any]:
        if self._defined is None:
            self._defined = _define()
        return self._defined


_UNCOUNTED = _Uncounted()
_metrics = _Metrics()
_NAMES = frozenset(__annotations__)


def __getattr__(name: str) -> Any:
    """`metrics.MODEL_CALLS` and the others (PEP 562): made on first use."""
    if name in _NAMES:
        return _metrics.get(name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def collect(enabled: bool) -> None:
    """Whether this process counts at all; call it before the first council."""
    _metrics.collecting = enabled


def count_platform_write(platform: str, outcome: str) -> None:
    """One write to a chat platform: `ok`, `rate_limited` (its 429) or `error` (bot/surface.py)."""
    _metrics.get("PLATFORM_WRITES").labels(platform, outcome).inc()


class ModelLabels:
    """Model ids as label values: the configured ones, then the first few others, then `other`."""

    def __init__(self, limit: int = MAX_MODEL_LABELS) -> None:
        self.limit = limit
        self._known: set[str] = set()

    def configure(self, model_ids: Iterable[str]) -> None:
        self._known.update(model_ids)

    def __call__(self, model_id: str) -> str:
        if model_id in self._known:
            return model_id
        if len(self._known) < self.limit:
            self._known.add(model_id)
            return model_id
        return OTHER


model_label = ModelLabels()


def multiprocess_dir() -> str | None:
    return os.environ.get(MULTIPROCESS_DIR_ENV) or None


def exposition() -> tuple[bytes, str]:
    """The metrics of this process (or of every process on the host, in multiprocess mode) and
    their content type."""
    from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, CollectorRegistry, generate_latest, multiprocess

    _metrics.registered()  # every metric is listed, counted or not
    if multiprocess_dir() is None:
        return generate_latest(REGISTRY), CONTENT_TYPE_LATEST

    registry = CollectorRegistry()
    multiprocess.MultiProcessCollector(registry)
    return generate_latest(registry), CONTENT_TYPE_LATEST


def forget_dead_processes() -> None:
    """In multiprocess mode, drop the live gauges of processes that are gone (killed ones never
    said so), so that `livesum` counts only the living."""
    directory = multiprocess_dir()
    if directory is None or not os.path.isdir(directory):
        return
    from prometheus_client import multiprocess

    pids: set[int] = set()
    for name in os.listdir(directory):
        if name.startswith("gauge_live") and name.endswith(".db"):
            digits = name.rsplit("_", 1)[-1].removesuffix(".db")
            if digits.isdigit():
                pids.add(int(digits))
    for pid in pids - {os.getpid()}:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            multiprocess.mark_process_dead(pid, directory)
        except PermissionError:
            pass  # alive, another user's
