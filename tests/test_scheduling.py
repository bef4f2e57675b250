"""Memory-aware scheduling (issue 33 part 1) against the scripted server, whose models have memory
sizes (tests/llm_server.py: Loads, MemoryMeter): batches largest first within the budget, shown in
the progress; the budget held across councils of one process; a member waiting for memory is no
straggler; calls per endpoint; local models weighed by their file."""

from __future__ import annotations

import asyncio
import os

import pytest

from core.engine.council import run_council
from core.models import CouncilConfig, CouncilFinished, CouncilRequest, SchedulePlanned
from core.providers.router import ProviderRouter
from core.providers.scheduling import WeightedSemaphore, local_size_gb, plan_batches
from core.settings import Settings
from tests.factories import run_council_to_end, scripted_router
from tests.llm_server import ByStage, Loads, MemoryMeter, Reply, ScriptedLLMServer, ranking_review
from tests.optional import llama_threads
from tests.test_local_provider import llama_test

SIZES = {"alpha": 6.0, "beta": 5.0, "gamma": 4.0, "chair": 1.0}


def sized_member(name: str, meter: MemoryMeter, delay_s: float) -> Loads:
    member = ByStage(Reply(f"{name} answers.", delay_s=delay_s), Reply(ranking_review()), Reply("The answer."))
    return Loads(member, SIZES[name], meter)


@pytest.fixture
async def server():
    async with ScriptedLLMServer() as srv:
        yield srv


def router_for(server, **settings: str) -> ProviderRouter:
    return scripted_router(server, MODEL_MEMORY_GB='{"alpha": 6, "beta": 5, "gamma": 4, "chair": 1}', **settings)


def request(**config) -> CouncilRequest:
    values = dict(members=["gamma", "beta", "alpha"], chairman="chair", member_timeout_s=10.0)
    return CouncilRequest(question="Q?", config=CouncilConfig(**(values | config)))


def script(server, meter: MemoryMeter, delay_s: float = 0.2) -> None:
    for name in SIZES:
        server.script(name, sized_member(name, meter, delay_s))


async def test_members_run_in_batches_largest_first_within_the_budget(server):
    meter = MemoryMeter()
    script(server, meter)
    router = router_for(server, COUNCIL_MEMORY_BUDGET_GB="10")
    events, result = await run_council_to_end(router, request())
    await router.aclose()
    [plan] = [e for e in events if isinstance(e, SchedulePlanned)]
    assert plan.batches == [["alpha", "gamma"], ["beta"]]
    assert plan.line == "batch 1 of 2: alpha, gamma · batch 2 of 2: beta"
    assert all(a.ok for a in result.answers) and not result.notices
    assert meter.peak_gb <= 10.0
    stage1 = [r.model for r in server.requests_for(stage=1)]
    assert set(stage1[:2]) == {"alpha", "gamma"} and stage1[2] == "beta"  # the second batch after the first


async def test_without_a_budget_every_member_runs_at_once(server):
    meter = MemoryMeter()
    script(server, meter)
    router = router_for(server)
    events, _ = await run_council_to_end(router, request())
    await router.aclose()
    assert not [e for e in events if isinstance(e, SchedulePlanned)]
    assert meter.peak_gb >= 15.0  # all three members at once


async def test_the_budget_holds_across_councils_in_one_process(server):
    meter = MemoryMeter()
    script(server, meter)
    routers = [router_for(server, COUNCIL_MEMORY_BUDGET_GB="10") for _ in range(2)]  # two services' routers
    results = await asyncio.gather(*(run_council_to_end(r, request()) for r in routers))
    for r in routers:
        await r.aclose()
    assert all(a.ok for _, result in results for a in result.answers)
    assert meter.peak_gb <= 10.0


async def test_a_member_waiting_for_memory_is_not_a_straggler(server):
    # one model at a time (budget 6), each takes 0.5 s: beta runs 0.5-1.0 s and gamma 1.0-1.5 s,
    # past the 1.2 s time limit and the grace (0.9 s once alpha answered at 0.5 s) had they counted
    # from the launch; from their own starts they have 0.7 s and 0.4 s to spare
    meter = MemoryMeter()
    script(server, meter, delay_s=0.5)
    router = router_for(server, COUNCIL_MEMORY_BUDGET_GB="6")
    config = dict(member_timeout_s=1.2, quorum=0.3, grace_s=0.9, grace_min_s=0.9)
    _, result = await run_council_to_end(router, request(**config))
    await router.aclose()
    assert [a.ok for a in result.answers] == [True, True, True], result.notices
    assert all(a.latency_s < 1.2 for a in result.answers)  # each counted from its own start
    assert meter.peak_in_flight == 1 and meter.peak_gb <= 6.0


async def test_a_member_still_times_out_from_its_own_start(server):
    meter = MemoryMeter()
    script(server, meter, delay_s=0.3)
    server.script("beta", Loads(ByStage(Reply("late", delay_s=5), Reply(ranking_review()), Reply("x")), 5, meter))
    router = router_for(server, COUNCIL_MEMORY_BUDGET_GB="6")
    _, result = await run_council_to_end(router, request(member_timeout_s=0.8, quorum=1.0))
    await router.aclose()
    beta = next(a for a in result.answers if a.model == "beta")
    assert not beta.ok and "0.8" in beta.error.message


async def test_calls_in_flight_per_endpoint(server):
    meter = MemoryMeter()
    script(server, meter, delay_s=0.1)
    router = router_for(server, LLM_MAX_CONCURRENT="1")
    _, result = await run_council_to_end(router, request())
    await router.aclose()
    assert all(a.ok for a in result.answers)
    assert meter.peak_in_flight == 1


async def test_a_stop_while_members_wait_for_memory_ends_the_council(server):
    meter = MemoryMeter()
    script(server, meter, delay_s=2)
    router = router_for(server, COUNCIL_MEMORY_BUDGET_GB="6")
    from core.engine.control import CouncilControl

    control = CouncilControl()
    asyncio.get_running_loop().call_later(0.3, control.stop)
    async with asyncio.timeout(10):
        events = [e async for e in run_council(request(), router, control)]
    await router.aclose()
    assert isinstance(events[-1], CouncilFinished) and events[-1].result.status.value == "cancelled"


def test_plan_batches_first_fit_decreasing():
    assert plan_batches({"a": 3, "b": 7, "c": 5, "d": 2}, 10) == [["b", "d"], ["c"], ["a"]] or plan_batches(
        {"a": 3, "b": 7, "c": 5, "d": 2}, 10
    ) == [["b", "a"], ["c", "d"]]
    assert plan_batches({"big": 40, "small": 1}, 24) == [["big"], ["small"]]  # larger than the budget: alone
    assert plan_batches({"x": 1, "y": 1}, 24) == [["x", "y"]]


async def test_weighted_semaphore_is_first_come_first_served():
    semaphore = WeightedSemaphore(10)
    order: list[str] = []

    async def hold(name: str, weight: float, seconds: float) -> None:
        await semaphore.acquire(weight)
        order.append(name)
        await asyncio.sleep(seconds)
        semaphore.release(weight)

    big = asyncio.create_task(hold("first", 8, 0.05))
    await asyncio.sleep(0)
    waiting = [asyncio.create_task(hold("large", 9, 0)), asyncio.create_task(hold("small", 1, 0))]
    await asyncio.gather(big, *waiting)
    assert order == ["first", "large", "small"]  # the small one did not overtake the large one
    assert semaphore.used == 0
    cancelled = asyncio.create_task(semaphore.acquire(10))
    await semaphore.acquire(5)
    await asyncio.sleep(0)
    cancelled.cancel()
    semaphore.release(5)
    assert semaphore.used == 0 and not semaphore._waiters


def model_files(tmp_path) -> tuple[str, str]:
    big, small = tmp_path / "big.gguf", tmp_path / "small.gguf"
    for path, size in ((big, 3 * 1024**3), (small, 1024**3)):
        with open(path, "wb") as f:
            f.truncate(size)  # sparse: the size a model file would have, no disk used
    return str(big), str(small)


async def test_local_models_weigh_their_file(tmp_path, server):
    big, small = model_files(tmp_path)
    router = router_for(server, COUNCIL_MEMORY_BUDGET_GB='{"local": 4.5}', LOCAL_N_CTX="4096")
    sized = router.memory_gb(f"local:{big}")
    assert sized == pytest.approx(local_size_gb(3 * 1024**3, 4096)) and 3 < sized < 3.5
    assert router.memory_plan([f"local:{small}", f"local:{big}"]) == [[f"local:{big}"], [f"local:{small}"]]
    assert router.memory_plan(["alpha", "beta"]) == []  # their endpoint has no budget here
    await router.aclose()


def test_bundled_local_model_weighs_its_file():
    from core.providers import gguf_info, local_models

    try:
        path = local_models.smollm2_path()
    except Exception as exc:  # the local extra is optional
        pytest.skip(f"the bundled model is not installed: {exc}")
    router = ProviderRouter(Settings(_env_file=None, DATABASE_URL="sqlite:///:memory:", COUNCIL_MEMORY_BUDGET_GB="1"))
    kv = gguf_info.kv_cache_bytes(gguf_info.read_metadata(path), 4096)  # its header's shape
    assert kv and router.memory_gb("local:smollm2") == pytest.approx(local_size_gb(os.path.getsize(path), 4096, kv))


@pytest.mark.parametrize(("name", "value"), [("COUNCIL_MEMORY_BUDGET_GB", "lots"), ("LLM_MAX_CONCURRENT", "-1")])
def test_bad_values_are_refused_naming_the_setting(name, value):
    with pytest.raises(Exception, match=name):
        Settings(_env_file=None, **{name: value})


@llama_test
async def test_bundled_local_models_run_in_batches_by_their_file_size(tmp_path):
    # gemma3-270m (253 MB file) and smollm2 (98 MB) with their KV caches at 4096 tokens (from their
    # headers) weigh about 0.33 and 0.19 GB: within 0.4 GB they answer one after the other, the larger first
    settings = Settings(
        _env_file=None,
        DATABASE_URL="sqlite:///:memory:",
        LOCAL_MODELS_DIR=str(tmp_path),
        LOCAL_MAX_TOKENS=48,
        LOCAL_N_THREADS=llama_threads(),
        COUNCIL_MEMORY_BUDGET_GB='{"local": 0.4}',
    )
    router = ProviderRouter(settings)
    members = ["local:smollm2", "local:gemma3-270m"]
    assert 0.4 > router.memory_gb("local:gemma3-270m") > router.memory_gb("local:smollm2") > 0.1
    config = CouncilConfig(
        members=members, chairman="local:smollm2", mode="quick", max_answer_tokens=32, member_timeout_s=600
    )
    try:
        events, result = await run_council_to_end(router, CouncilRequest(question="Name a colour.", config=config))
    finally:
        await router.aclose()
    [plan] = [e for e in events if isinstance(e, SchedulePlanned)]
    assert plan.batches == [["local:gemma3-270m"], ["local:smollm2"]]
    assert all(a.ok for a in result.answers), [a.error for a in result.answers]


async def test_a_later_memory_batch_gets_the_grace_and_time_the_first_got_and_is_shown_waiting(server):
    # The numbers of a 10 GB budget with alpha and beta at 8 GB and gamma at 2 GB, every member
    # answering after 3 s with a 1 s grace, scaled down five times (the grace twice as long, for a
    # loaded machine): batch 1 (alpha, gamma) answers at 0.6 s; beta only starts then, and answers
    # at 1.2 s, past the grace (1.0 s) had its grace not been shifted by the 0.6 s it waited.
    meter = MemoryMeter()
    sizes = {"alpha": 8.0, "beta": 8.0, "gamma": 2.0, "chair": 1.0}
    for name, gb in sizes.items():
        member = ByStage(Reply(f"{name} answers.", delay_s=0.6), Reply(ranking_review()), Reply("The answer."))
        server.script(name, Loads(member, gb, meter))
    router = scripted_router(
        server, MODEL_MEMORY_GB='{"alpha": 8, "beta": 8, "gamma": 2, "chair": 1}', COUNCIL_MEMORY_BUDGET_GB="10"
    )
    config = dict(members=["alpha", "beta", "gamma"], member_timeout_s=2.0, grace_s=0.4, grace_min_s=0.4)
    events, result = await run_council_to_end(router, request(**config))
    await router.aclose()
    [plan] = [e for e in events if isinstance(e, SchedulePlanned)]
    assert plan.batches == [["alpha", "gamma"], ["beta"]]
    assert [a.ok for a in result.answers] == [True, True, True], [a.error for a in result.answers]
    from bot.progress import CouncilProgress
    from bot.render_text import progress_lines
    from core.models import MemberFinished, MemberStarted, MemberWaiting

    beta = [
        type(e)
        for e in events
        if getattr(e, "model", None) == "beta" or (getattr(e, "answer", None) and e.answer.model == "beta")
    ]
    assert beta[:3] == [MemberWaiting, MemberStarted, MemberFinished]
    assert [type(e) for e in events if getattr(e, "model", "") == "alpha"][:1] == [
        MemberStarted
    ]  # batch 1 starts at once
    progress = CouncilProgress("c")
    for event in events[: events.index(next(e for e in events if isinstance(e, MemberWaiting))) + 1]:
        progress.apply(event)
    assert "🧮 beta — waiting for memory" in progress_lines(progress)  # Slack's and Discord's progress
    waiting = next(e for e in events if isinstance(e, MemberWaiting))
    from bot.api.transcript import CouncilTranscript
    from bot.slack.stream_render import stream_tasks

    beta_task = next(t for t in stream_tasks(progress) if t["title"] == "beta")
    assert beta_task["status"] == "pending" and beta_task["details"] == "waiting for memory"  # Slack's stream
    assert "beta: waiting for memory" in CouncilTranscript().on_event(waiting).reasoning  # the API's transcript
    assert meter.peak_gb <= 10.0
