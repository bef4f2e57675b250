"""Refine, lenses and Self-MoA from the terminal: `council ask` and `council show` as real subprocesses
against the scripted server, and what the database keeps of the rounds."""

from __future__ import annotations

import json
import sqlite3

from tests.llm_server import REVISION, Reply
from tests.test_cli import council

ALPHA = "The capital of Australia is Canberra. It was chosen in 1908 as a compromise between Sydney and Melbourne."
GAMMA = "The capital of Australia is Sydney. It is the largest city of the country and its financial centre."
REVISED = "The capital of Australia is Canberra. It was chosen in 1908 as a compromise between Sydney and Melbourne."


def australia(llm) -> None:
    """alpha is right, gamma wrong; gamma moves toward alpha in the first round (the others keep theirs)."""
    llm.models["alpha"].stage1 = Reply(ALPHA)
    llm.models["gamma"].stage1 = Reply(GAMMA)
    llm.models["gamma"].revise = Reply(f"REASON: the first answer gives the year and the reason.\n{REVISED}")


async def test_refine_says_who_moved_toward_whom_and_keeps_the_rounds(tmp_path, llm):
    australia(llm)
    code, out, err = await council(tmp_path, llm, "ask", "--json", "--mode", "refine", "Capital of Australia?")
    assert code == 0, err
    document = json.loads(out)
    assert document["config"]["mode"] == "refine" and document["config"]["rounds"] == 1
    assert document["metadata"]["rounds"] == [
        [
            {"member": "alpha", "moved": False, "toward": []},
            {"member": "beta", "moved": False, "toward": []},
            {"member": "gamma", "moved": True, "toward": ["alpha"]},
        ]
    ]
    gamma = next(s for s in document["stage1"] if s["model"] == "gamma")
    assert gamma["response"] == GAMMA and gamma["final_response"] == REVISED  # the first answer stays
    assert len(llm.requests_for(stage=REVISION)) == 3
    with sqlite3.connect(tmp_path / "cli.db") as db:
        rows = db.execute("SELECT round, model, moved, toward FROM revisions ORDER BY position").fetchall()
    assert rows == [(1, "alpha", 0, "[]"), (1, "beta", 0, "[]"), (1, "gamma", 1, '["alpha"]')]

    code, out, err = await council(tmp_path, llm, "show", document["id"])
    assert code == 0, err
    assert "Round 1: gamma moved toward alpha; alpha and beta held" in out
    assert "gamma · first answer" in out and "gamma · after the revision rounds" in out
    code, out, err = await council(tmp_path, llm, "ask", "--mode", "refine", "Capital of Australia, again?")
    assert code == 0, err
    assert "Round 1: gamma moved toward alpha; alpha and beta held" in out  # the result's deliberation block
    assert "▶ Round 1" in err and "gamma moved toward alpha: “the first answer gives the year" in err


async def test_self_moa_samples_the_first_seat_and_says_so(tmp_path, llm):
    code, out, err = await council(tmp_path, llm, "ask", "--mode", "self-moa", "Six times seven?")
    assert code == 0, err
    # The standard council of three would make 3 + 3 + 1 calls: 6 samples and the aggregation.
    assert [r.model for r in llm.requests_for(stage=1)] == ["alpha"] * 6 and not llm.requests_for(stage=2)
    assert len(llm.requests_for("beta", stage=3)) == 1
    assert "6 samples of alpha, aggregated by beta" in out
    code, out, err = await council(
        tmp_path, llm, "ask", "--json", "--mode", "self-moa", "Q?", extra_env={"COUNCIL_SELF_MOA_MODEL": "gamma"}
    )
    assert code == 0, err
    assert json.loads(out)["metadata"]["self_moa"] == "6 samples of gamma, aggregated by beta"


async def test_a_seats_file_gives_the_members_their_lens(tmp_path, llm):
    seats = tmp_path / "seats.toml"
    seats.write_text(
        '[[seat]]\nmodel = "alpha"\npersona = "skeptic"\n\n[[seat]]\nmodel = "beta"\n\n'
        '[[seat]]\nmodel = "gamma"\npersona = "Answer as the engineer who will be paged at 3 a.m."\n'
        "temperature = 0.3\n",
        encoding="utf-8",
    )
    env = {"COUNCIL_SEATS_FILE": str(seats), "COUNCIL_MODELS": ""}
    code, out, err = await council(tmp_path, llm, "ask", "--json", "Q?", extra_env=env)
    assert code == 0, err
    lenses = {s["model"]: s["lens"] for s in json.loads(out)["stage1"]}
    assert lenses["alpha"]["preset"] == "skeptic" and lenses["beta"] is None and lenses["gamma"]["temperature"] == 0.3
    [gamma] = llm.requests_for("gamma", stage=1)
    assert "paged at 3 a.m." in gamma.system and gamma.body["temperature"] == 0.3
    assert not any("paged at 3 a.m." in r.system + r.user for r in llm.requests if r is not gamma)


async def test_bad_deliberation_settings_are_one_line(tmp_path, llm):
    seats = tmp_path / "seats.toml"
    seats.write_text('[[seat]]\nmodel = "alpha"\npersona = "skeptc"\n', encoding="utf-8")
    for env, said in (
        ({"COUNCIL_ROUNDS": "9"}, "COUNCIL_ROUNDS: Input should be less than or equal to 5"),
        ({"COUNCIL_SEATS_FILE": str(seats)}, "seats.toml line 1: Unknown lens preset `skeptc`"),
    ):
        code, _, err = await council(tmp_path, llm, "ask", "Q?", extra_env=env)
        assert code != 0 and said in err, err
        assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
