"""Slack adapter end to end: the real Bolt app served over HTTP on loopback, signed requests
(slash commands, events, block actions), a fake Slack Web API (tests/slack_fake.py), scripted
models over HTTP, and a real CouncilService on SQLite."""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from bot.slack.app import SlackCouncilBot, build_slack_bot, build_web_app
from bot.slack.slash import parse_command
from core.models import Actor, CouncilStatus, Origin, Platform
from core.service import CouncilService
from tests.conftest import MEMBERS, make_settings
from tests.figures import show
from tests.llm_server import ByStage, Hang, Reply, council_member, ranking_review
from tests.logged import errors_logged
from tests.long_answer import LONG_ANSWER, SHOWN, assert_cut_between_blocks
from tests.loopback_app import serve_on_loopback
from tests.slack_fake import (
    MESSAGE_BLOCKS,
    MODAL_BLOCKS,
    SECTION_TEXT,
    ChannelLimit,
    FakeSlack,
    block_problems,
    encode_form,
    sign,
)

SECRET = "test-signing-secret"
TOKEN = "xoxb-test"
PING = "<!channel> hi <@U999>"


@dataclass
class SlackEnv:
    fake: FakeSlack
    service: CouncilService
    bot: SlackCouncilBot
    settings: Any
    runner: web.AppRunner
    url: str
    session: aiohttp.ClientSession
    ack_times: list[float] = field(default_factory=list)
    _counter: int = 0

    def next_id(self, prefix: str) -> str:
        self._counter += 1
        return f"{prefix}{self._counter:04d}"

    async def post(
        self,
        body: str,
        content_type: str,
        *,
        headers: dict[str, str] | None = None,
        signed: bool = True,
        secret: str = SECRET,
    ) -> tuple[int, str]:
        all_headers = {"Content-Type": content_type, **(sign(secret, body) if signed else {}), **(headers or {})}
        started = time.perf_counter()
        async with self.session.post(self.url, data=body.encode(), headers=all_headers) as response:
            text = await response.text()
        self.ack_times.append(time.perf_counter() - started)
        return response.status, text

    async def command(
        self, text: str, *, user: str = "U1", channel: str = "C1", command: str = "/council", trigger: str | None = None
    ) -> tuple[int, str]:
        body = encode_form(
            {
                "token": "legacy",
                "team_id": "T1",
                "team_domain": "test",
                "channel_id": channel,
                "channel_name": "general",
                "user_id": user,
                "user_name": user.lower(),
                "command": command,
                "text": text,
                "api_app_id": "A1",
                "is_enterprise_install": "false",
                "response_url": self.fake.response_url(self.next_id("cmd")),
                "trigger_id": trigger or self.next_id("trig."),
            }
        )
        return await self.post(body, "application/x-www-form-urlencoded")

    async def event(
        self, event: dict[str, Any], *, event_id: str | None = None, retry: int | None = None
    ) -> tuple[int, str]:
        body = json.dumps(
            {
                "token": "legacy",
                "team_id": "T1",
                "api_app_id": "A1",
                "type": "event_callback",
                "event": {"event_ts": event.get("ts"), **event},
                "event_id": event_id or self.next_id("Ev"),
                "event_time": int(time.time()),
                "authorizations": [{"team_id": "T1", "user_id": "UBOT", "is_bot": True, "enterprise_id": None}],
            }
        )
        headers = {"X-Slack-Retry-Num": str(retry), "X-Slack-Retry-Reason": "http_timeout"} if retry else None
        return await self.post(body, "application/json", headers=headers)

    def mention(
        self, text: str, *, user: str = "U1", channel: str = "C1", thread_ts: str | None = None
    ) -> dict[str, Any]:
        """An @mention as Slack would deliver it (the message also exists in the fake)."""
        ts = self.fake.add_message(channel, text, user=user, thread_ts=thread_ts)
        event = {"type": "app_mention", "user": user, "text": text, "ts": ts, "channel": channel, "team": "T1"}
        if thread_ts:
            event["thread_ts"] = thread_ts
        return event

    async def action(
        self,
        action_id: str,
        value: str,
        *,
        user: str = "U1",
        channel: str = "C1",
        message_ts: str = "1.1",
        thread_ts: str | None = None,
    ) -> tuple[int, str]:
        payload = {
            "type": "block_actions",
            "user": {"id": user, "username": user.lower(), "team_id": "T1"},
            "api_app_id": "A1",
            "token": "legacy",
            "container": {
                "type": "message",
                "message_ts": message_ts,
                "channel_id": channel,
                "is_ephemeral": False,
                **({"thread_ts": thread_ts} if thread_ts else {}),
            },
            "trigger_id": self.next_id("trigger."),
            "team": {"id": "T1", "domain": "test"},
            "channel": {"id": channel, "name": "general"},
            "message": {
                "type": "message",
                "ts": message_ts,
                "text": "",
                **({"thread_ts": thread_ts} if thread_ts else {}),
            },
            "response_url": self.fake.response_url(self.next_id("act")),
            "actions": [
                {
                    "action_id": action_id,
                    "block_id": "b",
                    "value": value,
                    "type": "button",
                    "action_ts": str(time.time()),
                }
            ],
        }
        return await self.post(encode_form({"payload": json.dumps(payload)}), "application/x-www-form-urlencoded")

    async def settle(self, timeout: float = 60) -> None:
        """Wait until the app's background work (started by the requests so far) is done."""
        for _ in range(3):
            await asyncio.sleep(0.05)  # listeners run just after Bolt has answered the request
            await self.bot.drain(timeout)


async def start_env(fake: FakeSlack, settings, service: CouncilService) -> SlackEnv:
    bot = build_slack_bot(service, settings)
    runner, port = await serve_on_loopback(build_web_app(bot.app, bot.service))
    return SlackEnv(
        fake,
        service,
        bot,
        settings,
        runner,
        f"http://127.0.0.1:{port}/slack/events",
        aiohttp.ClientSession(),
    )


async def stop_env(env: SlackEnv) -> None:
    await env.bot.aclose()
    await env.session.close()
    await env.runner.cleanup()


@asynccontextmanager
async def slack_env(llm, tmp_path, *, streaming: bool = False, **overrides: Any) -> AsyncIterator[SlackEnv]:
    """The Bolt app over a real service against a fake Slack (`streaming`: one with chat.*Stream)."""
    fake = await FakeSlack(token=TOKEN, streaming=streaming).start()
    fake.add_user("U1", "ada")
    fake.add_user("U2", "bob")
    fake.add_user("UADMIN", "root", admin=True)
    settings = make_settings(
        llm, tmp_path, SLACK_BOT_TOKEN=TOKEN, SLACK_SIGNING_SECRET=SECRET, SLACK_API_URL=fake.api_url, **overrides
    )
    service = await CouncilService.open(settings)
    e = await start_env(fake, settings, service)
    try:
        yield e
    finally:
        await stop_env(e)
        await e.service.aclose()
        await fake.close()


@pytest.fixture
async def env(llm, tmp_path, request):
    # Most tests run against a Slack without chat.*Stream (the chat.update path); {"streaming": True}
    # gives them one that streams.
    async with slack_env(llm, tmp_path, **dict(getattr(request, "param", {}))) as e:
        yield e


# --------------------------------------------------------------------------- helpers


def posted(fake: FakeSlack, channel: str = "C1"):
    return [c for c in fake.calls_to("chat.postMessage") if c.ok and c.args.get("channel") == channel]


def results(fake: FakeSlack, channel: str = "C1"):
    """Posted answer messages (their first block id starts with council-a-)."""
    return [
        c
        for c in posted(fake, channel)
        if (c.args.get("blocks") or [{}])[0].get("block_id", "").startswith("council-a-")
    ]


def statuses(fake: FakeSlack, channel: str = "C1"):
    return [
        c
        for c in posted(fake, channel)
        if (c.args.get("blocks") or [{}])[0].get("block_id", "").startswith("council-s-")
    ]


def deliveries(fake: FakeSlack, channel: str = "C1", *, refused_too: bool = False) -> int:
    """How many councils' deliveries have ended: the deliverer's last write is finishing the
    status message (an edit without buttons) or deleting it (the live display holds the answer).
    `submit_council` returns once the council is queued, so a test waits for this moment.
    `refused_too`: a final edit that Slack refused counts (a test of failing edits)."""
    deleted = {c.args["ts"] for c in fake.calls_to("chat.delete") if c.ok}
    count = 0
    for status in statuses(fake, channel):
        ts = status.response["ts"]
        edits = [c for c in fake.calls_to("chat.update") if (c.ok or refused_too) and c.args.get("ts") == ts]
        if ts in deleted or (edits and not any(b["type"] == "actions" for b in edits[-1].args["blocks"])):
            count += 1
    return count


async def stored_councils(env: SlackEnv, channel: str = "C1") -> int:
    origin = Origin(platform=Platform.SLACK, workspace_id="T1", channel_id=channel)
    return len(await env.service.queries.history(origin, "channel", 100))


def all_text(call) -> str:
    return json.dumps({k: call.args.get(k) for k in ("text", "blocks", "view")}, ensure_ascii=False)


def section_texts(blocks: list[dict]) -> str:
    return "\n".join((b.get("text") or {}).get("text", "") for b in blocks if b.get("type") == "section")


def check_blocks(blocks: list[dict], limit: int = MESSAGE_BLOCKS) -> None:
    assert len(blocks) <= limit
    for block in blocks:
        if block.get("type") == "section":
            assert len(block["text"]["text"]) <= SECTION_TEXT
    assert not block_problems(blocks, limit)


def ephemeral_texts(fake: FakeSlack) -> list[str]:
    texts = [e.get("text", "") + json.dumps(e.get("blocks") or []) for e in fake.ephemerals]
    texts += [
        r.get("text", "") + json.dumps(r.get("blocks") or [])
        for r in fake.responses
        if r.get("response_type") == "ephemeral"
    ]
    return texts


def stage1_requests(llm) -> int:
    return len(llm.requests_for(stage=1))


# --------------------------------------------------------------------------- tests


async def test_slash_command_runs_council_in_thread(env, capsys):
    fake = env.fake
    status, body = await env.command("What is six times seven?")
    ack_s = env.ack_times[-1]
    assert status == 200 and body == ""
    assert ack_s < 3.0
    await fake.wait_for(lambda: deliveries(fake))
    await env.settle()

    question = posted(fake)[0]
    assert "thread_ts" not in question.args
    assert "<@U1> asked the council" in section_texts(question.args["blocks"])
    thread_ts = question.response["ts"]
    replies = posted(fake)[1:]
    assert replies and all(c.args.get("thread_ts") == thread_ts for c in replies)

    [answer] = results(fake)
    check_blocks(answer.args["blocks"])
    text = section_texts(answer.args["blocks"])
    assert "Final answer by alpha: 42." in text
    council_id = answer.args["blocks"][0]["block_id"].split("-")[2]
    stored = await env.service.queries.get_result(council_id)
    assert stored.status is CouncilStatus.OK and stored.request.origin.thread_id == thread_ts
    assert stored.request.origin.platform is Platform.SLACK and stored.request.origin.workspace_id == "T1"
    buttons = [e for b in answer.args["blocks"] if b["type"] == "actions" for e in b["elements"]]
    assert {b["action_id"] for b in buttons} == {
        "council_stage_answers",
        "council_stage_reviews",
        "council_stage_ranking",
        "council_stage_differ",  # the answers share a sentence (agreed, measured)
    }
    assert all(b["value"] == council_id for b in buttons)
    contexts = json.dumps([b for b in answer.args["blocks"] if b["type"] == "context"])
    assert "3 of 3 members answered" in contexts and "Ranking: 1." not in contexts  # figures: the Ranking button

    # The status message: posted once in the thread, then edited (>= 1 s apart), last without buttons.
    [status_call] = statuses(fake)
    updates = [c for c in fake.calls_to("chat.update") if c.args.get("ts") == status_call.response["ts"]]
    assert updates and all(c.ok for c in updates)
    gaps = [b.at - a.at for a, b in itertools.pairwise(updates)]
    assert all(gap >= 1.0 for gap in gaps), gaps
    final = updates[-1].args["blocks"]
    assert not any(b["type"] == "actions" for b in final)
    assert "Done" in section_texts(final)

    # This Slack has no chat.startStream: the council fell back to chat.update at once.
    [refused] = fake.calls_to("chat.startStream")
    assert refused.response["error"] == "unknown_method" and refused.at <= status_call.at

    calls = [c for c in fake.calls if c.method != "auth.test"]
    show(
        capsys,
        f"\n[slack] /council ack {ack_s * 1000:.0f} ms; Web API calls for one council (chat.update "
        f"fallback): {len(calls)} ({', '.join(sorted({c.method for c in calls}))}; chat.update x{len(updates)})",
    )
    assert len(calls) <= 12


async def test_progress_is_throttled_and_streams_the_chairman(env, llm):
    fake = env.fake
    synthesis = " ".join(f"word{i}" for i in range(60)) + " END."
    llm.script(
        "alpha",
        ByStage(Reply("alpha says 42.", delay_s=0.2), Reply(ranking_review()), Reply(synthesis, token_delay_s=0.05)),
    )
    llm.script("beta", council_member("beta says 42.", latency_s=1.5))
    llm.script("gamma", council_member("gamma says 42.", latency_s=2.5))
    fake.ratelimit("chat.update", times=1, retry_after=1)
    await env.command("Slow question?")
    await fake.wait_for(lambda: deliveries(fake), timeout=60)
    await env.settle()
    [status_call] = statuses(fake)
    updates = [c for c in fake.calls_to("chat.update") if c.args.get("ts") == status_call.response["ts"]]
    assert [c.status for c in updates].count(429) == 1
    done = [c for c in updates if c.ok]
    assert len(done) >= 3
    gaps = [b.at - a.at for a, b in itertools.pairwise(done)]
    assert all(gap >= 1.0 for gap in gaps), gaps
    limited = next(i for i, c in enumerate(updates) if c.status == 429)
    assert updates[limited + 1].at - updates[limited].at >= 1.0  # Retry-After honoured
    running = [section_texts(c.args["blocks"]) for c in done[:-1]]
    assert any("✅ alpha" in t and "⏳" in t for t in running) or any(
        "Stage 2 · anonymous peer review" in t for t in running
    )
    assert any("word1" in t and "END." not in t for t in running), running  # the chairman's text streaming
    assert all(any(b["type"] == "actions" for b in c.args["blocks"]) for c in done[:-1])
    assert "Done" in section_texts(done[-1].args["blocks"])
    calls = [c for c in fake.calls if c.method != "auth.test"]
    print(
        f"\n[slack] slower council (~5 s, streamed synthesis): {len(calls)} Web API calls, "
        f"chat.update x{len(updates)} (one 429 retried)"
    )


async def test_help_and_subcommand_parsing(env):
    status, body = await env.command("")  # a plain-text ack is an ephemeral reply
    assert status == 200 and "LLM Council" in body and "<@UBOT> `<question>`" in body
    status, body = await env.command("help")
    assert "/council-admin" in body
    assert parse_command("history of Rome?") == ("ask", "history of Rome?")
    assert parse_command("history mine 5") == ("history", "mine 5")
    assert parse_command("export 0123abcd json") == ("export", "0123abcd json")
    assert parse_command("export the report") == ("ask", "export the report")
    assert parse_command("admin members a,b") == ("admin", "members a,b")
    assert parse_command("admin of the year?") == ("ask", "admin of the year?")
    assert not env.fake.calls_to("chat.postMessage")


async def test_bad_signature_is_rejected(env):
    body = encode_form({"command": "/council", "text": "hi", "user_id": "U1", "channel_id": "C1", "team_id": "T1"})
    status, _ = await env.post(body, "application/x-www-form-urlencoded", secret="wrong-secret")
    assert status == 401
    status, _ = await env.post(body, "application/x-www-form-urlencoded", signed=False)
    assert status == 401
    stale = sign(SECRET, body, int(time.time()) - 600)
    status, _ = await env.post(body, "application/x-www-form-urlencoded", signed=False, headers=stale)
    assert status == 401
    # A signed request after them, answered in full, proves their moment has passed.
    await env.command("What is six times seven?")
    await env.fake.wait_for(lambda: deliveries(env.fake) == 1)
    await env.settle()
    assert len(statuses(env.fake)) == 1 and not env.bot.tasks
    origin = Origin(platform=Platform.SLACK, workspace_id="T1", channel_id="C1")
    assert [c.question for c in await env.service.queries.history(origin, "channel", 10)] == [
        "What is six times seven?"
    ]


async def test_event_retries_start_one_council(env, llm):
    fake = env.fake
    event = env.mention("<@UBOT> What is six times seven?")
    assert (await env.event(event, event_id="Ev-retry"))[0] == 200
    assert (await env.event(event, event_id="Ev-retry", retry=1))[0] == 200
    assert (await env.event(event, event_id="Ev-retry", retry=2))[0] == 200
    # The same message delivered again as another event type (message.im/message.channels).
    assert (await env.event({**event, "type": "message", "channel_type": "channel"}, event_id="Ev-other"))[0] == 200
    await fake.wait_for(lambda: results(fake))
    await env.settle()
    assert len(results(fake)) == 1 and len(statuses(fake)) == 1
    assert stage1_requests(llm) == len(MEMBERS)
    assert await stored_councils(env) == 1
    [answer] = results(fake)
    assert answer.args["thread_ts"] == event["ts"]


async def test_mention_in_thread_passes_history(env, llm):
    fake = env.fake
    first = env.mention("<@UBOT> What is the capital of France?")
    await env.event(first)
    await fake.wait_for(lambda: deliveries(fake))  # the answer posted and mapped to the council
    await env.settle()
    fake.add_message("C1", "I think it used to be somewhere else in 1940.", user="U2", thread_ts=first["ts"])
    follow_up = env.mention("<@UBOT> And what was it then?", user="U1", thread_ts=first["ts"])
    llm.requests.clear()
    await env.event(follow_up)
    await fake.wait_for(lambda: len(results(fake)) == 2)
    await env.settle()

    [replies_call] = fake.calls_to("conversations.replies")
    assert replies_call.args["ts"] == first["ts"]
    prompts = [json.dumps(r.messages) for r in llm.requests_for(stage=1)]
    assert len(prompts) == len(MEMBERS)
    for prompt in prompts:
        assert "What is the capital of France?" in prompt
        assert "Final answer by alpha: 42." in prompt  # our earlier answer, as the assistant
        assert "somewhere else in 1940" in prompt
        assert "UBOT" not in prompt
    roles = [m["role"] for m in llm.requests_for(stage=1)[0].messages]
    assert "assistant" in roles
    second = results(fake)[1]
    assert second.args["thread_ts"] == first["ts"]


@pytest.mark.parametrize("env", [{}, {"streaming": True}], indirect=True, ids=["chat.update", "streamed"])
async def test_thread_follow_up_names_people_not_user_ids(env, llm):
    """The members read who said what by the name Slack shows (users.info), never "U2: ..."."""
    fake = env.fake
    fake.add_user("U2", "Grace Hopper")
    first = env.mention("<@UBOT> What is the capital of France?", user="U2")
    await env.event(first)
    await fake.wait_for(lambda: deliveries(fake))
    await env.settle()
    fake.add_message("C1", "I think it used to be somewhere else in 1940.", user="U2", thread_ts=first["ts"])
    llm.requests.clear()
    await env.event(env.mention("<@UBOT> And what was it then?", user="U2", thread_ts=first["ts"]))
    await fake.wait_for(lambda: len(llm.requests_for(stage=1)) == len(MEMBERS))
    await env.settle()
    turns = [m["content"] for m in llm.requests_for(stage=1)[0].messages if m["role"] == "user"]
    assert "Grace Hopper: I think it used to be somewhere else in 1940." in turns
    assert not any("U2" in turn for turn in turns)


@pytest.mark.parametrize("env", [{}, {"streaming": True}], indirect=True, ids=["chat.update", "streamed"])
async def test_slash_council_thread_follow_up_uses_stored_question(env, llm):
    fake = env.fake

    def answers():  # answers in C1, however this Slack shows them
        return streamed(fake) if fake.streaming else results(fake)

    await env.command("What is the capital of France?")
    await fake.wait_for(answers)
    await env.settle()
    thread_ts = posted(fake)[0].response["ts"]
    llm.requests.clear()
    await env.event(env.mention("<@UBOT> Why?", thread_ts=thread_ts))
    await fake.wait_for(lambda: len(answers()) == 2)
    await env.settle()
    messages = llm.requests_for(stage=1)[0].messages
    assert "assistant" in [m["role"] for m in messages]
    transcript = json.dumps(messages)
    assert "What is the capital of France?" in transcript and "Final answer by alpha: 42." in transcript
    assert "asked the council" not in transcript  # the stored question, not our rendering of it


async def test_model_text_cannot_ping(env, llm):
    fake = env.fake
    for name in MEMBERS:
        llm.script(name, council_member(PING, synthesis=f"{PING} @here and @channel, says {name}"))
    await env.command(f"Say {PING}")
    await fake.wait_for(lambda: results(fake))
    await env.settle()
    [answer] = results(fake)
    council_id = answer.args["blocks"][0]["block_id"].split("-")[2]
    await env.action("council_stage_answers", council_id, thread_ts=answer.args["thread_ts"])
    await env.action("council_stage_reviews", council_id, thread_ts=answer.args["thread_ts"])
    await fake.wait_for(lambda: len(fake.views) == 2)
    checked = fake.calls_to("chat.postMessage", "chat.update", "chat.postEphemeral", "views.open")
    assert len(checked) >= 5
    for call in checked:
        text = all_text(call)
        assert "<!channel>" not in text and "<@U999>" not in text, text
        assert "@here" not in text and "@channel" not in text
    assert "hi" in section_texts(answer.args["blocks"])
    assert "&lt;!channel&gt;" in section_texts(answer.args["blocks"])


async def test_stage_buttons_open_modals_after_restart(env, llm, tmp_path):
    fake = env.fake
    await env.command("What is six times seven?")
    await fake.wait_for(lambda: deliveries(fake))  # restarted once delivered, not during
    await env.settle()
    [answer] = results(fake)
    council_id = answer.args["blocks"][0]["block_id"].split("-")[2]

    # Restart: a new service and a new app on the same database.
    await stop_env(env)
    await env.service.aclose()
    service = await CouncilService.open(env.settings)
    restarted = await start_env(fake, env.settings, service)
    try:
        for stage in ("answers", "reviews", "ranking"):
            status, _ = await restarted.action(f"council_stage_{stage}", council_id, thread_ts=answer.args["thread_ts"])
            assert status == 200
        await fake.wait_for(lambda: len(fake.views) == 3)
        titles = [v["title"]["text"] for v in fake.views]
        assert titles == ["Stage 1 · answers", "Stage 2 · reviews", "Aggregate ranking"]
        for view in fake.views:
            assert len(view["title"]["text"]) <= 24
            check_blocks(view["blocks"], MODAL_BLOCKS)
        answers, reviews, ranking = (json.dumps(v["blocks"]) for v in fake.views)
        assert all(f"{m} says: the answer is 42." in answers for m in MEMBERS)
        assert reviews.count("Extracted ballot (complete)") == len(MEMBERS) and "FINAL RANKING" in reviews
        assert "copeland" in ranking and "Kendall" in ranking
        # An unknown council is refused ephemerally.
        await restarted.action("council_stage_answers", "ffffffffffffffff")
        await fake.wait_for(lambda: any("No council" in t for t in ephemeral_texts(fake)))
    finally:
        await stop_env(restarted)
        env.service = service  # closed by the fixture


async def test_long_answer_is_split_and_attached(env, llm):
    fake = env.fake
    paragraph = "The council considered this carefully. " * 20 + "\n\n"
    long_answer = "# Report\n\n" + paragraph * 40  # ~32,000 characters
    medium = "**Summary**\n\n" + paragraph * 9  # ~7,000 characters: several sections, no file
    llm.script("alpha", council_member("alpha answers.", synthesis=long_answer))
    await env.command("Write a long report")
    await fake.wait_for(lambda: fake.calls_to("files.completeUploadExternal"))
    await env.settle()
    [answer] = results(fake)
    check_blocks(answer.args["blocks"])
    assert "attached Markdown file" in json.dumps(answer.args["blocks"])
    [complete] = fake.calls_to("files.completeUploadExternal")
    assert complete.ok and complete.args["thread_ts"] == answer.args["thread_ts"]
    assert complete.args["channel_id"] == "C1"
    [upload] = fake.uploads.values()
    assert upload["filename"].endswith(".md") and long_answer.strip() in upload["content"]

    llm.script("alpha", council_member("alpha answers.", synthesis=medium))
    await env.command("Write a medium report")
    await fake.wait_for(lambda: len(results(fake)) == 2)
    await env.settle()
    second = results(fake)[1]
    check_blocks(second.args["blocks"])
    sections = [b for b in second.args["blocks"] if b["type"] == "section"]
    assert len(sections) >= 3
    assert len(fake.calls_to("files.completeUploadExternal")) == 1
    assert "*Summary*" in section_texts(second.args["blocks"])


@pytest.mark.parametrize("env", [{"RATE_LIMIT_USER_PER_HOUR": 1}], indirect=True)
async def test_refusals_are_ephemeral(env, llm):
    fake = env.fake
    await env.command("first question?")
    await fake.wait_for(lambda: results(fake))
    await env.settle()
    status, _ = await env.command("second question?")
    assert status == 200
    await env.settle()
    assert any("Try again in" in t for t in ephemeral_texts(fake))
    assert [r["response_type"] for r in fake.responses] == ["ephemeral"]
    assert len(posted(fake)) == 3  # question, status, answer of the first council only

    # A mention with no question: an ephemeral note in the channel, nothing posted.
    await env.event(env.mention("<@UBOT>", user="U2"))
    await env.settle()
    assert any("Ask a question" in e["text"] and e["user"] == "U2" for e in fake.ephemerals)
    # Too long.
    await env.event(env.mention("<@UBOT> " + "x" * 5000, user="U2"))
    await env.settle()
    assert any("limit is 4,000" in e["text"] for e in fake.ephemerals)
    assert len(posted(fake)) == 3 and stage1_requests(llm) == len(MEMBERS)


async def test_admin_commands_are_gated_and_audited(env):
    fake, service = env.fake, env.service
    origin = Origin(platform=Platform.SLACK, workspace_id="T1", channel_id="C1")
    await env.command("members beta, gamma", user="U2", command="/council-admin")
    await env.settle()
    assert any("Only admins" in t for t in ephemeral_texts(fake))
    assert (await service.channels.effective_config(origin)).members == MEMBERS
    assert fake.calls_to("users.info")[-1].args["user"] == "U2"

    for text, command in (
        ("members beta, gamma", "/council-admin"),
        ("admin chairman gamma", "/council"),
        ("admin limits user=5 channel=9 budget=2.50", "/council"),
    ):
        await env.command(text, user="UADMIN", command=command)
        await env.settle()  # one after the other, as people type them
    config = await service.channels.effective_config(origin)
    assert config.members == ["beta", "gamma"] and config.chairman == "gamma"
    channel = await service.channels.channel_settings(origin)
    assert (channel.user_limit_per_hour, channel.channel_limit_per_hour, channel.daily_budget_usd) == (5, 9, 2.5)
    entries = await service.channels.audit_log(Actor(user_id="UADMIN", is_platform_admin=True), origin)
    assert {e.action for e in entries} == {"set_members", "set_chairman", "set_limits"}
    assert all(e.actor_id == "UADMIN" for e in entries)

    await env.command("members alpha, nonexistent-model", user="UADMIN", command="/council-admin")
    await env.command("show", user="U2", command="/council-admin")  # read-only: anyone
    await env.command("audit", user="UADMIN", command="/council-admin")
    await env.command("frobnicate", user="UADMIN", command="/council-admin")
    await env.settle()
    texts = ephemeral_texts(fake)
    assert any("nonexistent-model" in t and "Unknown model" in t for t in texts)
    assert any("beta, gamma" in t and "Overrides in this channel: members, chairman" in t for t in texts)
    assert any("set_chairman" in t for t in texts)
    assert any("Unknown admin command" in t for t in texts)

    await env.command("reset", user="U2", command="/council-admin")
    await env.command("reset", user="UADMIN", command="/council-admin")
    await env.settle()
    assert (await service.channels.effective_config(origin)).members == MEMBERS
    assert all(r["response_type"] == "ephemeral" for r in fake.responses)
    assert not fake.calls_to("chat.postMessage")


async def test_stop_and_synthesize_buttons(env, llm):
    fake = env.fake
    llm.script("gamma", Hang())
    llm.script("beta", Hang())
    await env.command("Will you hang?")
    await fake.wait_for(lambda: statuses(fake))
    [status_call] = statuses(fake)
    council_id = status_call.args["blocks"][0]["block_id"].split("-")[2]
    actions = [e["action_id"] for b in status_call.args["blocks"] if b["type"] == "actions" for e in b["elements"]]
    assert actions == ["council_stop", "council_synthesize"]
    thread_ts = status_call.args["thread_ts"]

    await env.action("council_stop", council_id, user="U2", thread_ts=thread_ts)  # not the asker, not admin
    await fake.wait_for(lambda: any("Only the person who asked" in e["text"] for e in fake.ephemerals))
    assert all(e["thread_ts"] == thread_ts for e in fake.ephemerals)
    await fake.wait_for(lambda: llm.requests_for("alpha", stage=1))
    await env.action("council_synthesize", council_id, user="UADMIN", thread_ts=thread_ts)  # an admin may
    await fake.wait_for(lambda: deliveries(fake) == 1, timeout=30)
    await env.settle()
    stored = await env.service.queries.get_result(council_id)
    assert stored.synthesis is not None and stored.synthesis.text == "Final answer by alpha: 42."
    assert [a.model for a in stored.answers if a.ok] == ["alpha"]

    await env.action("council_stop", council_id, user="U1", thread_ts=thread_ts)
    await fake.wait_for(lambda: any("already finished" in e["text"] for e in fake.ephemerals))

    # Stop by the asker.
    await env.command("Hang again?")
    await fake.wait_for(lambda: len(statuses(fake)) == 2)
    second = statuses(fake)[1]
    second_id = second.args["blocks"][0]["block_id"].split("-")[2]
    await env.action("council_stop", second_id, user="U1", thread_ts=second.args["thread_ts"])
    await fake.wait_for(lambda: deliveries(fake) == 2, timeout=30)
    await env.settle()
    assert (await env.service.queries.get_result(second_id)).status is CouncilStatus.CANCELLED
    last = [c for c in fake.calls_to("chat.update") if c.args["ts"] == second.response["ts"]][-1]
    assert "stopped" in section_texts(last.args["blocks"])


async def test_rate_limited_web_api_is_retried(env):
    fake = env.fake
    fake.ratelimit("chat.postMessage", times=1, retry_after=1)
    await env.command("What is six times seven?")
    await fake.wait_for(lambda: results(fake), timeout=30)
    await env.settle()
    limited = [c for c in fake.calls_to("chat.postMessage") if c.status == 429]
    assert len(limited) == 1
    assert len(posted(fake)) == 3  # question, status, answer: nothing lost, nothing doubled
    retry = posted(fake)[0]
    assert retry.at - limited[0].at >= 1.0


async def test_direct_messages(env, llm):
    fake = env.fake
    ts = fake.add_message("D1", "What is six times seven?", user="U1")
    dm = {
        "type": "message",
        "channel_type": "im",
        "user": "U1",
        "text": "What is six times seven?",
        "ts": ts,
        "channel": "D1",
        "team": "T1",
    }
    await env.event(dm)
    # Ignored: our own messages, other bots, edits.
    await env.event({**dm, "ts": fake.add_message("D1", "x", bot=True), "user": "UBOT", "bot_id": "BBOT"})
    await env.event({**dm, "ts": fake.add_message("D1", "y", user=None), "bot_id": "B2", "subtype": "bot_message"})
    await env.event({**dm, "ts": fake.next_ts(), "subtype": "message_changed"})
    await fake.wait_for(lambda: results(fake, "D1"))
    await env.settle()
    [answer] = results(fake, "D1")
    assert answer.args["thread_ts"] == ts
    assert await stored_councils(env, "D1") == 1 and stage1_requests(llm) == len(MEMBERS)

    await env.event({**dm, "ts": fake.add_message("D1", "help", user="U1"), "text": "help"})
    await env.settle()
    assert "LLM Council" in posted(fake, "D1")[-1].args["text"]


async def test_command_where_the_bot_cannot_post(env, llm):
    """The question is posted first; where it cannot be, no council starts (no
    rate-limit hit, no stored council, no model call)."""
    fake = env.fake
    fake.no_access.add("C9")
    await env.command("Anyone?", channel="C9")
    await env.settle()
    assert any("Invite me" in t for t in ephemeral_texts(fake))
    assert await env.service.queries.history(Origin(platform=Platform.SLACK, workspace_id="T1", channel_id="C9")) == []
    assert await env.service.storage.rate_limits.hits_since("user:slack:T1:U1", 0) == []
    assert await env.service.storage.rate_limits.hits_since("channel:slack:T1:C9", 0) == []
    assert stage1_requests(llm) == 0 and await stored_councils(env, "C9") == 0


async def test_history_leaderboard_and_export(env):
    fake = env.fake
    await env.command("What is six times seven?")
    await fake.wait_for(lambda: results(fake))
    await env.settle()
    council_id = results(fake)[0].args["blocks"][0]["block_id"].split("-")[2]
    await env.command("history")
    await env.command("leaderboard")
    await env.command(f"export {council_id}")
    await env.command(f"export {council_id} json", channel="D1")
    await env.command(f"export {council_id}", user="U2", channel="C2")  # not from here, not theirs
    await env.settle()
    texts = ephemeral_texts(fake)
    assert any(council_id in t and "What is six times seven?" in t for t in texts)
    assert any("leaderboard" in t.lower() and "alpha" in t and "Reviewer bias" in t for t in texts)
    assert any("direct message" in t for t in texts)
    assert any(f"No council with id `{council_id}` here" in t for t in texts)
    uploads = sorted(fake.uploads.values(), key=lambda u: u["filename"])
    assert [(u["filename"], u["channel"]) for u in uploads] == [
        (f"council-{council_id}.json", "D1"),
        (f"council-{council_id}.md", "DU1"),
    ]
    assert json.loads(uploads[0]["content"])["id"] == council_id
    assert fake.calls_to("conversations.open")[0].args["users"] == "U1"


@pytest.mark.parametrize("env", [{"COUNCIL_ADMIN_USERS": "U2"}], indirect=True)
async def test_export_from_elsewhere_follows_the_service_admin_rule(env):
    """A user listed in COUNCIL_ADMIN_USERS counts as an admin for seeing a council (the service's
    is_admin, as on Discord); someone else from another channel still gets "not found"."""
    fake = env.fake
    fake.add_user("U3", "eve")
    await env.command("What is six times seven?")
    await fake.wait_for(lambda: results(fake))
    await env.settle()
    council_id = results(fake)[0].args["blocks"][0]["block_id"].split("-")[2]
    await env.command(f"export {council_id}", user="U2", channel="C2")
    await env.command(f"export {council_id}", user="U3", channel="C3")
    await env.settle()
    assert [u["channel"] for u in fake.uploads.values()] == ["DU2"]
    assert any(f"No council with id `{council_id}` here" in t for t in ephemeral_texts(fake))


# --------------------------------------------------------------------------- streaming (chat.startStream)

STREAMING = [{"streaming": True}]


def streamed(fake: FakeSlack, channel: str = "C1"):
    """Streams that ended holding an answer: (startStream call, stopStream call, message)."""
    out = []
    for stop in fake.calls_to("chat.stopStream"):
        if (
            stop.ok
            and stop.args.get("channel") == channel
            and any(b.get("block_id", "").startswith("council-a-") for b in stop.args.get("blocks") or [])
        ):
            start = next(c for c in fake.calls_to("chat.startStream") if c.ok and c.response["ts"] == stop.args["ts"])
            out.append((start, stop, fake.find(channel, stop.args["ts"])))
    return out


def appended_text(fake: FakeSlack, ts: str) -> list[str]:
    """The markdown text of each append/stop call of one stream, in order."""
    pieces = []
    for call in fake.calls_to("chat.appendStream", "chat.stopStream"):
        if call.ok and call.args.get("ts") == ts:
            text = "".join(c["text"] for c in call.args.get("chunks") or [] if c["type"] == "markdown_text")
            pieces.append(text)
    return pieces


@pytest.mark.parametrize("env", STREAMING, indirect=True)
async def test_streamed_council(env, capsys):
    fake = env.fake
    status, body = await env.command("What is six times seven?")
    ack_s = env.ack_times[-1]
    assert status == 200 and body == "" and ack_s < 3.0
    await fake.wait_for(lambda: deliveries(fake))
    await env.settle()

    question = posted(fake)[0]
    thread_ts = question.response["ts"]
    [(start, stop, message)] = streamed(fake)
    assert start.args["thread_ts"] == thread_ts and start.args["task_display_mode"] == "plan"
    assert (start.args["recipient_team_id"], start.args["recipient_user_id"]) == ("T1", "U1")
    assert message["text"] == "Final answer by alpha: 42." and not message["streaming"]
    tasks = message["tasks"]
    assert tasks["members"]["title"] == "3 of 3 members answered"  # one line for the stage, a part per member
    assert all(name in tasks["members"]["output"] for name in MEMBERS)
    assert all(t["status"] == "complete" for t in tasks.values()), tasks
    assert {"reviews", "chairman"} <= set(tasks)
    assert message["title"].startswith("The council answered")
    check_blocks(stop.args["blocks"])
    buttons = [e["action_id"] for b in stop.args["blocks"] if b["type"] == "actions" for e in b["elements"]]
    assert buttons == [
        "council_stage_answers",
        "council_stage_reviews",
        "council_stage_ranking",
        "council_stage_differ",
    ]
    assert "Ranking: 1." not in json.dumps(stop.args["blocks"])
    council_id = stop.args["blocks"][0]["block_id"].split("-")[2]
    assert (await env.service.queries.get_result(council_id)).status is CouncilStatus.OK

    # No answer posted separately; the control message (Stop / Synthesize now) went once it was done.
    assert not results(fake)
    [control] = statuses(fake)
    actions = [e["action_id"] for b in control.args["blocks"] if b["type"] == "actions" for e in b["elements"]]
    assert actions == ["council_stop", "council_synthesize"]
    assert [c.args["ts"] for c in fake.calls_to("chat.delete") if c.ok] == [control.response["ts"]]
    assert not fake.calls_to("chat.update")
    assert [m["ts"] for m in fake.thread("C1", thread_ts)] == [thread_ts, message["ts"]]

    calls = [c for c in fake.calls if c.method != "auth.test"]
    appends = fake.calls_to("chat.appendStream")
    show(
        capsys,
        f"\n[slack] /council ack {ack_s * 1000:.0f} ms; Web API calls for one streamed council: {len(calls)} "
        f"({', '.join(sorted({c.method for c in calls}))}; chat.appendStream x{len(appends)})",
    )
    assert len(calls) <= 12


@pytest.mark.slow
@pytest.mark.parametrize("env", STREAMING, indirect=True)
async def test_streaming_shows_tasks_and_batches_the_chairman(env, llm, capsys):
    fake = env.fake
    synthesis = " ".join(f"word{i}" for i in range(60)) + " END."
    llm.script(
        "alpha",
        ByStage(Reply("alpha says 42.", delay_s=0.2), Reply(ranking_review()), Reply(synthesis, token_delay_s=0.05)),
    )
    llm.script("beta", council_member("beta says 42.", latency_s=1.5))
    # The channel's pace (question, stream, control message: ~1 write a second) comes first: gamma
    # answers late enough that an append shows it still thinking.
    llm.script("gamma", council_member("gamma says 42.", latency_s=3.2))
    fake.ratelimit("chat.appendStream", times=1, retry_after=1)
    await env.command("Slow question?")
    await fake.wait_for(lambda: streamed(fake), timeout=60)
    await env.settle()
    [(start, _stop, message)] = streamed(fake)
    ts = start.response["ts"]
    writes = [c for c in fake.calls_to("chat.appendStream", "chat.stopStream") if c.args.get("ts") == ts]
    assert [c.status for c in writes].count(429) == 1
    done = [c for c in writes if c.ok]
    gaps = [b.at - a.at for a, b in zip([start, *done], done)]
    assert all(gap >= 1.0 for gap in gaps), gaps  # at most one write a second, Retry-After honoured
    # The members' task went in progress -> complete, its line naming each member as it answered.
    states = [
        (c["id"], c["status"])
        for call in [start, *done]
        for c in call.args.get("chunks") or []
        if c["type"] == "task_update"
    ]
    assert states.index(("members", "in_progress")) < states.index(("members", "complete"))
    details = [
        c.get("details", "")
        for call in [start, *done]
        for c in call.args.get("chunks") or []
        if c.get("id") == "members"
    ]
    assert any("alpha" in d and "gamma …" in d for d in details), details  # gamma still thinking, alpha done
    assert ("chairman", "in_progress") in states
    # The chairman's text arrived in a few batches (not one call per token), in order, whole.
    pieces = [p for p in appended_text(fake, ts) if p]
    assert 2 <= len(pieces) < 20, pieces
    assert "".join(pieces) == synthesis == message["text"]
    assert all(p.endswith(" ") for p in pieces[:-1])  # cut between words
    calls = [c for c in fake.calls if c.method != "auth.test"]
    show(
        capsys,
        f"\n[slack] slower streamed council (~5 s): {len(calls)} Web API calls, "
        f"chat.appendStream x{len(fake.calls_to('chat.appendStream'))} (one 429 retried), "
        f"{len(pieces)} text batches for {len(synthesis.split())} tokens",
    )


@pytest.mark.parametrize("env", STREAMING, indirect=True)
async def test_streamed_text_cannot_ping(env, llm):
    fake = env.fake
    for name in MEMBERS:
        llm.script(name, council_member(PING, synthesis=f"{PING} @here and @channel, says {name} <!here|x>"))
    await env.command(f"Say {PING}")
    await fake.wait_for(lambda: streamed(fake))
    await env.settle()
    [(_start, _stop, message)] = streamed(fake)
    checked = fake.calls_to("chat.startStream", "chat.appendStream", "chat.stopStream", "chat.postMessage")
    assert len(checked) >= 4
    for call in checked:
        text = json.dumps(
            {k: call.args.get(k) for k in ("text", "blocks", "chunks", "markdown_text")}, ensure_ascii=False
        )
        assert "<!channel>" not in text and "<@U999>" not in text and "<!here" not in text, text
        assert "@here" not in text and "@channel" not in text
    assert "says alpha" in message["text"] and "hi" in message["text"]


@pytest.mark.slow
@pytest.mark.parametrize("env", STREAMING, indirect=True)
async def test_stream_refused_falls_back_to_chat_update(env, llm):
    fake = env.fake
    # A passing error: this council uses chat.update, the next one streams again.
    fake.fail("chat.startStream", "internal_error")
    await env.command("What is six times seven?")
    await fake.wait_for(lambda: deliveries(fake))
    await env.settle()
    [status_call] = statuses(fake)
    assert status_call.args["blocks"][0]["text"]["text"].startswith(":hourglass_flowing_sand: Convening")
    updates = [c for c in fake.calls_to("chat.update") if c.args.get("ts") == status_call.response["ts"]]
    assert updates and "Done" in section_texts(updates[-1].args["blocks"])
    assert "Final answer by alpha: 42." in section_texts(results(fake)[0].args["blocks"])
    assert not fake.calls_to("chat.appendStream", "chat.stopStream")

    await env.command("And again?")
    await fake.wait_for(lambda: deliveries(fake) == 2)
    await env.settle()
    assert len(results(fake)) == 1

    # Slack says the feature is not there: later councils do not even ask (for a while).
    fake.fail("chat.startStream", "feature_not_enabled")
    for done, question in enumerate(("Third?", "Fourth?"), start=3):
        await env.command(question)
        await fake.wait_for(lambda n=done: deliveries(fake) == n)
        await env.settle()
    assert len(fake.calls_to("chat.startStream")) == 3 and len(results(fake)) == 3
    assert env.bot.stream_now() is False


@pytest.mark.parametrize("env", STREAMING, indirect=True)
async def test_stream_that_breaks_hands_over_to_the_status_message(env, llm):
    fake = env.fake
    llm.script("beta", council_member("beta says 42.", latency_s=1.5))
    # alpha and gamma each put a different answer first, so beta's slow review decides the winner:
    # the review stage waits for it (no early decision), which leaves time for progress updates.
    for name, first in (("alpha", "C"), ("gamma", "A")):
        ranking = lambda labels, first=first: sorted(labels, key=lambda label: label != first)  # noqa: E731
        llm.script(
            name, council_member(f"{name} says: the answer is 42.", ranking, synthesis=f"Final answer by {name}: 42.")
        )
    fake.fail("chat.appendStream", "message_not_in_streaming_state")
    await env.command("What is six times seven?")
    await fake.wait_for(lambda: deliveries(fake), timeout=30)
    await env.settle()
    [status_call] = statuses(fake)
    assert status_call.args["blocks"][0]["text"]["text"] == render_note()
    updates = [c for c in fake.calls_to("chat.update") if c.args.get("ts") == status_call.response["ts"]]
    assert updates and "Done" in section_texts(updates[-1].args["blocks"])
    assert any("✅" in section_texts(c.args["blocks"]) for c in updates)  # the full status from then on
    assert "Final answer by alpha: 42." in section_texts(results(fake)[0].args["blocks"])
    assert len(fake.calls_to("chat.appendStream")) == 1


def render_note() -> str:
    from bot.slack import stream_render

    return stream_render.STREAM_CONTROL_NOTE


@pytest.mark.parametrize("env", STREAMING, indirect=True)
async def test_streamed_stop_and_synthesize(env, llm):
    fake = env.fake
    llm.script("gamma", Hang())
    llm.script("beta", Hang())
    await env.command("Will you hang?")
    await fake.wait_for(lambda: statuses(fake) and llm.requests_for("alpha", stage=1))
    [control] = statuses(fake)
    council_id = control.args["blocks"][0]["block_id"].split("-")[2]
    await env.action("council_synthesize", council_id, user="U1", thread_ts=control.args["thread_ts"])
    await fake.wait_for(lambda: deliveries(fake) == 1, timeout=30)
    await env.settle()
    [(_start, _stop, message)] = streamed(fake)
    assert message["text"] == "Final answer by alpha: 42."
    tasks = message["tasks"]
    assert tasks["members"]["status"] == "complete" and tasks["members"]["title"] == "1 of 3 members answered"
    assert tasks["chairman"]["status"] == "complete"
    assert any("Synthesizing" in e["text"] for e in fake.ephemerals)

    # Stop: no answer, so the result is posted as a reply and the control message says so.
    await env.command("Hang again?")
    await fake.wait_for(lambda: len(statuses(fake)) == 2)
    second = statuses(fake)[1]
    second_id = second.args["blocks"][0]["block_id"].split("-")[2]
    await env.action("council_stop", second_id, user="U1", thread_ts=second.args["thread_ts"])
    await fake.wait_for(lambda: deliveries(fake) == 2, timeout=30)
    await env.settle()
    assert (await env.service.queries.get_result(second_id)).status is CouncilStatus.CANCELLED
    last = [c for c in fake.calls_to("chat.update") if c.args["ts"] == second.response["ts"]][-1]
    assert "stopped" in section_texts(last.args["blocks"])
    stops = [c for c in fake.calls_to("chat.stopStream") if c.ok]
    assert len(stops) == 2 and "blocks" not in stops[1].args  # the stream closed, the answer posted


@pytest.mark.parametrize("env", STREAMING, indirect=True)
async def test_long_streamed_answer_is_attached(env, llm):
    fake = env.fake
    paragraph = "The council considered this carefully. " * 20 + "\n\n"
    long_answer = "# Report\n\n" + paragraph * 40  # ~32,000 characters
    llm.script("alpha", council_member("alpha answers.", synthesis=long_answer))
    await env.command("Write a long report")
    await fake.wait_for(lambda: fake.calls_to("files.completeUploadExternal"))
    await env.settle()
    [(start, _stop, message)] = streamed(fake)
    shown, _, note = message["text"].partition("\n\n_The answer is cut here")
    assert 11000 < len(shown) <= 12000 and long_answer.startswith(shown) and note
    assert all(len(p) <= 12000 for p in appended_text(fake, start.response["ts"]))
    [upload] = fake.uploads.values()
    assert long_answer.strip() in upload["content"] and upload["thread_ts"] == start.args["thread_ts"]
    assert not results(fake)


@pytest.mark.parametrize("env", [{}, {"streaming": True}], indirect=True, ids=["chat.update", "streamed"])
async def test_a_long_answer_is_cut_between_blocks_and_attached(env, llm):
    """The same 14,600-character answer, a code block across the limit: streamed or not, Slack
    shows the blocks before the code, the cut note outside them, and the whole answer as a file."""
    fake = env.fake
    llm.script("alpha", council_member("alpha answers.", synthesis=LONG_ANSWER))
    await env.command("Write a long report")
    await fake.wait_for(lambda: fake.calls_to("files.completeUploadExternal"))
    await env.settle()
    if fake.streaming:
        [(start, stop, message)] = streamed(fake)
        shown = message["text"]
        assert shown.startswith(SHOWN) and all(len(p) <= 12000 for p in appended_text(fake, start.response["ts"]))
        blocks = stop.args["blocks"]
        assert not results(fake)
    else:
        [answer] = results(fake)
        blocks = answer.args["blocks"]
        check_blocks(blocks)
        sections = [b["text"]["text"] for b in blocks if b["type"] == "section"]
        assert all(s.count("```") % 2 == 0 for s in sections)
        note = next(b["elements"][0]["text"] for b in blocks if b["type"] == "context" and "cut here" in json.dumps(b))
        shown = "\n".join(sections) + "\n\n" + note.removeprefix(":page_facing_up: ")
        assert len("".join(sections)) > 10000  # the same start as the stream, not a 2,800-character summary
    assert_cut_between_blocks(shown)
    [upload] = fake.uploads.values()
    assert LONG_ANSWER.strip() in upload["content"]


@pytest.mark.slow
async def test_burst_of_mentions_in_one_channel_is_paced_and_every_answer_delivered(llm, tmp_path, caplog, capsys):
    """Load and pacing: 40 simultaneous mentions in one channel, against a Slack that
    allows one message write per second per channel (bursts of 3) and answers 429 beyond it.
    Admitted councils (2 running + 4 queued) each get their answer exactly once; the 34 others
    get a private refusal with a retry hint; the channel is never flooded; no traceback."""
    caplog.set_level("INFO")
    fake = await FakeSlack(token=TOKEN, streaming=False, channel_limit=ChannelLimit(per_s=1.0, burst=3)).start()
    settings = make_settings(
        llm,
        tmp_path,
        SLACK_BOT_TOKEN=TOKEN,
        SLACK_SIGNING_SECRET=SECRET,
        SLACK_API_URL=fake.api_url,
        COUNCIL_MAX_CONCURRENT=2,
        COUNCIL_MAX_QUEUED=4,
    )
    service = await CouncilService.open(settings)
    env = await start_env(fake, settings, service)
    try:
        mentions = [env.mention(f"<@UBOT> Question number {i}?", user=f"U{i:02d}") for i in range(40)]
        started = time.monotonic()
        await asyncio.gather(*(env.event(m) for m in mentions))
        await env.settle(timeout=180)
        admitted = len(mentions) - len([e for e in fake.ephemerals if e["channel"] == "C1"])
        await fake.wait_for(lambda: deliveries(fake) >= admitted, timeout=180)
        elapsed = time.monotonic() - started

        accepted = {s.council_id for s in await service.queries.history(limit=100)}
        delivered = [c.args["blocks"][0]["block_id"].split("-")[2] for c in results(fake)]
        writes = fake.channel_writes("C1")
        limited = [c for c in writes if c.status == 429]
        refusals = [e for e in fake.ephemerals if e["channel"] == "C1"]
        show(
            capsys,
            f"\n[slack burst] 40 mentions: {len(accepted)} accepted, {len(set(delivered))} answers delivered "
            f"({len(delivered)} answer posts), {len(refusals)} private refusals; {len(writes)} channel writes "
            f"in {elapsed:.1f} s, peak {fake.peak_writes('C1')} in 1 s, {len(limited)} answered 429",
        )
        assert len(accepted) == 6 and len(refusals) == 34
        assert sorted(delivered) == sorted(accepted)  # every accepted answer, exactly once
        for cid in accepted:
            assert (await service.queries.get_result(cid)).status is CouncilStatus.OK
        assert all("try again" in e["text"] for e in refusals)
        assert not [c for c in posted(fake) if "failed" in all_text(c).lower()]  # no public failure
        assert fake.peak_writes("C1") <= 3 and fake.peak_writes("C1", window_s=10.0) <= 12
        assert not errors_logged(caplog.records)
    finally:
        await stop_env(env)
        await service.aclose()
        await fake.close()


@pytest.mark.slow
@pytest.mark.parametrize("env", [{"streaming": True, "COUNCIL_MAX_CONCURRENT": 1}], indirect=True)
async def test_a_queued_streamed_council_shows_one_small_message_until_it_starts(env, llm):
    """While it waits, a queued council has one small message and no stream;
    when it starts, that message becomes its Stop / Synthesize control message."""
    fake = env.fake
    for name in MEMBERS:
        llm.script(name, council_member(f"{name} says 42.", latency_s=2.5, synthesis=f"Final answer by {name}: 42."))
    await env.event(env.mention("<@UBOT> First?", user="U1"))
    await env.event(env.mention("<@UBOT> Second?", user="U2"))
    await fake.wait_for(lambda: len(fake.calls_to("chat.startStream")) == 1, timeout=30)
    await fake.wait_for(lambda: "position 1" in json.dumps([c.args for c in posted(fake)]), timeout=30)
    assert len(fake.calls_to("chat.startStream")) == 1  # the queued council opened no stream
    queued = next(c for c in posted(fake) if "position 1" in all_text(c))
    await fake.wait_for(lambda: len(streamed(fake)) == 2, timeout=60)
    await env.settle()
    control_edits = [c for c in fake.calls_to("chat.update") if c.args.get("ts") == queued.response["ts"]]
    # The queue message became the control message (above the stream, so it says "below").
    assert control_edits and "Stop" in all_text(control_edits[0]) and "shown below" in all_text(control_edits[0])
    assert fake.find("C1", queued.response["ts"]) is None  # and went once the stream held the answer
    assert len(statuses(fake)) == 2 and not results(fake)  # one small message each, answers in the streams


async def test_an_answer_refused_with_429_is_retried_until_delivered(env, llm):
    """An accepted council's answer is never lost to rate limits: five 429s in a
    row (more than any fixed retry budget of the Web API client) and it still arrives, once,
    each attempt after the Retry-After."""
    fake = env.fake
    for name in MEMBERS:
        llm.script(name, council_member(f"{name} says 42.", latency_s=1.5, synthesis=f"Final answer by {name}: 42."))
    await env.event(env.mention("<@UBOT> What is six times seven?"))
    await fake.wait_for(lambda: statuses(fake), timeout=30)
    fake.ratelimit("chat.postMessage", times=5, retry_after=1)  # the next posts: the answer's
    await fake.wait_for(lambda: results(fake), timeout=60)
    await env.settle()
    attempts = [c for c in fake.calls_to("chat.postMessage") if c.args.get("thread_ts") and c is not statuses(fake)[0]]
    assert [c.status for c in attempts] == [429] * 5 + [200]
    assert all(b.at - a.at >= 0.95 for a, b in itertools.pairwise(attempts))  # Retry-After honoured
    assert len(results(fake)) == 1
