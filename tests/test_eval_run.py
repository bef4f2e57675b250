"""`council eval` and the inspect-ai provider end to end, against the scripted server
(tests/llm_server.py with the quiz-taking members of tests/eval_fakes.py): an inspect task on
`council/...`, equal compute, the judge scorer, resume after a real kill, the CLI's outputs, and
the runs stored on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import sqlite3
import sys
from pathlib import Path

import pytest

# Skipped without importing it: inspect-ai takes over a second to import, in every xdist worker.
if importlib.util.find_spec("inspect_ai") is None:
    pytest.skip("inspect-ai is not installed (pip install -e '.[eval]')", allow_module_level=True)

from bot.cli_commands.eval import report_table
from core.eval.configs import mode_available
from core.eval.dataset import bundled
from core.models.eval import EvalPlan, EvalRequest, EvalSample
from core.service import CouncilService
from core.storage import Storage
from tests.conftest import BACKENDS, make_settings
from tests.council_process import CouncilProcess
from tests.eval_fakes import quiz_member
from tests.llm_server import Reply, ScriptedLLMServer, council_member

ROOT = Path(__file__).resolve().parent.parent
ITEMS = bundled().items


def quiz_models(**reply: float) -> dict:
    return {
        "alpha": quiz_member("alpha", ITEMS, 0.8, **reply),
        "beta": quiz_member("beta", ITEMS, 0.6, **reply),
        "gamma": quiz_member("gamma", ITEMS, 0.5, **reply),
    }


def cli_env(server: ScriptedLLMServer, tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LLM_", "COUNCIL_", "OPENROUTER_", "DATABASE_URL"))}
    env.update(
        LLM_BASE_URL=server.base_url,
        LLM_API_KEY="eval-test-key",
        COUNCIL_MODELS="alpha,beta,gamma",
        COUNCIL_CHAIRMAN="alpha",
        DATABASE_URL=f"sqlite:///{tmp_path}/eval.db",
        PYTHONPATH=str(ROOT),
    )
    env.update(extra)
    return env


async def council(env: dict[str, str], *args: str, timeout: float = 120) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bot.cli",
        "eval",
        *args,
        env=env,
        cwd=ROOT,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), timeout)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


# --------------------------------------------------------------------------- the provider


TASK_FILE = """
from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import match


@task
def sums():
    samples = [Sample(input="What is 2+2?", target="4"), Sample(input="And 1+3?", target="4")]
    return Task(dataset=samples, scorer=match())
"""
# inspect-ai's own `eval()` in its own process and event loop, the provider registered through
# inspect's registration API first (the installed package's `inspect_ai` entry point does the same
# for `inspect eval TASK --model council/standard`; docs/eval.md shows that run).
RUN_INSPECT = """
import sys
import core.eval.registry
from inspect_ai import eval
[log] = eval(sys.argv[1], model=sys.argv[2], log_dir=sys.argv[3], display="none")
sys.exit(0 if log.status == "success" else 1)
"""


@pytest.mark.slow
async def test_an_inspect_task_runs_on_the_council_as_a_model(tmp_path):
    """An inspect task on `council/standard` and `council/member:c`, run by inspect-ai in its own
    process: the provider opens the configured council itself (settings from the environment) and
    answers each sample with a full council, or with the member alone."""
    from inspect_ai.log import read_eval_log

    (tmp_path / "sums.py").write_text(TASK_FILE)
    async with ScriptedLLMServer(
        {name: council_member(f"{name}: 4", synthesis="The council says 4.\nANSWER: 4") for name in ("a", "b", "c")}
    ) as server:
        env = cli_env(server, tmp_path, COUNCIL_MODELS="a,b,c", COUNCIL_CHAIRMAN="b")
        logs = {}
        for model in ("council/standard", "council/member:c"):
            process = await asyncio.create_subprocess_exec(
                sys.executable, "-c", RUN_INSPECT, "sums.py", model,
                str(tmp_path / model.replace("/", "_")),
                env=env, cwd=tmp_path, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            )  # fmt: skip
            _, err = await asyncio.wait_for(process.communicate(), 240)
            assert process.returncode == 0, err.decode()[-3000:]
            [log_file] = (tmp_path / model.replace("/", "_")).glob("*.eval")
            logs[model] = read_eval_log(str(log_file))
    standard, alone = logs["council/standard"], logs["council/member:c"]
    assert standard.status == "success" and alone.status == "success"
    assert [s.output.completion for s in standard.samples] == ["The council says 4.\nANSWER: 4"] * 2
    assert standard.results.scores[0].metrics["accuracy"].value == 1.0
    assert [s.output.metadata["calls"] for s in standard.samples] == [7, 7]  # 3 answers, 3 reviews, 1 synthesis
    assert [s.output.completion for s in alone.samples] == ["c: 4", "c: 4"]
    stages = [(r.model, r.stage) for r in server.requests]
    assert stages.count(("b", 3)) == 2 and sum(1 for _, stage in stages if stage == 2) == 6
    assert stages.count(("c", 1)) == 2 + 2  # in each council, and alone


# --------------------------------------------------------------------------- council eval


async def test_self_consistency_matches_standard_s_calls_and_votes(tmp_path):
    async with ScriptedLLMServer(quiz_models()) as server:
        service = await CouncilService.open(make_settings(server, tmp_path, COUNCIL_MODELS="alpha,beta,gamma"))
        try:
            request = EvalRequest(configs="standard,self-consistency:beta", limit=5, log_dir=str(tmp_path / "logs"))
            report = await service.evals.run(request)
        finally:
            await service.aclose()
    rows = {row.name: row for row in report.configs}
    assert rows["standard"].mean_calls == 7
    assert rows["self-consistency:beta"].mean_calls == 7
    assert report.self_consistency == "beta × 7"
    sampled = [r for r in server.requests if r.model == "beta" and r.body.get("temperature") == 0.7]
    assert len(sampled) == 5 * 7
    assert rows["self-consistency:beta"].tokens > rows["standard"].tokens / 10


async def test_the_judge_scorer_grades_free_text_with_the_judge_model(tmp_path):
    data = tmp_path / "capitals.jsonl"
    data.write_text(
        "\n".join(
            json.dumps({"input": q, "target": t}) for q, t in [("Capital of France?", "Paris"), ("Of Italy?", "Rome")]
        )
    )

    def grade(call) -> str:
        answer = call.user.split("[Submission]:")[-1].split("***")[0]
        criterion = call.user.split("[Criterion]:")[-1].split("***")[0].strip()
        return "GRADE: C" if criterion in answer else "GRADE: I"

    models = {
        "alpha": Reply(lambda call: "Paris" if "France" in call.user else "Rome, of course."),
        "beta": Reply("Lyon"),
        "judge": Reply(grade),
    }
    async with ScriptedLLMServer(models) as server:
        settings = make_settings(server, tmp_path, COUNCIL_MODELS="alpha,beta", COUNCIL_CHAIRMAN="alpha")
        service = await CouncilService.open(settings)
        try:
            request = EvalRequest(
                configs="member:alpha,member:beta",
                dataset=str(data),
                scorer="judge",
                judge="judge",
                log_dir=str(tmp_path / "logs"),
            )
            report = await service.evals.run(request)
        finally:
            await service.aclose()
    rows = {row.name: row for row in report.configs}
    assert (rows["member:alpha"].accuracy, rows["member:beta"].accuracy) == (1.0, 0.0)
    assert len(server.requests_for("judge")) == 4
    assert rows["member:beta"].p_value == pytest.approx(0.5)  # 2 discordant pairs, both to alpha


@pytest.mark.slow
async def test_an_eval_killed_mid_run_continues_without_asking_stored_samples_again(tmp_path):
    async with ScriptedLLMServer(quiz_models(delay_s=0.05)) as server:
        env = cli_env(server, tmp_path)
        args = ["--configs", "member:alpha,standard", "--limit", "10", "--concurrency", "1", "--json"]
        args += ["--log-dir", str(tmp_path / "logs")]
        first = CouncilProcess(["eval", *args], env, tmp_path / "first.log")
        await first.start()
        db = tmp_path / "eval.db"

        def stored() -> set[tuple[str, str]]:
            if not db.exists():
                return set()
            with sqlite3.connect(db) as conn:
                try:
                    return set(conn.execute("SELECT config, item_id FROM eval_samples").fetchall())
                except sqlite3.OperationalError:
                    return set()

        await first.until(lambda: sum(1 for c, _ in stored() if c == "standard") >= 2, timeout=90)
        first.kill9()
        await first.process.wait()
        before = stored()
        asked_before = len(server.requests)
        code, out, err = await council(env, *args)
    assert code == 0, err
    assert "continuing run" in err
    pending_alpha = 10 - sum(1 for c, _ in before if c == "member:alpha")
    pending_standard = 10 - sum(1 for c, _ in before if c == "standard")
    assert pending_alpha == 0 and 0 < pending_standard < 10
    # only what was not stored was asked: 7 calls per standard council, nothing for member:alpha
    assert len(server.requests) - asked_before == 7 * pending_standard
    report = json.loads(out)
    assert [row["name"] for row in report["configs"]] == ["member:alpha", "standard"]
    assert len(stored()) == 20
    code, _, err = await council(env, "--history")
    assert code == 0


@pytest.mark.slow
async def test_the_cli_report_json_csv_history_and_cost_guard(tmp_path):
    async with ScriptedLLMServer(quiz_models()) as server:
        env = cli_env(server, tmp_path)
        base = ["--configs", "member:alpha,member:beta,quick", "--limit", "6", "--log-dir", str(tmp_path / "logs")]
        code, out, err = await council(env, *base, "--json")
        assert code == 0, err
        report = json.loads(out)
        assert list(report) == ["run", "dataset", "configs", "effective_votes", "error_correlation", "consensus"]
        assert report["effective_votes"]["members"] == 2 and report["effective_votes"]["items"] == 6
        assert report["error_correlation"]["members"] == ["member:alpha", "member:beta"]
        assert report["consensus"] == []  # quick mode has no reviews, so no consensus
        assert list(report["configs"][0]) == [
            "name",
            "accuracy",
            "ci_low",
            "ci_high",
            "mean_calls",
            "tokens",
            "cost_usd",
            "latency_p50_s",
            "latency_p95_s",
            "p_value",
            "escalated",
            "tokens_over_standard",  # added last: every earlier field kept
        ]
        assert report["dataset"] == "bundled (seed 2026, 250 items), first 6"
        assert "Estimated: 30 model calls for 18 samples" in err
        code, out, err = await council(env, *base, "--csv", "--new")
        assert code == 0, err
        assert out.splitlines()[0] == (
            "name,accuracy,ci_low,ci_high,mean_calls,tokens,cost_usd,latency_p50_s,latency_p95_s,p_value,escalated"
        )
        assert len(out.splitlines()) == 4
        code, out, err = await council(env, *base, "--new")
        assert code == 0, err
        assert out.splitlines()[1].split()[:3] == ["configuration", "accuracy", "95%"]
        code, out, _ = await council(env, "--history")
        assert code == 0 and out.count("finished") == 3
        priced = cli_env(server, tmp_path, MODEL_PRICES='{"alpha": [1000, 1000], "beta": [1000, 1000]}')
        code, out, err = await council(priced, *base, "--new", "--max-cost", "0.01")
        assert code == 2 and out == ""
        assert err.strip().splitlines()[-1].startswith("council: the estimated cost $")
        assert "pass --yes to run anyway" in err and "Traceback" not in err
        code, _, err = await council(priced, *base, "--max-cost", "0.01", "--yes", "--limit", "2")
        assert code == 0, err


@pytest.mark.slow
async def test_a_bad_configuration_or_a_missing_mode_is_one_line(tmp_path):
    async with ScriptedLLMServer(quiz_models()) as server:
        env = cli_env(server, tmp_path)
        code, out, err = await council(env, "--configs", "best-of-all", "--limit", "2")
        assert code == 2 and err.strip().startswith("council: unknown configuration 'best-of-all'")
        assert len(err.strip().splitlines()) == 1
        code, out, err = await council(env, "--configs", "auto", "--limit", "2", "--json")
    if mode_available("auto"):
        assert code == 0, err
        assert json.loads(out)["configs"][0]["escalated"] is not None
    else:
        assert code == 2
        assert err.strip() == "council: council/auto: this version of the council has no 'auto' mode"


# --------------------------------------------------------------------------- storage


@pytest.mark.parametrize("backend", BACKENDS)
async def test_eval_runs_and_samples_are_stored_on_both_backends(tmp_path, backend, request):
    url = request.getfixturevalue("pg_server").new_database() if backend == "postgresql" else str(tmp_path / "e.db")
    async with await Storage.open(url) as storage:
        evals = storage.evals
        plan = EvalPlan(members=["a", "b"], chairman="a", scorer="exact")
        run_id = await evals.create("fp1", "bundled", 2, ["member:a", "standard"], plan)
        assert await evals.unfinished("fp1") == (run_id, plan)
        sample = EvalSample(config="standard", item_id="x", position=0, answer="4", correct=True, calls=7, cost_usd=0.5)
        await evals.record(run_id, sample)
        await evals.record(run_id, sample.model_copy(update={"correct": False}))  # scored again: replaced
        stored = await evals.samples(run_id)
        assert stored == [sample.model_copy(update={"correct": False})]
        plan.self_consistency_samples = 7
        await evals.save_plan(run_id, plan)
        assert (await evals.unfinished("fp1"))[1].self_consistency_samples == 7
        [summary] = await evals.history()
        assert (summary.samples, summary.expected, summary.status) == (1, 4, "running")
        await evals.finish(run_id, "{}")
        assert await evals.unfinished("fp1") is None
        assert (await evals.history())[0].status == "finished"
        other = await evals.create("fp2", "bundled", 1, ["standard"], plan)
        assert await evals.abandon("fp2") == 1 and await evals.unfinished("fp2") is None
        assert other != run_id


async def test_self_moa_and_refine_at_equal_calls_with_their_tokens(tmp_path):
    async with ScriptedLLMServer(quiz_models()) as server:
        service = await CouncilService.open(make_settings(server, tmp_path, COUNCIL_MODELS="alpha,beta,gamma"))
        try:
            request = EvalRequest(configs="standard,refine,self-moa:beta", limit=5, log_dir=str(tmp_path / "logs"))
            report = await service.evals.run(request)
        finally:
            await service.aclose()
    rows = {row.name: row for row in report.configs}
    assert list(rows) == ["standard", "refine", "self-moa:beta"]  # rows added, the shape kept
    assert rows["standard"].mean_calls == 7
    # Self-MoA: k = 7 − 1 samples of beta and beta aggregating them: 7 calls, as standard
    assert rows["self-moa:beta"].mean_calls == 7 and report.self_moa == "beta × 6"
    sampled = [r for r in server.requests if r.model == "beta" and r.stage == 1 and r.body.get("temperature") == 0.7]
    assert len(sampled) == 5 * 6
    aggregated = [r for r in server.requests if r.stage == 3 and "independent samples of one model" in r.user]
    assert len(aggregated) == 5 and {r.model for r in aggregated} == {"beta"}
    # refine: standard's 7 and one revision round of the 3 members (they keep their answers: it stops)
    assert rows["refine"].mean_calls == 10
    assert rows["refine"].tokens > 1.1 * rows["standard"].tokens
    table = report_table(report)
    refine_line = next(line for line in table.splitlines() if line.startswith("refine"))
    assert f"tokens +{rows['refine'].tokens / rows['standard'].tokens - 1:.0%} over standard" in refine_line
    assert "tokens +" not in next(line for line in table.splitlines() if line.startswith("self-moa:beta"))


@pytest.mark.slow
async def test_an_unknown_self_moa_model_is_one_line(tmp_path):
    async with ScriptedLLMServer(quiz_models()) as server:
        env = cli_env(server, tmp_path)
        code, out, err = await council(env, "--configs", "self-moa:unknown-model", "--limit", "2")
        assert code == 2 and out == ""
        assert err.strip() == (
            "council: --configs self-moa:unknown-model: the provider lists no model 'unknown-model' "
            "(check the id against its model list; `council doctor` lists problems)"
        )
        assert not server.requests_for(stage=1)  # nothing was asked
