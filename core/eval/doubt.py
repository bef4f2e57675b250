"""A council configuration's accuracy by consensus band, and the threshold under which it was unsure.

Each council sample carries its rubric consensus (0-100) and Kendall's W (0-1, read ×100). The
bands are 0-40, 40-70 and 70-100 (100 in the last); in each, the council's accuracy and the best
member's on the same items. The threshold is read on the consensus scale chat uses
(core/models/doubt.py: the rubric consensus when there is one, else W × 100): the largest t among
5, 10, ..., 100 and 101 such that, on the items whose consensus is under t (at least MIN_ITEMS of
them), the council was right less often than its best member; 0 when there is none (never unsure).
"""

from __future__ import annotations

from collections.abc import Sequence

from core.models.doubt import ALWAYS, NEVER, consensus_scale
from core.models.eval import ConsensusBand, ConsensusReport, EvalSample

BANDS = ((0, 40), (40, 70), (70, 100))
CANDIDATES = (*range(5, 101, 5), ALWAYS)
MIN_ITEMS = 5  # a threshold resting on fewer items is noise


def _in_band(value: float, low: int, high: int) -> bool:
    return low <= value < high or (high == 100 and value == 100)


def _accuracy(samples: Sequence[EvalSample]) -> float | None:
    return sum(s.correct for s in samples) / len(samples) if samples else None


def bands(
    council: Sequence[EvalSample], member: dict[str, EvalSample], value_of: dict[str, float]
) -> list[ConsensusBand]:
    """`value_of`: item -> consensus of the council's sample (items without one are left out)."""
    rows = []
    for low, high in BANDS:
        mine = [s for s in council if s.item_id in value_of and _in_band(value_of[s.item_id], low, high)]
        theirs = [member[s.item_id] for s in mine if s.item_id in member]
        rows.append(
            ConsensusBand(
                low=low, high=high, items=len(mine), accuracy=_accuracy(mine), best_member_accuracy=_accuracy(theirs)
            )
        )
    return rows


def threshold(
    council: Sequence[EvalSample], member: dict[str, EvalSample], value_of: dict[str, float]
) -> tuple[int, int, float | None]:
    """(threshold, items under it, the council's accuracy on them); (0, 0, None) when never unsure."""
    paired = [s for s in council if s.item_id in value_of and s.item_id in member]
    found: tuple[int, int, float | None] = (NEVER, 0, None)
    for t in CANDIDATES:
        under = [s for s in paired if value_of[s.item_id] < t]
        if len(under) < MIN_ITEMS:
            continue
        mine, theirs = _accuracy(under), _accuracy([member[s.item_id] for s in under])
        if mine is not None and theirs is not None and mine < theirs:
            found = (t, len(under), mine)
    return found


def report(
    config: str, council: Sequence[EvalSample], best: Sequence[EvalSample], versus: str | None
) -> ConsensusReport | None:
    """None when no sample of `config` has a consensus figure (one model alone, quick mode)."""
    rubric = {s.item_id: s.consensus for s in council if s.consensus is not None}
    kendall = {s.item_id: s.agreement_w * 100 for s in council if s.agreement_w is not None}
    if not rubric and not kendall:
        return None
    scale = {s.item_id: v for s in council if (v := consensus_scale(s.consensus, s.agreement_w)) is not None}
    value_of = {item: value for item, (value, _) in scale.items()}
    measures = {measure for _, measure in scale.values()}
    member = {s.item_id: s for s in best}
    below, items, accuracy = threshold(council, member, value_of) if member else (NEVER, 0, None)
    return ConsensusReport(
        config=config,
        measure="rubric" if measures == {"rubric"} else "kendall_w" if measures == {"kendall_w"} else "mixed",
        rubric=bands(council, member, rubric),
        kendall_w=bands(council, member, kendall),
        unsure_below=below,
        unsure_items=items,
        unsure_accuracy=accuracy,
        versus=versus,
    )
