"""The proof of durable councils with real processes and kill -9 (issue 15).

PostgreSQL: three `council slack --http` processes on one real database (tests/pg_server.py),
against the fake Slack (tests/slack_fake.py) and the scripted LLM server. Two events are sent,
each to one process and its Slack retry to another; the process running the first council is
killed with SIGKILL while stage 2 waits on the reviewers. Checked: one council per event, each
answer in its own thread exactly once, the resume announced there within 30 s, no stage-1 call
repeated, and each event counted once against the rate limits.

SQLite: one process is killed the same way and started again on the same file: the restarted
process resumes its interrupted council the same way.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path

import aiohttp
import pytest

from bot.slack.render import RESUMED_NOTE
from core.storage import Storage
from tests.conftest import MEMBERS
from tests.council_process import ROOT, CouncilProcess
from tests.llm_server import ByStage, Reply, ScriptedLLMServer, ranking_review
from tests.loopback_app import free_port
from tests.slack_fake import FakeSlack, sign
from tests.test_slack_run import answers, mention

SECRET = "durable-secret"
TOKEN = "xoxb-test"
QUESTIONS = ("What is six times seven?", "Name a prime number below ten?")
REVIEW_DELAY_S = 4.0  # stage 2 is slow: the kill lands while it waits on the reviewers
RESUME_WITHIN_S = 30.0


@pytest.fixture
async def llm_slow_reviews():
    async with ScriptedLLMServer() as server:
        for name in MEMBERS:
            server.script(
                name,
                ByStage(
                    Reply(f"{name} says: the answer is 42."),
                    Reply(ranking_review(), delay_s=REVIEW_DELAY_S),
                    Reply(f"Final answer by {name}: 42."),
                ),
            )
        yield server


@pytest.fixture
async def fake():
    f = await FakeSlack(token=TOKEN).start()
    yield f
    await f.close()


class BotProcess(CouncilProcess):
    """One `council slack --http` process."""

    def __init__(self, env: dict[str, str], log: Path):
        self.port = free_port()
        super().__init__(["slack", "--http", "--port", str(self.port)], env, log)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def start(self, session: aiohttp.ClientSession | None = None) -> BotProcess:
        await super().start()
        return await self._until_healthy(session)

    async def _until_healthy(self, session: aiohttp.ClientSession | None) -> BotProcess:
        assert session is not None and self.process is not None
        for _ in range(300):
            try:
                async with session.get(self.url + "/health") as response:
                    if response.status == 200:
                        return self
            except aiohttp.ClientConnectionError:
                pass
            if self.process.returncode is not None:
                break
            await asyncio.sleep(0.1)
        raise AssertionError(f"the bot did not start: {self.log.read_text()[-3000:]}")


def bot_env(llm: ScriptedLLMServer, fake: FakeSlack, database_url: str) -> dict[str, str]:
    return council_env(llm, database_url) | {
        "SLACK_BOT_TOKEN": TOKEN,
        "SLACK_SIGNING_SECRET": SECRET,
        "SLACK_API_URL": fake.api_url,
    }


def council_env(llm: ScriptedLLMServer, database_url: str) -> dict[str, str]:
    """A council process's environment without a platform: the scripted LLM, the database and
    short leases (a dead worker is noticed within seconds)."""
    platforms = ("SLACK_", "DISCORD_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("COUNCIL_", "LLM_", "DATABASE_URL", *platforms))}
    env.update(
        PYTHONPATH=str(ROOT),
        LLM_BASE_URL=llm.base_url,
        LLM_API_KEY="test-key-not-secret",
        LLM_MAX_RETRIES="0",
        COUNCIL_MODELS=",".join(MEMBERS),
        COUNCIL_CHAIRMAN="alpha",
        COUNCIL_TIMEOUT_S="30",
        COUNCIL_GRACE_S="20",
        DATABASE_URL=database_url,
        COUNCIL_LEASE_S="4",
        COUNCIL_QUEUE_HEARTBEAT_S="1",
        COUNCIL_QUEUE_STALLED_S="4",
        LOG_LEVEL="INFO",
    )
    return env


async def send(session: aiohttp.ClientSession, bot: BotProcess, body: dict, retry: int = 0) -> None:
    raw = json.dumps(body)
    headers = {"Content-Type": "application/json", **sign(SECRET, raw)}
    if retry:
        headers |= {"X-Slack-Retry-Num": str(retry), "X-Slack-Retry-Reason": "http_timeout"}
    async with session.post(bot.url + "/slack/events", data=raw, headers=headers) as response:
        assert response.status == 200


async def waited(fake: FakeSlack, predicate, timeout: float) -> float:
    """Seconds until `predicate` held (the fake's wait_for, timed)."""
    started = time.monotonic()
    await fake.wait_for(predicate, timeout, interval=0.05)
    return time.monotonic() - started


def asked(llm: ScriptedLLMServer, question: str, stage: int) -> int:
    return sum(question in r.user for r in llm.requests_for(stage=stage))


async def runner_pid(database_url: str, question: str) -> int:
    """The process running the council on `question` (its owner's lease names it)."""
    async with await Storage.open(database_url) as storage:
        rows = await storage.db.fetchall(
            """SELECT o.pid FROM councils c JOIN council_owners o ON o.owner_id = c.owner_id
               WHERE c.question = ? AND c.status = 'running'""",
            (question,),
        )
    assert rows, f"no running owner for {question!r}"
    return int(rows[0][0])


async def stored_counts(database_url: str) -> tuple[int, int, list[str]]:
    async with await Storage.open(database_url) as storage:
        councils = await storage.db.fetchall("SELECT status FROM councils")
        hits = await storage.db.fetchall("SELECT COUNT(*) FROM rate_hits WHERE key = ?", ("user:slack:T1:U1",))
    return len(councils), int(hits[0][0]), sorted(str(r[0]) for r in councils)


async def settled(database_url: str) -> bool:
    """No council still running, every answer's delivery claimed (once per council, across
    processes) and no queue job left to run or running: nothing can post an answer any more."""
    async with await Storage.open(database_url) as storage:
        running = await storage.db.fetchall("SELECT 1 FROM councils WHERE status = 'running'")
        unclaimed = await storage.db.fetchall(
            "SELECT 1 FROM councils WHERE id NOT IN (SELECT council_id FROM council_deliveries)"
        )
        live = []  # SQLite has no job queue: a restarted process resumes what it finds running
        if database_url.startswith("postgresql"):
            live = await storage.db.fetchall("SELECT 1 FROM procrastinate_jobs WHERE status IN ('todo', 'doing')")
    return not (running or unclaimed or live)


async def until_settled(database_url: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not await settled(database_url):
        assert time.monotonic() < deadline, f"councils not settled within {timeout} s"
        await asyncio.sleep(0.1)


async def delivering_pids(database_url: str) -> list[int]:
    """The processes that claimed each answer's delivery (their owner rows name them)."""
    async with await Storage.open(database_url) as storage:
        rows = await storage.db.fetchall(
            """SELECT o.pid FROM council_deliveries d JOIN council_owners o ON o.owner_id = d.owner_id
               ORDER BY d.delivered_at"""
        )
    return [int(r[0]) for r in rows]


def answers_in(fake: FakeSlack, thread_ts: str) -> int:
    return sum(1 for a in answers(fake) if a["thread_ts"] == thread_ts)


def resumed_notes(fake: FakeSlack, thread_ts: str) -> int:
    return sum(
        1
        for c in fake.calls_to("chat.postMessage")
        if c.ok and c.args.get("thread_ts") == thread_ts and c.args.get("text") == RESUMED_NOTE
    )


@pytest.mark.slow
async def test_three_processes_on_postgresql_survive_kill_9(pg_server, llm_slow_reviews, fake, tmp_path):
    llm, database_url = llm_slow_reviews, pg_server.new_database()
    env = bot_env(llm, fake, database_url)
    bots = [BotProcess(env, tmp_path / f"bot{i}.log") for i in range(3)]
    async with aiohttp.ClientSession() as session:
        try:
            for bot in bots:
                await bot.start(session)
            threads = []
            for i, question in enumerate(QUESTIONS):
                ts, body = mention(fake, question, f"Ev{i}")
                threads.append(ts)
                await send(session, bots[i], body)
                await send(session, bots[(i + 1) % 3], body, retry=1)  # Slack's retry lands elsewhere
                await send(session, bots[(i + 2) % 3], body, retry=2)

            await waited(fake, lambda: asked(llm, QUESTIONS[0], 2) > 0, 60)
            pid = await runner_pid(database_url, QUESTIONS[0])
            victim = next(b for b in bots if b.process and b.process.pid == pid)
            victim.kill9()
            killed_at = time.monotonic()

            resumed_s = await waited(fake, lambda: resumed_notes(fake, threads[0]) >= 1, 60)
            await waited(fake, lambda: all(answers_in(fake, ts) >= 1 for ts in threads), 90)
            await until_settled(database_url)  # a duplicate would have been posted by then
            print(
                f"\n[durable pg] killed pid {pid} mid-stage-2; resumed in its thread {resumed_s:.1f} s later; "
                f"answered {time.monotonic() - killed_at:.1f} s after the kill"
            )
            assert [answers_in(fake, ts) for ts in threads] == [1, 1]  # the right thread, exactly once
            assert len(answers(fake)) == 2
            assert resumed_s < RESUME_WITHIN_S and resumed_notes(fake, threads[0]) == 1
            assert asked(llm, QUESTIONS[0], 1) == len(MEMBERS)  # stored answers were not asked again
            councils, hits, statuses = await stored_counts(database_url)
            assert councils == 2 and statuses == ["ok", "ok"]  # one council per event
            assert hits == 2  # one rate-limit hit per event, retries and the resume counted nothing
        finally:
            for bot in bots:
                await bot.stop()


@pytest.mark.slow
async def test_sqlite_restart_resumes_its_interrupted_council(llm_slow_reviews, fake, tmp_path):
    llm, database_url = llm_slow_reviews, f"sqlite:///{tmp_path}/council.db"
    env = bot_env(llm, fake, database_url)
    async with aiohttp.ClientSession() as session:
        first = await BotProcess(env, tmp_path / "first.log").start(session)
        second = BotProcess(env, tmp_path / "second.log")
        try:
            ts, body = mention(fake, QUESTIONS[0], "EvS")
            await send(session, first, body)
            await waited(fake, lambda: asked(llm, QUESTIONS[0], 2) > 0, 60)
            first.kill9()
            killed_at = time.monotonic()
            await second.start(session)
            await send(session, second, body, retry=1)  # Slack retries the event on the new process
            resumed_s = await waited(fake, lambda: resumed_notes(fake, ts) >= 1, 60)
            await waited(fake, lambda: answers_in(fake, ts) >= 1, 60)
            await until_settled(database_url)  # a duplicate would have been posted by then
            print(f"\n[durable sqlite] restarted after kill -9; resumed {time.monotonic() - killed_at:.1f} s after")
            assert answers_in(fake, ts) == 1 and len(answers(fake)) == 1 and resumed_notes(fake, ts) == 1
            assert resumed_s < RESUME_WITHIN_S
            assert asked(llm, QUESTIONS[0], 1) == len(MEMBERS)
            councils, hits, statuses = await stored_counts(database_url)
            assert (councils, hits, statuses) == (1, 1, ["ok"])
        finally:
            await first.stop()
            await second.stop()
