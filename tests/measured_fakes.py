"""A stored `council eval` run of a line-up (its plan and report, as `council eval` finishes one) and
members whose ballots disagree, so that a council's consensus falls under the run's measured doubt
threshold: the doubt is the eval's, not COUNCIL_UNSURE_BELOW's."""

from __future__ import annotations

from core.models.eval import ConfigReport, ConsensusReport, EvalPlan, EvalReport
from core.storage import Storage
from tests.conftest import MEMBERS
from tests.llm_server import RecordedRequest, ScriptedLLMServer, council_member, shown_answers

THRESHOLD = 70  # the run's: under it the standard council was right 40% of the time (12 items)
ACCURACY = 0.4
ITEMS = 12
# Each reviewer ranks the answers in its own cyclic order (alpha > beta > gamma, beta > gamma > alpha,
# gamma > alpha > beta): every answer gets every place once, so Kendall's W is 0 however the labels fall.
PREFERENCE = {name: MEMBERS[i:] + MEMBERS[:i] for i, name in enumerate(MEMBERS)}


def row(name: str, accuracy: float, calls: float, ci: float = 0.05) -> ConfigReport:
    return ConfigReport(
        name=name, accuracy=accuracy, ci_low=accuracy - ci, ci_high=accuracy + ci, mean_calls=calls, tokens=1000,
        cost_usd=None, latency_p50_s=1.0, latency_p95_s=2.0, p_value=None, escalated=None,
    )  # fmt: skip


async def store_eval_run(
    storage: Storage, chairman: str = "alpha", configs: list[ConfigReport] | None = None, below: int = THRESHOLD
) -> str:
    """A finished run of MEMBERS chaired by `chairman` whose standard council was unsure under `below`."""
    plan = EvalPlan(members=MEMBERS, chairman=chairman, scorer="exact")
    rows = configs or [row("standard", 0.75, 7.0), row("member:alpha", 0.7, 1.0)]
    run_id = await storage.evals.create("measured-fp", "bundled", 40, [r.name for r in rows], plan)
    doubt = ConsensusReport(
        config="standard", measure="kendall_w", unsure_below=below, unsure_items=ITEMS, unsure_accuracy=ACCURACY,
        versus="member:alpha",
    )  # fmt: skip
    report = EvalReport(run=run_id, dataset="bundled", configs=rows, consensus=[doubt])
    await storage.evals.finish(run_id, report.model_dump_json())
    return run_id


def measured_line(run_id: str, consensus: float = 0.0) -> str:
    return (
        f"The council is unsure (consensus {consensus:.0f}): on this line-up's last eval (run {run_id}), "
        f"answers with consensus under {THRESHOLD} were right {ACCURACY:.0%} of the time"
    )


# A reviewer never sees a model id, so the answers are told apart by what they say.
WAYS = dict(zip(MEMBERS, ("by counting", "by multiplying", "by adding"), strict=True))


def _cyclic(reviewer: str):
    def text(call: RecordedRequest) -> str:
        answers = shown_answers(call.user)
        order = PREFERENCE[reviewer]
        ranked = sorted(answers, key=lambda label: next(i for i, m in enumerate(order) if WAYS[m] in answers[label]))
        return "Notes.\n\nFINAL RANKING:\n" + "\n".join(f"{i}. Response {label}" for i, label in enumerate(ranked, 1))

    return text


def script_disagreeing(llm: ScriptedLLMServer) -> None:
    for name in MEMBERS:
        llm.script(
            name,
            council_member(f"42, {WAYS[name]}.", synthesis=f"Final answer by {name}: 42.", raw_review=_cyclic(name)),
        )
