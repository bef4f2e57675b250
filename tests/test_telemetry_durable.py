"""One trace, and one set of metrics, across a worker killed with SIGKILL and the worker that
resumes its council (issue 25), on PostgreSQL with real processes: a `council slack --http
--no-worker` intake and two `council worker` processes sharing one metrics port and one
PROMETHEUS_MULTIPROC_DIR (several workers on one host). Spans are exported over OTLP/HTTP to a
receiver on loopback (tests/otlp_receiver.py), as to an OpenTelemetry collector."""

from __future__ import annotations

import time

import aiohttp
import pytest

from tests.conftest import MEMBERS
from tests.council_process import CouncilProcess
from tests.llm_server import ScriptedLLMServer
from tests.loopback_app import free_port
from tests.otlp_receiver import OtlpReceiver
from tests.test_durable_processes import (
    QUESTIONS,
    BotProcess,
    answers_in,
    asked,
    bot_env,
    fake,  # noqa: F401 - fixture
    llm_slow_reviews,  # noqa: F401 - fixture
    resumed_notes,
    runner_pid,
    send,
    waited,
)
from tests.test_slack_run import mention
from tests.test_telemetry import parse, value


class Intake(BotProcess):
    """`council slack --http --no-worker`: accepts events, queues councils, runs none."""

    def __init__(self, env: dict[str, str], log):
        super().__init__(env, log)
        self.args = [*self.args, "--no-worker"]


async def get(session: aiohttp.ClientSession, url: str) -> tuple[int, str]:
    async with session.get(url) as response:
        return response.status, await response.text()


async def ready_within(session: aiohttp.ClientSession, url: str, workers: list[CouncilProcess], timeout: float) -> None:
    for worker in workers:
        await worker.until(lambda w=worker: "metrics, /health and /ready at" in w.log.read_text(), timeout)
    status, body = await get(session, url + "/ready")
    assert status == 200, body


@pytest.mark.slow
async def test_a_council_keeps_its_trace_and_metrics_across_a_killed_worker(
    pg_server,
    llm_slow_reviews: ScriptedLLMServer,  # noqa: F811
    fake,  # noqa: F811
    tmp_path,
):
    llm, database_url = llm_slow_reviews, pg_server.new_database()
    metrics_dir = tmp_path / "prometheus"
    metrics_dir.mkdir()
    metrics_port = free_port()
    async with OtlpReceiver() as otlp, aiohttp.ClientSession() as session:
        env = bot_env(llm, fake, database_url) | {
            "OTEL_EXPORTER_OTLP_ENDPOINT": otlp.endpoint,
            "OTEL_BSP_SCHEDULE_DELAY": "100",
            "PROMETHEUS_MULTIPROC_DIR": str(metrics_dir),
        }
        intake = Intake(env | {"OTEL_SERVICE_NAME": "intake"}, tmp_path / "intake.log")
        workers = [
            CouncilProcess(
                ["worker", "--metrics-port", str(metrics_port)],
                env | {"OTEL_SERVICE_NAME": f"worker-{i}"},
                tmp_path / f"worker{i}.log",
            )
            for i in range(2)
        ]
        metrics_url = f"http://127.0.0.1:{metrics_port}"
        try:
            await intake.start(session)
            for worker in workers:
                await worker.start()
            await ready_within(session, metrics_url, workers, 60)
            status, intake_ready = await get(session, intake.url + "/ready")
            assert status == 200, intake_ready

            ts, body = mention(fake, QUESTIONS[0], "EvT")
            await send(session, intake, body)
            await waited(fake, lambda: asked(llm, QUESTIONS[0], 2) > 0, 60)
            # The finished stage 1's spans leave on the 100 ms export schedule, its chats before it.
            await waited(fake, lambda: otlp.named("stage1"), 10)
            pid = await runner_pid(database_url, QUESTIONS[0])
            victim = next(w for w in workers if w.process and w.process.pid == pid)
            victim.kill9()
            killed_at = time.monotonic()
            await waited(fake, lambda: answers_in(fake, ts) >= 1, 90)
            assert resumed_notes(fake, ts) == 1
            # The survivor's council span ends last (after its metrics), so the spans before it are in.
            await waited(fake, lambda: otlp.named("council"), 10)
            print(
                f"\n[telemetry] killed worker pid {pid} mid-stage-2; {len(otlp.spans)} spans received, "
                f"answered {time.monotonic() - killed_at:.1f} s after the kill"
            )

            status, text = await get(session, metrics_url + "/metrics")  # only the survivor listens now
            assert status == 200
        finally:
            for process in (intake, *workers):
                await process.stop()

    # ---- one trace: the submission's, continued by both workers
    [submit] = otlp.named("council.submit")
    assert submit.resource["service.name"] == "intake" and submit.parent_id == ""
    assert {span.trace_id for span in otlp.spans} == {submit.trace_id}
    victim_name = "worker-0" if victim is workers[0] else "worker-1"
    survivor_name = "worker-1" if victim is workers[0] else "worker-0"
    by = {name: [s for s in otlp.spans if s.resource["service.name"] == name] for name in (victim_name, survivor_name)}
    # The killed worker's finished stage 1 reached the collector; its council span never ended.
    assert [s.name for s in by[victim_name] if s.name.startswith("stage")] == ["stage1"]
    assert sorted(s.name for s in by[victim_name] if s.name.startswith("chat ")) == [f"chat {m}" for m in MEMBERS]
    # The survivor's council is the submission's child, marked resumed, and asked no stage-1 model again.
    [council] = [s for s in by[survivor_name] if s.name == "council"]
    assert council.parent_id == submit.span_id
    assert council.attributes["council.resumed"] is True and council.attributes["council.status"] == "ok"
    survivor_stages = {s.span_id: s.name for s in by[survivor_name] if s.name.startswith("stage")}
    survivor_chats = [s for s in by[survivor_name] if s.name.startswith("chat ")]
    assert sorted(survivor_stages[c.parent_id] for c in survivor_chats) == ["stage2"] * len(MEMBERS) + ["stage3"]

    # ---- metrics of both workers, added up by the one that answers the shared port
    m = parse(text)
    assert value(m, "council_councils_started_total", platform="slack") == 1  # a resume is not a new start
    assert value(m, "council_councils_finished_total", platform="slack", status="ok") == 1
    assert value(m, "council_councils_running") == 0  # the killed worker's share went with it
    lost = [r for r in llm.requests if r.stage == 2 and r.at < killed_at]  # answered to a dead process
    assert value(m, "council_model_calls_total") == len(llm.requests) - len(lost)
    assert value(m, "council_model_calls_total", outcome="ok") == len(llm.requests) - len(lost)
    assert value(m, "council_queue_depth", queue="council-slack") == 0
    assert value(m, "council_platform_writes_total", platform="slack", outcome="ok") > 0
