"""SQLite storage: migrations, exact round trips, history queries, settings, audit, events."""

import sqlite3
from datetime import datetime, timedelta, timezone

import pytest

from core.models import ChannelSettings, CouncilStatus, Platform
from core.storage import SchemaTooNew, Storage
from tests.factories import make_result


@pytest.fixture
async def storage(tmp_path):
    async with await Storage.open(str(tmp_path / "db" / "council.db")) as s:
        yield s


async def test_result_round_trips_exactly(storage):
    result = make_result()
    await storage.save_council_started(result.request)
    await storage.save_result(result)
    await storage.save_result(result)  # idempotent
    assert await storage.get_result(result.council_id) == result
    assert await storage.get_result("missing") is None


async def test_normalised_rows_hold_ballots_labels_and_errors(storage, tmp_path):
    await storage.save_result(make_result())
    db = sqlite3.connect(tmp_path / "db" / "council.db")
    assert db.execute("SELECT COUNT(*) FROM answers WHERE error_kind = 'auth' AND error_status = 401").fetchone()[0] == 1
    assert db.execute("SELECT parse_status, COUNT(*) FROM reviews GROUP BY parse_status ORDER BY 1").fetchall() == [("complete", 3), ("none", 1)]
    assert dict(db.execute("SELECT label, model FROM label_map").fetchall()) == {"A": "m-a", "B": "m-b", "C": "m-c"}
    assert db.execute("SELECT model FROM aggregates WHERE position = 1").fetchone()[0] == "m-a"
    assert db.execute("SELECT by_chairman, model FROM synthesis").fetchone() == (0, "m-b")
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


async def test_migrations_apply_once_and_reopen_is_idempotent(tmp_path):
    path = str(tmp_path / "c.db")
    async with await Storage.open(path) as s:
        assert await s.schema_version() >= 1
    async with await Storage.open(path) as s:
        assert await s.schema_version() >= 1
    rows = sqlite3.connect(path).execute("SELECT version, name FROM schema_version").fetchall()
    assert rows[0] == (1, "init") and len(rows) == len({r[0] for r in rows})


async def test_newer_database_is_refused_with_a_clear_message(tmp_path):
    path = str(tmp_path / "c.db")
    async with await Storage.open(path):
        pass
    db = sqlite3.connect(path)
    db.execute("INSERT INTO schema_version VALUES (999, 'future', 'x')")
    db.commit()
    with pytest.raises(SchemaTooNew, match="schema version 999"):
        await Storage.open(path)


async def test_history_filters_and_order(storage):
    now = datetime.now(timezone.utc)
    for i in range(6):
        await storage.save_result(
            make_result(council_id=f"id{i}", channel_id="C1" if i % 2 else "C2", user_id=f"U{i % 3}", created_at=now - timedelta(minutes=i))
        )
    everything = await storage.list_councils(limit=10)
    assert [s.council_id for s in everything] == [f"id{i}" for i in range(6)]
    assert {s.council_id for s in await storage.list_councils(channel_id="C1")} == {"id1", "id3", "id5"}
    assert {s.council_id for s in await storage.list_councils(user_id="U0")} == {"id0", "id3"}
    assert await storage.list_councils(platform="discord") == []
    summary = everything[0]
    assert summary.winner == "m-a" and summary.agreement_w == 0.75 and summary.status is CouncilStatus.DEGRADED


async def test_ballots_and_model_stats(storage):
    await storage.save_result(make_result(council_id="a1"))
    await storage.save_result(make_result(council_id="a2", order=("m-b", "m-a", "m-c")))
    ballots = await storage.ballots()
    assert len(ballots) == 6 and all(len(b.ballot_models) == 2 for b in ballots)
    stats = await storage.model_stats()
    assert stats["m-a"].councils == 2 and stats["m-a"].first_places == 1
    assert stats["m-down"].failures == 2 and stats["m-down"].councils == 2
    assert stats["m-a"].mean_average_rank == pytest.approx(1.5)
    assert await storage.ballots(platform=Platform.DISCORD.value) == []


async def test_prune_cascades(storage, tmp_path):
    old = datetime.now(timezone.utc) - timedelta(days=100)
    await storage.save_result(make_result(council_id="old", created_at=old))
    await storage.save_result(make_result(council_id="new"))
    assert await storage.prune(datetime.now(timezone.utc) - timedelta(days=90)) == 1
    db = sqlite3.connect(tmp_path / "db" / "council.db")
    assert db.execute("SELECT COUNT(*) FROM answers WHERE council_id = 'old'").fetchone()[0] == 0
    assert await storage.get_result("new") is not None


async def test_interrupted_councils_are_marked_failed(storage):
    result = make_result()
    await storage.save_council_started(result.request)
    assert await storage.mark_interrupted() == 1
    stored = await storage.get_result(result.council_id)
    assert stored.status is CouncilStatus.FAILED and "restarted" in stored.error.message
    assert await storage.mark_interrupted() == 0


async def test_channel_settings_and_audit(storage):
    key = "slack:T1:C1"
    assert await storage.get_channel_settings(key) is None
    cs = ChannelSettings(channel_key=key, members=["a", "b"], chairman="a", user_limit_per_hour=0)
    await storage.put_channel_settings(cs, "U1")
    assert await storage.get_channel_settings(key) == cs
    await storage.audit(key, "U1", "set_members", {"members": ["a", "b"]})
    await storage.delete_channel_settings(key)
    assert await storage.get_channel_settings(key) is None
    log = await storage.audit_log(key)
    assert log[0].action == "set_members" and log[0].detail == {"members": ["a", "b"]}


async def test_claim_event_only_once(storage):
    assert await storage.claim_event("slack", "Ev1") is True
    assert await storage.claim_event("slack", "Ev1") is False
    assert await storage.claim_event("discord", "Ev1") is True


async def test_spend_and_usage_by_day(storage):
    await storage.save_result(make_result(council_id="x1", cost=0.25))
    await storage.save_result(make_result(council_id="x2", cost=0.5, channel_id="C9"))
    day = datetime.now(timezone.utc).replace(hour=0, minute=0, second=0, microsecond=0)
    assert await storage.spent_since("slack:T1:C1", day) == pytest.approx(0.25)
    assert await storage.spent_since(None, day) == pytest.approx(0.75)
    usage = await storage.usage_by_day()
    assert usage[-1].councils == 2 and usage[-1].cost_usd == pytest.approx(0.75)
