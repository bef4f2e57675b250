"""A command that runs over the service: the service opened for it (after the metrics port is bound),
stopped on SIGTERM for the serving commands, and closed after it with the line-up check a serving
command started beside it."""

from __future__ import annotations

import argparse
import asyncio
import logging
from collections.abc import Awaitable, Callable

from bot.cli_commands.shutdown import until_stopped
from core.errors import ConfigurationError
from core.service import CouncilService, bind_metrics_port, lineup_problems
from core.settings import Settings

log = logging.getLogger("council.startup")

ServiceCommand = Callable[[CouncilService, argparse.Namespace], Awaitable[int]]

# The serving commands: each stops on SIGTERM (or SIGINT) the same way, handing its councils over.
STOPPED_BY_SIGNAL = frozenset({"slack", "discord", "serve", "worker", "api", "web"})

# The terminal's commands that run a council or call models run one at a time (`eval` runs many).
SINGLE_COUNCIL = frozenset({"ask", "doctor"})


async def with_service(command: ServiceCommand, args: argparse.Namespace, settings: Settings) -> int:
    bind_metrics(settings, args)  # a busy metrics port: one line, before the database is opened
    service = await CouncilService.open(settings, single_council=args.command in SINGLE_COUNCIL)
    try:
        running = command(service, args)
        if args.command in STOPPED_BY_SIGNAL:
            return await until_stopped(service, running)  # SIGTERM: bot/cli_commands/shutdown.py
        return await running
    finally:
        stop_lineup_checks()
        await service.aclose()


def bind_metrics(settings: Settings, args: argparse.Namespace) -> None:
    """The metrics port (--metrics-port, COUNCIL_METRICS_PORT) bound first, before the database is
    opened: a busy port is one line and an exit at once, whatever else is wrong (an unreachable
    PostgreSQL would otherwise keep the process retrying it first). Kept in `args.metrics_listener`."""
    if not hasattr(args, "metrics_port"):
        return
    port = args.metrics_port if args.metrics_port is not None else settings.telemetry.metrics_port
    if port is not None:
        args.metrics_listener = bind_metrics_port(port, getattr(args, "host", None) or settings.serving.http_host)


async def check_lineup(service: CouncilService, args: argparse.Namespace) -> None:
    """Every serving command's first look at its line-up: a warning line per unknown model or
    unreachable endpoint, logged as the server starts (it does not wait for the model lists), or,
    with --strict (COUNCIL_STRICT_STARTUP), a refusal to start."""
    if getattr(args, "strict", False) or service.settings.serving.strict_startup:
        problems = await lineup_problems(service)
        if problems:
            more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
            raise ConfigurationError(f"{problems[0]}{more}; not starting (--strict / COUNCIL_STRICT_STARTUP).")
        return
    task = asyncio.create_task(_warn_about_lineup(service), name="council-lineup-check")
    _CHECKS.add(task)
    task.add_done_callback(_CHECKS.discard)


_CHECKS: set[asyncio.Task[None]] = set()  # the line-up checks running beside their servers


def stop_lineup_checks() -> None:
    """A command that ends, or refuses to start, takes its line-up check with it: a check left
    running would meet the closed service and say so on a line of its own."""
    for task in list(_CHECKS):
        task.cancel()


async def _warn_about_lineup(service: CouncilService) -> None:
    try:
        problems = await lineup_problems(service)
    except Exception as exc:  # the check is advice: the councils report their own failures
        log.warning("could not check the line-up: %s", type(exc).__name__)
        return
    for problem in problems:
        log.warning("%s", problem)
