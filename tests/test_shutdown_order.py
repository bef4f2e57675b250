"""A bot stopped mid-council stops its councils before it closes its connection to the platform:
a delivery in that window would write to a closed client ("delivery failed" at shutdown). The
real clients against the fakes (Discord's gateway, Slack's Socket Mode), the service on SQLite,
the shutdown the CLI does on Ctrl-C (the bot's task cancelled, then the service closed)."""

from __future__ import annotations

import asyncio
import logging

import discord
from discord.gateway import DiscordWebSocket

from bot.discord.client import run_discord
from bot.slack.app import run_slack
from core.service import CouncilService
from tests.conftest import MEMBERS, make_settings
from tests.discord_fake import FakeDiscord
from tests.llm_server import ByStage, Hang, Reply, WaitFor
from tests.logged import errors_logged
from tests.slack_fake import FakeSlack
from tests.test_slack_run import mention

SLACK_TOKEN = "xoxb-test"


def councils_running() -> list[str]:
    """This process's council tasks still running: runs (`council-<id>`) and their durable jobs
    with the deliveries that follow them (`council-job-<id>`); the worker and the lease are not."""
    names = [t.get_name() for t in asyncio.all_tasks() if not t.done()]
    return [n for n in names if n.startswith("council-") and not n.startswith(("council-worker", "council-owner"))]


def _slow_council(llm, at_close: list[list[str]]) -> None:
    """One member answers at once (the status shows it), one the moment the platform connection
    closes (its delivery would then write: the window this is about), one holds the council open."""
    fast = Reply("Fast.")
    llm.script(MEMBERS[0], ByStage(fast, fast, fast))
    llm.script(MEMBERS[1], WaitFor(lambda _: at_close, Reply("Late."), timeout_s=60))
    llm.script(MEMBERS[2], Hang())


async def _stop(bot: asyncio.Task, service: CouncilService, caplog) -> list[str]:
    """The CLI's shutdown on Ctrl-C: the bot's task cancelled, then the service closed; returns
    the "delivery failed" lines logged meanwhile (and asserts no error was)."""
    caplog.clear()
    with caplog.at_level(logging.INFO):
        bot.cancel()
        await asyncio.gather(bot, return_exceptions=True)
        await service.aclose()
    assert not errors_logged(caplog.records), [r.getMessage() for r in errors_logged(caplog.records)]
    return [r.getMessage() for r in caplog.records if "delivery failed" in r.getMessage()]


async def test_a_discord_bot_stopped_mid_council_stops_the_council_before_its_client(llm, tmp_path, caplog):
    base, gateway = discord.http.Route.BASE, DiscordWebSocket.DEFAULT_GATEWAY
    fake = await FakeDiscord().start()
    at_close: list[list[str]] = []
    fake.on_gateway_closed = lambda: at_close.append(councils_running())
    _slow_council(llm, at_close)
    settings = make_settings(llm, tmp_path, DISCORD_TOKEN="fake-bot-token", DISCORD_API_URL=fake.api_url)
    service = await CouncilService.open(settings)
    bot = asyncio.create_task(run_discord(service, settings))
    try:
        await fake.wait_ready()
        await fake.push_command("council", [{"name": "question", "type": 3, "value": "Who is slow?"}])
        await llm.wait_for_requests(lambda: len(llm.requests_for(stage=1)) == len(MEMBERS))
        await fake.wait_for(lambda: fake.calls_to("PATCH"), timeout=10)  # the status shows progress
        assert councils_running()
        failed = await _stop(bot, service, caplog)
    finally:
        await fake.close()
        discord.http.Route.BASE, DiscordWebSocket.DEFAULT_GATEWAY = base, gateway
    assert at_close == [[]], at_close  # every council had stopped when the client closed
    assert not failed, failed


async def test_a_slack_bot_stopped_mid_council_stops_the_council_before_its_connection(llm, tmp_path, caplog):
    fake = await FakeSlack(token=SLACK_TOKEN).start()
    at_close: list[list[str]] = []
    fake.on_socket_closed = lambda: at_close.append(councils_running())
    _slow_council(llm, at_close)
    settings = make_settings(
        llm, tmp_path, SLACK_BOT_TOKEN=SLACK_TOKEN, SLACK_API_URL=fake.api_url, SLACK_APP_TOKEN="xapp-test"
    )
    service = await CouncilService.open(settings)
    bot = asyncio.create_task(run_slack(service, settings))
    try:
        await fake.wait_for(lambda: fake.sockets, timeout=10)
        _, body = mention(fake, "Who is slow?", "EvStop1")
        await fake.send_envelope("events_api", body)
        await llm.wait_for_requests(lambda: len(llm.requests_for(stage=1)) == len(MEMBERS))
        await fake.wait_for(lambda: fake.calls_to("chat.postMessage"), timeout=10)  # the status message
        assert councils_running()
        failed = await _stop(bot, service, caplog)
    finally:
        await fake.close()
    assert at_close == [[]], at_close  # every council had stopped when the connection closed
    assert not failed, failed
