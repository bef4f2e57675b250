"""Operating the council (issue 25): /metrics after councils that succeed, degrade and fail
(`council api` as a real process, scraped over loopback), traces collected by the SDK's
in-memory exporter, the caller's traceparent continued over real HTTP, /ready, JSON log lines."""

from __future__ import annotations

import asyncio
import io
import json
import logging
import socket
import sys

import httpx
import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from prometheus_client.parser import text_string_to_metric_families

from core.models import CouncilStatus
from core.service import CouncilService, configure_telemetry
from core.shared.redact import Redactor
from core.telemetry import tracing
from core.telemetry.context import Where
from core.telemetry.logs import configure_logging
from tests.conftest import MEMBERS, make_settings
from tests.council_api import API_KEY, council_api, council_env
from tests.council_process import ROOT
from tests.llm_server import Fail, ScriptedLLMServer, council_member

AUTH = {"Authorization": f"Bearer {API_KEY}"}
QUESTION = "What is six times seven?"
ANSWER = "Final answer by alpha: 42."


def script(llm: ScriptedLLMServer, failing: tuple[str, ...] = ()) -> None:
    for name in MEMBERS:
        if name in failing:
            llm.script(name, Fail(400, "this model refuses the request"))
        else:
            llm.script(name, council_member(f"{name} says: 42.", synthesis=f"Final answer by {name}: 42.", cost=0.001))


Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def parse(text: str) -> Samples:
    samples: Samples = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            samples[(sample.name, frozenset(sample.labels.items()))] = sample.value
    return samples


def value(samples: Samples, name: str, **labels: str) -> float:
    """The sum of the samples of `name` whose labels include `labels`."""
    wanted = set(labels.items())
    return sum(v for (n, ls), v in samples.items() if n == name and wanted <= ls)


# --------------------------------------------------------------------------- metrics


async def test_metrics_after_councils_that_succeed_degrade_and_fail(tmp_path):
    async with ScriptedLLMServer() as llm, council_api(llm, tmp_path) as api:
        async with httpx.AsyncClient(base_url=api.root, timeout=60) as http:
            statuses = []
            for failing in ((), ("gamma",), tuple(MEMBERS)):
                script(llm, failing)
                body = {"model": "llm-council", "messages": [{"role": "user", "content": QUESTION}]}
                response = await http.post("/v1/chat/completions", json=body, headers=AUTH)
                statuses.append(response.status_code)
            assert statuses == [200, 200, 502]  # ok, degraded, failed

            scraped = await http.get("/metrics")  # no key needed for /metrics, /health, /ready
            health = await http.get("/health")
            ready = await http.get("/ready")
            refused = await http.get("/v1/models")  # the API itself still asks for one

    assert scraped.status_code == 200 and scraped.headers["content-type"].startswith("text/plain")
    assert health.status_code == 200
    assert ready.status_code == 200 and ready.json() == {"status": "ready", "database": "ok", "queue": "ok"}
    assert refused.status_code == 401
    m = parse(scraped.text)
    started = "council_councils_started_total"
    finished = "council_councils_finished_total"
    assert value(m, started, platform="api", mode="standard") == 3
    for status in ("ok", "degraded", "failed"):
        assert value(m, finished, platform="api", mode="standard", status=status) == 1, status
    assert value(m, "council_councils_running") == 0
    # Every model call the LLM server saw was counted once, by model and outcome.
    calls = "council_model_calls_total"
    assert value(m, calls) == len(llm.requests)
    for name in MEMBERS:
        assert value(m, calls, model=name) == len(llm.requests_for(name))
    assert value(m, calls, model="gamma", outcome="bad_response") == 2  # degraded and failed councils
    assert value(m, calls, model="alpha", outcome="ok") == len(llm.requests_for("alpha")) - 1  # failed once
    assert value(m, "council_model_tokens_total", model="alpha", type="output") > 0
    assert value(m, "council_model_tokens_total", model="beta", type="input") > 0
    assert value(m, "council_model_cost_usd_total", model="beta") > 0
    # Histograms: every council that ran its stages was timed, per stage too.
    assert value(m, "council_duration_seconds_count", mode="standard") == 3
    assert value(m, "council_stage_duration_seconds_count", stage="stage1") == 3
    assert value(m, "council_stage_duration_seconds_count", stage="stage2") == 2  # not when no one answered
    assert value(m, "council_stage_duration_seconds_count", stage="stage3") == 2
    assert value(m, "council_first_token_seconds_count", mode="standard") == 2
    assert value(m, "council_model_call_duration_seconds_count", model="beta") == len(llm.requests_for("beta"))
    assert value(m, "council_model_first_token_seconds_count", model="alpha") >= 2  # the chairman streamed
    assert value(m, "council_slots_in_use") == 0 and value(m, "council_admission_waiting") == 0
    # Label values are bounded: no question, user or channel ever becomes one.
    assert QUESTION not in scraped.text and "alice" not in scraped.text


# --------------------------------------------------------------------------- traces


@pytest.fixture
def spans():
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracing.use_provider(provider)
    yield exporter
    tracing.reset()
    tracing.record_content(False)


def by_name(finished: tuple[ReadableSpan, ...], name: str) -> list[ReadableSpan]:
    return [s for s in finished if s.name == name]


async def test_one_trace_per_council_with_a_span_per_stage_and_per_model_call(llm, service, spans):
    result = await service.ask(QUESTION)
    assert result.status is CouncilStatus.OK
    finished = spans.get_finished_spans()
    [council] = by_name(finished, "council")
    assert council.parent is None  # nobody called us with a traceparent: the root of its trace
    attributes = dict(council.attributes or {})
    assert attributes["council.id"] == result.council_id
    assert attributes["council.platform"] == "cli" and attributes["council.mode"] == "standard"
    assert attributes["council.status"] == "ok"
    assert attributes["gen_ai.usage.output_tokens"] == result.usage.completion_tokens

    stages = {s.name: s for s in finished if s.name.startswith("stage")}
    assert set(stages) == {"stage1", "stage2", "stage3"}
    for stage in stages.values():
        assert stage.parent is not None and stage.parent.span_id == council.context.span_id
        assert stage.context.trace_id == council.context.trace_id

    chats = [s for s in finished if s.name.startswith("chat ")]
    assert len(chats) == len(llm.requests)  # late reviews included: every call has its span
    for chat in chats:
        a = dict(chat.attributes or {})
        parent = next(s for s in stages.values() if chat.parent and s.context.span_id == chat.parent.span_id)
        expected_stage = {"stage1": 1, "stage2": 2, "stage3": 3}[parent.name]
        model = a["gen_ai.request.model"]
        assert chat.name == f"chat {model}" and model in MEMBERS
        assert a["gen_ai.operation.name"] == "chat"
        assert a["gen_ai.usage.input_tokens"] > 0 and a["gen_ai.usage.output_tokens"] > 0
        assert any(r.model == model and r.stage == expected_stage for r in llm.requests)
    assert len([c for c in chats if dict(c.attributes or {})["gen_ai.request.streaming"]]) == 1  # the chairman

    # No question or answer text in any span unless COUNCIL_TRACE_CONTENT=true.
    texts = json.dumps([dict(s.attributes or {}) for s in finished], default=str)
    assert QUESTION not in texts and "says: 42" not in texts and ANSWER not in texts


async def test_trace_content_is_recorded_only_when_asked(llm, tmp_path, spans):
    settings = make_settings(llm, tmp_path, COUNCIL_TRACE_CONTENT="true")
    configure_telemetry(settings)  # what the process's start-up (bot/cli.py) does with its settings
    async with await CouncilService.open(settings) as service:
        await service.ask(QUESTION)
    finished = spans.get_finished_spans()
    [council] = by_name(finished, "council")
    assert dict(council.attributes or {})["council.question"] == QUESTION
    assert dict(council.attributes or {})["council.answer"] == ANSWER
    chairman = next(s for s in finished if dict(s.attributes or {}).get("gen_ai.request.streaming"))
    output = json.loads(dict(chairman.attributes or {})["gen_ai.output.messages"])
    assert output[0]["parts"][0]["content"] == ANSWER
    assert QUESTION in dict(chairman.attributes or {})["gen_ai.input.messages"]


async def test_a_failed_model_call_is_an_error_span_with_its_kind(llm, service, spans):
    script(llm, failing=("gamma",))
    result = await service.ask(QUESTION)
    assert result.status is CouncilStatus.DEGRADED
    [failed] = [s for s in spans.get_finished_spans() if s.name == "chat gamma"]
    assert dict(failed.attributes or {})["error.type"] == "bad_response"
    assert failed.status.status_code.name == "ERROR"


async def test_the_callers_traceparent_is_continued_over_http(llm, service, spans):
    """The API on a real loopback port: a request carrying `traceparent` gets a council span
    that is the caller's child, in the caller's trace."""
    import uvicorn

    from bot.api.server import build_asgi

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    port = listener.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(build_asgi(service, "127.0.0.1"), log_config=None, lifespan="on"))
    serving = asyncio.create_task(server.serve(sockets=[listener]))
    trace_id, parent_id = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
    try:
        for _ in range(500):
            if server.started:
                break
            await asyncio.sleep(0.02)
        async with httpx.AsyncClient(timeout=60) as http:
            response = await http.post(
                f"http://127.0.0.1:{port}/v1/chat/completions",
                json={"model": "llm-council", "messages": [{"role": "user", "content": QUESTION}]},
                headers={"traceparent": f"00-{trace_id}-{parent_id}-01"},
            )
        assert response.status_code == 200
    finally:
        server.should_exit = True
        await serving
    [council] = by_name(spans.get_finished_spans(), "council")
    assert format(council.context.trace_id, "032x") == trace_id
    assert council.parent is not None and format(council.parent.span_id, "016x") == parent_id


# --------------------------------------------------------------------------- readiness


async def test_ready_is_503_while_the_database_is_unreachable(llm, tmp_path):
    service = await CouncilService.open(make_settings(llm, tmp_path))
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    listener.close()
    serving = asyncio.create_task(service.telemetry.serve(port, "127.0.0.1"))
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=10) as http:
            for _ in range(100):
                try:
                    before = await http.get("/ready")
                    break
                except httpx.ConnectError:
                    await asyncio.sleep(0.05)
            await service.storage.close()  # the database goes away
            after = await http.get("/ready")
            health = await http.get("/health")
            metrics = await http.get("/metrics")
    finally:
        serving.cancel()
        await asyncio.gather(serving, return_exceptions=True)
        await service.aclose()
    assert before.status_code == 200 and before.json()["status"] == "ready"
    assert after.status_code == 503
    assert after.json()["status"] == "unready" and after.json()["database"] != "ok"
    assert health.status_code == 200 and metrics.status_code == 200  # alive, and still scraped


# --------------------------------------------------------------------------- logs


def test_json_log_lines_carry_the_council_and_are_redacted():
    root = logging.getLogger()
    saved = (list(root.handlers), root.level)
    stream = io.StringIO()
    try:
        configure_logging("INFO", Redactor(["sk-very-secret-key"]), "json")
        root.handlers[0].setStream(stream)  # type: ignore[attr-defined]
        import contextvars

        def inside() -> None:
            Where("c-123", "slack", "C42").enter()
            logging.getLogger("core.test").warning("upstream said: bad key sk-very-secret-key")

        contextvars.copy_context().run(inside)
        try:
            raise ValueError("boom sk-very-secret-key")
        except ValueError:
            logging.getLogger("core.test").exception("failed")
    finally:
        root.handlers[:] = saved[0]
        root.setLevel(saved[1])
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    first, second = lines
    assert first["message"] == "upstream said: bad key [redacted]"
    assert (first["council_id"], first["platform"], first["channel"]) == ("c-123", "slack", "C42")
    assert first["level"] == "WARNING" and first["logger"] == "core.test" and first["time"].endswith("+00:00")
    assert "council_id" not in second and "[redacted]" in second["exception"]
    assert "sk-very-secret-key" not in stream.getvalue()


async def test_council_ask_with_log_format_json_writes_only_json_lines(llm, tmp_path):
    env = council_env(llm, tmp_path, LOG_FORMAT="json", LOG_LEVEL="INFO")
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot.cli", "ask", QUESTION, "--quiet",
        cwd=ROOT, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(process.communicate(), 120)
    assert process.returncode == 0, err.decode()
    assert ANSWER in out.decode()
    lines = [json.loads(line) for line in err.decode().splitlines()]  # every line parses
    started = [line for line in lines if line["message"].endswith("started: cli, 3 members, standard")]
    ended = [line for line in lines if " finished: ok in " in line["message"]]
    assert len(started) == 1 and len(ended) == 1
    assert started[0]["council_id"] == ended[0]["council_id"] and started[0]["platform"] == "cli"
    assert all({"time", "level", "logger", "message"} <= set(line) for line in lines)

    bad = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot.cli", "ask", QUESTION,
        cwd=ROOT, env={**env, "COUNCIL_MODE": "bogus"}, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    _, err = await asyncio.wait_for(bad.communicate(), 60)
    [line] = [json.loads(line) for line in err.decode().splitlines()]
    assert bad.returncode == 2 and line["level"] == "ERROR" and "COUNCIL_MODE" in line["message"]
