"""The person at the terminal (issue 22, item 6): not rate-limited like a chat user, sees running
and interrupted councils in `council history` (which writes nothing), and reads a failed
chairman's note first. Real `council` subprocesses against the scripted LLM server."""

from __future__ import annotations

import asyncio
import re
import sqlite3
import time

import pytest

from core.errors import BudgetExceeded, RateLimited
from core.models import Origin, Platform
from core.service import CouncilService
from tests.conftest import MEMBERS, make_settings
from tests.council_process import CouncilProcess
from tests.llm_server import ByStage, Hang, Reply, council_member
from tests.test_cli import cli_env, council

LIMITS = {"RATE_LIMIT_USER_PER_HOUR": "1", "RATE_LIMIT_CHANNEL_PER_HOUR": "1"}
SLACK_USER = Origin(platform=Platform.SLACK, workspace_id="T1", channel_id="C1", user_id="U1")


async def test_the_terminal_operator_is_not_rate_limited_but_chat_users_are(tmp_path, llm):
    for question in ("One?", "Two?", "Three?"):
        code, out, err = await council(tmp_path, llm, "ask", question, extra_env=LIMITS)
        assert code == 0, err
        assert "Final answer" in out
    settings = make_settings(llm, tmp_path, DATABASE_URL=f"sqlite:///{tmp_path}/cli.db", RATE_LIMIT_USER_PER_HOUR=1)
    service = await CouncilService.open(settings)
    try:
        await service.ask("A chat user's first?", SLACK_USER)
        with pytest.raises(RateLimited, match=r"You have asked 1 council in the last hour \(limit 1\)"):
            await service.start_council("And a second?", SLACK_USER)
        api_user = Origin(platform=Platform.API, channel_id="team-key", user_id="team-key")
        await service.ask("An API user's first?", api_user)
        with pytest.raises(RateLimited):
            await service.start_council("And a second?", api_user)
    finally:
        await service.aclose()


async def test_the_daily_budget_still_applies_at_the_terminal(tmp_path, llm):
    for name in MEMBERS:
        llm.script(name, council_member(f"{name} says 42.", synthesis=f"Final answer by {name}: 42.", cost=0.01))
    budget = {"COUNCIL_DAILY_BUDGET_USD": "0.05"}
    code, _, err = await council(tmp_path, llm, "ask", "First?", extra_env=budget)
    assert code == 0, err
    code, out, err = await council(tmp_path, llm, "ask", "Second?", extra_env=budget)
    assert code == 2 and out == ""
    assert "daily budget of $0.05 is spent" in err and len(err.strip().splitlines()) == 1
    # The same rule, asked in process: BudgetExceeded for the terminal as for anyone.
    service = await CouncilService.open(
        make_settings(llm, tmp_path, DATABASE_URL=f"sqlite:///{tmp_path}/cli.db", COUNCIL_DAILY_BUDGET_USD=0.05)
    )
    try:
        with pytest.raises(BudgetExceeded):
            await service.start_council("Third?", Origin(platform=Platform.CLI, channel_id="terminal"))
    finally:
        await service.aclose()


# --------------------------------------------------------------------------- history


def _rows(tmp_path) -> tuple[list[tuple], list[tuple]]:
    """The councils (id, status) and the owners' leases, read straight from the database file."""
    with sqlite3.connect(tmp_path / "cli.db") as db:
        councils = db.execute("SELECT id, status FROM councils ORDER BY created_at").fetchall()
        owners = db.execute("SELECT owner_id, lease_until FROM council_owners").fetchall()
    return councils, owners


async def test_history_lists_running_and_interrupted_councils_without_writing(tmp_path, llm):
    code, _, err = await council(tmp_path, llm, "ask", "A finished one?")
    assert code == 0, err
    llm.script("gamma", ByStage(Hang(), Reply("unused"), Reply("unused")))  # holds the next council in stage 1
    asking = CouncilProcess(
        ["ask", "--quiet", "Still thinking?"],
        cli_env(llm, tmp_path, COUNCIL_LEASE_S="1", COUNCIL_TIMEOUT_S="600", COUNCIL_GRACE_S="600"),
        tmp_path / "asking.log",
        cwd=tmp_path,
    )
    await asking.start()
    try:
        await asking.until(lambda: llm.requests_for("gamma", stage=1) and len(_rows(tmp_path)[0]) >= 2, 30)
        code, out, err = await council(tmp_path, llm, "history")
        assert code == 0, err
        lines = out.strip().splitlines()
        assert len(lines) == 2 and "· running — Still thinking?" in lines[0] and "A finished one?" in lines[1]
    finally:
        asking.kill9()  # no clean shutdown: the lease is left to run out
        assert asking.process is not None
        await asking.process.wait()

    councils, owners = _rows(tmp_path)
    running_id = councils[-1][0]
    await asyncio.sleep(max(lease_until for _, lease_until in owners) - time.time() + 0.05)  # past the lease
    code, out, err = await council(tmp_path, llm, "history")
    assert code == 0, err
    assert out.splitlines()[0].startswith(running_id) and "interrupted (its process stopped)" in out.splitlines()[0]
    assert _rows(tmp_path) == (councils, owners)  # nothing written: still running, the dead lease still there
    assert councils[-1][1] == "running" and owners


# --------------------------------------------------------------------------- a failed chairman


async def test_a_stand_ins_answer_starts_with_a_heading_naming_it_and_the_chairmans_failure(tmp_path, llm):
    llm.script("beta", council_member("beta says 42.", synthesis="The answer to this question is:"))
    code, out, err = await council(tmp_path, llm, "ask", "Why?")
    assert code == 0, err
    first, second, *_ = out.splitlines()
    stand_in = first.split("Final answer by ")[1].split(",")[0]
    assert first == f"━━ Final answer by {stand_in}, standing in for the chairman ━━" and stand_in in ("alpha", "gamma")
    assert second.startswith("⚠ The chairman (beta) failed: bad_response: its synthesis was unusable: it stops after")
    assert out.count("The chairman (beta) failed") == 1
    assert f"Final answer by {stand_in}: 42." in out
    assert f"── {stand_in}, standing in for the chairman ──\nFinal answer by {stand_in}: 42." in err  # streamed live

    # "Details: council show ID", or the venv's own script when `council` is not on the PATH.
    council_id = re.search(r"Details: \S*council show (\w+)", out).group(1)
    code, shown, err = await council(tmp_path, llm, "show", council_id)
    assert code == 0, err
    after_question = shown.split("━━ Final answer", 1)
    assert "failed" not in after_question[0]  # nothing about the failure before the answer's heading
    assert after_question[1].startswith(f" by {stand_in}, standing in for the chairman ━━\n⚠ The chairman (beta)")


async def test_the_terminal_shows_the_council_without_the_servers_log_lines(tmp_path, llm):
    """A server logs a line per council at INFO; at the terminal those lines would only interleave
    with the council it shows, so they appear only when LOG_LEVEL (or -v) asks for them."""
    for blank in ({}, {"LOG_LEVEL": ""}):  # unset, or left empty as in .env.example
        code, out, err = await council(tmp_path, llm, "ask", "Why?", extra_env=blank)
        assert code == 0, err
        assert "Final answer" in out and " INFO " not in err and "started: cli" not in err
    code, out, err = await council(tmp_path, llm, "ask", "Why now?", extra_env={"LOG_LEVEL": "INFO"})
    assert code == 0, err
    assert "started: cli" in err and "finished: ok in" in err
