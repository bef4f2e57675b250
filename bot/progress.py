"""Folds council events into a progress state that every adapter renders the same way."""

from __future__ import annotations

from dataclasses import dataclass, field

from core import seats
from core.models import (
    AggregateReady,
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
    ReviewFinished,
    StageStarted,
)


@dataclass
class MemberState:
    model: str
    state: str = "thinking"  # thinking | answered | failed
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

    def apply(self, event: CouncilEvent) -> None:
        """Update from one event. Unknown event kinds are ignored on purpose (forward-compatible)."""
        if isinstance(event, CouncilQueued):
            self.queued_position = event.position
        elif isinstance(event, CouncilStarted):
            self.queued_position = None
            self.chairman = event.chairman
            for model in event.members:
                self.members.setdefault(model, MemberState(model))
        elif isinstance(event, StageStarted):
            self.stage = event.stage
            if event.stage == 2:
                self.reviews_expected = sum(1 for m in self.members.values() if m.state == "answered")
        elif isinstance(event, MemberStarted):
            self.members.setdefault(event.model, MemberState(event.model))
        elif isinstance(event, MemberFinished):
            answer = event.answer
            # Keyed by seat: a fallback model answers in its seat's row, which says so.
            self.members[answer.seat or answer.model] = MemberState(
                answer.model,
                "answered",
                detail=seats.fallback_note(answer.model, answer.attempts) or "",
                latency_s=answer.latency_s,
            )
        elif isinstance(event, MemberFailed):
            error = event.answer.error
            self.members[event.answer.seat or event.answer.model] = MemberState(
                event.answer.model, "failed", detail=error.short() if error else "failed"
            )
        elif isinstance(event, ReviewFinished):
            self.reviews_done += 1
            if event.review.ballot_labels:
                self.reviews_parsed += 1
        elif isinstance(event, AggregateReady):
            self.stage = max(self.stage, 2)
        elif isinstance(event, ChairmanToken):
            self.stage = 3
            if self.chairman_model != event.model:
                # A fallback synthesizer restarts the text.
                self.chairman_model = event.model
                self.chairman_text = ""
            self.chairman_text += event.delta
        elif isinstance(event, ChairmanFinished):
            self.chairman_text = event.synthesis.text
            self.chairman_model = event.synthesis.model
        elif isinstance(event, CouncilFinished):
            self.result = event.result

    @property
    def done(self) -> bool:
        return self.result is not None

    def counts(self) -> tuple[int, int, int]:
        """(answered, failed, thinking)."""
        states = [m.state for m in self.members.values()]
        return states.count("answered"), states.count("failed"), states.count("thinking")
