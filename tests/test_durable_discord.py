"""Durable Discord councils across processes (issue 15): on PostgreSQL a `council discord
--no-worker` process only takes the mention (opens its thread, stores and enqueues the council)
and a separate `council worker` process, REST-only (no gateway connection), runs it and posts
the answer into that thread exactly once; a worker killed with SIGKILL mid-stage-2 is replaced by
another, which resumes the council in the same thread. Real processes, the fake Discord
(tests/discord_fake.py), a real PostgreSQL (tests/pg_server.py) and the scripted LLM server."""

from __future__ import annotations

import signal
import time

import pytest

from bot.councils import RESUMED_TEXT
from core.storage import Storage
from tests.conftest import MEMBERS
from tests.council_process import CouncilProcess
from tests.discord_fake import FakeDiscord
from tests.test_discord_adapter import TOKEN, answer_messages, final_edits
from tests.test_durable_processes import (
    QUESTIONS,
    RESUME_WITHIN_S,
    council_env,
    delivering_pids,
    llm_slow_reviews,
    runner_pid,
    until_settled,
)

__all__ = ["llm_slow_reviews"]  # a fixture of these tests


@pytest.fixture
async def fake():
    f = await FakeDiscord().start()
    yield f
    await f.close()


async def stored_statuses(database_url: str) -> list[str]:
    async with await Storage.open(database_url) as storage:
        return sorted(str(r[0]) for r in await storage.db.fetchall("SELECT status FROM councils"))


async def test_discord_intake_without_worker_and_a_separate_worker_answer_once(pg_server, llm, fake, tmp_path):
    database_url = pg_server.new_database()
    env = council_env(llm, database_url) | {"DISCORD_TOKEN": TOKEN, "DISCORD_API_URL": fake.api_url}
    intake = CouncilProcess(["discord", "--no-worker"], env, tmp_path / "intake.log")
    worker = CouncilProcess(["worker"], env, tmp_path / "worker.log")
    try:
        await intake.start()
        await intake.until(lambda: len(fake.identifies) >= 1 and fake.ready.is_set(), 60)
        question = await fake.push_message(f"<@{fake.bot_id}> What is six times seven?")
        thread_id = int(question["id"])  # a thread started from a message has the message's id
        await intake.until(lambda: any(int(t["id"]) == thread_id for t in fake.threads()), 30)
        assert llm.requests == [] and answer_messages(fake) == []
        assert await stored_statuses(database_url) == ["running"]  # accepted and queued, not run here

        started = time.monotonic()
        await worker.start()
        await worker.until(lambda: len(final_edits(fake)) >= 1, 90)
        await until_settled(database_url)  # a second answer would have been posted by then
        # The intake had the queued council to itself until the worker started: had it run
        # councils, it would have claimed this one.
        assert worker.process is not None and await delivering_pids(database_url) == [worker.process.pid]
        print(f"\n[durable discord] separate worker answered {time.monotonic() - started:.1f} s after it started")
        answers = answer_messages(fake)
        assert len(answers) == 1 and int(answers[0]["channel_id"]) == thread_id  # in the thread, exactly once
        assert len(llm.requests_for(stage=1)) == len(MEMBERS)
        assert len(fake.identifies) == 1  # the worker posts over REST, without a gateway connection
        assert await stored_statuses(database_url) == ["ok"]
    finally:
        await intake.stop()
        await worker.stop()


def resumed_notes(fake: FakeDiscord, thread_id: int) -> int:
    return sum(
        1 for m in fake.messages.values() if int(m["channel_id"]) == thread_id and RESUMED_TEXT in (m["content"] or "")
    )


@pytest.mark.slow
async def test_a_killed_discord_worker_is_resumed_by_another_in_the_same_thread(
    pg_server, llm_slow_reviews, fake, tmp_path
):
    llm, database_url = llm_slow_reviews, pg_server.new_database()
    env = council_env(llm, database_url) | {"DISCORD_TOKEN": TOKEN, "DISCORD_API_URL": fake.api_url}
    intake = CouncilProcess(["discord", "--no-worker"], env, tmp_path / "intake.log")
    workers = [CouncilProcess(["worker"], env, tmp_path / f"worker{i}.log") for i in range(2)]
    try:
        await intake.start()
        for worker in workers:
            await worker.start()
        await intake.until(lambda: fake.ready.is_set(), 60)
        question = await fake.push_message(f"<@{fake.bot_id}> {QUESTIONS[0]}")
        thread_id = int(question["id"])
        await intake.until(lambda: llm.requests_for(stage=2), 60)
        pid = await runner_pid(database_url, QUESTIONS[0])
        victim = next(w for w in workers if w.process and w.process.pid == pid)  # a worker, not the intake
        victim.kill9()
        killed_at = time.monotonic()

        await intake.until(lambda: resumed_notes(fake, thread_id) >= 1, 60)
        resumed_s = time.monotonic() - killed_at
        await intake.until(lambda: answer_messages(fake), 90)
        await until_settled(database_url)  # a second answer would have been posted by then
        print(f"\n[durable discord] killed worker {pid} mid-stage-2; resumed in its thread {resumed_s:.1f} s later")
        answers = answer_messages(fake)
        assert len(answers) == 1 and int(answers[0]["channel_id"]) == thread_id
        assert resumed_notes(fake, thread_id) == 1 and resumed_s < RESUME_WITHIN_S
        assert len(llm.requests_for(stage=1)) == len(MEMBERS)  # stored answers were not asked again
        assert victim.process is not None and await victim.process.wait() == -signal.SIGKILL
        assert await stored_statuses(database_url) == ["ok"]
    finally:
        for process in (intake, *workers):
            await process.stop()
