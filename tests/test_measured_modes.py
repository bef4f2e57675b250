"""`best` and measured doubt in chat, on the scripted server: the mode chosen from the line-up's
latest finished `council eval` run (checked against the report's own rows by hand), the fallback
without one and with a run of another line-up only, `council eval --recommend`, and an unsure
result said first, with `metadata.unsure`, in the API and the export."""

from __future__ import annotations

import importlib.util
import json

import pytest

from core.models import Origin, Platform
from core.models.eval import EvalRequest
from core.records.export import to_document, to_markdown
from core.service import CouncilService
from tests.conftest import make_settings
from tests.eval_fakes import quiz_member
from tests.llm_server import ScriptedLLMServer

needs_inspect = pytest.mark.skipif(importlib.util.find_spec("inspect_ai") is None, reason="inspect-ai not installed")
ORIGIN = Origin(platform=Platform.CLI, channel_id="terminal", user_id="tester")
QUESTION = "What is 17 + 25?"


def quiz_models() -> dict:
    from core.eval.dataset import bundled

    items = bundled().items
    return {
        "alpha": quiz_member("alpha", items, 0.8),
        "beta": quiz_member("beta", items, 0.6),
        "gamma": quiz_member("gamma", items, 0.5),
    }


async def ask(service: CouncilService, mode: str | None = None):
    run = await service.start_council(QUESTION, ORIGIN, mode=mode)  # type: ignore[arg-type]
    return await run.wait()


async def test_best_without_an_eval_run_runs_standard_and_says_so(tmp_path):
    async with ScriptedLLMServer(quiz_models()) as server:
        service = await CouncilService.open(make_settings(server, tmp_path, COUNCIL_MODELS="alpha,beta,gamma"))
        try:
            result = await ask(service, "best")
        finally:
            await service.aclose()
    strategy = result.request.config.strategy
    assert result.request.config.mode == "standard" and strategy is not None
    assert strategy.line == "standard: no eval run of this line-up yet" and strategy.run is None
    assert len(server.requests_for(stage=1)) == 3  # the standard council ran
    document = to_document(result)
    assert document["metadata"]["strategy"] == {"mode": "standard", "line": strategy.line, "run": None, "seat": None}
    assert to_markdown(result).split("## Final answer\n\n", 1)[1].startswith(f"> {strategy.line}\n")


@needs_inspect
async def test_best_runs_what_the_line_up_s_eval_measured_and_ignores_other_line_ups(tmp_path):
    async with ScriptedLLMServer(quiz_models()) as server:
        settings = make_settings(server, tmp_path, COUNCIL_MODELS="alpha,beta,gamma")
        service = await CouncilService.open(settings)
        try:
            # A run of another line-up (two seats) first: it must be ignored, and counted.
            other = make_settings(server, tmp_path, COUNCIL_MODELS="alpha,beta")
            other_service = await CouncilService.open(other)
            try:
                await other_service.evals.run(
                    EvalRequest(configs="standard,quick", limit=8, log_dir=str(tmp_path / "o"))
                )
            finally:
                await other_service.aclose()
            fallback = await ask(service, "best")
            report = await service.evals.run(
                EvalRequest(configs="member:alpha,standard,quick,auto,self-moa", limit=30, log_dir=str(tmp_path / "l"))
            )
            chosen = await ask(service, "best")
            recommendation = await service.evals.recommend()
        finally:
            await service.aclose()
    assert fallback.request.config.strategy.line == (  # type: ignore[union-attr]
        "standard: no eval run of this line-up yet (1 eval run of other line-ups ignored)"
    )
    # By hand from the report: the modes, the most accurate, those within its interval, the cheapest.
    rows = {r.name: r for r in report.configs if r.name in ("standard", "quick", "auto", "self-moa")}
    top = max(rows.values(), key=lambda r: r.accuracy)
    close = [r for r in rows.values() if r.accuracy >= top.ci_low]
    expected = min(close, key=lambda r: (r.mean_calls, -r.accuracy, list(rows).index(r.name)))
    strategy = chosen.request.config.strategy
    assert strategy is not None and strategy.run == report.run
    assert chosen.request.config.mode == expected.name == strategy.mode
    assert strategy.line.startswith(f"{expected.name}: on eval run {report.run} it was ")
    assert recommendation.strategy == strategy
    assert [r.name for r in recommendation.configs] == ["standard", "quick", "auto", "self-moa"]
    if expected.name == "self-moa":  # run as measured: the run's model sampled 6 times, aggregating itself
        config = chosen.request.config
        assert (config.members, config.chairman, config.samples, strategy.seat) == (["alpha"], "alpha", 6, "alpha")


async def test_an_unsure_result_says_so_first_with_the_setting_when_there_is_no_eval_run(tmp_path):
    async with ScriptedLLMServer(quiz_models()) as server:
        settings = make_settings(server, tmp_path, COUNCIL_MODELS="alpha,beta,gamma", COUNCIL_UNSURE_BELOW="101")
        service = await CouncilService.open(settings)
        try:
            result = await ask(service)
            stored = await service.queries.get_result(result.council_id)
        finally:
            await service.aclose()
    assert result.unsure is not None and stored.unsure == result.unsure  # read back from what is stored
    line = (
        f"The council is unsure (consensus {result.unsure.consensus:.0f}): under COUNCIL_UNSURE_BELOW 101, "
        "and there is no eval run of this line-up yet to measure how often such answers are right"
    )
    document = to_document(stored)
    assert document["metadata"]["unsure"] is True and document["metadata"]["unsure_line"] == line
    assert to_markdown(stored).split("## Final answer\n\n", 1)[1].startswith(f"> {line}\n")


async def test_never_unsure_by_default(tmp_path):
    async with ScriptedLLMServer(quiz_models()) as server:
        service = await CouncilService.open(make_settings(server, tmp_path, COUNCIL_MODELS="alpha,beta,gamma"))
        try:
            result = await ask(service)
        finally:
            await service.aclose()
    assert result.request.config.unsure_below is None and result.unsure is None
    assert to_document(result)["metadata"]["unsure"] is False
    assert json.loads(json.dumps(to_document(result)))["metadata"]["strategy"] is None
