"""A rolling upgrade on one PostgreSQL (issue 37): the previous release's code (a git worktree of
PREVIOUS_RELEASE, on PYTHONPATH, same venv) and this one share a database.

- this release migrates the database (additively) under a running previous-release worker, which
  goes on running the councils this release queues, each answered once;
- the previous release started again on the upgraded database refuses in one line naming both
  schema versions;
- this release's worker meeting a job from a newer payload version leaves it queued (never failed,
  dropped or half-run) and runs it once a worker that can read it is there.
"""

from __future__ import annotations

import asyncio
import shutil
import subprocess

import aiohttp
import pytest

from core.storage import Storage
from core.storage.migrations import migration_files
from tests.council_process import ROOT, CouncilProcess
from tests.test_durable_processes import (
    QUESTIONS,
    answers_in,
    bot_env,
    fake,  # noqa: F401 (fixture)
    llm_slow_reviews,  # noqa: F401 (fixture)
    send,
    until_settled,
    waited,
)
from tests.test_slack_run import answers, mention
from tests.test_telemetry_durable import Intake

pytestmark = pytest.mark.slow
# main when rolling upgrades were written (schema version 14): the release before this one.
PREVIOUS_RELEASE = "8e1c286ad233672d1bbf324eca0dd8d125a13006"


@pytest.fixture(scope="module")
def previous_release(tmp_path_factory):
    """The previous release's tree, checked out from this repository's history."""
    tree = tmp_path_factory.mktemp("previous") / "tree"
    added = subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(tree), PREVIOUS_RELEASE],
        capture_output=True,
        check=False,
    )
    if added.returncode != 0:
        pytest.skip(f"no worktree of {PREVIOUS_RELEASE[:10]}: {added.stderr.decode().strip()}")
    for module in (ROOT / "core").glob("_ranking*.so"):
        shutil.copy(module, tree / "core")
    yield tree
    subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], check=False)


async def status_of(database_url: str, question: str) -> tuple[str, int, str | None]:
    """(council status, its job's payload version, its procrastinate job's status)."""
    async with await Storage.open(database_url) as storage:
        rows = await storage.db.fetchall(
            """SELECT c.status, j.payload_version, (SELECT p.status FROM procrastinate_jobs p
               WHERE p.args ->> 'council_id' = c.id ORDER BY p.id DESC LIMIT 1)
               FROM councils c JOIN council_jobs j ON j.council_id = c.id WHERE c.question = ?""",
            (question,),
        )
    assert rows, question
    return str(rows[0][0]), int(rows[0][1]), rows[0][2]


async def set_payload_version(database_url: str, question: str, version: int) -> None:
    async with await Storage.open(database_url) as storage:
        await storage.db.execute(
            """UPDATE council_jobs SET payload_version = ?
               WHERE council_id IN (SELECT id FROM councils WHERE question = ?)""",
            (version, question),
        )


async def test_previous_release_and_this_one_on_one_database(
    pg_server,
    previous_release,
    llm_slow_reviews,  # noqa: F811
    fake,  # noqa: F811
    tmp_path,
):
    llm, database_url = llm_slow_reviews, pg_server.new_database()
    env = bot_env(llm, fake, database_url)
    old_env = env | {"PYTHONPATH": str(previous_release)}
    old_worker = CouncilProcess(["worker"], old_env, tmp_path / "old-worker.log", cwd=previous_release)
    intake = Intake(env, tmp_path / "intake.log")
    new_worker = CouncilProcess(["worker"], env, tmp_path / "new-worker.log")
    async with aiohttp.ClientSession() as session:
        try:
            await old_worker.start()
            await old_worker.until(lambda: "Starting worker" in old_worker.log.read_text(), 60)
            await intake.start(session)  # this release: migrates the database under the old worker

            ts, body = mention(fake, QUESTIONS[0], "EvOld")
            await send(session, intake, body)
            await waited(fake, lambda: answers_in(fake, ts) >= 1, 60)  # run by the previous release
            await until_settled(database_url)
            assert answers_in(fake, ts) == 1

            await old_worker.stop()
            refused = CouncilProcess(["worker"], old_env, tmp_path / "old-again.log", cwd=previous_release)
            await refused.start()
            assert refused.process is not None
            assert await asyncio.wait_for(refused.process.wait(), 60) != 0
            newest = migration_files()[-1][0]
            lines = [line for line in refused.log.read_text().splitlines() if line.strip()]
            assert "Traceback" not in refused.log.read_text()
            assert any(f"schema version {newest}" in line and "only knows up to 14" in line for line in lines), lines

            ts2, body2 = mention(fake, QUESTIONS[1], "EvNew")
            await send(session, intake, body2)
            # As if a newer release had queued it (no worker runs yet).
            await waited(fake, lambda: intake.log.read_text().count("Deferred") >= 2, 30)
            await set_payload_version(database_url, QUESTIONS[1], 99)
            await new_worker.start()
            left = "left for a newer worker"
            await new_worker.until(lambda: new_worker.log.read_text().count(left) >= 2, 60)  # met it twice
            status, version, job_status = await status_of(database_url, QUESTIONS[1])
            assert (status, version) == ("running", 99) and job_status in ("todo", "doing")
            assert answers_in(fake, ts2) == 0 and llm.requests_for(stage=1)[-1].user != QUESTIONS[1]

            await set_payload_version(database_url, QUESTIONS[1], 1)  # a worker that reads it is here
            await waited(fake, lambda: answers_in(fake, ts2) >= 1, 60)
            await until_settled(database_url)
            assert [answers_in(fake, ts), answers_in(fake, ts2)] == [1, 1] and len(answers(fake)) == 2
        finally:
            for process in (old_worker, intake, new_worker):
                await process.stop()
