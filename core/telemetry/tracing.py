"""OpenTelemetry traces, when the optional `otel` extra is installed and asked for.

Configured only by the standard OTEL_* variables: tracing is on when an OTLP endpoint
(OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) or OTEL_TRACES_EXPORTER is set
and OTEL_SDK_DISABLED is not true; the SDK reads the rest (OTEL_SERVICE_NAME,
OTEL_RESOURCE_ATTRIBUTES, OTEL_TRACES_SAMPLER, OTEL_BSP_*, the exporter's headers and timeouts,
OTEL_PROPAGATORS). A tracer provider installed by someone else (`opentelemetry-instrument`, a
test) is used as it is. Without any of that nothing is imported: `opentelemetry` loads on the
first council, never for `council --help`.

The spans (the shape is in `docs/dev/CONTRACTS.md`): `council` (root, or child of the caller's
`traceparent`), one per stage under it, and one `chat <model>` per model call under its stage,
with OpenTelemetry's generative-AI attributes. A durable council keeps its trace across workers:
its request carries the W3C context of its submission (`CouncilRequest.trace`).
"""

from __future__ import annotations

import contextvars
import logging
import os
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from core.models import CouncilRequest

log = logging.getLogger(__name__)

TRACER_NAME = "llm-council"
_TRUE = {"1", "true", "yes", "on"}
_ENDPOINTS = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")


class _Decision:
    """Whether this process traces: decided once, at the first span (or `reset` by a test)."""

    decided = False
    tracer: Any = None  # an opentelemetry Tracer, or None: tracing off
    content = False  # COUNCIL_TRACE_CONTENT: questions and answers in spans


def record_content(enabled: bool) -> None:
    _Decision.content = enabled


def content_recorded() -> bool:
    return _Decision.content


def use_provider(provider: Any) -> None:
    """Trace through `provider` (an SDK TracerProvider) instead of deciding from the environment:
    for an application embedding the service, and for tests (an in-memory exporter)."""
    _Decision.tracer = provider.get_tracer(TRACER_NAME)
    _Decision.decided = True


def reset() -> None:
    """Decide again from the environment at the next span."""
    _Decision.decided = False
    _Decision.tracer = None


def wanted() -> bool:
    """Whether the OTEL_* variables ask for traces to be exported."""
    if os.environ.get("OTEL_SDK_DISABLED", "").strip().lower() in _TRUE:
        return False
    exporter = os.environ.get("OTEL_TRACES_EXPORTER", "").strip().lower()
    if exporter:
        return exporter != "none"
    return any(os.environ.get(name, "").strip() for name in _ENDPOINTS)


def tracer() -> Any:
    """The tracer, or None when this process does not trace."""
    if not _Decision.decided:
        _Decision.tracer = _decide()
        _Decision.decided = True
    return _Decision.tracer


def _decide() -> Any:
    if "opentelemetry.trace" not in sys.modules and not wanted():
        return None  # not asked for, and nobody (opentelemetry-instrument) loaded it: never imported
    try:
        from opentelemetry import trace
    except ImportError:
        if wanted():
            log.warning(
                "OTEL_* settings ask for traces, but the `otel` extra is not installed: "
                "pip install 'llm-council-bot[otel]' (no traces are sent)"
            )
        return None
    provider = trace.get_tracer_provider()
    if not isinstance(provider, trace.ProxyTracerProvider | trace.NoOpTracerProvider):
        return provider.get_tracer(TRACER_NAME)  # installed by someone else
    if not wanted():
        return None
    provider = _sdk_provider()
    if provider is None:
        return None
    trace.set_tracer_provider(provider)
    return trace.get_tracer_provider().get_tracer(TRACER_NAME)


def _sdk_provider() -> Any:
    """A TracerProvider exporting as OTEL_TRACES_EXPORTER says (otlp by default, console)."""
    try:
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter
    except ImportError:
        log.warning(
            "OTEL_* settings ask for traces, but opentelemetry-sdk is missing: pip install 'llm-council-bot[otel]'"
        )
        return None
    provider = TracerProvider()  # the resource, sampler and limits come from OTEL_* variables
    names = [n.strip() for n in os.environ.get("OTEL_TRACES_EXPORTER", "otlp").lower().split(",") if n.strip()]
    for name in names:
        if name == "console":
            provider.add_span_processor(BatchSpanProcessor(ConsoleSpanExporter()))
        elif name == "otlp":
            exporter = _otlp_exporter()
            if exporter is not None:
                provider.add_span_processor(BatchSpanProcessor(exporter))
        elif name != "none":
            log.warning("OTEL_TRACES_EXPORTER=%s is not supported here (use otlp or console)", name)
    return provider


def _otlp_exporter() -> Any:
    protocol = (
        os.environ.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") or os.environ.get("OTEL_EXPORTER_OTLP_PROTOCOL") or ""
    ).strip()
    try:
        if protocol == "grpc":
            from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import (  # type: ignore[import-not-found]
                OTLPSpanExporter,
            )
        else:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    except ImportError:
        package = "opentelemetry-exporter-otlp-proto-grpc" if protocol == "grpc" else "the `otel` extra"
        log.warning("OTLP traces need %s, which is not installed (no traces are sent)", package)
        return None
    return OTLPSpanExporter()  # endpoint, headers, timeout, compression: OTEL_EXPORTER_OTLP_*


# --------------------------------------------------------------------------- propagation


def submitted(request: CouncilRequest) -> dict[str, str]:
    """A durable council's submission: a short `council.submit` span (child of the caller's, or
    the root of the council's trace), whose context the job keeps. Every worker that runs the
    council, the first or one resuming it, puts its `council` span under it. {} when not tracing."""
    tracer_ = tracer()
    if tracer_ is None:
        return {}
    from opentelemetry import propagate, trace
    from opentelemetry.trace import SpanKind

    attributes = {"council.id": request.council_id, "council.platform": request.origin.platform.value}
    span = tracer_.start_span("council.submit", kind=SpanKind.PRODUCER, attributes=attributes)
    headers: dict[str, str] = {}
    propagate.inject(headers, context=trace.set_span_in_context(span))
    span.end()
    return headers


def parent_context(headers: Mapping[str, str] | None) -> Any:
    """The OpenTelemetry context carried by `headers` (None: the current one)."""
    if not headers or tracer() is None:
        return None
    from opentelemetry import propagate

    return propagate.extract(dict(headers))


@contextmanager
def continued(headers: Mapping[str, str]) -> Iterator[None]:
    """Within: the caller's trace (its `traceparent` header) is the current one, so the councils
    started here are its children. Header names are matched case-insensitively."""
    wanted_headers = {k.lower(): v for k, v in headers.items() if k.lower() in ("traceparent", "tracestate")}
    if not wanted_headers or tracer() is None:
        yield
        return
    from opentelemetry import context, propagate

    token = context.attach(propagate.extract(wanted_headers))
    try:
        yield
    finally:
        context.detach(token)


# --------------------------------------------------------------------------- stages


class StageTrace:
    """One stage of a council: its span (when tracing) and the context its model calls run in."""

    def __init__(self, name: str) -> None:
        self.name = name
        tracer_ = tracer()
        self.span = tracer_.start_span(name, attributes={"council.stage": name}) if tracer_ is not None else None

    def context(self) -> contextvars.Context:
        """A context for one call's task: this stage's span is its parent, and log lines name the stage."""
        from core.telemetry import context as where

        ctx = contextvars.copy_context()
        ctx.run(where.stage.set, self.name)
        if self.span is not None:
            from opentelemetry import context, trace

            ctx.run(context.attach, trace.set_span_in_context(self.span))
        return ctx

    def end(self) -> None:
        if self.span is not None:
            self.span.end()
