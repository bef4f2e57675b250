"""SIGTERM (and SIGINT) to a serving process: it takes no new events, hands its councils over and
exits 0 without a traceback, within a second or two (bot/cli_commands/shutdown.py).

Real processes (tests/council_process.py) against the fake Slack and the scripted LLM: as PID 1 of
a PID namespace made with `unshare --pid --fork` (a container's CMD without an init: the kernel
ignores a signal a PID 1 has no handler for) and as a plain child; on SQLite (the restarted process
resumes the council) and on a real PostgreSQL (another live process resumes it at once, not when the
stopped one's lease would have run out). Each test prints what it measured: how long the stop took
and how soon the council was resumed. The resumed council ends the live display the stopped process
had left streaming ("Stage 1/3").
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import sys
import time
from pathlib import Path

import aiohttp
import pytest

from bot.slack.app import build_slack_bot, build_web_app
from core.service import CouncilService
from tests.conftest import MEMBERS, make_settings
from tests.council_process import CouncilProcess
from tests.llm_server import ByStage, Reply, ScriptedLLMServer, ranking_review
from tests.loopback_app import free_port, serve_on_loopback
from tests.test_durable_processes import (
    QUESTIONS,
    BotProcess,
    answers_in,
    asked,
    bot_env,
    council_env,
    resumed_notes,
    send,
    until_settled,
    waited,
)
from tests.test_durable_processes import fake as fake
from tests.test_durable_processes import llm_slow_reviews as llm_slow_reviews
from tests.test_slack_run import mention

STOP_WITHIN_S = 5.0  # Docker waits 10 s before its SIGKILL
RESUME_WITHIN_S = 5.0  # the lease these tests set is 30 s: a council resumed sooner was handed over
LEASE_S = "30"


def _pid_namespaces() -> str | None:
    if shutil.which("unshare") is None:
        return "unshare (util-linux) is not installed"
    if os.geteuid() != 0:
        return "a PID namespace needs root (CI runs as root)"
    return None


class Pid1(BotProcess):
    """`council slack --http` as PID 1 of a new PID namespace (`unshare --pid --fork`)."""

    async def start(self, session: aiohttp.ClientSession | None = None) -> Pid1:
        with self.log.open("ab") as out:
            self.process = await asyncio.create_subprocess_exec(
                "unshare", "--pid", "--fork", "--kill-child", sys.executable, "-m", "bot.cli", *self.args,
                env=self.env, cwd=self.cwd, stdout=out, stderr=out,
            )  # fmt: skip
        return await self._until_healthy(session)

    @property
    def pid(self) -> int:
        """The bot's own pid (outside the namespace): unshare's child, PID 1 inside."""
        assert self.process is not None
        children = Path(f"/proc/{self.process.pid}/task/{self.process.pid}/children").read_text().split()
        return int(children[0])


def _as_pid1(process: Pid1) -> None:
    nspid = next(line for line in Path(f"/proc/{process.pid}/status").read_text().splitlines() if "NSpid" in line)
    assert nspid.split()[-1] == "1", nspid  # PID 1 in its namespace


def bot_pid(bot: BotProcess) -> int:
    return bot.pid if isinstance(bot, Pid1) else bot.process.pid  # type: ignore[union-attr]


async def stop_by_signal(bot: CouncilProcess, pid: int, signum: int = signal.SIGTERM) -> float:
    """Send `signum`, wait for the exit: seconds it took; asserts exit 0 and no traceback."""
    assert bot.process is not None
    started = time.monotonic()
    os.kill(pid, signum)
    code = await asyncio.wait_for(bot.process.wait(), 20)
    took = time.monotonic() - started
    log = bot.log.read_text()
    assert code == 0, log[-3000:]
    assert "Traceback" not in log and "CancelledError" not in log, log[-3000:]
    return took


def streams_left_open(fake, channel: str = "C1") -> list[str]:
    return [m["ts"] for m in fake.messages.get(channel, []) if m.get("chunks") is not None and m.get("streaming")]


@pytest.fixture(params=["pid1", "child"])
def how(request):
    if request.param == "pid1":
        missing = _pid_namespaces()
        if missing:
            pytest.skip(missing)
    return request.param


@pytest.mark.slow
async def test_sqlite_bot_stopped_by_sigterm_is_resumed_by_its_restart_at_once(how, llm_slow_reviews, fake, tmp_path):
    llm, database_url = llm_slow_reviews, f"sqlite:///{tmp_path}/council.db"
    env = bot_env(llm, fake, database_url) | {"COUNCIL_LEASE_S": LEASE_S}
    kind = Pid1 if how == "pid1" else BotProcess
    async with aiohttp.ClientSession() as session:
        first = await kind(env, tmp_path / "first.log").start(session)
        second = BotProcess(env, tmp_path / "second.log")
        try:
            if isinstance(first, Pid1):
                _as_pid1(first)
            ts, body = mention(fake, QUESTIONS[0], "EvStop")
            await send(session, first, body)
            await waited(fake, lambda: asked(llm, QUESTIONS[0], 2) > 0, 60)
            assert streams_left_open(fake)  # its live display is streaming
            stop_s = await stop_by_signal(first, bot_pid(first))
            launched = time.monotonic()
            await second.start(session)
            ready_s = time.monotonic() - launched
            await waited(fake, lambda: resumed_notes(fake, ts) >= 1, 60)
            resumed_s = time.monotonic() - launched - ready_s
            await waited(fake, lambda: answers_in(fake, ts) >= 1, 60)
            answered_s = time.monotonic() - launched - ready_s
            await until_settled(database_url)
            print(
                f"\n[graceful stop sqlite {how}] SIGTERM mid-stage-2: exit 0 in {stop_s:.2f} s; "
                f"the restarted bot (ready {ready_s:.1f} s after its launch) resumed it {resumed_s:.1f} s after it "
                f"was ready, answered {answered_s:.1f} s after"
            )
            assert stop_s < STOP_WITHIN_S
            assert resumed_s < RESUME_WITHIN_S
            assert answers_in(fake, ts) == 1 and resumed_notes(fake, ts) == 1
            assert asked(llm, QUESTIONS[0], 1) == len(MEMBERS)  # stage 1 was not asked again
            assert not streams_left_open(fake)  # the first display was ended, not left at "Stage 1/3"
            assert "stopping" in first.log.read_text()
        finally:
            await first.stop()
            await second.stop()


@pytest.fixture
async def llm_slower_reviews():
    """Reviews slow enough that the second bot has started before the first one's council is over."""
    async with ScriptedLLMServer() as server:
        for name in MEMBERS:
            server.script(
                name,
                ByStage(
                    Reply(f"{name} says: the answer is 42."),
                    Reply(ranking_review(), delay_s=15.0),
                    Reply(f"Final answer by {name}: 42."),
                ),
            )
        yield server


@pytest.mark.slow
async def test_postgresql_worker_stopped_by_sigterm_hands_its_council_to_another_at_once(
    how, pg_server, llm_slower_reviews, fake, tmp_path
):
    """Two bots on one PostgreSQL; the one running the council (started first, alone) is stopped:
    the other resumes it within a second or two, where the lease (30 s here) would have made it wait."""
    llm, database_url = llm_slower_reviews, pg_server.new_database()
    env = bot_env(llm, fake, database_url) | {"COUNCIL_LEASE_S": LEASE_S, "COUNCIL_QUEUE_STALLED_S": LEASE_S}
    kind = Pid1 if how == "pid1" else BotProcess
    victim = kind(env, tmp_path / "victim.log")
    survivor = BotProcess(env, tmp_path / "survivor.log")
    async with aiohttp.ClientSession() as session:
        try:
            await victim.start(session)
            ts, body = mention(fake, QUESTIONS[1], "EvPg")
            await send(session, victim, body)
            await waited(fake, lambda: asked(llm, QUESTIONS[1], 2) > 0, 60)  # the victim runs it: it is alone
            await survivor.start(session)
            stopped_at = time.monotonic()
            stop_s = await stop_by_signal(victim, bot_pid(victim))
            await waited(fake, lambda: resumed_notes(fake, ts) >= 1, 60)
            resumed_s = time.monotonic() - stopped_at
            await waited(fake, lambda: answers_in(fake, ts) >= 1, 60)
            await until_settled(database_url)
            print(
                f"\n[graceful stop postgresql {how}] SIGTERM mid-stage-2: exit 0 in {stop_s:.2f} s; "
                f"the other bot resumed it {resumed_s:.1f} s after the signal (lease {LEASE_S} s)"
            )
            assert stop_s < STOP_WITHIN_S
            assert resumed_s < RESUME_WITHIN_S
            assert answers_in(fake, ts) == 1 and resumed_notes(fake, ts) == 1
            assert asked(llm, QUESTIONS[1], 1) == len(MEMBERS)
            assert not streams_left_open(fake)
            assert "handed over 1 council" in victim.log.read_text()
            assert survivor.process is not None and survivor.process.returncode is None
        finally:
            await victim.stop()
            await survivor.stop()


async def test_a_stopping_bot_takes_no_new_event_and_says_it_is_not_ready(llm, tmp_path):
    """From the signal on, the Events API answers 503 (Slack retries the event on another replica,
    or on this one restarted: the event id makes it one council) and /ready 503 (a load balancer
    sends nothing more); /health still answers."""
    settings = make_settings(llm, tmp_path, SLACK_BOT_TOKEN="xoxb-test", SLACK_SIGNING_SECRET="secret")
    async with await CouncilService.open(settings) as service:
        bot = build_slack_bot(service, settings)
        runner, port = await serve_on_loopback(build_web_app(bot.app, service))
        url = f"http://127.0.0.1:{port}"
        try:
            async with aiohttp.ClientSession() as session:
                async with session.get(url + "/ready") as response:
                    assert response.status == 200
                assert service.telemetry.stop() and not service.telemetry.stop()  # once
                async with session.post(url + "/slack/events", data="{}") as response:
                    assert response.status == 503 and response.headers["Retry-After"] == "1"
                async with session.get(url + "/ready") as response:
                    assert response.status == 503 and (await response.json())["process"] == "stopping"
                async with session.get(url + "/health") as response:
                    assert response.status == 200
        finally:
            await runner.cleanup()
            await bot.aclose()


@pytest.fixture
async def llm_slow_answer():
    async with ScriptedLLMServer() as server:
        for name in MEMBERS:
            server.script(
                name,
                ByStage(
                    Reply(f"{name} says 42.", delay_s=2.0),
                    Reply(ranking_review()),
                    Reply(f"Final answer by {name}: 42."),
                ),
            )
        yield server


@pytest.mark.slow
async def test_the_api_lets_a_running_council_finish_within_the_grace(llm_slow_answer, tmp_path):
    """`council api` on SIGTERM: its in-process council (no handover for it) finishes within
    COUNCIL_SHUTDOWN_GRACE_S and its client gets the answer; then exit 0."""
    port = free_port()
    env = council_env(llm_slow_answer, f"sqlite:///{tmp_path}/council.db") | {
        "COUNCIL_API_KEYS": "tester:sk-test-key-0123456789",
        "COUNCIL_SHUTDOWN_GRACE_S": "15",
    }
    api = await CouncilProcess(["api", "--port", str(port)], env, tmp_path / "api.log").start()
    url = f"http://127.0.0.1:{port}"
    try:
        async with aiohttp.ClientSession() as session:
            await api.until(lambda: f"127.0.0.1:{port}" in api.log.read_text(), 60)

            async def ask() -> tuple[int, dict]:
                async with session.post(
                    url + "/v1/chat/completions",
                    json={"model": "llm-council", "messages": [{"role": "user", "content": "Six times seven?"}]},
                    headers={"Authorization": "Bearer sk-test-key-0123456789"},
                    timeout=aiohttp.ClientTimeout(total=60),
                ) as response:
                    return response.status, await response.json()

            request = asyncio.ensure_future(ask())
            await llm_slow_answer.wait_for_requests(lambda: len(llm_slow_answer.requests_for(stage=1)) >= 1)
            assert api.process is not None
            stop_s = asyncio.ensure_future(stop_by_signal(api, api.process.pid))
            status, answer = await request
            assert status == 200, answer
            assert "42" in answer["choices"][0]["message"]["content"]
            took = await stop_s
            print(f"\n[graceful stop api] SIGTERM during a council: it finished, exit 0 in {took:.2f} s")
            assert took < 15
    finally:
        await api.stop()


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
async def test_a_worker_stopped_with_ctrl_c_or_sigterm_exits_0_without_a_traceback(
    pg_server, llm_slow_reviews, tmp_path, signum
):
    env = council_env(llm_slow_reviews, pg_server.new_database()) | {
        "SLACK_BOT_TOKEN": "xoxb-test",
        "SLACK_API_URL": "http://127.0.0.1:9/api/",
    }
    port = free_port()
    worker = await CouncilProcess(["worker", "--metrics-port", str(port)], env, tmp_path / "worker.log").start()
    try:
        async with aiohttp.ClientSession() as session:
            deadline = time.monotonic() + 60
            while True:
                try:
                    async with session.get(f"http://127.0.0.1:{port}/ready") as response:
                        if response.status == 200:
                            break
                except aiohttp.ClientConnectionError:
                    pass
                assert time.monotonic() < deadline and worker.process.returncode is None, worker.log.read_text()
                await asyncio.sleep(0.1)
        assert worker.process is not None
        took = await stop_by_signal(worker, worker.process.pid, signum)
        print(f"\n[graceful stop worker] {signal.Signals(signum).name}: exit 0 in {took:.2f} s")
        assert took < STOP_WITHIN_S
    finally:
        await worker.stop()
