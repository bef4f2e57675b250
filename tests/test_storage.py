"""Storage on both backends (SQLite and PostgreSQL, the `storage` fixture): migrations, exact round
trips, history queries, settings, audit, events; SQLite-only behaviour (files, WAL, :memory:) by path."""

import asyncio
import sqlite3
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from core.models import ChannelSettings, CouncilStatus, MessageRef, Platform
from core.storage import MIGRATIONS_DIR, MigrationError, SchemaTooNew, Storage, migration_files
from core.storage.migrations import split_statements
from tests.conftest import BACKENDS, backend_url
from tests.factories import make_result


@pytest.fixture(params=BACKENDS)
def database_url(request, tmp_path) -> str:
    return backend_url(request, tmp_path)


@pytest.fixture
async def storage(database_url):
    async with await Storage.open(database_url) as s:
        yield s


async def rows(storage, sql):
    return [tuple(r) for r in await storage.db.fetchall(sql)]


async def test_result_round_trips_exactly(storage):
    result = make_result()
    await storage.councils.save_started(result.request)
    await storage.save_result(result)
    await storage.save_result(result)  # idempotent
    assert await storage.councils.get(result.council_id) == result
    assert await storage.councils.get("missing") is None


async def test_normalised_rows_hold_ballots_labels_and_errors(storage):
    await storage.save_result(make_result())
    assert await rows(storage, "SELECT COUNT(*) FROM answers WHERE error_kind = 'auth' AND error_status = 401") == [
        (1,)
    ]
    assert await rows(storage, "SELECT parse_status, COUNT(*) FROM reviews GROUP BY parse_status ORDER BY 1") == [
        ("complete", 3),
        ("none", 1),
    ]
    assert dict(await rows(storage, "SELECT label, model FROM label_map")) == {"A": "m-a", "B": "m-b", "C": "m-c"}
    assert await rows(storage, "SELECT model FROM aggregates WHERE position = 1") == [("m-a",)]
    assert await rows(storage, "SELECT by_chairman, model FROM synthesis") == [(0, "m-b")]


async def test_sqlite_runs_in_wal_mode(tmp_path):
    async with await Storage.open(f"sqlite:///{tmp_path}/w.db") as s:
        assert await rows(s, "PRAGMA journal_mode") == [("wal",)]


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
    now = datetime.now(UTC)
    for i in range(6):
        await storage.save_result(
            make_result(
                council_id=f"id{i}",
                channel_id="C1" if i % 2 else "C2",
                user_id=f"U{i % 3}",
                created_at=now - timedelta(minutes=i),
            )
        )
    everything = await storage.councils.history(limit=10)
    assert [s.council_id for s in everything] == [f"id{i}" for i in range(6)]
    assert {s.council_id for s in await storage.councils.history(channel_id="C1")} == {"id1", "id3", "id5"}
    assert {s.council_id for s in await storage.councils.history(user_id="U0")} == {"id0", "id3"}
    assert await storage.councils.history(platform="discord") == []
    summary = everything[0]
    assert summary.winner == "m-a" and summary.agreement_w == 0.75 and summary.status is CouncilStatus.DEGRADED


async def test_ballots_and_model_stats(storage):
    await storage.save_result(make_result(council_id="a1"))
    await storage.save_result(make_result(council_id="a2", order=("m-b", "m-a", "m-c")))
    ballots = await storage.stats.ballot_orders()
    assert ballots.councils == 2 and len(ballots.orders) == 6 and all(len(order) == 2 for order in ballots.orders)
    stats = await storage.stats.model_stats()
    assert stats["m-a"].councils == 2 and stats["m-a"].first_places == 1
    assert stats["m-down"].failures == 2 and stats["m-down"].councils == 2
    assert stats["m-a"].mean_average_rank == pytest.approx(1.5)
    assert (await storage.stats.ballot_orders(platform=Platform.DISCORD.value)).orders == []


async def test_prune_cascades(storage):
    old = datetime.now(UTC) - timedelta(days=100)
    await storage.save_result(make_result(council_id="old", created_at=old))
    await storage.save_result(make_result(council_id="new"))
    assert await storage.prune(datetime.now(UTC) - timedelta(days=90)) == 1
    assert await rows(storage, "SELECT COUNT(*) FROM answers WHERE council_id = 'old'") == [(0,)]
    assert await storage.councils.get("new") is not None


async def test_message_map_records_and_looks_up_a_batch(storage):
    await storage.messages.record("slack", "C1", "1.1", "cid1", "question")
    await storage.messages.record("slack", "C1", "1.2", "cid1", "progress")
    await storage.messages.record("slack", "C1", "1.2", "cid1", "answer")  # the live display now holds it
    await storage.messages.record("slack", "C2", "1.1", "cid2", "answer")
    await storage.messages.record("discord", "C1", "1.1", "cid3", "answer")
    found = await storage.messages.lookup("slack", "C1", ["1.1", "1.2", "1.3", "1.1"])
    assert found == {
        "1.1": MessageRef(council_id="cid1", role="question"),
        "1.2": MessageRef(council_id="cid1", role="answer"),
    }
    assert await storage.messages.lookup("slack", "C1", []) == {}
    with pytest.raises(Exception, match=r"(?i)check constraint"):  # each driver has its own class
        await storage.messages.record("slack", "C1", "1.4", "cid1", "note")  # type: ignore[arg-type]


async def test_prune_removes_the_message_map_of_pruned_councils_only(storage):
    old = datetime.now(UTC) - timedelta(days=100)
    await storage.councils.save_started(make_result(council_id="old", created_at=old).request)
    await storage.messages.record("slack", "C1", "1.1", "old", "progress")
    await storage.save_result(make_result(council_id="old", created_at=old))  # replaces the council's row
    await storage.messages.record("slack", "C1", "2.1", "new", "answer")
    await storage.save_result(make_result(council_id="new"))
    assert set(await storage.messages.lookup("slack", "C1", ["1.1", "2.1"])) == {"1.1", "2.1"}
    assert await storage.prune(datetime.now(UTC) - timedelta(days=90)) == 1
    assert await storage.messages.lookup("slack", "C1", ["1.1", "2.1"]) == {
        "2.1": MessageRef(council_id="new", role="answer")
    }


async def test_interrupted_councils_are_marked_failed(storage):
    result = make_result()
    await storage.councils.save_started(result.request)
    assert await storage.councils.mark_interrupted() == 1
    stored = await storage.councils.get(result.council_id)
    assert stored.status is CouncilStatus.FAILED and "restarted" in stored.error.message
    assert await storage.councils.mark_interrupted() == 0


async def test_channel_settings_and_audit(storage):
    key = "slack:T1:C1"
    assert await storage.channels.get(key) is None
    cs = ChannelSettings(channel_key=key, members=["a", "b"], chairman="a", user_limit_per_hour=0)
    await storage.channels.put(cs, "U1")
    assert await storage.channels.get(key) == cs
    await storage.channels.audit(key, "U1", "set_members", {"members": ["a", "b"]})
    await storage.channels.delete(key)
    assert await storage.channels.get(key) is None
    log = await storage.channels.audit_log(key)
    assert log[0].action == "set_members" and log[0].detail == {"members": ["a", "b"]}


async def test_claim_event_only_once(storage):
    assert await storage.events.claim("slack", "Ev1") is True
    assert await storage.events.claim("slack", "Ev1") is False
    assert await storage.events.claim("discord", "Ev1") is True


async def test_spend_and_usage_by_day(storage):
    await storage.save_result(make_result(council_id="x1", cost=0.25))
    await storage.save_result(make_result(council_id="x2", cost=0.5, channel_id="C9"))
    day = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    assert await storage.councils.spent_since("slack:T1:C1", day) == pytest.approx(0.25)
    assert await storage.councils.spent_since(None, day) == pytest.approx(0.75)
    usage = await storage.councils.usage_by_day()
    assert usage[-1].councils == 2 and usage[-1].cost_usd == pytest.approx(0.75)


# --------------------------------------------------------------------------- migrations


LATEST = migration_files()[-1][0]


def _copy_migrations(tmp_path: Path, extra: dict[str, str]) -> Path:
    target = tmp_path / "migrations"
    target.mkdir(exist_ok=True)
    for _, _, path in migration_files(MIGRATIONS_DIR):
        (target / path.name).write_text(path.read_text())
    for name, text in extra.items():
        (target / name).write_text(text)
    return target


async def test_memory_database_is_supported():
    async with await Storage.open(":memory:") as s:
        result = make_result()
        await s.save_result(result)
        assert await s.councils.get(result.council_id) == result
        assert await s.schema_version() == migration_files()[-1][0]


async def test_new_migration_applies_on_reopen_in_order(tmp_path):
    path = str(tmp_path / "c.db")
    async with await Storage.open(path):
        pass
    n = LATEST
    migrations = _copy_migrations(
        tmp_path,
        {
            f"{n + 2:04d}_third.sql": "ALTER TABLE extra ADD COLUMN b TEXT;",
            f"{n + 1:04d}_second.sql": "-- a comment; with a semicolon\n"
            "CREATE TABLE extra (a TEXT); INSERT INTO extra (a) VALUES ('x;y');",
        },
    )
    async with await Storage.open(path, migrations) as s:
        assert await s.schema_version() == n + 2
    async with await Storage.open(path, migrations) as s:  # nothing left to apply
        assert await s.schema_version() == n + 2
    db = sqlite3.connect(path)
    rows = db.execute("SELECT version, name, applied_at FROM schema_version ORDER BY version").fetchall()
    assert [r[:2] for r in rows[-3:]] == [(n, migration_files()[-1][1]), (n + 1, "second"), (n + 2, "third")]
    # Every file once, in order (numbers may have gaps: each branch takes the number it was given).
    assert [r[0] for r in rows] == [v for v, _, _ in migration_files()] + [n + 1, n + 2]
    assert db.execute("SELECT a, b FROM extra").fetchall() == [("x;y", None)]


async def test_a_lower_numbered_migration_landing_later_is_still_applied(tmp_path):
    # Branches take the numbers they were given; one may reach a database already past its number.
    path = str(tmp_path / "c.db")
    late = migration_files()[-2]
    earlier = _copy_migrations(tmp_path, {})
    (earlier / late[2].name).unlink()
    async with await Storage.open(path, earlier) as s:
        assert await s.schema_version() == LATEST
    async with await Storage.open(path) as s:
        assert await s.schema_version() == LATEST
    versions = [r[0] for r in sqlite3.connect(path).execute("SELECT version FROM schema_version ORDER BY version")]
    assert versions == [v for v, _, _ in migration_files()]


async def test_failed_migration_is_rolled_back_whole(tmp_path):
    path = str(tmp_path / "c.db")
    broken = f"{LATEST + 1:04d}_broken.sql"
    migrations = _copy_migrations(tmp_path, {broken: "CREATE TABLE half (a TEXT);\nINSERT INTO nowhere VALUES (1);"})
    with pytest.raises(MigrationError, match=f"{broken} failed and was rolled back"):
        await Storage.open(path, migrations)
    db = sqlite3.connect(path)
    assert db.execute("SELECT MAX(version) FROM schema_version").fetchone()[0] == LATEST
    assert db.execute("SELECT COUNT(*) FROM sqlite_master WHERE name = 'half'").fetchone()[0] == 0
    db.close()
    (migrations / broken).write_text("CREATE TABLE half (a TEXT);")
    async with await Storage.open(path, migrations) as s:
        assert await s.schema_version() == LATEST + 1


async def test_malformed_migration_directory_is_refused(tmp_path):
    dup = _copy_migrations(tmp_path, {"0001_again.sql": "SELECT 1;"})
    with pytest.raises(MigrationError, match="share version 1"):
        await Storage.open(str(tmp_path / "a.db"), dup)
    (dup / "0001_again.sql").unlink()
    (dup / "2_bad-name.sql").write_text("SELECT 1;")
    with pytest.raises(MigrationError, match=r"NNNN_name\.sql"):
        await Storage.open(str(tmp_path / "b.db"), dup)


async def test_concurrent_opens_of_a_fresh_file_apply_each_migration_once(tmp_path):
    path = str(tmp_path / "fresh.db")
    opened = await asyncio.gather(*(Storage.open(path) for _ in range(4)))
    for s in opened:
        await s.close()
    rows = sqlite3.connect(path).execute("SELECT version FROM schema_version ORDER BY version").fetchall()
    assert rows == [(v,) for v, _, _ in migration_files()]


# --------------------------------------------------------------------------- councils


async def test_readers_never_see_a_half_written_result():
    async with await Storage.open(":memory:") as s:
        result = make_result()
        await s.save_result(result)
        misses = 0

        async def reader():
            nonlocal misses
            for _ in range(60):
                misses += await s.councils.get(result.council_id) is None
                await asyncio.sleep(0)

        async def writer():
            for _ in range(30):
                await s.save_result(result)

        await asyncio.gather(reader(), reader(), reader(), writer())
        assert misses == 0


async def test_running_councils_are_not_history_and_are_not_clobbered(storage):
    result = make_result(council_id="done")
    await storage.save_result(result)
    await storage.councils.save_started(result.request)  # a late duplicate start changes nothing
    assert await storage.councils.get("done") == result
    running = make_result(council_id="busy").request
    await storage.councils.save_started(running)
    assert await storage.councils.get("busy") is None
    assert [s.council_id for s in await storage.councils.history()] == ["done"]
    assert await storage.prune(datetime.now(UTC) + timedelta(days=1)) == 1  # running ones are kept
    assert await storage.councils.mark_interrupted() == 1
    interrupted = await storage.councils.get("busy")
    assert interrupted.request == running and interrupted.notices and interrupted.error.kind.value == "cancelled"


async def test_history_pagination(storage):
    now = datetime.now(UTC)
    for i in range(5):
        await storage.save_result(make_result(council_id=f"p{i}", created_at=now - timedelta(hours=i)))
    page1 = await storage.councils.history(limit=2)
    page2 = await storage.councils.history(limit=2, offset=2)
    page3 = await storage.councils.history(limit=2, offset=4)
    assert [s.council_id for s in page1 + page2 + page3] == ["p0", "p1", "p2", "p3", "p4"]
    assert page1[0].origin.channel_key == "slack:T1:C1" and page1[0].duration_s == 4.5
    assert await storage.councils.history(workspace_id="T1", platform=Platform.SLACK) != []
    assert await storage.councils.history(workspace_id="T2") == []


async def test_ballots_are_ordered_and_stats_count_every_call(storage):
    now = datetime.now(UTC)
    await storage.save_result(make_result(council_id="late", created_at=now, cost=1.0))
    await storage.save_result(make_result(council_id="early", created_at=now - timedelta(hours=1), cost=1.0))
    ballots = await storage.stats.ballot_orders()

    async def stored(council_id):  # that council's ballots in review order
        return [r.ballot_models for r in (await storage.councils.get(council_id)).reviews if r.ballot_models]

    assert ballots.orders == await stored("early") + await stored("late")
    assert [r.reviewer for r in (await storage.councils.get("early")).reviews if r.ballot_models] == [
        "m-a",
        "m-b",
        "m-c",
    ]
    stats = await storage.stats.model_stats(channel_id="C1")
    # m-b per council: answer 0.1 + review 0.1 (its synthesis has no cost) -> 0.4 over two councils.
    assert stats["m-b"].cost_usd == pytest.approx(0.4)
    assert stats["m-a"].average_latency_s == pytest.approx(2.0)
    assert stats["m-down"].cost_usd is None and stats["m-down"].average_latency_s is None
    assert stats["m-c"].first_places == 0 and stats["m-c"].mean_average_rank == pytest.approx(3.0)
    assert await storage.stats.model_stats(channel_id="nowhere") == {}


# --------------------------------------------------------------------------- events, hits, audit


async def test_rate_hits(storage):
    for at in (10.0, 20.0, 30.0):
        await storage.rate_limits.record(["user:u"], at)
    await storage.rate_limits.record(["user:v"], 15.0)
    assert await storage.rate_limits.hits_since("user:u", 15.0) == [20.0, 30.0]
    assert await storage.rate_limits.hits_since("user:u", 31.0) == []
    assert await storage.rate_limits.hits_since("user:u", 0) == [10.0, 20.0, 30.0]


async def test_admit_hits_records_only_when_every_window_has_room(storage):
    windows = [("user:u", 2), ("channel:c", 3)]
    assert await storage.rate_limits.admit(windows, 10.0, 0.0, forget_before=0.0) is None
    assert await storage.rate_limits.admit(windows, 11.0, 0.0, forget_before=0.0) is None
    full = await storage.rate_limits.admit(windows, 12.0, 0.0, forget_before=0.0)
    assert (full.key, full.limit, full.hits) == ("user:u", 2, [10.0, 11.0])
    assert await storage.rate_limits.hits_since("channel:c", 0) == [10.0, 11.0]  # the refusal recorded nothing
    assert await storage.rate_limits.admit([("user:w", 0)], 13.0, 0.0, forget_before=11.5) is None  # 0: unlimited
    assert await storage.rate_limits.hits_since("user:u", 0) == []  # older than forget_before: dropped


async def test_old_event_ids_are_forgotten_at_start_up(tmp_path):
    path = str(tmp_path / "e.db")
    async with await Storage.open(path) as s:
        assert await s.events.claim("slack", "new")
    db = sqlite3.connect(path)
    db.execute("INSERT INTO processed_events VALUES ('slack', 'old', ?)", (time.time() - 2 * 86400,))
    db.commit()
    db.close()
    async with await Storage.open(path) as s:
        assert await s.events.claim("slack", "old") is True  # forgotten, so claimable again
        assert await s.events.claim("slack", "new") is False


async def test_audit_log_newest_first_with_limit_and_filter(storage):
    for i in range(4):
        await storage.channels.audit("slack:T1:C1" if i % 2 == 0 else "slack:T1:C2", "U1", f"action{i}", {"i": i})
    assert [e.action for e in await storage.channels.audit_log()] == ["action3", "action2", "action1", "action0"]
    assert [e.action for e in await storage.channels.audit_log("slack:T1:C1", limit=1)] == ["action2"]
    entry = (await storage.channels.audit_log(limit=1))[0]
    assert entry.at.tzinfo is not None and entry.actor_id == "U1" and entry.detail == {"i": 3}


async def test_channel_settings_replace_and_none_members(storage):
    key = "discord:G1:C1"
    await storage.channels.put(ChannelSettings(channel_key=key, members=["a"], daily_budget_usd=2.5), "U1")
    await storage.channels.put(ChannelSettings(channel_key=key, chairman="b"), "U2")
    assert await storage.channels.get(key) == ChannelSettings(channel_key=key, chairman="b")


async def test_a_version_1_database_upgrades_in_place(tmp_path):
    path = str(tmp_path / "v1.db")
    v1 = tmp_path / "v1"
    v1.mkdir()
    (v1 / "0001_init.sql").write_text((MIGRATIONS_DIR / "0001_init.sql").read_text())
    async with await Storage.open(path, v1) as s:
        assert await s.schema_version() == 1
    db = sqlite3.connect(path)
    db.execute(
        "INSERT INTO councils (id, created_at, status, question, platform, channel_key, members, chairman, config) "
        "VALUES ('old', '2025-01-01T00:00:00.000000+00:00', 'ok', 'q', 'cli', 'cli:-:-', '[]', 'm', '{}')"
    )
    db.executemany(
        "INSERT INTO reviews (council_id, reviewer, shown_labels, ballot_labels, ballot_models, parse_status) "
        "VALUES ('old', ?, '[]', '[]', ?, 'complete')",
        [("r1", '["x", "y"]'), ("r2", '["y", "x"]')],
    )
    db.commit()
    db.close()
    async with await Storage.open(path) as s:
        assert await s.schema_version() == LATEST
        assert (await s.stats.ballot_orders()).orders == [["x", "y"], ["y", "x"]]  # r1's, then r2's
        result = make_result()
        await s.save_result(result)
        assert await s.councils.get(result.council_id) == result


# --------------------------------------------------------------------------- leaderboard totals

TOTALS_TABLES = ("ballot_counts", "ballot_councils", "model_totals")


async def snapshot_totals(storage):
    return {t: sorted(await rows(storage, f"SELECT * FROM {t}")) for t in TOTALS_TABLES}


async def test_running_totals_equal_a_rebuild_from_the_rows(storage):
    now = datetime.now(UTC)
    for i in range(6):
        await storage.save_result(
            make_result(council_id=f"t{i}", created_at=now - timedelta(days=40 * (i % 3)), cost=0.5 * i)
        )
    await storage.save_result(make_result(council_id="t1", created_at=now, cost=9.0))  # replaced, counted once
    running = make_result(council_id="busy").request
    await storage.councils.save_started(running)
    await storage.councils.mark_interrupted()
    await storage.prune(now - timedelta(days=50))  # t2, t5 (80 days old) leave the totals
    incremental = await snapshot_totals(storage)
    # Rebuild with the migration's own SQL (what an upgraded database starts from): same totals.
    rebuild = [
        s for s in split_statements((MIGRATIONS_DIR / "0004_leaderboard_totals.sql").read_text()) if "INSERT INTO" in s
    ]
    async with storage.db.transaction() as tx:
        for table in TOTALS_TABLES:
            await tx.execute(f"DELETE FROM {table}")
        for statement in rebuild:
            await tx.execute(statement)
    rebuilt = await snapshot_totals(storage)
    for table in TOTALS_TABLES:
        assert len(incremental[table]) == len(rebuilt[table])
        for a, b in zip(incremental[table], rebuilt[table]):
            assert a == pytest.approx(b), table


async def test_ballot_counts_are_the_stored_ballots_counted(storage):
    for i in range(4):
        await storage.save_result(make_result(council_id=f"b{i}"))
    orders = (await storage.stats.ballot_orders()).orders
    counted = await storage.stats.ballot_counts()
    assert sorted(zip(map(tuple, counted.orders), counted.counts)) == sorted(Counter(map(tuple, orders)).items())
    assert counted.councils == 4 == (await storage.stats.ballot_orders()).councils
    assert (await storage.stats.ballot_counts(channel_id="elsewhere")).counts == []


async def test_both_dialects_end_with_the_same_tables_and_columns(tmp_path, pg_server):
    async with await Storage.open(f"sqlite:///{tmp_path}/s.db") as s:
        tables = [r[0] for r in await rows(s, "SELECT name FROM sqlite_master WHERE type = 'table'")]
        sqlite_schema = {
            t: sorted(r[1] for r in await rows(s, f"PRAGMA table_info({t})")) for t in tables if t != "sqlite_sequence"
        }
        sqlite_version = await s.schema_version()
    async with await Storage.open(pg_server.new_database()) as s:
        columns = await rows(
            s, "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'public'"
        )
        pg_schema: dict[str, list[str]] = {}
        for table, column in columns:
            pg_schema.setdefault(table, []).append(column)
        pg_schema = {t: sorted(c) for t, c in pg_schema.items()}
        assert await s.schema_version() == sqlite_version == LATEST
    # The full-text index is each database's own (migrations/0018): SQLite's FTS5 table with its
    # shadow tables and row numbers, PostgreSQL's tsvector table.
    search = {t for t in [*pg_schema, *sqlite_schema] if t.startswith("council_search")}
    assert {t for t in search if t in pg_schema} == {"council_search"}
    assert {"council_search", "council_search_rows"} <= {t for t in search if t in sqlite_schema}
    assert {t: c for t, c in pg_schema.items() if t not in search} == {
        t: c for t, c in sqlite_schema.items() if t not in search
    }


async def test_a_transaction_cancelled_while_it_begins_leaves_the_sqlite_connection_usable(tmp_path):
    """A task cancelled while its BEGIN runs in the connection's thread (a lease renewal at
    shutdown) must not leave that transaction open: the next one would fail with "cannot start a
    transaction within a transaction", and its writes would hang on an uncommitted transaction."""
    async with await Storage.open(f"sqlite:///{tmp_path}/c.db") as s:
        renewal = asyncio.create_task(s.owners.renew("owner-1", 30.0))
        await asyncio.sleep(0)  # it holds the connection and waits for its BEGIN
        renewal.cancel()
        await asyncio.gather(renewal, return_exceptions=True)
        await s.owners.drop("owner-1")  # what a clean shutdown does next
        await s.owners.renew("owner-2", 30.0)
        assert await rows(s, "SELECT owner_id FROM council_owners") == [("owner-2",)]
