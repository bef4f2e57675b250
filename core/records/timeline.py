"""Every model call of a stored council on one clock, for its page's timeline and call count."""

from __future__ import annotations

from core.models import CouncilResult, ErrorInfo
from core.models.browse import ModelCall


def timeline(result: CouncilResult) -> list[ModelCall]:
    """Each model call of a stored council on one clock: stage 1 from the start, refine mode's
    revision rounds after it, stage 2 (and auto mode's agreement check) after those, the synthesis
    after all (the stored latencies place each call in its stage). An answer that stood as written
    made no call of its own."""
    stage1 = result.timings.get("stage1_s", 0.0)
    rounds = stage1 + result.timings.get("rounds_s", 0.0)
    stage2 = rounds + result.timings.get("stage2_s", 0.0)
    calls = [
        *(_call(1, a.model, "answer", 0.0, a.latency_s, a.error, len(a.attempts) + 1) for a in result.answers),
        *_revision_calls(result, stage1),
        *(_call(2, r.reviewer, "review", rounds, r.latency_s, r.error) for r in result.reviews),
    ]
    check = result.agreement
    if check is not None and check.judge is not None:  # auto mode asked the chairman whether two agree
        calls.append(_call(2, check.judge, "agreement check", rounds, check.latency_s, check.error))
    if result.synthesis is not None and not result.synthesis.agreed:  # an answer that stood as written: no call
        s = result.synthesis
        synthesis = _call(3, s.model, "synthesis", stage2, s.latency_s, None, len(s.attempts) + 1)
        calls.append(synthesis.model_copy(update={"note": s.note}))
    return calls


def _call(
    stage: int,
    model: str,
    role: str,
    start_s: float,
    latency_s: float | None,
    error: ErrorInfo | None,
    attempts: int = 1,
) -> ModelCall:
    """One call from `start_s` for its latency; failed when it ended in `error` (its message the note)."""
    return ModelCall(
        stage=stage,
        model=model,
        role=role,
        start_s=start_s,
        end_s=start_s + (latency_s or 0.0),
        ok=error is None,
        attempts=attempts,
        note=error.message if error else None,
    )


def _revision_calls(result: CouncilResult, stage1: float) -> list[ModelCall]:
    """One call per member and round; a round starts when the one before it had every revision."""
    calls, start = [], stage1
    for held in result.rounds:
        calls += [
            _call(1, r.model, f"revision, round {held.number}", start, r.latency_s, r.error) for r in held.revisions
        ]
        start += max((r.latency_s or 0.0 for r in held.revisions), default=0.0)
    return calls
