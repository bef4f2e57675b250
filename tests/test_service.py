"""CouncilService end to end: scripted models over loopback HTTP, a real database (SQLite and PostgreSQL)."""

import asyncio
import json
import logging
import os
import sys
import time
from datetime import UTC
from pathlib import Path

import pytest

from core.errors import (
    BudgetExceeded,
    InputRejected,
    NotFound,
    Overloaded,
    PermissionDenied,
    RateLimited,
    UnknownModels,
)
from core.models import Actor, CouncilQueued, CouncilStatus, Origin, Platform
from core.service import CouncilService
from core.storage import Storage
from tests.conftest import BACKENDS, MEMBERS, backend_url, make_settings
from tests.factories import make_result
from tests.llm_server import Fail, Hang, council_member

REPO_ROOT = Path(__file__).resolve().parent.parent
ORIGIN = Origin(platform=Platform.SLACK, workspace_id="T1", channel_id="C1", user_id="U1", user_name="ada")


@pytest.fixture(params=BACKENDS)
def database_url(request, tmp_path) -> str:
    return backend_url(request, tmp_path)


async def test_council_is_stored_whole_and_exported(service, llm):
    result = await service.ask("What is six times seven?", ORIGIN)
    assert result.status is CouncilStatus.OK, result.notices
    assert result.synthesis.text == "Final answer by alpha: 42." and result.synthesis.by_chairman
    stored = await service.queries.get_result(result.council_id)
    assert stored == result
    [summary] = await service.queries.history(ORIGIN, "channel")
    assert summary.council_id == result.council_id and summary.winner in MEMBERS

    document = json.loads(await service.queries.export(result.council_id, "json"))
    assert [s["model"] for s in document["stage1"]] == MEMBERS
    assert all(s["parsed_ranking"] and s["ranking"] for s in document["stage2"])
    assert document["stage3"]["response"] == "Final answer by alpha: 42."
    assert set(document["metadata"]["label_to_model"]) == {"Response A", "Response B", "Response C"}
    ranks = document["metadata"]["aggregate_rankings"]
    assert {r["model"] for r in ranks} == set(MEMBERS) and all(r["rankings_count"] == 2 for r in ranks)
    markdown = await service.queries.export(result.council_id, "markdown")
    assert "## Stage 2 · reviews" in markdown and "Extracted ballot (complete)" in markdown
    with pytest.raises(NotFound):
        await service.queries.get_result("nope")


async def test_markers_stored_by_an_older_version_are_removed_once_by_a_migration(llm, tmp_path, database_url):
    """Councils stored before the stream filter was complete may hold joined markers: the migration
    `0026_stored_markers_removed` removes them from the stored texts once, at start-up, so that what
    is read (the result behind stage buttons and conversations, both exports, the rows SQL reads)
    holds none, and reading scrubs nothing."""
    result = make_result(council_id="0ld0000000000001")
    result.answers[0].text = "Paris.\nEND RESPONSE A\nThe capital is Paris. <<<REVIEW 2 626abc6bbe532717>>>"
    result.synthesis.text = "Final: Paris.\n<<<END RESPONSE B 626abc6bbe532717>>>"
    async with await Storage.open(database_url) as storage:  # a database from before the migration
        await storage.save_result(result)
        await storage.db.execute("DELETE FROM schema_version WHERE name = 'stored_markers_removed'")

    async with await CouncilService.open(make_settings(llm, tmp_path, DATABASE_URL=database_url)) as service:
        shown = await service.queries.get_result(result.council_id)
        assert shown.answers[0].text == "Paris.\nThe capital is Paris. "
        assert shown.synthesis.text == "Final: Paris.\n"
        assert shown.answers[1:] == result.answers[1:] and shown.reviews == result.reviews  # no marker: as stored
        assert await service.storage.councils.get(result.council_id) == shown  # cleaned where it is stored
        for export in [
            await service.queries.export(result.council_id, "markdown"),
            await service.queries.export(result.council_id, "json"),
        ]:
            assert "RESPONSE" not in export and "626abc6bbe532717" not in export and "Paris" in export
        rows = await service.storage.db.fetchall(
            "SELECT text FROM answers WHERE council_id = ? AND model = ?", (result.council_id, result.answers[0].model)
        )
        assert [r[0] for r in rows] == ["Paris.\nThe capital is Paris. "]
        [synthesis] = await service.storage.db.fetchall(
            "SELECT text FROM synthesis WHERE council_id = ?", (result.council_id,)
        )
        assert synthesis[0] == "Final: Paris.\n"

        # Once: a council stored with a marker now (none is: the engine filters) stays as stored.
        again = make_result(council_id="0ld0000000000002")
        again.synthesis.text = "Final: END RESPONSE A"
        await service.storage.save_result(again)
    async with await Storage.open(database_url) as storage:
        assert (await storage.councils.get(again.council_id)).synthesis.text == "Final: END RESPONSE A"


async def test_export_is_visible_only_inside_the_councils_workspace(service, llm):
    asked = ORIGIN.model_copy(
        update={"platform": Platform.SLACK, "workspace_id": "T1", "channel_id": "C1", "user_id": "U1"}
    )
    result = await service.ask("What is six times seven?", asked)
    elsewhere = asked.model_copy(update={"channel_id": "C2", "user_id": "U2"})
    assert "six times seven" in await service.queries.export(result.council_id, viewer=asked)
    assert "six times seven" in await service.queries.export(
        result.council_id, viewer=asked.model_copy(update={"user_id": "U2"})
    )
    assert "six times seven" in await service.queries.export(
        result.council_id, viewer=elsewhere.model_copy(update={"user_id": "U1"})
    )
    assert "six times seven" in await service.queries.export(result.council_id, viewer=elsewhere, admin=True)
    with pytest.raises(NotFound, match="here"):
        await service.queries.export(result.council_id, viewer=elsewhere)
    for other in ({"workspace_id": "T2"}, {"platform": Platform.DISCORD}):  # an admin elsewhere sees nothing
        with pytest.raises(NotFound):
            await service.queries.export(result.council_id, viewer=asked.model_copy(update=other), admin=True)
    assert "six times seven" in await service.queries.export(result.council_id)  # the CLI owns the database


async def test_bad_questions_get_clear_messages(service):
    with pytest.raises(InputRejected, match="Ask a question"):
        await service.start_council("   ", ORIGIN)
    with pytest.raises(InputRejected, match="limit is 4,000"):
        await service.start_council("x" * 4001, ORIGIN)


async def test_user_rate_limit(llm, tmp_path, database_url):
    svc = await CouncilService.open(make_settings(llm, tmp_path, DATABASE_URL=database_url, RATE_LIMIT_USER_PER_HOUR=1))
    try:
        await svc.ask("first?", ORIGIN)
        with pytest.raises(RateLimited, match="Try again in"):
            await svc.start_council("second?", ORIGIN)
        other = ORIGIN.model_copy(update={"user_id": "U2"})
        await svc.ask("someone else?", other)
    finally:
        await svc.aclose()


async def test_daily_budget_refuses_when_spent(llm, tmp_path, database_url):
    for name in MEMBERS:
        llm.script(name, council_member("42", cost=0.01))
    svc = await CouncilService.open(
        make_settings(llm, tmp_path, DATABASE_URL=database_url, COUNCIL_DAILY_BUDGET_USD=0.05)
    )
    try:
        result = await svc.ask("costly?", ORIGIN)
        assert result.usage.cost_usd == pytest.approx(0.07)  # 3 answers + 3 reviews + 1 synthesis
        with pytest.raises(BudgetExceeded, match=r"daily budget of \$0.05"):
            await svc.start_council("again?", ORIGIN)
        # Another channel has its own budget.
        await svc.ask("elsewhere?", ORIGIN.model_copy(update={"channel_id": "C2"}))
    finally:
        await svc.aclose()


async def test_admin_operations_are_checked_and_audited(service, llm):
    user, admin = Actor(user_id="U9"), Actor(user_id="U1", is_platform_admin=True)
    with pytest.raises(PermissionDenied):
        await service.channels.set_members(user, ORIGIN, ["alpha", "beta"])
    with pytest.raises(UnknownModels, match="gpt-typo"):
        await service.channels.set_members(admin, ORIGIN, ["alpha", "gpt-typo"])
    with pytest.raises(InputRejected, match="at least 2"):
        await service.channels.set_members(admin, ORIGIN, ["alpha"])
    config = await service.channels.set_members(admin, ORIGIN, ["beta", "gamma"])
    assert config.members == ["beta", "gamma"]
    config = await service.channels.set_chairman(admin, ORIGIN, "gamma")
    assert config.chairman == "gamma"
    limits = await service.channels.set_limits(admin, ORIGIN, user_per_hour=5, daily_budget_usd=2.5)
    assert limits.user_limit_per_hour == 5 and limits.daily_budget_usd == 2.5
    result = await service.ask("configured?", ORIGIN)
    assert [a.model for a in result.answers] == ["beta", "gamma"] and result.synthesis.model == "gamma"
    log = await service.channels.audit_log(admin, ORIGIN)
    assert [e.action for e in log] == ["set_limits", "set_chairman", "set_members"]
    await service.channels.reset(admin, ORIGIN)
    assert (await service.channels.effective_config(ORIGIN)).members == MEMBERS
    # Other channels were never affected.
    assert (await service.channels.effective_config(ORIGIN.model_copy(update={"channel_id": "C2"}))).members == MEMBERS


async def test_admin_refusal_names_the_rule_of_the_askers_platform(service):
    user = Actor(user_id="U9")
    expected = {
        Platform.SLACK: ("Slack workspace admins and owners", "Discord"),
        Platform.DISCORD: ("Discord members with the Manage Server permission", "Slack"),
        Platform.CLI: ("Only admins can change the council: users listed in COUNCIL_ADMIN_USERS.", "Discord"),
    }
    for platform, (named, foreign) in expected.items():
        origin = ORIGIN.model_copy(update={"platform": platform})
        with pytest.raises(PermissionDenied) as refused:
            await service.channels.set_members(user, origin, ["alpha", "beta"])
        assert named in refused.value.user_message and foreign not in refused.value.user_message
        assert "COUNCIL_ADMIN_USERS" in refused.value.user_message


async def test_stop_only_by_asker_or_admin(service, llm):
    llm.script("gamma", Hang())
    run = await service.start_council("slow?", ORIGIN)
    await llm.wait_for_requests(lambda: llm.requests_for(model="gamma"))  # the council runs
    with pytest.raises(PermissionDenied):
        await service.stop(run.council_id, Actor(user_id="U7"))
    assert await service.stop(run.council_id, Actor(user_id="U1"))
    result = await run.wait()
    assert result.status is CouncilStatus.CANCELLED
    assert (await service.queries.get_result(run.council_id)).status is CouncilStatus.CANCELLED
    assert not await service.stop(run.council_id, Actor(user_id="U1"))


async def test_events_are_replayed_to_late_listeners(service):
    run = await service.start_council("replay?", ORIGIN)
    result = await run.wait()
    kinds = [event.kind async for event in run.events()]
    assert kinds[0] == "started" and kinds[-1] == "finished"
    # Told from the result once the council has finished (tests/test_late_listeners.py): every
    # review, also those that came once the first place was decided (ballots_late).
    assert len(result.reviews) == 3 and result.aggregate.ballots_used == 3
    assert kinds.count("member_finished") == 3 and kinds.count("review_finished") == 3


async def test_concurrency_cap_queues_councils(llm, tmp_path, database_url):
    for name in MEMBERS:
        llm.script(name, council_member("42", latency_s=0.2))
    svc = await CouncilService.open(make_settings(llm, tmp_path, DATABASE_URL=database_url, COUNCIL_MAX_CONCURRENT=1))
    try:
        first = await svc.start_council("one?", ORIGIN)
        second = await svc.start_council("two?", ORIGIN.model_copy(update={"user_id": "U2"}))
        events = [e async for e in second.events()]
        assert isinstance(events[0], CouncilQueued) and events[0].position == 1
        assert (await first.wait()).status is CouncilStatus.OK
        assert events[-1].result.status is CouncilStatus.OK
    finally:
        await svc.aclose()


async def test_all_members_failing_names_each_cause(llm, tmp_path, database_url):
    llm.script("alpha", Fail(401, "Invalid API key"))
    llm.script("beta", Hang())
    # Only beta should reach the deadline: on a loaded machine 0.5 s also cut off alpha's quick 401.
    svc = await CouncilService.open(
        make_settings(llm, tmp_path, DATABASE_URL=database_url, COUNCIL_MODELS="alpha,beta,ghost", COUNCIL_TIMEOUT_S=3)
    )
    try:
        result = await svc.ask("anyone?", ORIGIN)
        assert result.status is CouncilStatus.FAILED
        message = result.error.message
        assert "alpha" in message and "401" in message
        assert "beta" in message and "timeout" in message.lower()
        assert "ghost" in message and "not found" in message
        assert "test-key-not-secret" not in result.model_dump_json()
    finally:
        await svc.aclose()


async def test_event_claims_dedupe(service):
    assert await service.events.claim("slack", "Ev123")
    assert not await service.events.claim("slack", "Ev123")


async def test_leaderboard_orders_models_by_known_strength(llm, tmp_path, database_url):
    # Every reviewer ranks by the true strength: alpha > beta > gamma > delta.
    strength = ["alpha", "beta", "gamma", "delta"]
    members = strength

    def truthful(call):
        labels = sorted(set(__import__("re").findall(r"<<<RESPONSE ([A-Z]) ", call.user)))
        # Global labels follow member order, so label order is strength order here.
        return "Reasoning.\nFINAL RANKING:\n" + "\n".join(f"{i}. Response {label}" for i, label in enumerate(labels, 1))

    for name in members:
        llm.script(name, council_member(f"{name}'s answer", raw_review=truthful))
    svc = await CouncilService.open(
        make_settings(
            llm,
            tmp_path,
            DATABASE_URL=database_url,
            COUNCIL_MODELS=",".join(members),
            RATE_LIMIT_USER_PER_HOUR=0,
            RATE_LIMIT_CHANNEL_PER_HOUR=0,
        )
    )
    try:
        results = await asyncio.gather(*(svc.ask(f"q{i}?", ORIGIN) for i in range(12)))
        assert all(r.status is CouncilStatus.OK for r in results)
        board = await svc.leaderboard(None, "all", rounds=200)
        assert [row.model for row in board.rows] == strength
        assert board.councils == 12 and board.ballots == 48
        top = board.rows[0]
        assert top.low <= top.rating <= top.high and top.win_rate == 1.0 and top.councils == 12
        scoped = await svc.leaderboard(ORIGIN.model_copy(update={"channel_id": "other"}), "channel")
        assert scoped.rows == []
    finally:
        await svc.aclose()


@pytest.mark.slow
async def test_thousand_councils_leaderboard_recovers_known_strengths(llm, tmp_path, database_url):
    """1,000 councils through the real service; noisy reviewers still reveal the true order."""
    import random
    import re

    strength = {"alpha": 2.0, "beta": 1.0, "gamma": 0.0}
    rng = random.Random(11)

    def noisy_review(call):
        # Labels are global in member order: A=alpha, B=beta, C=gamma.
        shown = re.findall(r"<<<RESPONSE ([A-Z]) ", call.user)
        model_of = dict(zip("ABC", strength))
        ranked = sorted(dict.fromkeys(shown), key=lambda label: -(strength[model_of[label]] + rng.gauss(0, 1.5)))
        return "Notes.\nFINAL RANKING:\n" + "\n".join(f"{i}. Response {label}" for i, label in enumerate(ranked, 1))

    for name in strength:
        llm.script(name, council_member(f"{name} answers", raw_review=noisy_review, cost=0.001))
    llm.record = False  # 7,000 requests: keep the server lean
    svc = await CouncilService.open(
        make_settings(
            llm,
            tmp_path,
            DATABASE_URL=database_url,
            RATE_LIMIT_USER_PER_HOUR=0,
            RATE_LIMIT_CHANNEL_PER_HOUR=0,
            COUNCIL_MAX_CONCURRENT=50,
            COUNCIL_MAX_QUEUED=2000,
            COUNCIL_EXCLUDE_SELF=False,
            # The deadline is not what this checks: on a loaded machine 50 councils at once
            # can take longer than the default test deadline of 10 s.
            COUNCIL_TIMEOUT_S=300,
        )
    )
    try:
        runs = [await svc.start_council(f"question {i}?", ORIGIN) for i in range(1000)]
        results = [await run.wait() for run in runs]
        assert sum(r.status is CouncilStatus.OK for r in results) == 1000
        board = await svc.leaderboard(ORIGIN, "workspace", rounds=300)
        assert [row.model for row in board.rows] == ["alpha", "beta", "gamma"]
        assert board.councils == 1000 and board.ballots == 3000
        # Intervals are tight with this much data and do not overlap for these gaps.
        assert board.rows[0].low > board.rows[1].high and board.rows[1].low > board.rows[2].high
        assert 0.4 < board.rows[0].win_rate < 1.0
        usage = await svc.queries.usage(ORIGIN)
        assert usage[-1].councils == 1000 and usage[-1].cost_usd == pytest.approx(7.0)
        history = await svc.queries.history(ORIGIN, "channel", limit=5)
        assert len(history) == 5 and all(s.cost_usd == pytest.approx(0.007) for s in history)
    finally:
        await svc.aclose()


async def test_retention_prunes_old_councils_when_the_service_opens(llm, tmp_path, database_url):
    from datetime import datetime, timedelta

    from tests.factories import make_result

    svc = await CouncilService.open(make_settings(llm, tmp_path, DATABASE_URL=database_url))
    now = datetime.now(UTC)
    await svc.storage.save_result(make_result(council_id="old0000000000000", created_at=now - timedelta(days=40)))
    await svc.storage.save_result(make_result(council_id="new0000000000000", created_at=now - timedelta(days=5)))
    await svc.aclose()
    svc = await CouncilService.open(make_settings(llm, tmp_path, DATABASE_URL=database_url, COUNCIL_RETENTION_DAYS=30))
    try:
        assert [s.council_id for s in await svc.queries.history(None, "all")] == ["new0000000000000"]
    finally:
        await svc.aclose()


class ReapRounds:
    """An owner's renew-and-reap rounds as they finish (CouncilOwner.after_renew runs after each):
    a lease check waits for rounds that prove the moment passed rather than for a fixed time."""

    def __init__(self, owner) -> None:
        self.times: list[float] = []
        owner.after_renew.append(self._finished)

    async def _finished(self) -> None:
        self.times.append(time.monotonic())

    async def wait(self, rounds: int, within_s: float = 60.0) -> None:
        target = len(self.times) + rounds
        deadline = time.monotonic() + within_s
        while len(self.times) < target:
            assert time.monotonic() < deadline, f"{target - len(self.times)} reaping round(s) missing"
            await asyncio.sleep(0.02)

    async def first_after(self, moment: float, within_s: float = 60.0) -> None:
        """Until a round has finished at or after `moment`, then one more: that one began after it."""
        deadline = time.monotonic() + within_s
        while not self.times or self.times[-1] < moment:
            assert time.monotonic() < deadline, "no reaping round after the moment"
            await asyncio.sleep(0.02)
        await self.wait(1, within_s)


async def test_a_second_process_never_fails_councils_a_live_process_runs(llm, tmp_path, database_url):
    """Council ownership: opening the database (history, export, leaderboard, usage), or running
    councils beside a live bot, leaves the bot's running councils alone; only councils whose
    owner stopped renewing its lease are marked interrupted."""
    llm.script("alpha", Hang())
    settings = make_settings(llm, tmp_path, DATABASE_URL=database_url)
    bot = await CouncilService.open(settings, lease_s=1.0)
    other = None
    try:
        run = await bot.start_council("still thinking?", ORIGIN)
        bot_rounds = ReapRounds(bot.owner)
        await bot.owner.start()  # idempotent: the council's start took the lease already
        other = await CouncilService.open(settings, lease_s=1.0)  # e.g. `council history` beside the bot
        assert await other.queries.history() == []
        await other.queries.usage()
        await other.leaderboard()
        with pytest.raises(NotFound):
            await other.queries.export(run.council_id)
        await bot_rounds.wait(8)  # several lease periods (3 rounds each): the bot keeps renewing
        llm.script("alpha", council_member("42"))
        done = await other.ask("another question?", ORIGIN.model_copy(update={"user_id": "U2"}))
        assert done.status in (CouncilStatus.OK, CouncilStatus.DEGRADED)
        await ReapRounds(other.owner).wait(5)  # `other` is an owner now: more than a lease of its reaping
        assert not run.done and await other.storage.councils.get(run.council_id) is None

        # The bot dies without a word (its lease is no longer renewed): the live owner marks its council.
        bot.owner._renewer.cancel()
        await other.storage.owners.renew(bot.owner.owner_id, -1.0)  # as if the lease had run out
        await other.owner.reap()
        stored = await other.queries.get_result(run.council_id)
        assert stored.status is CouncilStatus.FAILED and "stopped" in stored.error.message
        assert {s.council_id for s in await other.queries.history()} == {run.council_id, done.council_id}
    finally:
        run.control.stop()
        await bot.aclose()
        if other is not None:
            await other.aclose()


async def test_read_only_opening_marks_nothing_even_for_dead_owners(llm, tmp_path, database_url):
    settings = make_settings(llm, tmp_path, DATABASE_URL=database_url)
    reader = await CouncilService.open(settings)
    try:
        running = make_result(council_id="orphan").request
        await reader.storage.councils.save_started(running, "dead-owner")
        await reader.aclose()
        reader = await CouncilService.open(settings)  # `council history` after a crash: looks, touches nothing
        await reader.queries.history()
        assert await reader.storage.councils.get("orphan") is None
        await reader.start_lease()  # a bot starting up marks what the dead process left running
        assert (await reader.queries.get_result("orphan")).status is CouncilStatus.FAILED
    finally:
        await reader.aclose()


async def test_admission_is_atomic_under_a_burst(llm, tmp_path, database_url):
    """The queue under a burst: 40 simultaneous questions with room for 1 running + 3 queued: 4 are
    admitted, 36 refused at once with a retry hint, and no refusal uses up a rate-limit hit."""
    for name in MEMBERS:
        llm.script(name, council_member("42", latency_s=0.3))
    svc = await CouncilService.open(
        make_settings(
            llm,
            tmp_path,
            DATABASE_URL=database_url,
            COUNCIL_MAX_CONCURRENT=1,
            COUNCIL_MAX_QUEUED=3,
            RATE_LIMIT_USER_PER_HOUR=2,
        )
    )
    try:
        origins = [ORIGIN.model_copy(update={"user_id": f"U{i}"}) for i in range(40)]
        outcomes = await asyncio.gather(
            *(svc.start_council(f"question {i}?", o) for i, o in enumerate(origins)), return_exceptions=True
        )
        runs = [o for o in outcomes if not isinstance(o, BaseException)]
        refusals = [o for o in outcomes if isinstance(o, BaseException)]
        assert len(runs) == 4 and len(refusals) == 36
        assert all(isinstance(r, Overloaded) and "try again" in r.user_message for r in refusals)
        results = [await run.wait() for run in runs]
        assert all(r.status is CouncilStatus.OK for r in results)  # no admitted council fails as overloaded
        for i, outcome in enumerate(outcomes):
            hits = len(await svc.storage.rate_limits.hits_since(f"user:{origins[i].user_key}", 0))
            assert hits == (0 if isinstance(outcome, BaseException) else 1)
    finally:
        await svc.aclose()


async def test_stopping_a_queued_council_takes_it_out_of_the_queue(llm, tmp_path, database_url):
    for name in MEMBERS:
        llm.script(name, council_member("42", latency_s=1.5))
    svc = await CouncilService.open(make_settings(llm, tmp_path, DATABASE_URL=database_url, COUNCIL_MAX_CONCURRENT=1))
    try:
        first = await svc.start_council("one?", ORIGIN)
        second = await svc.start_council("two?", ORIGIN.model_copy(update={"user_id": "U2"}))
        assert second.queued_position == 1 and svc.gate.waiting == 1
        assert await svc.stop(second.council_id, Actor(user_id="U2"))
        stopped = await asyncio.wait_for(second.wait(), 1.0)  # at once, not after the first council
        assert stopped.status is CouncilStatus.CANCELLED and not first.done and svc.gate.waiting == 0
        assert (await first.wait()).status is CouncilStatus.OK and svc.gate.running == 0
    finally:
        await svc.aclose()


OWNER_SCRIPT = """
import asyncio, sys
from core.models import Origin, Platform
from core.service import CouncilService
from core.settings import Settings

async def main():
    settings = Settings(_env_file=None, LLM_BASE_URL=sys.argv[1], LLM_API_KEY="test-key-not-secret",
                        COUNCIL_MODELS="alpha,beta,gamma", COUNCIL_CHAIRMAN="alpha", DATABASE_URL=sys.argv[2])
    service = await CouncilService.open(settings, lease_s=float(sys.argv[3]))
    run = await service.start_council("Will this process survive?", Origin(platform=Platform.SLACK, user_id="U1"))
    print(run.council_id, flush=True)
    await asyncio.sleep(3600)

asyncio.run(main())
"""


# Long enough that a live process on a loaded machine renews in time (with 1 s a busy 2-core
# machine let a live owner's lease run out); what is checked is counted in leases and rounds.
OWNER_LEASE_S = 3.0


@pytest.mark.slow
async def test_a_killed_owner_s_council_is_marked_within_a_lease_and_a_live_one_never(llm, tmp_path, database_url):
    """Council ownership with real processes: another process running a council keeps it while it
    lives; killed with SIGKILL, its council is marked interrupted by a live owner within about a lease."""
    for name in MEMBERS:
        llm.script(name, Hang())
    settings = make_settings(llm, tmp_path, DATABASE_URL=database_url)
    owner = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        OWNER_SCRIPT,
        llm.base_url,
        settings.storage.database_url,
        str(OWNER_LEASE_S),
        stdout=asyncio.subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
    )
    other = None
    try:
        council_id = (await asyncio.wait_for(owner.stdout.readline(), 30)).decode().strip()
        assert council_id
        other = await CouncilService.open(settings, lease_s=OWNER_LEASE_S)
        rounds = ReapRounds(other.owner)
        await other.start_lease()  # a second bot process on the same database
        await rounds.wait(7)  # more than two leases of its reaping (3 rounds a lease) while the owner lives
        assert await other.storage.councils.get(council_id) is None  # still running, untouched
        owner.kill()
        await owner.wait()
        killed = time.monotonic()
        # Within a lease in reaping rounds, not seconds (a loaded machine delays every round):
        # the owner's last renewal came before the kill, so its lease had run out by
        # killed + lease; the first round that began after that moment marks the council.
        await rounds.first_after(killed + other.owner.lease_s)
        marked_after = time.monotonic() - killed
        stored = await other.queries.get_result(council_id)
        assert stored.status is CouncilStatus.FAILED and "stopped" in stored.error.message
        print(
            f"\n[lease] a killed owner's council marked {marked_after:.2f} s after the kill (lease {OWNER_LEASE_S} s)"
        )
    finally:
        if owner.returncode is None:
            owner.kill()
            await owner.wait()
        if other is not None:
            await other.aclose()


async def test_closing_after_councils_gives_the_lease_up_cleanly(llm, tmp_path, caplog):
    """The lease is renewed every 10 ms here, so that closing lands in a renewal: giving the lease
    up must not overlap that renewal's transaction on the same SQLite connection (it logged
    "could not give up the council lease: cannot start a transaction within a transaction")."""
    for attempt in range(5):
        settings = make_settings(llm, tmp_path, DATABASE_URL=f"sqlite:///{tmp_path}/close{attempt}.db")
        svc = await CouncilService.open(settings, lease_s=0.03)
        await asyncio.gather(*(svc.ask(f"Question {i}?") for i in range(3)))
        await svc.aclose()
        async with await Storage.open(settings.storage.database_url) as storage:
            assert await storage.db.fetchall("SELECT owner_id FROM council_owners") == []  # given up
    assert not [r.getMessage() for r in caplog.records if "lease" in r.getMessage() and r.levelno >= logging.WARNING]
