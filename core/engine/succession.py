"""Who writes the synthesis, and what the Synthesis says about it.

The chairman is a seat: when one of its models fails, the next of its chain writes, in an equal
share of the time left. When all fail, the best-ranked member outside the chain stands in, and
failing that, the best-ranked answer is given as written. Each ending's note says which."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass

from core.engine import notices
from core.engine.chair_prompt import ranked_members
from core.engine.state import CouncilState
from core.engine.stream import StreamEnded
from core.models import Attempt, ErrorInfo, Synthesis, seats


@dataclass(frozen=True)
class Turn:
    """One synthesizer's go: a model of the chairman's chain, or the stand-in member."""

    model: str
    by_chairman: bool
    timeout_s: float | None = None  # a chain model's share of the time left; None: member_timeout_s


class Succession:
    """The synthesizers of one council in turn, and the failures so far."""

    def __init__(self, state: CouncilState) -> None:
        self.state = state
        self.chain = seats.seat_models(state.config.chairman)
        self.attempts: list[Attempt] = []  # the chain's models that failed (Synthesis.attempts)
        self._ranked: list[str] = []
        self._stand_in_failure: str | None = None

    def turns(self) -> Iterator[Turn]:
        """Lazily: each turn starts when the one before has failed (its share is taken then)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.state.config.member_timeout_s
        for index, chairman in enumerate(self.chain):
            yield Turn(chairman, by_chairman=True, timeout_s=(deadline - loop.time()) / (len(self.chain) - index))
        self._ranked = ranked_members(self.state)
        failed = [a.model for a in self.attempts]
        stand_in = next((m for m in self._ranked if m not in failed), None)
        if stand_in is not None:
            yield Turn(stand_in, by_chairman=False)

    def failed(self, turn: Turn, error: ErrorInfo) -> None:
        if turn.by_chairman:
            self.attempts.append(Attempt(model=turn.model, error=error))
        else:
            self._stand_in_failure = f"the stand-in {turn.model} also failed: {error.short()}"

    def written(self, turn: Turn, ended: StreamEnded) -> Synthesis:
        """The synthesis `turn` completed, with a note when it was not the chain's first model."""
        if turn.by_chairman:
            fallback = seats.fallback_note(turn.model, self.attempts)
            note = f"The chairman {fallback}." if fallback else None
            return written_synthesis(turn.model, ended, by_chairman=True, note=note)
        note = f"{self._chain_failure()}; {turn.model} synthesized this answer instead."
        return written_synthesis(turn.model, ended, by_chairman=False, note=note)

    def as_written(self) -> Synthesis:
        """When no synthesizer wrote one: the top-ranked member answer, as written."""
        cause = self._chain_failure()
        if self._stand_in_failure is not None:
            cause += f"; {self._stand_in_failure}"
        best = self._ranked[0]
        answer = self.state.answer_of(best)
        note = (
            f"{cause}; this is the top-ranked member answer "
            f"(Response {answer.label}, by {best}) as written, without synthesis."
        )
        return Synthesis(model=best, text=answer.text or "", by_chairman=False, note=note)

    def _chain_failure(self) -> str:
        attempts = self.attempts
        if len(attempts) == 1:
            failed = attempts[0].error.short()
        else:
            failed = "; ".join(f"{a.model}: {seats.short_cause(a.error.short())}" for a in attempts)
        return f"The chairman ({', '.join(a.model for a in attempts)}) failed: {failed}"


def written_synthesis(model: str, ended: StreamEnded, *, by_chairman: bool, note: str | None = None) -> Synthesis:
    completion = ended.outcome.completion
    assert completion is not None
    return Synthesis(
        model=model,
        text=ended.text,  # what the tokens showed, without markers
        by_chairman=by_chairman,
        note=note,
        latency_s=ended.outcome.latency_s,
        usage=completion.usage,
    )


def partial_synthesis(state: CouncilState, model: str, ended: StreamEnded) -> Synthesis | None:
    """What a synthesizer had written when the council was stopped (None: nothing usable)."""
    if not ended.text.strip() or ended.unusable:
        return None
    return Synthesis(
        model=model,
        text=ended.text,
        by_chairman=model in seats.seat_models(state.config.chairman),
        note=notices.INCOMPLETE_SYNTHESIS,
        latency_s=ended.outcome.latency_s,
    )
