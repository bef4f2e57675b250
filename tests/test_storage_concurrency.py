"""Several processes, one truth: service instances with their own connections (pools) on one
database, hammering the same event ids, rate limits, budgets, channel settings and the global
concurrency cap at once. Runs on both backends; on PostgreSQL each instance has its own
connection pool, as separate replicas would, and the tests of the cap and of a killed replica use
separate processes too."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from core.errors import BudgetExceeded, RateLimited
from core.models import Actor, CouncilStatus, Origin, Platform
from core.service import CouncilService
from core.storage import Storage
from tests.conftest import BACKENDS, MEMBERS, backend_url, make_settings
from tests.factories import make_result
from tests.llm_server import council_member

ROOT = Path(__file__).resolve().parent.parent

INSTANCES = 4
ORIGIN = Origin(platform=Platform.SLACK, workspace_id="T1", channel_id="C1", user_id="U1", user_name="ada")
ADMIN = Actor(user_id="U1", is_platform_admin=True)


@pytest.fixture(params=BACKENDS)
def database_url(request, tmp_path) -> str:
    return backend_url(request, tmp_path)


@pytest.fixture
async def replicas(llm, tmp_path, database_url):
    services = [
        await CouncilService.open(make_settings(llm, tmp_path, DATABASE_URL=database_url)) for _ in range(INSTANCES)
    ]
    yield services
    for svc in services:
        await svc.aclose()


async def test_an_event_is_claimed_once_across_replicas(replicas):
    event_ids = [f"Ev{i}" for i in range(40)]
    # Every replica receives every event (Slack's retries land anywhere) at the same moment.
    claims = await asyncio.gather(*(svc.events.claim("slack", event_id) for event_id in event_ids for svc in replicas))
    per_event = [sum(claims[i * INSTANCES : (i + 1) * INSTANCES]) for i in range(len(event_ids))]
    assert per_event == [1] * len(event_ids)


async def test_rate_limit_admits_exactly_the_limit_across_replicas(replicas):
    limit, attempts = 5, 6

    async def attempt(svc: CouncilService) -> bool:
        try:
            await svc.admission.limits.limiter.check_and_record(
                user_key="slack:T1:U1", channel_key="slack:T1:C1", user_limit_per_hour=limit, channel_limit_per_hour=0
            )
            return True
        except RateLimited:
            return False

    admitted = await asyncio.gather(*(attempt(svc) for svc in replicas for _ in range(attempts)))
    assert sum(admitted) == limit
    hits = await replicas[0].storage.rate_limits.hits_since("user:slack:T1:U1", 0)
    assert len(hits) == limit  # refused attempts recorded nothing, admitted ones once each


async def test_concurrent_changes_of_different_fields_all_survive(replicas):
    await asyncio.gather(
        replicas[0].channels.set_limits(ADMIN, ORIGIN, user_per_hour=7),
        replicas[1].channels.set_limits(ADMIN, ORIGIN, channel_per_hour=9),
        replicas[2].channels.set_limits(ADMIN, ORIGIN, daily_budget_usd=2.5),
        replicas[3].channels.set_chairman(ADMIN, ORIGIN, "beta"),
    )
    final = await replicas[0].channels.channel_settings(ORIGIN)
    assert (final.user_limit_per_hour, final.channel_limit_per_hour, final.daily_budget_usd, final.chairman) == (
        7,
        9,
        2.5,
        "beta",
    )


async def test_concurrent_admin_changes_are_each_audited(replicas):
    async def change(svc: CouncilService, i: int) -> None:
        await svc.channels.set_limits(ADMIN, ORIGIN, user_per_hour=i + 1)

    await asyncio.gather(*(change(svc, i) for i, svc in enumerate(replicas * 5)))
    log = await replicas[0].channels.audit_log(ADMIN, ORIGIN, limit=100)
    assert len(log) == INSTANCES * 5 and all(entry.action == "set_limits" for entry in log)
    final = await replicas[1].channels.channel_settings(ORIGIN)
    # The settings hold the change of the newest audit entry: row and log were written together.
    assert final.user_limit_per_hour == log[0].detail["user_limit_per_hour"]


async def test_concurrent_spending_is_summed_whole_and_then_refused(replicas):
    # Councils of one channel stored at once by every replica: the day's spending is their sum,
    # and the budget check on any replica sees it.
    results = [make_result(council_id=f"{i:016x}", channel_id="C1", cost=0.25) for i in range(4 * INSTANCES)]
    await asyncio.gather(*(replicas[i % INSTANCES].storage.save_result(r) for i, r in enumerate(results)))
    day_start = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    per_council = results[0].usage.cost_usd or 0.0
    assert per_council > 0
    for svc in replicas:
        spent = await svc.storage.councils.spent_since("slack:T1:C1", day_start)
        assert spent == pytest.approx(per_council * len(results))
    await replicas[0].channels.set_limits(ADMIN, ORIGIN, daily_budget_usd=per_council * len(results))
    with pytest.raises(BudgetExceeded):
        await replicas[-1].start_council("over budget?", ORIGIN)


async def test_slots_are_taken_up_to_the_limit_and_given_back(replicas):
    owners = [svc.owner for svc in replicas]
    for owner in owners:
        await owner.start()
    slots = replicas[0].storage.slots
    taken = await asyncio.gather(
        *(
            svc.storage.slots.take(f"s{i}-{j}", svc.owner.owner_id, 3)
            for i, svc in enumerate(replicas)
            for j in range(3)
        )
    )
    assert sum(taken) == 3 and await slots.taken() == 3
    assert await replicas[0].storage.slots.take("late", owners[0].owner_id, 3) is False
    held = [f"s{i}-{j}" for i in range(INSTANCES) for j in range(3)]
    await replicas[1].storage.slots.give_back(next(h for h, ok in zip(held, taken, strict=True) if ok))
    assert await replicas[2].storage.slots.take("late", owners[2].owner_id, 3) is True
    # A slot already held is still ours when asked again, even at the limit.
    assert await replicas[2].storage.slots.take("late", owners[2].owner_id, 3) is True


# --------------------------------------------------------------------------- the cap across processes

SLOW_S = 0.6  # each model call of the councils below: long enough for councils to overlap


def _slow(llm) -> None:
    for name in MEMBERS:
        llm.script(name, council_member(f"{name}: 42.", synthesis=f"{name}: 42.", latency_s=SLOW_S))


@pytest.fixture
def pg_url(pg_server) -> str:
    return pg_server.new_database()


async def _max_taken(storage: Storage, stop: asyncio.Event) -> int:
    most = 0
    while not stop.is_set():
        most = max(most, await storage.slots.taken())
        await asyncio.sleep(0.02)
    return most


async def test_the_concurrency_cap_holds_across_service_instances(llm, tmp_path, pg_url):
    _slow(llm)
    settings = make_settings(llm, tmp_path, DATABASE_URL=pg_url, COUNCIL_MAX_CONCURRENT=2, COUNCIL_MAX_QUEUED=5)
    first, second = await CouncilService.open(settings), await CouncilService.open(settings)
    stop = asyncio.Event()
    watcher = asyncio.create_task(_max_taken(first.storage, stop))
    try:
        runs = []
        for i in range(3):  # alternate, as a load balancer would
            for svc in (first, second):
                origin = ORIGIN.model_copy(update={"user_id": f"U{i}{id(svc) % 97}"})
                runs.append(await svc.start_council(f"question {len(runs)}", origin))
        results = await asyncio.wait_for(asyncio.gather(*(run.wait() for run in runs)), 60)
    finally:
        stop.set()
        most = await watcher
    assert [r.status for r in results] == [CouncilStatus.OK] * 6
    # Each process alone could run two (its own cap); together they never ran more than two.
    assert most == 2
    assert sum(run.queued_position is not None for run in runs) >= 3
    for svc in (first, second):
        await svc.aclose()
    async with await Storage.open(pg_url) as storage:
        assert await storage.slots.taken() == 0


HOLDER = textwrap.dedent(
    """
    import asyncio, sys
    from core.storage import Storage

    async def main(url, lease_s, slots):
        storage = await Storage.open(url)
        await storage.owners.renew("doomed", float(lease_s))
        for i in range(int(slots)):
            assert await storage.slots.take(f"doomed-{i}", "doomed", int(slots))
        print("held", flush=True)
        await asyncio.sleep(3600)

    asyncio.run(main(*sys.argv[1:]))
    """
)


async def test_a_killed_process_frees_its_slots_within_its_lease(llm, tmp_path, pg_url):
    _slow(llm)
    lease_s = 2.0
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    holder = await asyncio.create_subprocess_exec(
        sys.executable, "-c", HOLDER, pg_url, str(lease_s), "2", stdout=subprocess.PIPE, env=env, cwd=ROOT
    )
    try:
        assert holder.stdout is not None
        line = await asyncio.wait_for(holder.stdout.readline(), 30)
        assert line.strip() == b"held"
        settings = make_settings(llm, tmp_path, DATABASE_URL=pg_url, COUNCIL_MAX_CONCURRENT=2)
        async with await CouncilService.open(settings) as svc:
            holder.send_signal(signal.SIGKILL)  # dies holding both slots: no clean shutdown
            killed_at = time.monotonic()
            run = await svc.start_council("anyone there?", ORIGIN)
            assert run.queued_position == 1  # every slot is held by the killed process, for now
            result = await asyncio.wait_for(run.wait(), 60)
            assert result.status is CouncilStatus.OK
            started = min(r.at for r in llm.requests_for(stage=1))
            assert started - killed_at >= lease_s * 0.5  # it waited for the dead lease to run out
    finally:
        if holder.returncode is None:
            holder.kill()
        await holder.wait()


async def test_a_council_stopped_while_waiting_for_a_slot_elsewhere_never_starts(llm, tmp_path, pg_url):
    _slow(llm)
    settings = make_settings(llm, tmp_path, DATABASE_URL=pg_url, COUNCIL_MAX_CONCURRENT=1)
    async with await CouncilService.open(settings) as first, await CouncilService.open(settings) as second:
        running = await first.start_council("first", ORIGIN)
        waiting = await second.start_council("second", ORIGIN.model_copy(update={"user_id": "U2"}))
        assert running.queued_position is None and waiting.queued_position == 1
        assert await second.stop(waiting.council_id, ADMIN)
        stopped = await asyncio.wait_for(waiting.wait(), 10)
        assert stopped.status is CouncilStatus.CANCELLED and not stopped.answers
        assert (await asyncio.wait_for(running.wait(), 30)).status is CouncilStatus.OK
        # The finished council's slot is given back in the background, at once.
        for _ in range(50):
            if not await first.storage.slots.taken():
                break
            await asyncio.sleep(0.1)
        assert await first.storage.slots.taken() == 0
