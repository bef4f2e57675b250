"""`best` as people use it: `council eval --recommend` (text and --json) and `council ask --mode best`
as subprocesses, and the `best:` keyword in Slack, over a stored eval run of the same line-up in
which quick was within the 95% interval of the most accurate mode (standard) at fewer calls: each
says that quick ran, and why, naming the run."""

from __future__ import annotations

import json

from core.storage import Storage
from tests import test_slack_adapter
from tests.measured_fakes import row, store_eval_run
from tests.test_cli import council
from tests.test_slack_adapter import results, section_texts

env = test_slack_adapter.env  # the fixture
QUESTION = "What is six times seven?"
ROWS = [row("member:alpha", 0.7, 1.0), row("standard", 0.75, 7.0), row("quick", 0.74, 3.0), row("auto", 0.6, 5.0)]


def chosen_line(run_id: str) -> str:
    return (
        f"quick: on eval run {run_id} it was the cheapest within the 95% interval of the most accurate, "
        "standard (74% at 3.0 calls a question against 75% at 7.0 calls)"
    )


async def seeded(tmp_path, chairman: str = "beta") -> str:  # the terminal's line-up is chaired by beta
    storage = await Storage.open(str(tmp_path / "cli.db"))
    try:
        return await store_eval_run(storage, chairman, ROWS, below=0)
    finally:
        await storage.close()


async def test_eval_recommend_says_what_best_runs_and_the_figures_it_read(tmp_path, llm):
    code, out, err = await council(tmp_path, llm, "eval", "--recommend")
    assert code == 0, err
    assert out == "best: standard: no eval run of this line-up yet\n"
    run_id = await seeded(tmp_path)
    code, out, err = await council(tmp_path, llm, "eval", "--recommend")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == f"best: {chosen_line(run_id)}"
    assert lines[1] == "the most accurate: standard 75.0% (95% CI 70.0%–80.0%)"
    assert [line.split()[0] for line in lines[2:]] == ["standard", "quick", "auto"]  # the runnable modes only
    assert lines[3].endswith("within its interval  ← chosen") and lines[4].endswith("outside it")
    code, out, err = await council(tmp_path, llm, "eval", "--recommend", "--json")
    assert code == 0, err
    body = json.loads(out)
    assert {k: body[k] for k in ("mode", "line", "run", "seat")} == {
        "mode": "quick", "line": chosen_line(run_id), "run": run_id, "seat": None,
    }  # fmt: skip
    assert [c["name"] for c in body["configs"]] == ["standard", "quick", "auto"]
    assert not llm.requests  # recommending asks no model


async def test_ask_mode_best_runs_the_measured_strategy_and_says_why_first(tmp_path, llm):
    run_id = await seeded(tmp_path)
    code, out, err = await council(tmp_path, llm, "ask", "--mode", "best", QUESTION)
    assert code == 0, err
    assert out.startswith(f"❔ {chosen_line(run_id)}\n\n"), out
    assert len(llm.requests_for(stage=1)) == 2 and not llm.requests_for(stage=2)  # a quick council ran
    code, out, err = await council(tmp_path, llm, "ask", "--mode", "best", "--json", QUESTION)
    assert code == 0, err
    metadata = json.loads(out)["metadata"]
    assert metadata["strategy"] == {"mode": "quick", "line": chosen_line(run_id), "run": run_id, "seat": None}


async def test_the_best_keyword_in_slack(env, llm):
    run_id = await store_eval_run(env.service.storage, "alpha", ROWS, below=0)
    await env.command(f"best: {QUESTION}")
    await env.fake.wait_for(lambda: results(env.fake))
    await env.settle()
    [answer] = results(env.fake)
    council_id = answer.args["blocks"][0]["block_id"].split("-")[2]
    stored = await env.service.queries.get_result(council_id)
    assert stored.request.config.mode == "quick" and stored.request.question == QUESTION
    assert section_texts(answer.args["blocks"]).splitlines()[0].endswith(chosen_line(run_id))
