"""`run_slack`, the entry point the CLI calls: HTTP Events API and Socket Mode, against the fake."""

from __future__ import annotations

import asyncio
import time

import aiohttp
import pytest

from bot.slack.app import api_base_url, build_slack_bot, run_slack
from core.service import CouncilService
from tests.conftest import make_settings
from tests.loopback_app import free_port
from tests.slack_fake import FakeSlack, encode_form, sign

SECRET = "run-secret"
TOKEN = "xoxb-test"


def command_fields(fake: FakeSlack, text: str, team: str = "T1", channel: str = "C1") -> dict[str, str]:
    """A `/council` slash command's form fields, as Slack posts them."""
    return {
        "team_id": team,
        "channel_id": channel,
        "channel_name": "general",
        "user_id": "U1",
        "user_name": "ada",
        "command": "/council",
        "text": text,
        "api_app_id": "A1",
        "response_url": fake.response_url(f"run-{team}"),
        "trigger_id": f"trig-{time.time()}",
    }


def mention(fake: FakeSlack, question: str, event_id: str) -> tuple[str, dict]:
    """A mention in C1 and its Events API body: (its ts, the body)."""
    ts = fake.add_message("C1", f"<@UBOT> {question}", user="U1")
    event = {"type": "app_mention", "user": "U1", "text": f"<@UBOT> {question}", "ts": ts, "channel": "C1"}
    body = {
        "team_id": "T1",
        "api_app_id": "A1",
        "type": "event_callback",
        "event": {**event, "event_ts": ts},
        "event_id": event_id,
        "event_time": int(time.time()),
    }
    return ts, body


def answers(fake: FakeSlack) -> list[dict]:
    """Answers in threads, posted (chat.postMessage) or streamed (chat.stopStream): {"thread_ts", "via"}."""
    found = []
    for c in fake.calls_to("chat.postMessage", "chat.stopStream"):
        if not c.ok or not any(b.get("block_id", "").startswith("council-a-") for b in c.args.get("blocks") or []):
            continue
        if c.method == "chat.postMessage":
            found.append({"thread_ts": c.args.get("thread_ts"), "via": c.method})
        else:
            message = fake.find(c.args["channel"], c.args["ts"]) or {}
            found.append({"thread_ts": message.get("thread_ts"), "via": c.method})
    return found


@pytest.fixture
async def fake():
    f = await FakeSlack(token=TOKEN).start()
    yield f
    await f.close()


async def test_api_url_is_normalised(llm, tmp_path, fake):
    for given in (fake.api_url, fake.api_url + "/", fake.api_url + "//"):
        settings = make_settings(llm, tmp_path, SLACK_BOT_TOKEN=TOKEN, SLACK_API_URL=given)
        assert api_base_url(settings) == fake.api_url + "/"
    assert api_base_url(make_settings(llm, tmp_path)) == "https://slack.com/api/"
    settings = make_settings(
        llm, tmp_path, SLACK_BOT_TOKEN=TOKEN, SLACK_SIGNING_SECRET=SECRET, SLACK_API_URL=fake.api_url
    )
    service = await CouncilService.open(settings)
    try:
        bot = build_slack_bot(service, settings)
        assert bot.app.client.base_url == fake.api_url + "/"
        assert bot.service is service
    finally:
        await service.aclose()


async def test_run_slack_http_mode(llm, tmp_path, fake):
    port = free_port()
    # An app token is set, but --http wins.
    settings = make_settings(
        llm,
        tmp_path,
        SLACK_BOT_TOKEN=TOKEN,
        SLACK_SIGNING_SECRET=SECRET,
        SLACK_API_URL=fake.api_url,
        SLACK_APP_TOKEN="xapp-test",
    )
    service = await CouncilService.open(settings)
    task = asyncio.create_task(run_slack(service, settings, http=True, port=port, host="127.0.0.1"))
    try:
        async with aiohttp.ClientSession() as session:
            url = f"http://127.0.0.1:{port}"
            for _ in range(100):
                try:
                    async with session.get(url + "/health") as response:
                        if response.status == 200:
                            break
                except aiohttp.ClientConnectionError:
                    await asyncio.sleep(0.05)
            body = encode_form(command_fields(fake, "What is six times seven?"))
            headers = {"Content-Type": "application/x-www-form-urlencoded", **sign(SECRET, body)}
            started = time.perf_counter()
            async with session.post(url + "/slack/events", data=body, headers=headers) as response:
                assert response.status == 200
            assert time.perf_counter() - started < 3
            async with session.post(
                url + "/slack/events", data=body, headers={**headers, **sign("bad", body)}
            ) as response:
                assert response.status == 401
        await fake.wait_for(lambda: answers(fake), timeout=30)
        assert not fake.sockets and not fake.calls_to("apps.connections.open")
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await service.aclose()


@pytest.mark.slow
async def test_run_slack_socket_mode(llm, tmp_path, fake):
    settings = make_settings(
        llm, tmp_path, SLACK_BOT_TOKEN=TOKEN, SLACK_API_URL=fake.api_url, SLACK_APP_TOKEN="xapp-test"
    )  # no signing secret needed
    service = await CouncilService.open(settings)
    task = asyncio.create_task(run_slack(service, settings))
    try:
        await fake.wait_for(lambda: fake.sockets, timeout=10)
        [opened] = fake.calls_to("apps.connections.open")
        assert opened.headers["Authorization"] == "Bearer xapp-test"

        started = time.perf_counter()
        envelope = await fake.send_envelope("slash_commands", command_fields(fake, "What is six times seven?"))
        await fake.wait_for(lambda: fake.socket_ack(envelope), timeout=5)
        ack_s = time.perf_counter() - started
        assert ack_s < 3
        await fake.wait_for(lambda: answers(fake), timeout=30)

        ts, body = mention(fake, "And seven times six?", "EvS1")
        first = await fake.send_envelope("events_api", body)
        again = await fake.send_envelope("events_api", body)  # a redelivery
        await fake.wait_for(lambda: fake.socket_ack(first) and fake.socket_ack(again), timeout=5)
        await fake.wait_for(lambda: len(answers(fake)) == 2, timeout=30)
        # A later event: answered after any council the redelivery had started.
        sentinel_ts, sentinel = mention(fake, "And eight times five?", "EvS2")
        await fake.send_envelope("events_api", sentinel)
        await fake.wait_for(lambda: any(a["thread_ts"] == sentinel_ts for a in answers(fake)), timeout=30)
        assert len(answers(fake)) == 3 and answers(fake)[1]["thread_ts"] == ts
        assert [a["thread_ts"] for a in answers(fake)].count(ts) == 1
        assert {a["via"] for a in answers(fake)} == {"chat.stopStream"}  # the fake streams, like Slack
        print(f"\n[slack] socket mode ack {ack_s * 1000:.0f} ms")
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await service.aclose()
    await fake.wait_for(lambda: not fake.sockets, timeout=5)


async def test_run_slack_refuses_incomplete_settings(llm, tmp_path):
    service = await CouncilService.open(make_settings(llm, tmp_path))
    try:
        with pytest.raises(RuntimeError, match="SLACK_BOT_TOKEN"):
            await run_slack(service, service.settings)
        settings = make_settings(llm, tmp_path, SLACK_BOT_TOKEN=TOKEN)
        with pytest.raises(RuntimeError, match="SLACK_SIGNING_SECRET"):
            await run_slack(service, settings, http=True)
    finally:
        await service.aclose()


def test_manifest_matches_the_app():
    yaml = pytest.importorskip("yaml")
    from pathlib import Path

    manifest = yaml.safe_load((Path(__file__).parent.parent / "slack-manifest.yaml").read_text())
    commands = {c["command"] for c in manifest["features"]["slash_commands"]}
    assert commands == {"/council", "/council-admin"}
    assert all(len(c["description"]) <= 100 for c in manifest["features"]["slash_commands"])
    assert set(manifest["settings"]["event_subscriptions"]["bot_events"]) == {
        "app_mention",
        "message.im",
        "app_home_opened",  # agent view: the Messages tab opening (replaces assistant_thread_started); Home tab
        "app_context_changed",
    }
    assert manifest["settings"]["interactivity"]["is_enabled"] and manifest["settings"]["socket_mode_enabled"]
    scopes = set(manifest["oauth_config"]["scopes"]["bot"])
    # One scope per Web API method the bot calls, plus what the events need.
    assert {
        "app_mentions:read",
        "chat:write",
        "commands",
        "channels:history",
        "groups:history",
        "im:history",
        "mpim:history",
        "users:read",
        "files:write",
        "im:write",
        "assistant:write",  # assistant.threads.setStatus / setTitle / setSuggestedPrompts
    } <= scopes
    [shortcut] = manifest["features"]["shortcuts"]
    assert shortcut["type"] == "message" and shortcut["callback_id"] == "council_ask_message"
    assert len(shortcut["name"]) <= 40 and len(shortcut["description"]) <= 80
    assert manifest["features"]["app_home"]["messages_tab_enabled"]
    assert manifest["features"]["app_home"]["home_tab_enabled"]
    agent = manifest["features"]["agent_view"]
    assert 0 < len(agent["agent_description"]) <= 300 and "assistant_view" not in manifest["features"]
