"""Durable councils (core/durable) on both backends: the job store, the engine resuming from a
checkpoint without asking anyone twice, and a service that takes over a council a dead process
left (SQLite: adopted at the lease renewal; PostgreSQL: queued again, run by a procrastinate
worker). The multi-process proofs with kill -9 are in tests/test_durable_processes.py."""

from __future__ import annotations

import asyncio
import logging
import time

import pytest

from core.durable.runs import CouncilRun
from core.engine.council import run_council
from core.models import (
    ControlAction,
    CouncilCheckpoint,
    CouncilFinished,
    CouncilRequest,
    CouncilStatus,
    Destination,
    MemberFinished,
    Origin,
    Platform,
    ReviewFinished,
)
from core.providers.router import ProviderRouter
from core.service import CouncilService
from core.storage import Storage
from tests.conftest import BACKENDS, MEMBERS, backend_url, make_settings

QUESTION = "What is six times seven?"


@pytest.fixture(params=BACKENDS)
def database_url(request, tmp_path) -> str:
    return backend_url(request, tmp_path)


async def eventually(predicate, timeout: float) -> None:
    """Polls `predicate` until it holds (what happens in other tasks and processes); then returns."""
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"not within {timeout:g} s"
        await asyncio.sleep(0.05)


def slack_origin() -> Origin:
    return Origin(platform=Platform.SLACK, workspace_id="T1", channel_id="C1", thread_id="1.0", user_id="U1")


async def finished_stage_one(llm, tmp_path) -> CouncilCheckpoint:
    """The stage-1 answers and one review of a real council, as a crashed run would have stored them."""
    service = await CouncilService.open(make_settings(llm, tmp_path, DATABASE_URL="sqlite:///:memory:"))
    try:
        result = await service.ask(QUESTION)
    finally:
        await service.aclose()
    llm.requests.clear()
    return CouncilCheckpoint(
        answers=[a.model_copy(update={"label": None}) for a in result.answers], reviews=result.reviews[:1]
    )


async def test_job_store_claims_controls_and_orphans(database_url):
    async with await Storage.open(database_url) as storage:
        request = CouncilRequest(question=QUESTION, config=_config(), origin=slack_origin())
        cid = request.council_id
        destination = Destination(platform=Platform.SLACK, channel_id="C1", thread_id="1.0")
        await storage.councils.save_started(request, "dead-owner")
        await storage.jobs.save(request, destination, search=True)
        assert await storage.councils.mark_interrupted() == 0  # a council with a job is resumed, never marked
        assert await storage.jobs.orphans() == [cid]  # its owner holds no lease
        await storage.owners.renew("live", 30)
        assert await storage.jobs.adopt(cid, "live") and not await storage.jobs.adopt(cid, "other")
        assert await storage.jobs.orphans() == []

        job = await storage.jobs.take(cid, "live")
        assert job is not None and job.attempts == 1 and job.search and job.destination == destination
        assert await storage.jobs.save_control(cid, ControlAction.STOP)
        assert await storage.jobs.save_control(cid, ControlAction.SYNTHESIZE)  # a stop stays a stop
        assert (await storage.jobs.get(cid)).control is ControlAction.STOP

        claims = await asyncio.gather(*(storage.jobs.claim_delivery(cid, f"w{i}") for i in range(5)))
        assert sorted(claims) == [False, False, False, False, True]
        assert await storage.jobs.delivered(cid)
        assert not await storage.jobs.save_control("unknown", ControlAction.STOP)


async def test_engine_resumes_without_asking_anyone_twice(llm, tmp_path):
    checkpoint = await finished_stage_one(llm, tmp_path)
    stored_reviewer = checkpoint.reviews[0].reviewer
    request = CouncilRequest(question=QUESTION, config=_config(), origin=slack_origin())
    router = ProviderRouter(make_settings(llm, tmp_path))
    try:
        events = [e async for e in run_council(request, router, checkpoint=checkpoint)]
    finally:
        await router.aclose()
    result = events[-1].result
    assert isinstance(events[-1], CouncilFinished) and result.status is CouncilStatus.OK
    assert llm.requests_for(stage=1) == []  # every answer was stored
    assert sorted(r.model for r in llm.requests_for(stage=2)) == sorted(set(MEMBERS) - {stored_reviewer})
    assert len(llm.requests_for(stage=3)) == 1
    assert [e.answer.text for e in events if isinstance(e, MemberFinished)] == [a.text for a in checkpoint.answers]
    # The stored review is shown again, once; a ballot that came after first place was settled
    # is told after the answer (core/engine/reviews.py).
    shown = [e.review.reviewer for e in events if isinstance(e, ReviewFinished)]
    assert stored_reviewer in shown and len(shown) == len(set(shown)) == len(MEMBERS)
    stored = next(r for r in result.reviews if r.reviewer == stored_reviewer)
    assert stored == checkpoint.reviews[0]  # its ballot counts in the aggregate as it was
    assert result.aggregate is not None and result.aggregate.ballots_used == len(MEMBERS)
    assert result.usage.completion_tokens >= sum(a.usage.completion_tokens for a in checkpoint.answers)


async def test_a_dead_process_council_is_resumed_and_delivered_once(llm, tmp_path, database_url):
    checkpoint = await finished_stage_one(llm, tmp_path)
    settings = make_settings(
        llm, tmp_path, DATABASE_URL=database_url, COUNCIL_LEASE_S=1.5, COUNCIL_QUEUE_HEARTBEAT_S=0.5
    )
    # What a process killed in stage 2 leaves: a running council with a job and its stage-1 answers.
    async with await Storage.open(database_url) as storage:
        request = CouncilRequest(question=QUESTION, config=_config(), origin=slack_origin())
        await storage.councils.save_started(request, "killed-process")
        await storage.jobs.save(request, Destination(platform=Platform.SLACK, channel_id="C1", thread_id="1.0"))
        for answer in checkpoint.answers:
            await storage.jobs.save_answer(request.council_id, answer)

    service = await CouncilService.open(settings)
    delivered: list[tuple[str, bool, CouncilStatus]] = []

    async def deliver(run: CouncilRun, destination: Destination, resumed: bool) -> None:
        result = await run.wait()
        if await service.durable.claim_delivery(run.council_id):
            delivered.append((destination.thread_id or "", resumed, result.status))

    service.register_deliverer(Platform.SLACK, deliver)
    worker = asyncio.create_task(service.durable.work())
    started = time.monotonic()
    try:
        await eventually(lambda: delivered, 30)
        print(f"\n[durable] {service.storage.backend}: resumed and delivered in {time.monotonic() - started:.1f} s")
        assert delivered == [("1.0", True, CouncilStatus.OK)]
        assert llm.requests_for(stage=1) == []  # stage 1 was not asked again
        stored = await service.queries.get_result(request.council_id)
        assert [a.text for a in stored.answers] == [a.text for a in checkpoint.answers]
        assert await service.storage.db.fetchall("SELECT * FROM council_steps") == []  # gone with the result
    finally:
        worker.cancel()
        await asyncio.gather(worker, return_exceptions=True)
        await service.aclose()


def _config():
    from core.models import CouncilConfig

    return CouncilConfig(members=list(MEMBERS), chairman="alpha", member_timeout_s=10, grace_s=2)


async def test_stop_reaches_a_council_running_in_another_process(llm, tmp_path, pg_server):
    from core.models import Actor
    from tests.llm_server import ByStage, Reply

    for name in MEMBERS:
        llm.script(name, ByStage(Reply(f"{name}: 42", delay_s=20), Reply("unused"), Reply("unused")))
    database_url = pg_server.new_database()
    settings = make_settings(llm, tmp_path, DATABASE_URL=database_url, COUNCIL_QUEUE_HEARTBEAT_S=0.5)
    worker_side, intake = await CouncilService.open(settings), await CouncilService.open(settings)
    results: list[CouncilStatus] = []

    async def deliver(run: CouncilRun, destination: Destination, resumed: bool) -> None:
        results.append((await run.wait()).status)

    worker_side.register_deliverer(Platform.SLACK, deliver)
    worker = asyncio.create_task(worker_side.durable.work())
    try:
        destination = Destination(platform=Platform.SLACK, channel_id="C1", thread_id="1.0")
        council_id = await intake.submit_council(QUESTION, slack_origin(), destination=destination)
        await eventually(lambda: worker_side.runs.get(council_id) is not None, 10)
        assert intake.runs.get(council_id) is None  # it runs in the other service
        pressed = time.monotonic()
        assert await intake.stop(council_id, Actor(user_id="U1"))
        await eventually(lambda: results, 10)
        assert results == [CouncilStatus.CANCELLED] and time.monotonic() - pressed < 5
        with pytest.raises(Exception, match="asked"):  # only the asker (or an admin) may stop it
            await intake.stop(council_id, Actor(user_id="U2"))
    finally:
        worker.cancel()
        await asyncio.gather(worker, return_exceptions=True)
        await intake.aclose()
        await worker_side.aclose()


async def test_a_clean_stop_hands_the_council_to_another_worker(llm, tmp_path, pg_server, caplog):
    """A worker stopped cleanly (a deploy) mid-council: procrastinate ends its job (aborted after
    the grace) and the process gives its lease up, so the council is an orphan at once: the other
    worker queues it again at its next lease renewal (requeue_orphans) and resumes it from its
    stored answers. Not through the stalled-job retry, the path of a worker that died: that one
    waits COUNCIL_QUEUE_STALLED_S, a minute here, longer than the handover may take."""
    from tests.llm_server import ByStage, Reply, ranking_review

    for name in MEMBERS:
        llm.script(name, ByStage(Reply(f"{name}: 42"), Reply(ranking_review(), delay_s=3), Reply("Final: 42.")))
    settings = make_settings(
        llm,
        tmp_path,
        DATABASE_URL=pg_server.new_database(),
        COUNCIL_QUEUE_HEARTBEAT_S=0.5,
        COUNCIL_QUEUE_STALLED_S=60,
        COUNCIL_LEASE_S=1.5,
    )
    services = [await CouncilService.open(settings) for _ in range(2)]
    delivered: list[tuple[int, bool]] = []
    caplog.set_level(logging.INFO, logger="core.durable.queue")

    def deliverer(index: int):
        async def deliver(run: CouncilRun, destination: Destination, resumed: bool) -> None:
            await run.wait()
            if await services[index].durable.claim_delivery(run.council_id):
                delivered.append((index, resumed))

        return deliver

    for i, service in enumerate(services):
        service.register_deliverer(Platform.SLACK, deliverer(i))
    first = asyncio.create_task(services[0].durable.work())
    second: asyncio.Task[None] | None = None
    try:
        destination = Destination(platform=Platform.SLACK, channel_id="C1", thread_id="1.0")
        await services[1].submit_council(QUESTION, slack_origin(), destination=destination)
        await eventually(lambda: llm.requests_for(stage=2), 10)
        first.cancel()
        await asyncio.gather(first, return_exceptions=True)
        await services[0].aclose()  # gives its lease up: the council is an orphan at once
        second = asyncio.create_task(services[1].durable.work())
        await eventually(lambda: delivered, 20)
        assert delivered == [(1, True)]
        assert len(llm.requests_for(stage=1)) == len(MEMBERS)  # stage 1 ran once
        said = [r.getMessage() for r in caplog.records if r.name == "core.durable.queue"]
        assert any("has no live job and its process stopped: queued again" in m for m in said), said
        assert not any("its worker stopped; queued again" in m for m in said), said
    finally:
        for task in (first, second):
            if task is not None:
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
        await services[1].aclose()
