"""Folds council events into a progress state that every adapter renders the same way."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from core.models import (
    AggregateReady,
    AgreementCheck,
    AgreementChecked,
    AgreementStarted,
    ChairmanFinished,
    ChairmanToken,
    CouncilEvent,
    CouncilFinished,
    CouncilQueued,
    CouncilResult,
    CouncilStarted,
    MemberFailed,
    MemberFinished,
    MemberStarted,
    MemberWaiting,
    ReviewFinished,
    RevisionFinished,
    RoundFinished,
    RoundStarted,
    SchedulePlanned,
    StageStarted,
    seats,
)
from core.models.voice import round_line


@dataclass
class MemberState:
    model: str
    state: str = "thinking"  # waiting (for memory) | thinking | answered | failed
    detail: str = ""
    latency_s: float | None = None


@dataclass
class CouncilProgress:
    council_id: str
    stage: int = 0
    queued_position: int | None = None
    members: dict[str, MemberState] = field(default_factory=dict)
    chairman: str | None = None
    reviews_done: int = 0
    reviews_parsed: int = 0
    reviews_expected: int = 0
    chairman_text: str = ""
    chairman_model: str | None = None
    result: CouncilResult | None = None
    # Auto mode: the judge comparing the first two answers, then what was decided.
    judging: str | None = None
    agreement: AgreementCheck | None = None
    schedule: str | None = None  # the members' batches when they do not fit in memory at once
    # Refine mode: the round under way (None: none), its revisions so far, and each finished round's line.
    revising: int | None = None
    revisions_done: int = 0
    revisions_expected: int = 0
    rounds: list[str] = field(default_factory=list)
    mode: str = "standard"  # the council's: a quick council's chairman compares, not synthesizes

    @property
    def escalated(self) -> bool:
        """Auto mode's check found the first two answers apart: the other members answer now."""
        return self.agreement is not None and self.agreement.escalated

    def apply(self, event: CouncilEvent) -> None:
        """Update from one event. Unknown event kinds are ignored on purpose (forward-compatible).
        One table lookup: this runs for every token of every council a bot follows."""
        update = _UPDATES.get(type(event))
        if update is not None:
            update(self, event)

    def _queued(self, event: CouncilQueued) -> None:
        self.queued_position = event.position

    def _started(self, event: CouncilStarted) -> None:
        self.queued_position = None
        self.chairman = event.chairman
        for model in event.members:
            self.members.setdefault(model, MemberState(model))

    def _stage(self, event: StageStarted) -> None:
        self.stage = event.stage
        if event.stage == 2:
            self.reviews_expected = sum(1 for m in self.members.values() if m.state == "answered")

    def _scheduled(self, event: SchedulePlanned) -> None:
        self.schedule = event.line

    def _member_waiting(self, event: MemberWaiting) -> None:
        self.members[event.model] = MemberState(event.model, "waiting")

    def _member_started(self, event: MemberStarted) -> None:
        member = self.members.setdefault(event.model, MemberState(event.model))
        if member.state == "waiting":
            member.state = "thinking"

    def _answered(self, event: MemberFinished) -> None:
        answer = event.answer
        # Keyed by seat: a fallback model answers in its seat's row, which says so.
        self.members[answer.seat or answer.model] = MemberState(
            answer.model,
            "answered",
            detail=seats.fallback_note(answer.model, answer.attempts) or "",
            latency_s=answer.latency_s,
        )

    def _member_failed(self, event: MemberFailed) -> None:
        error = event.answer.error
        self.members[event.answer.seat or event.answer.model] = MemberState(
            event.answer.model, "failed", detail=error.short() if error else "failed"
        )

    def _reviewed(self, event: ReviewFinished) -> None:
        self.reviews_done += 1
        if event.review.ballot_labels:
            self.reviews_parsed += 1

    def _judging(self, event: AgreementStarted) -> None:
        self.judging = event.judge

    def _agreement(self, event: AgreementChecked) -> None:
        self.judging = None
        self.agreement = event.check

    def _round_started(self, event: RoundStarted) -> None:
        self.revising = event.number
        self.revisions_done, self.revisions_expected = 0, len(event.members)

    def _revised(self, event: RevisionFinished) -> None:
        self.revisions_done += 1

    def _round_finished(self, event: RoundFinished) -> None:
        self.revising = None
        self.rounds.append(round_line(event.round))

    def _aggregated(self, event: AggregateReady) -> None:
        self.stage = max(self.stage, 2)

    def _token(self, event: ChairmanToken) -> None:
        self.stage = 3
        if self.chairman_model != event.model:
            # A fallback synthesizer restarts the text.
            self.chairman_model = event.model
            self.chairman_text = ""
        self.chairman_text += event.delta

    def _synthesized(self, event: ChairmanFinished) -> None:
        self.chairman_text = event.synthesis.text
        self.chairman_model = event.synthesis.model

    def _finished(self, event: CouncilFinished) -> None:
        self.result = event.result

    @property
    def done(self) -> bool:
        return self.result is not None

    def counts(self) -> tuple[int, int, int]:
        """(answered, failed, thinking): a member waiting for memory counts as thinking."""
        states = [m.state for m in self.members.values()]
        return states.count("answered"), states.count("failed"), states.count("thinking") + states.count("waiting")


# Each event kind and how it updates the progress (events are final classes: the type is the kind).
_UPDATES: dict[type, Callable[[CouncilProgress, Any], None]] = {
    CouncilQueued: CouncilProgress._queued,
    CouncilStarted: CouncilProgress._started,
    StageStarted: CouncilProgress._stage,
    SchedulePlanned: CouncilProgress._scheduled,
    MemberStarted: CouncilProgress._member_started,
    MemberWaiting: CouncilProgress._member_waiting,
    MemberFinished: CouncilProgress._answered,
    MemberFailed: CouncilProgress._member_failed,
    ReviewFinished: CouncilProgress._reviewed,
    AgreementStarted: CouncilProgress._judging,
    AgreementChecked: CouncilProgress._agreement,
    RoundStarted: CouncilProgress._round_started,
    RevisionFinished: CouncilProgress._revised,
    RoundFinished: CouncilProgress._round_finished,
    AggregateReady: CouncilProgress._aggregated,
    ChairmanToken: CouncilProgress._token,
    ChairmanFinished: CouncilProgress._synthesized,
    CouncilFinished: CouncilProgress._finished,
}
