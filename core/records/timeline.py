"""Every model call of a stored council on one clock, for its page's timeline and call count."""

from __future__ import annotations

from core.models import CouncilResult
from core.models.browse import ModelCall


def timeline(result: CouncilResult) -> list[ModelCall]:
    """Each model call of a stored council on one clock: stage 1 from the start, refine mode's
    revision rounds after it, stage 2 (and auto mode's agreement check) after those, the synthesis
    after all (the stored latencies place each call in its stage). An answer that stood as written
    made no call of its own."""
    stage1 = result.timings.get("stage1_s", 0.0)
    rounds = stage1 + result.timings.get("rounds_s", 0.0)
    stage2 = rounds + result.timings.get("stage2_s", 0.0)
    calls = [*_answer_calls(result), *_revision_calls(result, stage1), *_review_calls(result, rounds)]
    check = result.agreement
    if check is not None and check.judge is not None:  # auto mode asked the chairman whether two agree
        calls.append(
            ModelCall(
                stage=2,
                model=check.judge,
                role="agreement check",
                start_s=rounds,
                end_s=rounds + (check.latency_s or 0.0),
                ok=check.error is None,
                note=check.error.message if check.error else None,
            )
        )
    if result.synthesis is not None and not result.synthesis.agreed:  # an answer that stood as written: no call
        s = result.synthesis
        calls.append(
            ModelCall(
                stage=3,
                model=s.model,
                role="synthesis",
                start_s=stage2,
                end_s=stage2 + (s.latency_s or 0.0),
                ok=True,
                attempts=len(s.attempts) + 1,
                note=s.note,
            )
        )
    return calls


def _answer_calls(result: CouncilResult) -> list[ModelCall]:
    return [
        ModelCall(
            stage=1,
            model=answer.model,
            role="answer",
            start_s=0.0,
            end_s=answer.latency_s or 0.0,
            ok=answer.error is None,
            attempts=len(answer.attempts) + 1,
            note=answer.error.message if answer.error else None,
        )
        for answer in result.answers
    ]


def _revision_calls(result: CouncilResult, stage1: float) -> list[ModelCall]:
    """One call per member and round; a round starts when the one before it had every revision."""
    calls, start = [], stage1
    for held in result.rounds:
        for revision in held.revisions:
            calls.append(
                ModelCall(
                    stage=1,
                    model=revision.model,
                    role=f"revision, round {held.number}",
                    start_s=start,
                    end_s=start + (revision.latency_s or 0.0),
                    ok=revision.error is None,
                    note=revision.error.message if revision.error else None,
                )
            )
        start += max((r.latency_s or 0.0 for r in held.revisions), default=0.0)
    return calls


def _review_calls(result: CouncilResult, stage1: float) -> list[ModelCall]:
    return [
        ModelCall(
            stage=2,
            model=review.reviewer,
            role="review",
            start_s=stage1,
            end_s=stage1 + (review.latency_s or 0.0),
            ok=review.error is None,
            note=review.error.message if review.error else None,
        )
        for review in result.reviews
    ]
