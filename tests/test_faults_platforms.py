"""Platform connections that drop mid-council (issue 37): Slack's Socket Mode socket closed by
Slack's side, abruptly or after its `disconnect` warning: the bot opens a new connection, the
council in flight is answered once, an event sent on the new connection is answered, and Slack's
redelivery of an event (its envelope not acked before the drop) starts nothing twice. Discord's
gateway closed mid-council: the bot resumes its session and gets the events it missed."""

from __future__ import annotations

import asyncio

import pytest

from bot.slack.app import run_slack
from core.service import CouncilService
from tests.conftest import MEMBERS, make_settings
from tests.llm_server import council_member
from tests.slack_fake import FakeSlack
from tests.test_discord_adapter import answer_messages, wait_finished
from tests.test_discord_adapter import env as discord_env  # noqa: F401 (fixture)
from tests.test_durable_processes import TOKEN
from tests.test_durable_processes import fake as fake
from tests.test_slack_run import answers, mention

pytestmark = pytest.mark.slow


def answered(fake: FakeSlack, ts: str) -> int:
    return [a["thread_ts"] for a in answers(fake)].count(ts)


@pytest.mark.parametrize("warned", [False, True], ids=["abrupt", "warned"])
async def test_slack_socket_dropped_mid_council(llm, tmp_path, fake: FakeSlack, warned):
    for name in MEMBERS:
        llm.script(name, council_member(f"{name}: 42.", synthesis=f"Final answer by {name}: 42.", latency_s=1.0))
    settings = make_settings(
        llm, tmp_path, SLACK_BOT_TOKEN=TOKEN, SLACK_API_URL=fake.api_url, SLACK_APP_TOKEN="xapp-test"
    )
    service = await CouncilService.open(settings)
    task = asyncio.create_task(run_slack(service, settings))
    try:
        await fake.wait_for(lambda: fake.sockets, timeout=10)
        ts, body = mention(fake, "What is six times seven?", "EvD1")
        first = await fake.send_envelope("events_api", body)
        await fake.wait_for(lambda: fake.socket_ack(first), timeout=5)
        await llm.wait_for_requests(lambda: llm.requests_for(stage=1), timeout=10)

        await fake.drop_sockets(warned=warned)  # mid-council: its members are answering
        await fake.wait_for(lambda: fake.sockets, timeout=15)
        assert len(fake.calls_to("apps.connections.open")) >= 2  # a new connection, asked for anew

        await fake.send_envelope("events_api", body, retry_attempt=1)  # Slack's redelivery
        ts2, body2 = mention(fake, "And seven times six?", "EvD2")
        await fake.send_envelope("events_api", body2)
        await fake.wait_for(lambda: answered(fake, ts) and answered(fake, ts2), timeout=40)
        # A later event: answered after anything the redelivery could have started.
        ts3, body3 = mention(fake, "And eight times five?", "EvD3")
        await fake.send_envelope("events_api", body3)
        await fake.wait_for(lambda: answered(fake, ts3), timeout=40)
        assert (answered(fake, ts), answered(fake, ts2), answered(fake, ts3)) == (1, 1, 1)
        assert len(answers(fake)) == 3
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await service.aclose()


async def test_discord_gateway_dropped_mid_council_resumes(discord_env, llm):  # noqa: F811
    """The gateway connection closed by Discord (4000, resumable) while a council runs, and a
    mention sent while the bot is away: the bot RESUMEs its session (no new IDENTIFY), gets the
    mention it missed, and each council is answered exactly once."""
    fake = discord_env.fake
    for name in MEMBERS:
        llm.script(name, council_member(f"{name}: 42.", synthesis=f"Final answer by {name}: 42.", latency_s=1.0))
    await fake.push_message(f"<@{fake.bot_id}> What is six times seven?")
    await llm.wait_for_requests(lambda: llm.requests_for(stage=1), timeout=10)
    identified = len(fake.identifies)

    await fake.drop_gateway()
    missed = await fake.push_message(f"<@{fake.bot_id}> And seven times six?")  # while it is away
    await fake.wait_for(lambda: fake.resumes, 20)
    await wait_finished(fake, 2, within_s=60)
    assert len(fake.identifies) == identified  # resumed, not a fresh session that lost the events
    assert len(answer_messages(fake)) == 2
    assert {int(m["channel_id"]) for m in answer_messages(fake)} == {int(t["id"]) for t in fake.threads()}
    assert int(missed["id"]) in {int(t["id"]) for t in fake.threads()}
    await asyncio.sleep(1)  # nothing answered twice after the replay
    assert len(answer_messages(fake)) == 2
