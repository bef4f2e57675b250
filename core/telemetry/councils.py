"""One council as the operator sees it: counted, timed, logged once at its start and once at its
end, and traced as the `council` span its stages hang under. Driven from the council's own task
(core/durable/runs.py), which the council's stages and calls inherit their context from."""

from __future__ import annotations

import logging
import time
from contextlib import ExitStack
from typing import Any

from core.models import ChairmanToken, CouncilEvent, CouncilRequest, CouncilResult, CouncilStarted, CouncilStatus
from core.telemetry import metrics, tracing
from core.telemetry.context import Where

log = logging.getLogger("core.council")

# result.timings keys that are stages; the metric's `stage` label drops the `_s`. agreement and
# escalation are auto mode's (core/engine/auto.py).
STAGE_TIMINGS = ("stage1_s", "agreement_s", "escalation_s", "stage2_s", "stage3_s", "late_reviews_s")


def stage_label(timing: str) -> str:
    return timing.removesuffix("_s")


class CouncilTelemetry:
    """Use as a context manager around the whole life of a council in this process."""

    def __init__(self, request: CouncilRequest, *, resumed: bool = False) -> None:
        self.request = request
        self.resumed = resumed
        self.platform = request.origin.platform.value
        self.mode = request.config.mode
        self.started = time.perf_counter()
        self.stage1_at: float | None = None
        self._first_token = False
        self._stack = ExitStack()
        self.span: Any = None

    def __enter__(self) -> CouncilTelemetry:
        Where(self.request.council_id, self.platform, self.request.origin.channel_id).enter()
        tracer = tracing.tracer()
        if tracer is not None:
            attributes: dict[str, Any] = {
                "council.id": self.request.council_id,
                "council.platform": self.platform,
                "council.mode": self.mode,
                "council.resumed": self.resumed,
                "council.members": len(self.request.config.members),
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": "llm-council",
            }
            if tracing.content_recorded():
                attributes["council.question"] = self.request.question
            parent = tracing.parent_context(self.request.trace)
            self.span = self._stack.enter_context(
                tracer.start_as_current_span(
                    "council",
                    context=parent,
                    attributes=attributes,
                    record_exception=False,
                    set_status_on_exception=False,
                )
            )
        if not self.resumed:
            metrics.COUNCILS_STARTED.labels(self.platform, self.mode).inc()
        metrics.COUNCILS_RUNNING.inc()
        log.info(
            "council %s %s: %s, %d members, %s",
            self.request.council_id,
            "resumed" if self.resumed else "started",
            self.platform,
            len(self.request.config.members),
            self.mode,
        )
        return self

    def saw(self, event: CouncilEvent) -> None:
        """Each event of the council as it passes (cheap: two type checks)."""
        if isinstance(event, ChairmanToken):
            if not self._first_token and self.stage1_at is not None:
                self._first_token = True
                metrics.FIRST_TOKEN.labels(self.mode).observe(time.perf_counter() - self.stage1_at)
        elif isinstance(event, CouncilStarted):
            self.stage1_at = time.perf_counter()

    def finished(self, result: CouncilResult) -> None:
        status = result.status.value
        metrics.COUNCILS_FINISHED.labels(self.platform, self.mode, status).inc()
        timings = result.timings
        if "total_s" in timings:
            metrics.COUNCIL_DURATION.labels(self.mode).observe(timings["total_s"])
        for timing in STAGE_TIMINGS:
            if timing in timings:
                metrics.STAGE_DURATION.labels(stage_label(timing)).observe(timings[timing])
        duration = timings.get("total_s", time.perf_counter() - self.started)
        if self.span is not None:
            self._annotate(result)
        error = f" ({result.error.kind.value})" if result.error is not None else ""
        log.info("council %s finished: %s%s in %.1f s", result.council_id, status, error, duration)

    def _annotate(self, result: CouncilResult) -> None:
        span = self.span
        span.set_attribute("council.status", result.status.value)
        span.set_attribute("gen_ai.usage.input_tokens", result.usage.prompt_tokens)
        span.set_attribute("gen_ai.usage.output_tokens", result.usage.completion_tokens)
        if result.usage.cost_usd is not None:
            span.set_attribute("council.cost_usd", result.usage.cost_usd)
        if result.error is not None:
            span.set_attribute("error.type", result.error.kind.value)
        if result.status is CouncilStatus.FAILED:
            from opentelemetry.trace import Status, StatusCode

            span.set_status(Status(StatusCode.ERROR, result.error.kind.value if result.error else "failed"))
        if tracing.content_recorded() and result.synthesis is not None:
            span.set_attribute("council.answer", result.synthesis.text)

    def __exit__(self, *exc: object) -> None:
        metrics.COUNCILS_RUNNING.dec()
        self._stack.close()
