"""Faults of the database under a running council (issue 37): PostgreSQL restarted, SQLite's disk
full or its file read-only, another process holding SQLite's write lock."""

from __future__ import annotations

import asyncio
import sys
import time

import psycopg
import pytest

from tests.conftest import MEMBERS
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
