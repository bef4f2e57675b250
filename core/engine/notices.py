"""The engine's user-visible texts: why a call was cut short, the result's notices, the error
when no member answered. One place, so that the wording stays consistent."""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING

from core.models import AgreementCheck, ErrorInfo, ErrorKind, MemberAnswer, ParseStatus, Synthesis, seats, voice

if TYPE_CHECKING:
    from core.engine.state import CouncilState

STOPPED_BY_USER = "The council was stopped."
INCOMPLETE_SYNTHESIS = "The council was stopped while this answer was being written; it is incomplete."


class Cut(enum.Enum):
    """Why a parallel stage stopped waiting for its remaining calls."""

    STOPPED = "stopped"
    SYNTHESIZE = "synthesize"
    GRACE = "grace"
    TIMEOUT = "timeout"


def stopped() -> ErrorInfo:
    return ErrorInfo(kind=ErrorKind.CANCELLED, message="the council was stopped")


def crash(exc: Exception) -> ErrorInfo:
    return ErrorInfo(kind=ErrorKind.UNKNOWN, message=f"internal error: {type(exc).__name__}: {exc}")


def timed_out(timeout_s: float) -> ErrorInfo:
    return ErrorInfo(kind=ErrorKind.TIMEOUT, message=f"no answer within the {secs(timeout_s)} time limit")


def unusable_synthesis(reason: str) -> ErrorInfo:
    return ErrorInfo(kind=ErrorKind.BAD_RESPONSE, message=f"its synthesis was unusable: {reason}")


def cut_reason(
    cut: Cut, noun: str, plural: str, succeeded: int, total: int, grace_s: float, timeout_s: float
) -> ErrorInfo:
    """Why a call of a parallel stage was cut short (CANCELLED ones were the user's choice)."""
    if cut is Cut.STOPPED:
        return stopped()
    if cut is Cut.SYNTHESIZE:
        return ErrorInfo(kind=ErrorKind.CANCELLED, message="skipped: you asked to synthesize now")
    if cut is Cut.GRACE:
        return ErrorInfo(
            kind=ErrorKind.TIMEOUT,
            message=(
                f"no {noun} within the {secs(grace_s)} grace period after {succeeded} of {total} {plural} answered"
            ),
        )
    return ErrorInfo(kind=ErrorKind.TIMEOUT, message=f"no {noun} within the {secs(timeout_s)} time limit")


def no_answer_error(state: CouncilState) -> ErrorInfo:
    answers = [state.answers[m] for m in state.members]
    if not answers:
        return ErrorInfo(kind=ErrorKind.CONFIG, message="No council members are configured.")
    why = causes(answers)
    kinds = {a.error.kind for a in answers if a.error}
    kind = kinds.pop() if len(kinds) == 1 else ErrorKind.UNKNOWN
    if state.control.synthesize_requested and state.skipped:
        return ErrorInfo(kind=kind, message=f"No council member had answered when you asked to synthesize: {why}")
    if len(answers) == 1:
        return ErrorInfo(kind=kind, message=f"The only council member failed: {why}")
    return ErrorInfo(kind=kind, message=f"All {len(answers)} council members failed: {why}")


def result_notices(state: CouncilState) -> list[str]:
    notes = []
    if state.synthesis is not None and state.synthesis.note:
        notes.append(state.synthesis.note)  # a degraded synthesis says so first
    notes += [
        voice.no_answer(a)
        for a in state.answers.values()
        if a.error is not None and (a.seat or a.model) not in state.skipped and state.label_to_model
    ]
    notes += [f"Seat {a.seat}: {note}" for a in state.answers.values() if (note := fallback_note(a))]
    notes += _skipped_notes(state, "answers", [m for m in state.members if m in state.skipped])
    notes += _review_notes(state)
    notes += [state.fact_check_note] if state.fact_check_note else []
    if state.agreement is not None:
        answer = state.answer_of(state.synthesis.model) if state.synthesis and state.synthesis.agreed else None
        note = agreement_notice(state.agreement, state.synthesis, answer.label if answer else None)
        notes += [note] if note else []
    return notes


def _skipped_notes(state: CouncilState, what: str, models: list[str]) -> list[str]:
    if not models:
        return []
    why = "the council was stopped" if state.control.stopped else "you asked to synthesize now"
    return [f"No {what} from {', '.join(models)}: {why}."]


def _review_notes(state: CouncilState) -> list[str]:
    notes = []
    for r in state.reviews.values():
        if r.error is not None and not state.review_skipped(r.reviewer):
            notes.append(f"The review by {r.reviewer} failed: {r.error.short()}")
        elif r.text is not None and r.parse_status is ParseStatus.NONE:
            notes.append(f"The review by {r.reviewer} contained no ranking that could be read.")
    skipped = [r.reviewer for r in state.reviews.values() if state.review_skipped(r.reviewer)]
    notes += _skipped_notes(state, "reviews", skipped)
    if state.stage2_skipped_by_user:
        notes.append("The peer reviews were skipped because you asked to synthesize now.")
    elif state.aggregate is not None and state.aggregate.ballots_used == 0:
        if not state.reviews:
            why = "there was no other answer to review"
        elif len(skipped) == len(state.reviews):
            why = "the reviews were skipped because you asked to synthesize now"
        else:
            why = "no review produced a readable ranking"
        notes.append(f"Ranking unavailable: {why}.")
    return notes


def fallback_note(answer: MemberAnswer) -> str | None:
    """Why a seat's answer came from a fallback model (None when its primary answered)."""
    return seats.fallback_note(answer.model, answer.attempts) if answer.ok else None


def causes(answers: list[MemberAnswer]) -> str:
    """'m1: cause; m2: cause', or 'm1, m2: cause' when they failed alike (a bad key, say)."""
    by_cause: dict[str, list[str]] = {}
    for answer in answers:
        by_cause.setdefault(answer.error.short() if answer.error else "no answer", []).append(answer.model)
    return "; ".join(f"{', '.join(models)}: {cause}" for cause, models in by_cause.items())


def secs(value: float) -> str:
    return f"{value:g} s"


def agreement_notice(check: AgreementCheck, synthesis: Synthesis | None, label: str | None) -> str | None:
    """What an auto council's result says about its first two answers (None: nothing worth a line)."""
    if check.escalated:
        return f"Auto mode escalated: {check.reason}, so the whole council deliberated."
    if synthesis is not None and synthesis.agreed:
        return voice.stood_as_written(check, synthesis, label)
    return None
