"""Early decision in stage 2: whether the ballots still pending can no longer change first place.

The test is exact for the aggregate's own rules: for each challenger, every pending reviewer is
given the worst ballot for the current leader (the challenger first, the leader last, among the
labels that reviewer was shown) and the aggregate (in Rust) is computed again. If the leader
stays first against every challenger, no way the pending ballots can fall changes the winner.
"""

from __future__ import annotations

from collections.abc import Sequence

from core import ranking
from core.engine.state import CouncilState
from core.models import ParseStatus


def first_place_decided(state: CouncilState, pending: Sequence[str]) -> bool:
    ballots = {
        r.reviewer: list(r.ballot_labels)
        for r in state.reviews.values()
        if r.error is None and r.parse_status is not ParseStatus.NONE
    }
    if not ballots or not pending:
        return False
    exclude_self = state.config.exclude_self_review
    # The ballots count as the final ranking counts them: a heavy reviewer still pending can move first place.
    weights = state.config.reviewer_weights or None
    scores = ranking.aggregate(ballots, state.label_to_model, exclude_self=exclude_self, weights=weights)
    if not scores or scores[0].average_rank is None:
        return False
    model_to_label = {m: label for label, m in state.label_to_model.items()}
    leader = model_to_label[scores[0].candidate]
    for challenger in state.label_to_model:
        if challenger == leader:
            continue
        worst = dict(ballots)
        for reviewer in pending:
            shown = state.review_plans.get(reviewer, [])
            middle = [label for label in shown if label not in (leader, challenger)]
            worst[reviewer] = (
                ([challenger] if challenger in shown else []) + middle + ([leader] if leader in shown else [])
            )
        again = ranking.aggregate(worst, state.label_to_model, exclude_self=exclude_self, weights=weights)
        if again[0].candidate != scores[0].candidate:
            return False
    return True
