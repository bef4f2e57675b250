"""Faults of the database under a running council (issue 37): PostgreSQL restarted, SQLite's disk
full or its file read-only, another process holding SQLite's write lock."""

from __future__ import annotations

import asyncio
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import psycopg
import pytest

from core.storage import Storage
from core.storage.migrations import migration_files
from tests.conftest import MEMBERS
from tests.factories import make_result
from tests.llm_server import council_member
from tests.test_cli import cli_env

pytestmark = pytest.mark.slow


def slow_members(llm, latency_s: float) -> None:
    for name in MEMBERS:
        llm.script(
            name,
            council_member(f"{name} says: 42.", synthesis=f"Final answer by {name}: 42.", latency_s=latency_s),
        )


async def migrated(env, cwd) -> None:
    """The schema in place first: the fault must hit the council, not the migrations."""
    process = await asyncio.create_subprocess_exec(sys.executable, "-m", "bot.cli", "history", cwd=cwd, env=env)
    assert await process.wait() == 0


async def run_ask(env, cwd, *, during=None, at_s: float = 1.5):
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bot.cli",
        "ask",
        "What is six times seven?",
        cwd=cwd,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    if during is not None:
        await asyncio.sleep(at_s)
        await asyncio.to_thread(during)
    out, err = await asyncio.wait_for(process.communicate(), 90)
    return process.returncode, out.decode(), err.decode()


async def test_postgresql_restarted_mid_council(tmp_path, llm, pg_server):
    url = pg_server.new_database()
    env = cli_env(llm, tmp_path, DATABASE_URL=url)
    await migrated(env, tmp_path)
    slow_members(llm, 1.0)
    started = time.time()
    code, out, err = await run_ask(env, tmp_path, during=pg_server.restart)
    assert "Traceback" not in out + err, err
    assert code == 0, err
    assert "Final answer by beta: 42." in out
    assert "could not be saved" not in out + err
    with psycopg.connect(url) as conn:
        rows = conn.execute("SELECT status FROM councils").fetchall()
        restarted = conn.execute("SELECT extract(epoch FROM pg_postmaster_start_time())").fetchone()[0]
    assert float(restarted) > started + 1  # the server did restart while the council ran
    assert rows == [("ok",)]  # stored once, finished


@pytest.fixture
def small_disk(tmp_path):
    """A 4 MB tmpfs of our own (root only; skipped where mounting is refused)."""
    mount_point = tmp_path / "disk"
    mount_point.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mount_point)], capture_output=True, check=False
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip() or done.returncode}")
    yield mount_point
    subprocess.run(["umount", "-l", str(mount_point)], check=False)


def fill(directory: Path) -> Path:
    """Every free byte of the file system taken by one file."""
    filler = directory / "filler"
    with filler.open("wb") as out:
        try:
            while True:
                out.write(b"\0" * 65536)
                out.flush()
        except OSError:
            pass
    return filler


def chattr(flag: str, files: list[str]) -> bool:
    return subprocess.run(["chattr", flag, *files], capture_output=True, check=False).returncode == 0


def integrity(path: Path) -> str:
    with sqlite3.connect(path) as conn:
        return conn.execute("PRAGMA integrity_check").fetchone()[0]


def stored(path: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(path) as conn:
        return conn.execute("SELECT id, status FROM councils ORDER BY created_at").fetchall()


async def test_sqlite_disk_fills_mid_council(tmp_path, llm, small_disk):
    database = small_disk / "council.db"
    env = cli_env(llm, tmp_path, DATABASE_URL=f"sqlite:///{database}")
    await migrated(env, tmp_path)
    slow_members(llm, 0.7)
    filler: list[Path] = []
    code, out, err = await run_ask(env, tmp_path, during=lambda: filler.append(fill(small_disk)))
    assert "Traceback" not in out + err, err
    assert code == 0, err
    assert "Final answer by beta: 42." in out
    notice = [line for line in (out + err).splitlines() if "could not be saved" in line]
    assert len(notice) == 1 and "database or disk is full" in notice[0], out + err

    filler[0].unlink()  # space is back
    assert integrity(database) == "ok"
    assert [status for _, status in stored(database)] in (["running"], [])  # never half a result
    code, out, err = await run_ask(env, tmp_path)
    assert code == 0 and "could not be saved" not in out + err, err
    assert integrity(database) == "ok"
    assert "ok" in [status for _, status in stored(database)]


async def test_sqlite_read_only_file_is_refused_in_one_line(tmp_path, llm):
    """The database file made read-only (immutable: root ignores file modes) before a council: the
    command refuses in one line naming the file and SQLite's reason, and the file is left whole.
    (Made read-only under a running process, the open connection keeps writing: Linux checks
    at open; a file system remounted read-only fails the writes like a full disk, above.)"""
    database = tmp_path / "council.db"
    env = cli_env(llm, tmp_path, DATABASE_URL=f"sqlite:///{database}")
    await migrated(env, tmp_path)
    files = [str(p) for p in tmp_path.glob("council.db*")]
    if not chattr("+i", files):
        pytest.skip("chattr +i is refused here")
    try:
        code, out, err = await run_ask(env, tmp_path)
    finally:
        chattr("-i", files)
    assert "Traceback" not in out + err, err
    assert code == 2
    assert err.strip().splitlines() == [
        f"council: DATABASE_URL: cannot open the database {database} (attempt to write a readonly database). "
        "Point DATABASE_URL at a writable file, e.g. sqlite:////absolute/path/council.db."
    ]
    assert integrity(database) == "ok"


async def test_a_database_newer_than_this_release_is_refused_in_one_line(tmp_path, llm):
    database = tmp_path / "council.db"
    env = cli_env(llm, tmp_path, DATABASE_URL=f"sqlite:///{database}")
    await migrated(env, tmp_path)
    known = migration_files()[-1][0]
    with sqlite3.connect(database) as conn:
        conn.execute("INSERT INTO schema_version VALUES (?, 'from_the_future', '2030-01-01')", (known + 1,))
    code, _, err = await run_ask(env, tmp_path)
    assert code == 2
    assert err.strip().splitlines() == [
        f"council: DATABASE_URL: the database {database} has schema version {known + 1}, but this version of "
        f"the bot only knows up to {known}: upgrade the bot (or point DATABASE_URL elsewhere)."
    ]


async def test_sqlite_locked_by_another_process_is_waited_for(tmp_path, llm):
    """Another process holds SQLite's write lock for 7 s (longer than the old 5 s busy timeout)
    when the council starts: it waits for the lock (DATABASE_WAIT_S) instead of failing."""
    database = tmp_path / "council.db"
    env = cli_env(llm, tmp_path, DATABASE_URL=f"sqlite:///{database}")
    await migrated(env, tmp_path)
    holder = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        "import sqlite3, sys, time\n"
        f"conn = sqlite3.connect({str(database)!r}, isolation_level=None)\n"
        "conn.execute('BEGIN IMMEDIATE'); print('locked', flush=True); time.sleep(7); conn.execute('COMMIT')",
        stdout=asyncio.subprocess.PIPE,
    )
    assert holder.stdout is not None
    assert (await holder.stdout.readline()).strip() == b"locked"
    code, out, err = await run_ask(env, tmp_path)
    await holder.wait()
    assert "locked" not in err and "Traceback" not in err, err
    assert code == 0 and "could not be saved" not in out + err, err
    assert [status for _, status in stored(database)] == ["ok"]


def terminate_connections(url: str) -> int:
    """Every other connection to the database killed by the server (AdminShutdown, 57P01)."""
    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        ).fetchall()
    return len(rows)


async def test_postgresql_connections_killed_between_writes(pg_server):
    """The server kills the pool's connections (an operator's pg_terminate_backend, a proxy's
    idle cut): the next writes and reads take fresh connections and succeed."""
    url = pg_server.new_database()
    async with await Storage.open(url, wait_s=10) as storage:
        first = make_result(council_id="c0ffee0000000001")
        await storage.save_result(first)
        assert terminate_connections(url) >= 1
        second = make_result(council_id="c0ffee0000000002")
        await storage.save_result(second)  # a transaction (@reconnecting)
        assert terminate_connections(url) >= 1
        assert await storage.councils.get(second.council_id) is not None  # a plain read
        assert terminate_connections(url) >= 1
        await storage.owners.renew("owner", 30.0)  # a plain write
        rows = await storage.db.fetchall("SELECT count(*) FROM councils")
        assert rows[0][0] == 2
