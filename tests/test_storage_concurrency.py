"""Several processes, one truth: service instances with their own connections (pools) on one
database, hammering the same event ids, rate limits and channel settings at once. Runs on both
backends; on PostgreSQL each instance has its own connection pool, as separate replicas would."""

from __future__ import annotations

import asyncio

import pytest

from core.errors import RateLimited
from core.models import Actor, Origin, Platform
from core.service import CouncilService
from tests.conftest import BACKENDS, backend_url, make_settings

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
    claims = await asyncio.gather(*(svc.claim_event("slack", event_id) for event_id in event_ids for svc in replicas))
    per_event = [sum(claims[i * INSTANCES : (i + 1) * INSTANCES]) for i in range(len(event_ids))]
    assert per_event == [1] * len(event_ids)


async def test_rate_limit_admits_exactly_the_limit_across_replicas(replicas):
    limit, attempts = 5, 6

    async def attempt(svc: CouncilService) -> bool:
        try:
            await svc.limiter.check_and_record(
                user_key="slack:T1:U1", channel_key="slack:T1:C1", user_limit_per_hour=limit, channel_limit_per_hour=0
            )
            return True
        except RateLimited:
            return False

    admitted = await asyncio.gather(*(attempt(svc) for svc in replicas for _ in range(attempts)))
    assert sum(admitted) == limit
    hits = await replicas[0].storage.hits_since("user:slack:T1:U1", 0)
    assert len(hits) == limit  # refused attempts recorded nothing, admitted ones once each


async def test_concurrent_changes_of_different_fields_all_survive(replicas):
    await asyncio.gather(
        replicas[0].admin_set_limits(ADMIN, ORIGIN, user_per_hour=7),
        replicas[1].admin_set_limits(ADMIN, ORIGIN, channel_per_hour=9),
        replicas[2].admin_set_limits(ADMIN, ORIGIN, daily_budget_usd=2.5),
        replicas[3].admin_set_chairman(ADMIN, ORIGIN, "beta"),
    )
    final = await replicas[0].channel_settings(ORIGIN)
    assert (final.user_limit_per_hour, final.channel_limit_per_hour, final.daily_budget_usd, final.chairman) == (
        7,
        9,
        2.5,
        "beta",
    )


async def test_concurrent_admin_changes_are_each_audited(replicas):
    async def change(svc: CouncilService, i: int) -> None:
        await svc.admin_set_limits(ADMIN, ORIGIN, user_per_hour=i + 1)

    await asyncio.gather(*(change(svc, i) for i, svc in enumerate(replicas * 5)))
    log = await replicas[0].audit_log(ADMIN, ORIGIN, limit=100)
    assert len(log) == INSTANCES * 5 and all(entry.action == "set_limits" for entry in log)
    final = await replicas[1].channel_settings(ORIGIN)
    # The settings hold the change of the newest audit entry: row and log were written together.
    assert final.user_limit_per_hour == log[0].detail["user_limit_per_hour"]
