"""One model call, measured where it is made (core/providers/router.py): counted by model and
outcome, timed, its tokens and cost added, and traced as a `chat <model>` span under its stage,
with OpenTelemetry's generative-AI attributes (gen_ai.*)."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Sequence
from typing import Any

from core.models import ChatMessage, Completion, ErrorKind
from core.telemetry import metrics, tracing

OK = "ok"


class ModelCall:
    def __init__(
        self,
        model_id: str,
        provider: str,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int | None = None,
        temperature: float | None = None,
        streaming: bool = False,
    ) -> None:
        self.label = metrics.model_label(model_id)
        self.started = time.perf_counter()
        self.first_token_s: float | None = None
        self.span: Any = None
        tracer = tracing.tracer()
        if tracer is not None:
            attributes: dict[str, Any] = {
                "gen_ai.operation.name": "chat",
                "gen_ai.provider.name": provider,
                "gen_ai.system": provider,
                "gen_ai.request.model": model_id,
                "gen_ai.request.streaming": streaming,
            }
            if max_tokens is not None:
                attributes["gen_ai.request.max_tokens"] = max_tokens
            if temperature is not None:
                attributes["gen_ai.request.temperature"] = temperature
            if tracing.content_recorded():
                attributes["gen_ai.input.messages"] = json.dumps(
                    [{"role": m.role, "parts": [{"type": "text", "content": m.content}]} for m in messages],
                    ensure_ascii=False,
                )
            from opentelemetry.trace import SpanKind

            self.span = tracer.start_span(f"chat {model_id}", kind=SpanKind.CLIENT, attributes=attributes)

    def first_token(self) -> None:
        if self.first_token_s is None:
            self.first_token_s = time.perf_counter() - self.started
            metrics.MODEL_FIRST_TOKEN.labels(self.label).observe(self.first_token_s)

    def finished(self, completion: Completion) -> None:
        elapsed = time.perf_counter() - self.started
        usage = completion.usage
        metrics.MODEL_CALLS.labels(self.label, OK).inc()
        metrics.MODEL_CALL_DURATION.labels(self.label).observe(elapsed)
        if usage.prompt_tokens:
            metrics.MODEL_TOKENS.labels(self.label, "input").inc(usage.prompt_tokens)
        if usage.completion_tokens:
            metrics.MODEL_TOKENS.labels(self.label, "output").inc(usage.completion_tokens)
        if usage.cost_usd:
            metrics.MODEL_COST.labels(self.label).inc(usage.cost_usd)
        if self.span is not None:
            span = self.span
            span.set_attribute("gen_ai.response.model", completion.model)
            span.set_attribute("gen_ai.usage.input_tokens", usage.prompt_tokens)
            span.set_attribute("gen_ai.usage.output_tokens", usage.completion_tokens)
            if completion.finish_reason:
                span.set_attribute("gen_ai.response.finish_reasons", [completion.finish_reason])
            if usage.cost_usd is not None:
                span.set_attribute("council.cost_usd", usage.cost_usd)
            if self.first_token_s is not None:
                span.set_attribute("council.first_token_s", round(self.first_token_s, 4))
            if tracing.content_recorded():
                span.set_attribute(
                    "gen_ai.output.messages",
                    json.dumps(
                        [{"role": "assistant", "parts": [{"type": "text", "content": completion.text}]}],
                        ensure_ascii=False,
                    ),
                )
            span.end()

    def failed(self, exc: BaseException) -> None:
        """A call that raised: a typed provider error counts under its kind, a cut-short call
        (the stage moved on, the user stopped) as `cancelled`."""
        outcome = outcome_of(exc)
        metrics.MODEL_CALLS.labels(self.label, outcome).inc()
        metrics.MODEL_CALL_DURATION.labels(self.label).observe(time.perf_counter() - self.started)
        if self.span is not None:
            from opentelemetry.trace import Status, StatusCode

            self.span.set_attribute("error.type", outcome)
            if outcome != "cancelled":
                self.span.set_status(Status(StatusCode.ERROR, outcome))
            self.span.end()


def outcome_of(exc: BaseException) -> str:
    # A provider's error carries its ErrorKind (core/providers/base.py: ProviderError); read here
    # without importing the providers, which stand on this floor and import this module.
    kind = getattr(exc, "kind", None)
    if isinstance(kind, ErrorKind):
        return kind.value
    if isinstance(exc, asyncio.CancelledError | GeneratorExit):
        return "cancelled"
    if isinstance(exc, TimeoutError):
        return "timeout"
    return "unknown"
