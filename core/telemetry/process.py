"""What a process's metrics and traces take from its settings, set once by its start-up (bot/cli.py):
process-wide state, which no service builds (a test or an application may open several services)."""

from __future__ import annotations

from core.models.seats import all_models
from core.settings import Settings
from core.telemetry import metrics, tracing


def configure_telemetry(settings: Settings) -> None:
    """The configured models become metric label values first (others only while there is room),
    and spans hold questions and answers only when COUNCIL_TRACE_CONTENT asks."""
    metrics.model_label.configure(all_models([*settings.default_members, settings.default_chairman]))
    tracing.record_content(settings.telemetry.trace_content)
