"""The CouncilResult of a council that has run its stages: its status, error and notices."""

from __future__ import annotations

import time

from core.engine import composition, disagreement, notices
from core.engine.state import CouncilState
from core.models import CouncilResult, CouncilStatus, ErrorInfo, ErrorKind, ParseStatus, Usage


def council_result(state: CouncilState, usage: Usage) -> CouncilResult:
    # Set when the answer was complete, if reviews decided early went on after it.
    state.timings.setdefault("total_s", round(time.perf_counter() - state.started, 4))
    status, error = _status(state)
    answers = [state.answers[m] for m in state.members]
    # The synthesis drew on the latest answers (after the revision rounds, if any).
    final = [
        a.model_copy(update={"text": state.latest[m]}) if m in state.latest else a
        for m, a in zip(state.members, answers)
    ]
    synthesis = state.synthesis
    return CouncilResult(
        council_id=state.request.council_id,
        request=state.request,
        status=status,
        answers=answers,
        reviews=list(state.reviews.values()),
        label_to_model=dict(state.label_to_model),
        aggregate=state.aggregate,
        late_aggregate=state.late_aggregate,
        synthesis=synthesis,
        notices=notices.result_notices(state),
        error=error,
        timings=dict(state.timings),
        usage=usage,
        agreement=state.agreement,
        composition=composition.measure(
            synthesis.text, final, state.request, synthesis.model if synthesis.stood_in else None
        )
        if synthesis
        else None,
        disagreement=disagreement.account(state, final) if synthesis else None,
        rounds=list(state.rounds),
    )


def _status(state: CouncilState) -> tuple[CouncilStatus, ErrorInfo | None]:
    if state.control.stopped and state.answered_at is None:  # a stop after the answer only drops late reviews
        return CouncilStatus.CANCELLED, ErrorInfo(kind=ErrorKind.CANCELLED, message=notices.STOPPED_BY_USER)
    if not state.label_to_model:
        return CouncilStatus.FAILED, notices.no_answer_error(state)
    reviews = state.reviews.values()
    degraded = (
        any(not a.ok and (a.seat or a.model) not in state.skipped for a in state.answers.values())
        or any(r.error is not None and not state.review_skipped(r.reviewer) for r in reviews)
        or any(r.text is not None and r.parse_status is ParseStatus.NONE for r in reviews)
        or (state.synthesis is not None and state.synthesis.stood_in)
    )
    return (CouncilStatus.DEGRADED if degraded else CouncilStatus.OK), None
