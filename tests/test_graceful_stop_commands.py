"""SIGTERM to the serving commands tests/test_graceful_stop.py does not cover: `council discord` and
`council serve` (the fake Discord's gateway, SQLite) hand their council over to the restarted
process, which resumes it in its thread; `council web` lets its council run for the grace
(COUNCIL_SHUTDOWN_GRACE_S), then stops it, ends its live page's event stream and exits. Each: exit
0, no traceback, well within Docker's 10 s before its SIGKILL (a hang is not a stop)."""

from __future__ import annotations

import asyncio
import json
import time

import httpx
import pytest

from core.storage import Storage
from tests.conftest import MEMBERS
from tests.council_process import CouncilProcess
from tests.discord_fake import FakeDiscord
from tests.llm_server import ByStage, Hang, Reply
from tests.loopback_app import free_port
from tests.test_discord_adapter import TOKEN, answer_messages
from tests.test_durable_discord import resumed_notes
from tests.test_durable_processes import QUESTIONS, asked, council_env, until_settled
from tests.test_durable_processes import llm_slow_reviews as llm_slow_reviews
from tests.test_graceful_stop import LEASE_S, RESUME_WITHIN_S, STOP_WITHIN_S, stop_by_signal
from tests.test_web import csrf_of


@pytest.fixture
async def discord():
    fake = await FakeDiscord().start()
    yield fake
    await fake.close()


def _discord_env(llm, fake: FakeDiscord, database_url: str, command: str) -> dict[str, str]:
    env = council_env(llm, database_url) | {
        "DISCORD_TOKEN": TOKEN,
        "DISCORD_API_URL": fake.api_url,
        "COUNCIL_LEASE_S": LEASE_S,
    }
    if command == "serve":  # the API beside the bot: both stop on the one signal
        env |= {"COUNCIL_API_KEYS": "tester:sk-test-key-0123456789", "COUNCIL_API_PORT": str(free_port())}
    return env


async def _until_serving(process: CouncilProcess, fake: FakeDiscord, identified: int) -> None:
    await process.until(lambda: len(fake.identifies) >= identified and fake.ready.is_set(), 60)
    if process.args[0] == "serve":
        await process.until(lambda: "council api: http://" in process.log.read_text(), 60)


@pytest.mark.slow
@pytest.mark.parametrize("command", ["discord", "serve"])
async def test_a_discord_bot_stopped_by_sigterm_hands_its_council_to_its_restart(
    command, llm_slow_reviews, discord, tmp_path
):
    llm, database_url = llm_slow_reviews, f"sqlite:///{tmp_path}/council.db"
    env = _discord_env(llm, discord, database_url, command)
    first = CouncilProcess([command], env, tmp_path / "first.log")
    second = CouncilProcess([command], env, tmp_path / "second.log")
    try:
        await first.start()
        await _until_serving(first, discord, 1)
        question = await discord.push_message(f"<@{discord.bot_id}> {QUESTIONS[0]}")
        thread_id = int(question["id"])  # a thread started from a message has the message's id
        await first.until(lambda: asked(llm, QUESTIONS[0], 2) > 0, 60)  # mid-stage-2
        assert first.process is not None
        stop_s = await stop_by_signal(first, first.process.pid)
        await discord.wait_for(lambda: discord.gateway_close_codes)
        assert discord.gateway_close_codes == [1000]  # closed by the bot (last), not dropped by its exit
        assert "handed over 1 council" in first.log.read_text()
        launched = time.monotonic()
        await second.start()
        await _until_serving(second, discord, 2)
        ready_s = time.monotonic() - launched
        await second.until(lambda: resumed_notes(discord, thread_id) >= 1, 60)
        resumed_s = time.monotonic() - launched - ready_s
        await second.until(lambda: answer_messages(discord), 60)
        await until_settled(database_url)
        print(
            f"\n[graceful stop {command}] SIGTERM mid-stage-2: exit 0 in {stop_s:.2f} s; the restarted "
            f"process (ready {ready_s:.1f} s after its launch) resumed it {resumed_s:.1f} s after it was ready"
        )
        assert stop_s < STOP_WITHIN_S and resumed_s < RESUME_WITHIN_S
        answers = answer_messages(discord)
        assert len(answers) == 1 and int(answers[0]["channel_id"]) == thread_id
        assert resumed_notes(discord, thread_id) == 1
        assert asked(llm, QUESTIONS[0], 1) == len(MEMBERS)  # stage 1 was not asked again
    finally:
        await first.stop()
        await second.stop()


async def _stored_status(database_url: str, council_id: str) -> str:
    async with await Storage.open(database_url) as storage:
        rows = await storage.db.fetchall("SELECT status FROM councils WHERE id = ?", (council_id,))
    return str(rows[0][0]) if rows else "missing"


async def _read_events(client: httpx.AsyncClient, council_id: str, opened: asyncio.Event) -> list[str]:
    """The live page's event stream until the server ends it: the kinds of the events it got."""
    kinds: list[str] = []
    async with client.stream("GET", f"/c/{council_id}/events") as stream:
        opened.set()
        async for line in stream.aiter_lines():
            if line.startswith("data: "):
                kinds.append(json.loads(line[6:])["kind"])
    return kinds


@pytest.mark.slow
async def test_the_browser_app_stops_a_council_that_outlasts_the_grace_and_exits(llm, tmp_path):
    """Its council cannot be handed over (not durable): it gets COUNCIL_SHUTDOWN_GRACE_S, then is
    stopped (stored as cancelled) and an open live page gets its last event: the stream ends, it
    is not cut by the server's cancel (which logged a traceback)."""
    for name in MEMBERS:
        llm.script(name, ByStage(Hang(), Reply("unused"), Reply("unused")))
    port, grace = free_port(), 1.0
    database_url = f"sqlite:///{tmp_path}/council.db"
    env = council_env(llm, database_url) | {"COUNCIL_SHUTDOWN_GRACE_S": str(grace)}
    web = await CouncilProcess(["web", "--port", str(port)], env, tmp_path / "web.log").start()
    try:
        await web.until(lambda: f":{port}" in web.log.read_text(), 60)
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=30) as client:
            token = csrf_of((await client.get("/ask")).text)
            asked_ = await client.post("/ask", data={"question": "Will this outlast the stop?", "csrf_token": token})
            assert asked_.status_code == 303, asked_.text
            council_id = asked_.headers["location"].removeprefix("/c/")
            await llm.wait_for_requests(lambda: len(llm.requests_for(stage=1)) == len(MEMBERS))
            opened = asyncio.Event()
            events = asyncio.ensure_future(_read_events(client, council_id, opened))
            await asyncio.wait_for(opened.wait(), 30)
            assert web.process is not None
            took = await stop_by_signal(web, web.process.pid)
            kinds = await asyncio.wait_for(events, 10)  # the stream ended with the process
        print(f"\n[graceful stop web] SIGTERM with a council running: exit 0 in {took:.2f} s (grace {grace:g} s)")
        assert grace <= took < grace + STOP_WITHIN_S
        assert "did not finish within" in web.log.read_text()
        assert kinds[-1] == "finished", kinds
        assert await _stored_status(database_url, council_id) == "cancelled", kinds
    finally:
        await web.stop()
