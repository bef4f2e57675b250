"""A running council's events in memory, numbered, for the listeners that follow it (core/durable/runs.py).

Each event gets a number (from 1, in the council's order) that never changes: a listener resumes
after the last number it saw (an SSE client's Last-Event-ID). What the log holds is bounded by the
council, not by time: once the synthesis is complete, each model's run of ChairmanToken events (a
few hundred small pieces) becomes one token holding its whole text, numbered as its last piece
and remembering where each piece ended in it; a listener that had read part of that run (or
resumes after one of its numbers) gets the rest of the text, never a piece twice. When the
council has finished and nobody listens, the log is let go (`forget`): the run keeps its result,
and later listeners get the council's story from it (core/records/story.py).
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from dataclasses import dataclass

from core.models import ChairmanToken, CouncilEvent


@dataclass(slots=True)
class Logged:
    number: int
    event: CouncilEvent
    # A merged ChairmanToken: the numbers its pieces had, and where each piece's text ends in it.
    numbers: array[int] | None = None
    ends: array[int] | None = None

    def read_from(self, cursor: int) -> CouncilEvent | None:
        """The event as a listener reading from number `cursor` gets it: of a merged token, the
        text of the pieces numbered `cursor` and after (None: nothing of it is new)."""
        event, numbers, ends = self.event, self.numbers, self.ends
        if numbers is None or ends is None or cursor <= numbers[0]:
            return event
        assert isinstance(event, ChairmanToken)
        start = ends[bisect_left(numbers, cursor) - 1]
        return event.model_copy(update={"delta": event.delta[start:]}) if start < len(event.delta) else None


class EventLog:
    def __init__(self) -> None:
        self._entries: list[Logged] = []
        self.next_number = 1
        self.kept = True  # False once forgotten: the finished council's result tells the rest

    def append(self, event: CouncilEvent) -> None:
        self._entries.append(Logged(self.next_number, event))
        self.next_number += 1

    def since(self, number: int) -> list[Logged]:
        """The entries holding events numbered `number` and after (a merged token: any piece)."""
        return self._entries[bisect_left(self._entries, number, key=_last_number) :]

    def forget(self) -> None:
        self._entries = []
        self.kept = False

    def merge_tokens(self) -> None:
        """Each model's consecutive ChairmanTokens (a fallback changes the model) become one, at
        the place of its last piece; the events between them keep theirs."""
        tokens = [entry for entry in self._entries if isinstance(entry.event, ChairmanToken)]
        if len(tokens) < 2:
            return
        merged = {run[-1].number: _merged(run) for run in _runs_by_model(tokens)}
        self._entries = [
            merged.get(entry.number, entry)
            for entry in self._entries
            if not isinstance(entry.event, ChairmanToken) or entry.number in merged
        ]


def _runs_by_model(tokens: list[Logged]) -> list[list[Logged]]:
    runs: list[list[Logged]] = []
    for entry in tokens:
        if runs and _model(runs[-1][-1]) == _model(entry):
            runs[-1].append(entry)
        else:
            runs.append([entry])
    return runs


def _merged(pieces: list[Logged]) -> Logged:
    """One token holding `pieces` (some may be merged already), numbered as the last."""
    numbers, ends, text = array("q"), array("q"), []
    length = 0
    for piece in pieces:
        assert isinstance(piece.event, ChairmanToken)
        delta = piece.event.delta
        if piece.numbers is not None and piece.ends is not None:
            numbers.extend(piece.numbers)
            ends.extend(length + end for end in piece.ends)
        else:
            numbers.append(piece.number)
            ends.append(length + len(delta))
        text.append(delta)
        length += len(delta)
    last = pieces[-1]
    return Logged(last.number, last.event.model_copy(update={"delta": "".join(text)}), numbers, ends)


def _last_number(entry: Logged) -> int:
    return entry.number


def _model(entry: Logged) -> str:
    assert isinstance(entry.event, ChairmanToken)
    return entry.event.model
