"""The `council` commands. Imported by `bot.cli` only once the arguments are parsed; this module loads the
settings and dispatches. A command's module is imported when that command runs, never before (the
table below names it, as pip's `commands_dict` does): `council history` must not pay for the engine,
the renderers of chat platforms or the browser app that other commands import. Each command lives
in `bot/cli_commands/` by concern."""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, NamedTuple, cast

from bot.cli_commands.startup import check_bot_settings
from core.settings import Settings, load_settings

if TYPE_CHECKING:
    from bot.cli_commands.session import ServiceCommand

# A command that opens what it needs itself (no service): `history` lists the database, `migrate-db` copies one.
OwnCommand = Callable[[Settings, argparse.Namespace], Awaitable[int]]


class Command(NamedTuple):
    """Where a command's function lives; `service`: it is called with the service, opened for it and
    closed after it (bot/cli_commands/session.py), else with the settings alone."""

    module: str
    function: str
    service: bool = True

    def load(self) -> object:
        return getattr(importlib.import_module(self.module), self.function)


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
    command = COMMANDS[args.command]
    if not command.service:
        return await cast(OwnCommand, command.load())(settings, args)
    from bot.cli_commands.session import with_service

    return await with_service(cast("ServiceCommand", command.load()), args, settings)


_RECORDS, _SERVERS, _TENANTS = "bot.cli_commands.records", "bot.cli_commands.servers", "bot.cli_commands.tenants"

COMMANDS: dict[str, Command] = {
    "ask": Command("bot.cli_commands.ask", "cmd_ask"),
    "history": Command("bot.cli_commands.history", "cmd_history", service=False),
    "show": Command(_RECORDS, "cmd_show"),
    "export": Command(_RECORDS, "cmd_export"),
    "leaderboard": Command(_RECORDS, "cmd_leaderboard"),
    "feedback": Command(_RECORDS, "cmd_feedback"),
    "usage": Command(_RECORDS, "cmd_usage"),
    "prune": Command(_RECORDS, "cmd_prune"),
    "purge": Command(_TENANTS, "cmd_purge"),
    "rotate-secret": Command(_TENANTS, "cmd_rotate_secret"),
    "budget": Command(_TENANTS, "cmd_budget"),
    "doctor": Command(_RECORDS, "cmd_doctor"),
    "migrate-db": Command("bot.cli_commands.migrate", "cmd_migrate_db", service=False),
    "slack": Command(_SERVERS, "cmd_bots"),
    "discord": Command(_SERVERS, "cmd_bots"),
    "serve": Command(_SERVERS, "cmd_bots"),
    "worker": Command(_SERVERS, "cmd_worker"),
    "api": Command(_SERVERS, "cmd_api"),
    "mcp": Command(_SERVERS, "cmd_mcp"),
    "web": Command(_SERVERS, "cmd_web"),
    "eval": Command("bot.cli_commands.eval", "cmd_eval"),
}
