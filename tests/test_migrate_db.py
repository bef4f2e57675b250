"""`council migrate-db` (a real subprocess) from SQLite into a real PostgreSQL and back, and the
doctor's database line on PostgreSQL (backend and schema version, never the password)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from core.models import ChannelSettings
from core.storage import Storage
from tests.factories import make_result
from tests.test_cli import council


async def fill(url: str) -> list:
    now = datetime.now(UTC)
    results = [make_result(council_id=f"c{i:015d}", created_at=now - timedelta(hours=i)) for i in range(3)]
    async with await Storage.open(url) as s:
        for result in results:
            await s.save_result(result)
        await s.channels.update("slack:T1:C1", {"members": ["m-a", "m-b"]}, "U1", "set_members")
        await s.channels.update("slack:T1:C1", {"chairman": "m-b"}, "U2", "set_chairman")
        await s.events.claim("slack", "Ev1")
        await s.rate_limits.record(["user:slack:T1:U1"], 100.0)
        await s.messages.record("slack", "C1", "1.1", results[0].council_id, "question")
        await s.messages.record("slack", "C1", "1.2", results[0].council_id, "answer")
    return results


MAPPED = {"1.1": "question", "1.2": "answer"}


async def mapped(s: Storage) -> dict[str, str]:
    return {mid: ref.role for mid, ref in (await s.messages.lookup("slack", "C1", ["1.1", "1.2"])).items()}


async def test_history_moves_from_sqlite_to_postgresql_and_back(tmp_path, llm, pg_server):
    source = f"sqlite:///{tmp_path}/old.db"
    target = pg_server.new_database()
    results = await fill(source)
    code, out, err = await council(tmp_path, llm, "migrate-db", "--from", source, "--to", target)
    assert code == 0, err
    assert "3 councils" in out and "2 audit_log" in out and "1 processed_events" in out
    assert "2 council_messages" in out
    async with await Storage.open(target) as s:
        for result in results:
            assert await s.councils.get(result.council_id) == result
        assert await s.channels.get("slack:T1:C1") == ChannelSettings(
            channel_key="slack:T1:C1", members=["m-a", "m-b"], chairman="m-b"
        )
        assert [e.action for e in await s.channels.audit_log()] == ["set_chairman", "set_members"]
        assert await s.events.claim("slack", "Ev1") is False  # a retry after the move still starts nothing
        assert await s.rate_limits.hits_since("user:slack:T1:U1", 0) == [100.0]
        assert await mapped(s) == MAPPED
        # The copy goes on as history: new councils and audit entries join it.
        await s.save_result(make_result(council_id="after-the-move"))
        await s.channels.audit("slack:T1:C1", "U3", "reset", {})
        assert (await s.channels.audit_log(limit=1))[0].actor_id == "U3"

    code, _, err = await council(tmp_path, llm, "migrate-db", "--from", source, "--to", target)
    assert code == 2 and "--merge" in err and "Traceback" not in err

    extra = make_result(council_id="only-in-sqlite")
    async with await Storage.open(source) as s:
        await s.save_result(extra)
    code, out, err = await council(tmp_path, llm, "migrate-db", "--from", source, "--to", target, "--merge")
    assert code == 0, err
    assert "1 councils" in out and "3 councils were already there" in out
    assert "0 audit_log" in out and "0 rate_hits" in out and "0 channel_settings" in out
    assert "0 council_messages" in out
    async with await Storage.open(target) as s:
        assert await s.councils.get("only-in-sqlite") == extra
        assert len(await s.councils.history(limit=100)) == 5

    back = f"sqlite:///{tmp_path}/back.db"
    code, out, err = await council(tmp_path, llm, "migrate-db", "--from", target, "--to", back)
    assert code == 0, err
    async with await Storage.open(back) as s:
        assert await s.councils.get(results[0].council_id) == results[0]
        assert len(await s.channels.audit_log()) == 3
        assert await mapped(s) == MAPPED


async def test_doctor_names_the_backend_and_hides_the_password(tmp_path, llm, pg_server):
    url = pg_server.new_database().replace("council@", "council:s3cret-pass@")
    _, out, err = await council(tmp_path, llm, "doctor", extra_env={"DATABASE_URL": url})
    line = next(line for line in out.splitlines() if "database" in line)
    assert "postgresql" in line and "schema v" in line and "council:***@" in line, out
    assert "s3cret-pass" not in out + err


@pytest.mark.slow
async def test_an_unreachable_postgresql_is_one_clear_line(tmp_path, llm):
    url = "postgresql://council:s3cret-pass@127.0.0.1:9/nowhere"
    code, out, err = await council(tmp_path, llm, "migrate-db", "--from", url, "--to", f"sqlite:///{tmp_path}/x.db")
    assert code == 2 and "cannot connect to postgresql://council:***@127.0.0.1:9/nowhere" in err
    assert "s3cret-pass" not in out + err and "Traceback" not in err
