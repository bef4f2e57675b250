"""Several Slack processes on one database behave as one bot: HTTP replicas behind a load balancer
and several Socket Mode connections of one app. An event delivered to two of them (Slack's retry
landing on another replica, a redelivery on another connection) starts one council."""

from __future__ import annotations

import asyncio
import contextlib
import json

import aiohttp
import pytest

from bot.slack.app import run_slack
from core.service import CouncilService
from tests.conftest import BACKENDS, backend_url, make_settings
from tests.loopback_app import free_port
from tests.slack_fake import FakeSlack, sign
from tests.test_slack_run import SECRET, TOKEN, answers, mention

REPLICAS = 2


@pytest.fixture(params=BACKENDS)
def database_url(request, tmp_path) -> str:
    return backend_url(request, tmp_path)


@pytest.fixture
async def fake():
    f = await FakeSlack(token=TOKEN).start()
    yield f
    await f.close()


def mention_body(fake: FakeSlack, event_id: str) -> dict:
    return mention(fake, "What is six times seven?", event_id)[1]


@contextlib.asynccontextmanager
async def processes(llm, tmp_path, database_url, fake: FakeSlack, **slack_env: str):
    """REPLICAS services (own pools) each running `run_slack`, as separate replicas would."""
    settings = make_settings(llm, tmp_path, DATABASE_URL=database_url, SLACK_API_URL=fake.api_url, **slack_env)
    services = [await CouncilService.open(settings) for _ in range(REPLICAS)]
    ports = [free_port() for _ in services]
    tasks = [
        asyncio.create_task(
            run_slack(svc, settings, http="SLACK_APP_TOKEN" not in slack_env, port=port, host="127.0.0.1")
        )
        for svc, port in zip(services, ports, strict=True)
    ]
    try:
        yield services, ports
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for svc in services:
            await svc.aclose()


async def councils_of(services: list[CouncilService]) -> int:
    return len(await services[0].queries.history(None, "all"))


def answers_to(fake: FakeSlack, body: dict) -> int:
    return sum(1 for a in answers(fake) if a["thread_ts"] == body["event"]["ts"])


async def post_event(session: aiohttp.ClientSession, port: int, body: dict, retry: int = 0) -> None:
    raw = json.dumps(body)
    headers = {"Content-Type": "application/json", **sign(SECRET, raw)}
    if retry:
        headers |= {"X-Slack-Retry-Num": str(retry), "X-Slack-Retry-Reason": "http_timeout"}
    async with session.post(f"http://127.0.0.1:{port}/slack/events", data=raw, headers=headers) as r:
        assert r.status == 200


async def test_http_replicas_start_one_council_for_an_event_and_its_retry(llm, tmp_path, database_url, fake):
    async with processes(llm, tmp_path, database_url, fake, SLACK_BOT_TOKEN=TOKEN, SLACK_SIGNING_SECRET=SECRET) as (
        services,
        ports,
    ):
        body = mention_body(fake, "EvReplica1")
        async with aiohttp.ClientSession() as session:
            for port in ports:  # wait until both replicas serve
                for _ in range(200):
                    with contextlib.suppress(aiohttp.ClientConnectionError):
                        async with session.get(f"http://127.0.0.1:{port}/health") as response:
                            if response.status == 200:
                                break
                    await asyncio.sleep(0.05)
            for attempt, port in enumerate(ports):  # the first delivery, then Slack's retry elsewhere
                await post_event(session, port, body, retry=attempt)
            await fake.wait_for(lambda: answers(fake), timeout=30)
            # A later event on the replica that took the retry: a council that retry had started,
            # on the same scripted models, would have answered before this one does.
            sentinel = mention_body(fake, "EvReplica2")
            await post_event(session, ports[-1], sentinel)
            await fake.wait_for(lambda: answers_to(fake, sentinel), timeout=30)
        assert answers_to(fake, body) == 1 and len(answers(fake)) == 2
        assert await councils_of(services) == 2  # the event's and the sentinel's


async def test_socket_mode_connections_start_one_council_for_a_redelivered_event(llm, tmp_path, database_url, fake):
    async with processes(llm, tmp_path, database_url, fake, SLACK_BOT_TOKEN=TOKEN, SLACK_APP_TOKEN="xapp-test") as (
        services,
        _,
    ):
        await fake.wait_for(lambda: len(fake.sockets) == REPLICAS, timeout=15)
        body = mention_body(fake, "EvSocket1")
        envelopes = [await fake.send_envelope("events_api", body, socket=i) for i in range(REPLICAS)]
        await fake.wait_for(lambda: all(fake.socket_ack(e) for e in envelopes), timeout=5)
        await fake.wait_for(lambda: answers(fake), timeout=30)
        # A later event on the last connection (the redelivery's): answered after any council
        # that redelivery had started.
        sentinel = mention_body(fake, "EvSocket2")
        ack = await fake.send_envelope("events_api", sentinel, socket=REPLICAS - 1)
        await fake.wait_for(lambda: fake.socket_ack(ack) and answers_to(fake, sentinel), timeout=30)
        assert answers_to(fake, body) == 1 and len(answers(fake)) == 2
        assert await councils_of(services) == 2  # the event's and the sentinel's
