"""Where the members stand (the result's `disagreement`): the synthesizer's "WHERE THEY DIFFER"
section, read by the Rust module (its format: rust/ranking/src/disagreement.rs), and, for the
parts it did not write (`agreed`, `unique`), the measure of the same module over the member
answers.

The section ends the synthesis; `SectionScreen` takes it off the streamed text, so that no
surface shows it as part of the answer: a line that may still turn out to be its header is held
until its end (or until it is too long to be one), and from the header on nothing is shown. What
the section says is model text: labels the council did not use are dropped (Rust), markers are
removed (here), and each part and text is bounded (Rust)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from core import ranking
from core.engine.quick import ScreenInFront
from core.models import ContestedPoint, Disagreement, MemberAnswer, Side, UniqueClaim
from core.shared import markers

if TYPE_CHECKING:
    from core.engine.quick import Screen
    from core.engine.state import CouncilState

# A line longer than this (decoration included) is no header: it is shown without waiting for its end.
HEADER_LINE_CHARS = 60


class SectionScreen(ScreenInFront):
    """A screen that passes the synthesis on to `inner` until the section's header, and keeps the rest."""

    def __init__(self, inner: Screen) -> None:
        super().__init__(inner)
        self.section: str | None = None  # from the header line on, once it came
        self._line = ""  # the current line while it may be the header
        self._open = False  # the current line was passed on already (it is no header)

    def feed(self, piece: str) -> str:
        if self.section is not None:
            self.section += piece
            return ""
        shown = []
        while piece:
            line, newline, piece = piece.partition("\n")
            if self._open:  # the rest of a line that is no header
                shown.append(self.inner.feed(line + newline))
                self._open = not newline
                continue
            self._line += line
            if newline and ranking.is_disagreement_header(self._line):
                self.section, self._line = self._line + "\n" + piece, ""
                return "".join(shown)
            if newline or len(self._line) > HEADER_LINE_CHARS:
                held, self._line = self._line + newline, ""
                shown.append(self.inner.feed(held))
                self._open = not newline
        return "".join(shown)

    def finish(self) -> str:
        shown = ""
        if self.section is None and self._line:
            if ranking.is_disagreement_header(self._line):
                self.section = self._line
            else:
                shown = self.inner.feed(self._line)
            self._line = ""
        return shown + self.inner.finish()


def account(state: CouncilState, answers: list[MemberAnswer]) -> Disagreement:
    """The disagreement of a council with a synthesis: what its section wrote, the rest measured."""
    nonces = state.nonces()
    written = (
        ranking.parse_disagreement(state.chair_section, list(state.label_to_model)) if state.chair_section else None
    )
    result = Disagreement()
    if written is not None:
        _take_written(result, written, state.label_to_model, lambda text: markers.strip_markers(text, nonces).strip())
    answered = [a for a in answers if a.ok and a.text]
    if len(answered) >= 2 and not (result.agreed and result.unique):
        measured = ranking.measure_disagreement([markers.strip_markers(a.text or "", nonces) for a in answered])
        if not result.agreed:
            result.agreed = measured.agreed
            result.measured.append("agreed")
        if not result.unique:
            result.unique = [UniqueClaim(member=answered[i].model, claim=claim) for i, claim in measured.unique]
            result.measured.append("unique")
    return result


def _take_written(
    result: Disagreement,
    written: ranking.WrittenDisagreement,
    label_to_model: dict[str, str],
    clean: Callable[[str], str],
) -> None:
    def texts(items: list[str]) -> list[str]:
        return [t for t in (clean(item) for item in items) if t]

    result.agreed = texts(written.agreed)
    result.open = texts(written.open)
    result.unique = [
        UniqueClaim(member=label_to_model[label], claim=claim)
        for label, text in written.unique
        if (claim := clean(text)) and label in label_to_model
    ]
    for point in written.contested:
        sides = [
            Side(members=[label_to_model[m] for m in side.members if m in label_to_model], position=position)
            for side in point.sides
            if (position := clean(side.position))
        ]
        sides = [side for side in sides if side.members]
        if (text := clean(point.point)) and len(sides) >= 2:
            result.contested.append(ContestedPoint(point=text, sides=sides))
    result.written = [part for part in ("agreed", "contested", "unique", "open") if getattr(result, part)]
