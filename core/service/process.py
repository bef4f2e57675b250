"""A process's own set-up, done by its start-up (bot/cli.py) before and without the service: logging,
metrics, traces and the redactor its error lines pass through. The door (core/service/__init__.py)
offers these without importing the service, so that a command that opens no service (`council
history`) does not pay for it to start."""

from __future__ import annotations

from core.shared.redact import Redactor
from core.telemetry.logs import configure_logging
from core.telemetry.metrics import collect as collect_metrics
from core.telemetry.process import configure_telemetry

__all__ = ["Redactor", "collect_metrics", "configure_logging", "configure_telemetry"]
