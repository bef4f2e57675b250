"""The one door adapters (CLI, Slack, Discord, the API, MCP, the web app) use into the core: the
council service and the few functions and handles they call without one (the CLI's doctor,
migrate-db, exports; `CouncilRun`, `CouncilMessages`). `__all__` lists them; adapters import nothing
else from core but the shared types (core.models, core.settings, core.errors, core.paths, core.modes),
and tests/test_import_graph.py keeps it so.

What a process needs before or without a service (its logging and telemetry set-up, the stored
councils a listing reads) is imported at once; `CouncilService` and the rest of core/service/council.py
only when first named (PEP 562), so that `council history` and `--help` do not import what councils
need to run.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from core.service.process import Redactor, collect_metrics, configure_logging, configure_telemetry
from core.service.stored import open_queries

if TYPE_CHECKING:
    from core.service.council import (
        CouncilMessages,
        CouncilRun,
        CouncilService,
        CouncilView,
        EvalRunView,
        WebSessions,
        bind_metrics_port,
        continued,
        count_platform_write,
        diagnose,
        feedback_lines,
        leaderboard_document,
        lineup_problems,
        migrate_database,
        timeline,
        to_json,
    )

__all__ = [
    "CouncilMessages",
    "CouncilRun",
    "CouncilService",
    "CouncilView",
    "EvalRunView",
    "Redactor",
    "WebSessions",
    "bind_metrics_port",
    "collect_metrics",
    "configure_logging",
    "configure_telemetry",
    "continued",
    "count_platform_write",
    "diagnose",
    "feedback_lines",
    "leaderboard_document",
    "lineup_problems",
    "migrate_database",
    "open_queries",
    "timeline",
    "to_json",
]


def __getattr__(name: str) -> Any:
    # Every name of __all__ not imported above is the service module's (a test keeps the two lists equal).
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module("core.service.council"), name)
    globals()[name] = value  # named once: later lookups do not come back here
    return value
