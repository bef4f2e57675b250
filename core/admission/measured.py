"""What the line-up's own eval measured, read at admission: the unsure threshold a council carries,
and the strategy `best` runs.

A line-up's eval run is the newest finished `council eval` run whose plan has the same seats (in
order) and chairman as the council about to run; runs of other line-ups are ignored, and counted
so that the council can say so. The sentences are core/models/voice/measured.py's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from core.models import MODES, CouncilMode
from core.models.doubt import UnsureThreshold
from core.models.eval import ConfigReport, EvalReport
from core.models.strategy import Strategy
from core.models.voice.measured import best_fallback_line, best_line
from core.storage import Storage

BEST = "best"
SELF_MOA = "self-moa"
FALLBACK: CouncilMode = "standard"
RUNS_READ = 50  # the newest finished runs looked through for the line-up's


@dataclass(frozen=True)
class LineupEval:
    """The line-up's latest finished eval run (None: there is none) and how many newer-or-older
    finished runs of other line-ups were passed over."""

    run_id: str | None
    report: EvalReport | None
    others: int = 0
    self_moa_model: str | None = None  # the model the run's `self-moa` row sampled


async def lineup_eval(storage: Storage, members: Sequence[str], chairman: str) -> LineupEval:
    others = 0
    for run_id, plan in await storage.evals.finished(RUNS_READ):
        if list(plan.members) == list(members) and plan.chairman == chairman:
            report = await storage.evals.report(run_id)
            parsed = EvalReport.model_validate_json(report) if report else None
            return LineupEval(run_id, parsed, others, plan.self_moa_model)
        others += 1
    return LineupEval(None, None, others)


def unsure_threshold(measured: LineupEval, mode: str, setting: int) -> UnsureThreshold | None:
    """The threshold of `mode` (else standard's) in the line-up's run, else COUNCIL_UNSURE_BELOW."""
    rows = {c.config: c for c in measured.report.consensus} if measured.report else {}
    row = rows.get(mode) or rows.get("standard")
    if row is not None and measured.run_id is not None:
        return UnsureThreshold(
            below=row.unsure_below, run=measured.run_id, accuracy=row.unsure_accuracy, items=row.unsure_items
        )
    return UnsureThreshold(below=setting) if setting > 0 else None


def runnable(name: str) -> bool:
    """An eval configuration a chat council can run as its mode (not `best` itself; `self-moa:<id>`
    runs as self-moa on that model)."""
    return (name in MODES and name != BEST) or (name.startswith(SELF_MOA + ":") and SELF_MOA in MODES)


def _mode_and_seat(name: str, measured: LineupEval) -> tuple[str, str | None]:
    """The mode a row runs as, and for Self-MoA the model the eval sampled and aggregated with."""
    if name.startswith(SELF_MOA + ":"):
        return SELF_MOA, name.removeprefix(SELF_MOA + ":")
    return name, measured.self_moa_model if name == SELF_MOA else None


def choose(measured: LineupEval) -> Strategy:
    """Among the runnable configurations whose accuracy lies within the 95% interval of the most
    accurate one, the cheapest (cost per question when every one has a cost, else calls; ties: the
    more accurate, then the earlier); `standard` until the line-up has an eval run."""
    report = measured.report
    # (a stored report keeps the documented fields only: a row that answered made calls)
    rows = [row for row in report.configs if runnable(row.name) and row.mean_calls > 0] if report else []
    if report is None or measured.run_id is None or not rows:
        return Strategy(mode=FALLBACK, line=best_fallback_line(measured.run_id, measured.others), run=measured.run_id)
    top = max(rows, key=lambda r: r.accuracy)
    close = [r for r in rows if r.accuracy >= top.ci_low]
    priced = all(r.cost_usd is not None for r in close)

    def cost(row: ConfigReport) -> tuple[float, float, int]:
        price = row.cost_usd if priced and row.cost_usd is not None else row.mean_calls
        return price, -row.accuracy, rows.index(row)

    chosen = min(close, key=cost)
    standard = next((r for r in rows if r.name == "standard"), None)
    line = best_line(chosen, top, standard, measured.run_id, priced=priced)
    mode, seat = _mode_and_seat(chosen.name, measured)
    return Strategy(mode=mode, line=line, run=measured.run_id, seat=seat)
