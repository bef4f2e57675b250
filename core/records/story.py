"""A finished council told again as its events, from its result alone.

What a listener that joins after the council's events were let go (core/durable/runs.py keeps a finished
council's result, not its events) or after the process forgot it (the stored council) follows:
the events of core/engine/council.py's grammar, in its order, with the chairman's streamed text as
one ChairmanToken. Every answer, review, the aggregate, the synthesis and the result are there;
what a stored council does not hold (its place in a queue, its calls' timing) is not."""

from __future__ import annotations

from core.models import (
    AggregateReady,
    AgreementChecked,
    AgreementStarted,
    ChairmanFinished,
    ChairmanToken,
    CouncilEvent,
    CouncilFinished,
    CouncilResult,
    CouncilStarted,
    MemberAnswer,
    MemberFailed,
    MemberFinished,
    MemberStarted,
    ReviewFinished,
    StageStarted,
)


def story(result: CouncilResult) -> list[CouncilEvent]:
    """The council's events, ending with its CouncilFinished."""
    cid = result.council_id
    seats = [answer.seat or answer.model for answer in result.answers]
    chairman = result.request.config.chairman
    events: list[CouncilEvent] = [
        CouncilStarted(council_id=cid, members=seats or list(result.request.config.members), chairman=chairman)
    ]
    check = result.agreement
    first = result.answers[:2] if check is not None else result.answers  # auto mode: two seats answer first
    events += _answers(cid, first)
    if check is not None:
        if check.judge is not None:
            events.append(AgreementStarted(council_id=cid, judge=check.judge))
        events.append(AgreementChecked(council_id=cid, check=check))
        events += _answers(cid, result.answers[2:])
    if result.reviews:
        events.append(StageStarted(council_id=cid, stage=2))
        events += [ReviewFinished(council_id=cid, review=review) for review in result.reviews if not review.late]
    if result.aggregate is not None:
        events.append(AggregateReady(council_id=cid, aggregate=result.aggregate, label_to_model=result.label_to_model))
    synthesis = result.synthesis
    if synthesis is not None:
        if not synthesis.agreed:  # a common short answer stands as written: no stage 3
            events.append(StageStarted(council_id=cid, stage=3))
            events.append(ChairmanToken(council_id=cid, model=synthesis.model, delta=synthesis.text))
        events.append(ChairmanFinished(council_id=cid, synthesis=synthesis))
    events += [ReviewFinished(council_id=cid, review=review) for review in result.reviews if review.late]
    events.append(CouncilFinished(council_id=cid, result=result))
    return events


def _answers(cid: str, answers: list[MemberAnswer]) -> list[CouncilEvent]:
    if not answers:
        return []
    events: list[CouncilEvent] = [StageStarted(council_id=cid, stage=1)]
    events += [MemberStarted(council_id=cid, model=answer.seat or answer.model) for answer in answers]
    events += [
        MemberFinished(council_id=cid, answer=answer) if answer.ok else MemberFailed(council_id=cid, answer=answer)
        for answer in answers
    ]
    return events
