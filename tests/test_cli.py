"""The `council` command, run as a real subprocess against the scripted server."""

import asyncio
import json
import os
import sys
from pathlib import Path

from tests.conftest import MEMBERS

ROOT = Path(__file__).resolve().parent.parent


def cli_env(llm, tmp_path, **extra: str) -> dict[str, str]:
    """A `council` command's environment: the scripted server, cli.db in `tmp_path`, none of ours."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LLM_", "COUNCIL_", "OPENROUTER_", "DATABASE_URL"))}
    env.update(
        LLM_BASE_URL=llm.base_url,
        LLM_API_KEY="cli-test-key",
        COUNCIL_MODELS=",".join(MEMBERS),
        COUNCIL_CHAIRMAN="beta",
        DATABASE_URL=f"sqlite:///{tmp_path}/cli.db",
        PYTHONPATH=str(ROOT),
    )
    env.update(extra)
    return env


async def council(tmp_path, llm, *args, extra_env=None):
    env = cli_env(llm, tmp_path, **(extra_env or {}))
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bot.cli",
        *args,
        cwd=tmp_path,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), 60)
    return process.returncode, out.decode(), err.decode()


async def test_ask_json_is_the_classic_shape_and_is_stored(tmp_path, llm):
    code, out, err = await council(tmp_path, llm, "ask", "--json", "What is six times seven?")
    assert code == 0, err
    document = json.loads(out)
    assert document["stage3"] == document["stage3"] | {"model": "beta", "response": "Final answer by beta: 42."}
    assert {s["model"] for s in document["stage1"]} == set(MEMBERS)
    assert all(isinstance(s["parsed_ranking"], list) for s in document["stage2"])
    assert document["metadata"]["aggregate_rankings"][0]["average_rank"] is not None
    assert "cli-test-key" not in out + err

    code, out, _ = await council(tmp_path, llm, "history")
    assert code == 0 and document["id"] in out
    code, out, _ = await council(tmp_path, llm, "show", document["id"])
    assert code == 0 and "review by alpha" in out and "Final answer by beta" in out
    target = tmp_path / "export.md"
    code, _, _ = await council(tmp_path, llm, "export", document["id"], "-o", str(target))
    assert code == 0 and "## Aggregate ranking" in target.read_text()


async def test_ask_shows_live_progress_on_stderr(tmp_path, llm):
    code, out, err = await council(tmp_path, llm, "ask", "Why is the sky blue?")
    assert code == 0, err
    assert "Stage 1" in err and "Stage 2" in err and "Stage 3" in err
    assert "alpha answered" in err and "review by gamma" in err
    assert "Final answer by the chairman, beta" in out and "Aggregate ranking" in out


async def test_the_terminal_prints_a_long_answer_whole(tmp_path, llm):
    """The answer the chat apps cut (tests/long_answer.py) has no limit in a terminal: it is printed whole."""
    from tests.llm_server import ByStage, Reply, council_member
    from tests.long_answer import LONG_ANSWER

    llm.script("beta", ByStage(Reply("beta answers."), council_member("x").stage2, Reply(LONG_ANSWER)))
    code, out, err = await council(tmp_path, llm, "ask", "Write a long report")
    assert code == 0, err
    assert LONG_ANSWER.strip() in out and "cut here" not in out


async def test_the_details_line_is_a_command_that_works_and_show_accepts_a_unique_id_prefix(tmp_path, llm):
    code, out, err = await council(tmp_path, llm, "ask", "What is six times seven?")
    assert code == 0, err
    details = next(line for line in out.splitlines() if line.startswith("Details: "))
    command, council_id = details.removeprefix("Details: ").rsplit(" show ", 1)
    # This Python's own `council` script (or `python -m bot.cli` without one), never a bare name
    # that the PATH may not hold.
    assert command == "council" or command.endswith(("/council", " -m bot.cli")), command
    code, out, err = await council(tmp_path, llm, "show", council_id[:8])
    assert code == 0 and "Final answer by" in out and council_id in out, err
    assert "Details:" not in out  # `council show` does not point at itself
    code, _, err = await council(tmp_path, llm, "export", council_id[:6].upper(), "-o", str(tmp_path / "c.md"))
    assert code == 0 and council_id in (tmp_path / "c.md").read_text(), err


async def test_an_id_prefix_that_matches_several_councils_or_too_little_is_one_clear_line(tmp_path, llm):
    from core.storage import Storage
    from tests.factories import make_result

    async with await Storage.open(f"sqlite:///{tmp_path}/cli.db") as storage:
        for council_id in ("abcd000000000001", "abcd000000000002", "abce000000000003"):
            await storage.save_result(make_result(council_id=council_id))
    code, out, err = await council(tmp_path, llm, "show", "abcd")
    assert code != 0 and err.strip() == "council: `abcd` starts more than one council's id: give more of it.", err
    code, out, err = await council(tmp_path, llm, "show", "abce")
    assert code == 0 and "abce000000000003" in out, err
    code, _, err = await council(tmp_path, llm, "export", "abc")
    assert code != 0 and len(err.strip().splitlines()) == 1 and "4 or more hex digits" in err, err
    code, _, err = await council(tmp_path, llm, "show", "abcf")
    assert code != 0 and "No council with id `abcf`" in err, err


async def test_empty_question_is_refused_with_exit_2(tmp_path, llm):
    code, _, err = await council(tmp_path, llm, "ask", "   ")
    assert code == 2 and "Ask a question" in err


async def test_doctor_reports_unknown_models(tmp_path, llm):
    code, out, _ = await council(tmp_path, llm, "doctor", extra_env={"COUNCIL_MODELS": "alpha,typo-model"})
    assert code == 1 and "typo-model" in out and "database" in out


async def test_doctor_checks_each_model_of_a_seat(tmp_path, llm):
    code, out, _ = await council(tmp_path, llm, "doctor", extra_env={"COUNCIL_MODELS": "alpha|typo-backup,beta"})
    assert code == 1 and "unknown: typo-backup" in out and "alpha|" not in out


async def test_leaderboard_and_prune(tmp_path, llm):
    for _ in range(2):
        assert (await council(tmp_path, llm, "ask", "-q", "Q?"))[0] == 0
    code, out, err = await council(tmp_path, llm, "leaderboard", "--rounds", "50", "--png", str(tmp_path / "board.png"))
    assert code == 0, err
    assert "alpha" in out and "Bradley-Terry" in out
    assert (tmp_path / "board.png").stat().st_size > 1000
    code, out, _ = await council(tmp_path, llm, "usage")
    assert code == 0 and "total: 2 councils" in out
    code, out, _ = await council(tmp_path, llm, "prune", "--older-than", "0d")
    assert code == 0 and "removed 2" in out


async def test_history_show_and_export(tmp_path, llm):
    code, out, _ = await council(tmp_path, llm, "ask", "--json", "What is six times seven?")
    council_id = json.loads(out)["id"]
    code, out, err = await council(tmp_path, llm, "history")
    assert code == 0, err
    assert council_id in out and "What is six times seven?" in out
    code, out, err = await council(tmp_path, llm, "show", council_id)
    assert code == 0, err
    assert "Final answer by" in out and "Extracted ballot" in out
    code, out, err = await council(
        tmp_path, llm, "export", council_id, "--format", "json", "-o", str(tmp_path / "c.json")
    )
    assert code == 0, err
    document = json.loads((tmp_path / "c.json").read_text())
    assert document["id"] == council_id and len(document["stage2"]) == len(MEMBERS)
    code, out, err = await council(tmp_path, llm, "show", "0000000000000000")
    assert code != 0 and "No council with id" in err


async def test_feedback_shows_in_show_history_leaderboard_and_feedback(tmp_path, llm):
    from core.models import Origin
    from core.service import CouncilService
    from tests.conftest import make_settings

    code, out, err = await council(tmp_path, llm, "ask", "--json", "What is six times seven?")
    assert code == 0, err
    council_id = json.loads(out)["id"]
    # Two readers vote (as the chat adapters would) in the same database the CLI uses.
    settings = make_settings(llm, tmp_path, DATABASE_URL=f"sqlite:///{tmp_path}/cli.db", COUNCIL_CHAIRMAN="beta")
    async with await CouncilService.open(settings) as service:
        ada, bob = Origin(user_id="U1", user_name="ada"), Origin(user_id="U2", user_name="bob")
        await service.feedback.vote(council_id, ada, "good", admin=True)
        await service.feedback.vote(council_id, bob, "bad", admin=True)
        await service.feedback.comment(council_id, bob, "Too terse.", admin=True)

    code, out, err = await council(tmp_path, llm, "feedback", "--days", "3")
    assert code == 0, err
    assert "2 vote(s) in the last 3 day(s): 👍 1 · 👎 1" in out
    assert f"👎 {council_id} bob" in out and "Too terse." in out and "six times seven" in out
    code, out, _ = await council(tmp_path, llm, "show", council_id)
    assert code == 0 and "Readers' feedback: 👍 1 · 👎 1" in out and "👎 bob" in out and "Too terse." in out
    code, out, _ = await council(tmp_path, llm, "history")
    assert code == 0 and "👍 1 👎 1" in out
    code, out, _ = await council(tmp_path, llm, "leaderboard", "--rounds", "20")
    assert code == 0 and "👍 as chairman" in out and "50% (1/2)" in out
    code, _, err = await council(tmp_path, llm, "feedback", "--days", "0")
    assert code != 0 and "--days must be at least 1." in err and "Traceback" not in err
