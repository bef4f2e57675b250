"""The commands that serve: the Slack and Discord bots, the worker, the API and the MCP server."""

from __future__ import annotations

import argparse
import asyncio
import functools
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

from bot.cli_commands.exits import EXIT_OK
from bot.cli_commands.session import check_lineup
from bot.cli_commands.startup import reporting
from core.errors import ConfigurationError
from core.models import Platform, seats
from core.service import CouncilService


def _check_secret_key(service: CouncilService) -> None:
    """A malformed COUNCIL_SECRET_KEY stops a bot before it starts, not at the first secret it reads."""
    if service.settings.tenants.secret_key is not None:
        service.tenants.box  # noqa: B018 - built now: ConfigurationError saying what is wrong


def _host(service: CouncilService, args: argparse.Namespace) -> str:
    """Where the Slack HTTP receiver and the metrics server listen: --host, else COUNCIL_HTTP_HOST."""
    return getattr(args, "host", None) or service.settings.serving.http_host


async def cmd_bots(service: CouncilService, args: argparse.Namespace) -> int:
    settings = service.settings
    _check_secret_key(service)
    worker = not args.no_worker
    if not worker and not service.durable.across_processes:
        raise ConfigurationError(
            "--no-worker needs PostgreSQL (DATABASE_URL=postgresql://...): "
            "on SQLite the bot process runs its own councils."
        )
    tasks = []
    slack = args.command in ("slack", "serve") and (
        settings.slack.bot_token or settings.slack.oauth or args.command == "slack"
    )
    if slack:
        from bot.slack.app import run_slack

        http = getattr(args, "http", False)
        bot = run_slack(service, settings, http=http, port=args.port, host=_host(service, args), worker=worker)
        tasks.append(reporting("Slack", settings.slack.api_url, bot))
    if args.command in ("discord", "serve") and (settings.discord.token or args.command == "discord"):
        from bot.discord.client import run_discord

        # One worker per process serves every platform's queue: beside Slack, Slack's runs it.
        # Both bots register their deliverers before their first await, so it starts knowing both.
        discord = run_discord(service, settings, worker=worker and not slack)
        tasks.append(reporting("Discord", settings.discord.api_url, discord))
    if args.command == "serve" and settings.api.keys:
        tasks.append(_api_server().serve_api(service))
    if not tasks:
        raise ConfigurationError(
            "Nothing to serve: set SLACK_BOT_TOKEN (or SLACK_CLIENT_ID/SLACK_CLIENT_SECRET), DISCORD_TOKEN "
            "and/or COUNCIL_API_KEYS (see docs/slack.md, discord.md, api.md)."
        )
    async with _metrics_server(service, args):  # a busy port stops the bot before it connects anywhere
        await check_lineup(service, args)
        service.router.warm_up(seats.all_models([*settings.default_members, settings.default_chairman]))
        await _together(tasks)
    return EXIT_OK


async def _together(coroutines: list[Any]) -> None:
    """Until every one ends; the first to fail ends the others (cancelled and waited for), and
    its error is raised: a bot that cannot start must not leave the others running."""
    try:
        async with asyncio.TaskGroup() as group:
            for coroutine in coroutines:
                group.create_task(coroutine)
    except BaseExceptionGroup as failed:  # the CLI reports the first cause as its one line
        raise failed.exceptions[0] from None


async def cmd_worker(service: CouncilService, args: argparse.Namespace) -> int:
    """Councils only: no events are taken here. The platforms this process can post to are the
    ones whose tokens are set (their councils' queues are the ones it serves)."""
    settings = service.settings
    _check_secret_key(service)
    if not service.durable.across_processes:
        raise ConfigurationError(
            "council worker needs PostgreSQL (DATABASE_URL=postgresql://...): "
            "on SQLite the bot process runs its own councils."
        )
    slack = settings.slack.bot_token is not None or settings.slack.oauth  # OAuth: each team's stored token
    if not slack and settings.discord.token is None:
        raise ConfigurationError(
            "council worker posts answers to Slack and/or Discord: "
            "set SLACK_BOT_TOKEN (or SLACK_CLIENT_ID/SLACK_CLIENT_SECRET) and/or DISCORD_TOKEN "
            "(see docs/slack.md, discord.md)."
        )
    async with AsyncExitStack() as stack:
        await stack.enter_async_context(_metrics_server(service, args))  # a busy port: one line, before any connection
        await check_lineup(service, args)
        platforms = []
        if slack:
            from bot.slack.app import build_slack_bot

            bot = build_slack_bot(service, settings)  # registers how Slack councils are shown and answered
            stack.push_async_callback(bot.aclose)
            platforms.append(("Slack", settings.slack.api_url))
        if settings.discord.token is not None:
            from bot.discord.surface import discord_surface
            from bot.following import deliver_durable

            surface = await reporting(
                "Discord", settings.discord.api_url, discord_surface(settings)
            )  # REST only: intake stays with `council discord`
            stack.push_async_callback(surface.aclose)
            service.register_deliverer(Platform.DISCORD, functools.partial(deliver_durable, service, surface))
            platforms.append(("Discord", settings.discord.api_url))
        service.router.warm_up([*settings.default_members, settings.default_chairman])
        await reporting(*platforms[0], service.durable.work())
    return EXIT_OK


@asynccontextmanager
async def _metrics_server(service: CouncilService, args: argparse.Namespace) -> AsyncIterator[None]:
    """/metrics, /health and /ready on --metrics-port (or COUNCIL_METRICS_PORT), when one is given,
    until the command ends."""
    listener = getattr(args, "metrics_listener", None)  # bound before the database opened (bot/cli_commands/session.py)
    if listener is None:
        yield
        return
    runner = await service.telemetry.listen(listener)
    try:
        yield
    finally:
        await runner.cleanup()


def _api_server() -> Any:
    """bot.api.server, imported only by the commands that serve it (its packages are an extra)."""
    try:
        from bot.api import server
    except ModuleNotFoundError as exc:
        raise ConfigurationError(
            f"The API and MCP server need the `api` extra ({exc.name} is missing): pip install 'llm-council-bot[api]'."
        ) from None
    return server


async def cmd_api(service: CouncilService, args: argparse.Namespace) -> int:
    server = _api_server()
    await check_lineup(service, args)
    await server.serve_api(service, args.host, args.port)
    return EXIT_OK


async def cmd_mcp(service: CouncilService, args: argparse.Namespace) -> int:
    await _api_server().serve_mcp_stdio(service)
    return EXIT_OK


async def cmd_web(service: CouncilService, args: argparse.Namespace) -> int:
    if getattr(args, "revoke", None):
        who = None if args.revoke == "all" else args.revoke
        ended = await service.sessions.revoke(who)
        whose = "everyone's" if who is None else f"{who}'s"
        print(f"Ended {ended} browser sign-in{'s' if ended != 1 else ''} ({whose}).")
        return EXIT_OK
    _api_server()  # the same extra: one clear line when it is missing
    from bot.web.server import serve_web

    await check_lineup(service, args)
    await serve_web(service, args.host, args.port)
    return EXIT_OK
