"""Who wrote a council's answer, and the sentence that says so: the chairman, a member's answer
standing as written (auto mode: the first two answers agreed), or a stand-in for a failed chairman."""

from __future__ import annotations

from enum import Enum

from core.models.stages import AgreementCheck, CouncilResult, Synthesis


class Author(str, Enum):
    """Who wrote a council's answer."""

    CHAIRMAN = "chairman"  # the chairman (one of its seat's models) synthesized it
    AS_WRITTEN = "as_written"  # auto mode: the first two answers agreed, a member's stands as written
    STAND_IN = "stand_in"  # the chairman failed: a member synthesized it, or the best answer as written


def author_of(synthesis: Synthesis) -> Author:
    if synthesis.by_chairman:
        return Author.CHAIRMAN
    return Author.AS_WRITTEN if synthesis.agreed else Author.STAND_IN


STANDING_IN = "standing in for the chairman"  # a stand-in's part, wherever its name is shown


def written_by(synthesis: Synthesis, name: str | None = None) -> str:
    """Who wrote the answer, to follow "Final answer" or "Council answer": `by the chairman, beta`,
    `as written by alpha`, `by gamma, standing in for the chairman`. `name`: the model as shown
    (short_model on a chat platform; the full id by default)."""
    model = name or synthesis.model
    return {
        Author.CHAIRMAN: f"by the chairman, {model}",
        Author.AS_WRITTEN: f"as written by {model}",
        Author.STAND_IN: f"by {model}, {STANDING_IN}",
    }[author_of(synthesis)]


def stand_in_note(synthesis: Synthesis) -> str | None:
    """Why a stand-in wrote the answer, said before the answer (a degraded result never wears the
    chairman's title); None when the chairman wrote it or the first two answers agreed."""
    if author_of(synthesis) is not Author.STAND_IN:
        return None
    return synthesis.note or f"The chairman failed; {synthesis.model} wrote this answer instead."


def chairman_replaced(chairman: str, writer: str) -> str:
    """Said before a stand-in's streamed answer (its note, with the cause, comes once it has finished)."""
    return f"The chairman {chairman} failed; {writer} wrote this answer instead."


def writer_replaced(previous: str, writer: str) -> str:
    """Said live when the model writing the answer stopped and another takes over."""
    return f"{previous} stopped; {writer} writes the answer."


def stood_as_written(check: AgreementCheck | None, synthesis: Synthesis, label: str | None) -> str:
    """Why a member's answer stands as written in auto mode (one of the result's notices)."""
    reason = check.reason if check is not None else "the first two answers agreed"
    response = f"Response {label} (by {synthesis.model})" if label else f"the answer by {synthesis.model}"
    return f"Auto mode: {reason}; this is {response} as written."


def author_note(result: CouncilResult) -> str | None:
    """The sentence that says who wrote the answer when it was not simply the chairman: the
    stand-in's note, or why an answer stands as written."""
    synthesis = result.synthesis
    if synthesis is None:
        return None
    if author_of(synthesis) is Author.AS_WRITTEN:
        label = next((a.label for a in result.answers if a.model == synthesis.model and a.label), None)
        return stood_as_written(result.agreement, synthesis, label)
    return stand_in_note(synthesis)


def other_notices(result: CouncilResult) -> list[str]:
    """The result's notices but the one `author_note` says (shown with the answer's author)."""
    said = author_note(result)
    synthesis = result.synthesis
    stored_note = synthesis.note if synthesis is not None and author_of(synthesis) is Author.STAND_IN else None
    return [n for n in result.notices if n not in (said, stored_note)]
