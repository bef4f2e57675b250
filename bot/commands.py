"""The `council` commands. Imported by `bot.cli` only once the arguments are parsed: the commands pull in
the whole service (pydantic, httpx, aiohttp, storage), which `council --help` must not pay for. Each
command lives in `bot/cli_commands/` by concern; this module loads the settings and dispatches."""

from __future__ import annotations

import argparse
from collections.abc import Awaitable, Callable

from bot.cli_commands.ask import cmd_ask
from bot.cli_commands.eval import cmd_eval
from bot.cli_commands.migrate import cmd_migrate_db
from bot.cli_commands.records import (
    cmd_doctor,
    cmd_export,
    cmd_feedback,
    cmd_history,
    cmd_leaderboard,
    cmd_prune,
    cmd_show,
    cmd_usage,
)
from bot.cli_commands.servers import bind_metrics, cmd_api, cmd_bots, cmd_mcp, cmd_web, cmd_worker, stop_lineup_checks
from bot.cli_commands.shutdown import until_stopped
from bot.cli_commands.startup import check_bot_settings
from bot.cli_commands.tenants import cmd_budget, cmd_purge, cmd_rotate_secret
from core.service import CouncilService
from core.settings import Settings, load_settings


def settings_for(args: argparse.Namespace) -> Settings:
    overrides = {}
    if getattr(args, "members", None):
        overrides["COUNCIL_MODELS"] = args.members
    if getattr(args, "chairman", None):
        overrides["COUNCIL_CHAIRMAN"] = args.chairman
    settings = load_settings(**overrides)
    settings.storage.database  # noqa: B018 - an unusable DATABASE_URL is reported before anything starts
    if args.command in ("slack", "discord"):
        check_bot_settings(settings, args)
    return settings


async def run(args: argparse.Namespace, settings: Settings) -> int:
    if args.command == "migrate-db":
        return await cmd_migrate_db(args)
    bind_metrics(settings, args)  # a busy metrics port: one line, before the database is opened
    service = await CouncilService.open(settings, single_council=args.command in SINGLE_COUNCIL)
    try:
        command = COMMANDS[args.command](service, args)
        if args.command in STOPPED_BY_SIGNAL:
            return await until_stopped(service, command)  # SIGTERM: bot/cli_commands/shutdown.py
        return await command
    finally:
        stop_lineup_checks()
        await service.aclose()


# The serving commands: each stops on SIGTERM (or SIGINT) the same way, handing its councils over.
STOPPED_BY_SIGNAL = frozenset({"slack", "discord", "serve", "worker", "api", "web"})

# The terminal's commands that run a council or call models run one at a time (`eval` runs many).
SINGLE_COUNCIL = frozenset({"ask", "doctor"})

COMMANDS: dict[str, Callable[[CouncilService, argparse.Namespace], Awaitable[int]]] = {
    "ask": cmd_ask,
    "history": cmd_history,
    "show": cmd_show,
    "export": cmd_export,
    "leaderboard": cmd_leaderboard,
    "feedback": cmd_feedback,
    "usage": cmd_usage,
    "prune": cmd_prune,
    "purge": cmd_purge,
    "rotate-secret": cmd_rotate_secret,
    "budget": cmd_budget,
    "doctor": cmd_doctor,
    "slack": cmd_bots,
    "discord": cmd_bots,
    "serve": cmd_bots,
    "worker": cmd_worker,
    "api": cmd_api,
    "mcp": cmd_mcp,
    "web": cmd_web,
    "eval": cmd_eval,
}
