"""Whether a synthesis can stand as the council's final answer.

A chairman can fail without an error, small models especially: it echoes the prompt's markers,
stops after a lead-in ("The answer to this question is:"), or copies the prompt's instructions
and reviews back. Such a synthesis is degenerate and is treated like a failed chairman (see
core/engine/council.py, stage 3). Copying one of the members' answers is not degenerate: that answer
is a real answer to the question.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from core.markers import MarkerFilter

# Near-empty: fewer words than this, and fewer than this share of the shortest member answer
# (so that "Paris." still stands when the members answered "Paris" too).
NEAR_EMPTY_WORDS = 8
NEAR_EMPTY_SHARE = 0.25
# A short text ending in a colon announces an answer it never gives ("The answer to this question is:").
LEAD_IN_WORDS = 20
# Mostly a copy of the prompt: this share of the synthesis' word n-grams occurs in the prompt's
# own text (its instructions, the question, the reviews) and in no member answer.
COPY_NGRAM = 5
COPY_SHARE = 0.5
_MIN_NGRAMS = 3  # below this a text is too short to call a copy

_WORD = re.compile(r"\w+")


class SynthesisJudge:
    """Judges the syntheses written from one prompt (the prompt's n-grams are counted once)."""

    def __init__(self, prompt: str = "", answers: Sequence[str] = ()):
        answer_words = [_words(answer) for answer in answers]
        self._shortest_answer = min((len(words) for words in answer_words), default=NEAR_EMPTY_WORDS)
        from_answers = {gram for words in answer_words for gram in _ngrams(words)}
        self._copyable = set(_ngrams(_words(prompt))) - from_answers

    def reason(self, text: str, *, markers: int, finished: bool = True) -> str | None:
        """Why `text` (already stripped of `markers` markers) is no usable synthesis, or None.

        With `finished=False` (a stream in progress) only what more text cannot repair is judged.
        """
        if markers:
            return "it repeated the prompt's internal markers"
        words = _words(text)
        if finished and len(words) < min(NEAR_EMPTY_WORDS, NEAR_EMPTY_SHARE * self._shortest_answer):
            return f"it is nearly empty ({_count(len(words), 'word')})"
        if finished and len(words) < LEAD_IN_WORDS and text.rstrip().endswith(":"):
            return f"it stops after a lead-in ({_count(len(words), 'word')} ending in a colon)"
        grams = _ngrams(words)
        if len(grams) >= _MIN_NGRAMS:
            copied = sum(1 for gram in grams if gram in self._copyable) / len(grams)
            if copied >= COPY_SHARE:
                return f"it mostly copies the prompt ({copied:.0%} of it is the prompt's own text)"
        return None


class SynthesisScreen:
    """What of a streamed synthesis may be shown, and whether it can stand at all.

    Markers are removed as the text arrives (MarkerFilter). The opening is held back until it
    has OPENING_WORDS words and passes the judge, so that a synthesis that only echoes markers,
    or stops after a lead-in, is never shown. After that the text flows, until a marker turns
    up: from then on nothing more is shown and `reason` says why the synthesis is unusable.
    """

    OPENING_WORDS = 12

    def __init__(self, judge: SynthesisJudge, nonces: Iterable[str] = (), *, unquote: bool = False):
        self.judge = judge
        self.markers = MarkerFilter(nonces)
        # The brief prompt quotes the answers with "> "; small models copy that style line by line.
        self._unquote = LineUnquoter() if unquote else None
        self.reason: str | None = None
        self._held: str | None = ""  # the opening not shown yet; None once it was
        self._text = ""

    @property
    def text(self) -> str:
        """The synthesis without markers (shown or still held)."""
        return self._text

    def feed(self, piece: str) -> str:
        """The text to show now for `piece` ("" while held, or once the synthesis is unusable)."""
        if self.reason is not None:
            return ""
        return self._release(self._clean(self.markers.feed(piece)), finished=False)

    def finish(self) -> str:
        """The rest to show once the synthesis is complete ("" when it turned out unusable)."""
        if self.reason is not None:
            return ""
        return self._release(self._clean(self.markers.flush()), finished=True)

    def _clean(self, piece: str) -> str:
        if self._unquote is not None:
            piece = self._unquote.feed(piece)
        self._text += piece
        return piece

    def _release(self, clean: str, *, finished: bool) -> str:
        if self.markers.markers:
            self.reason = self.judge.reason(self.text, markers=self.markers.markers)
            return ""
        if self._held is None:  # shown since the opening; a copy can still show at the end
            self.reason = self.judge.reason(self.text, markers=0) if finished else None
            return clean if self.reason is None else ""
        self._held += clean
        if not finished and len(_words(self.text)) < self.OPENING_WORDS:
            return ""
        self.reason = self.judge.reason(self.text, markers=0, finished=finished)
        if self.reason is not None:
            return ""
        shown, self._held = self._held, None
        return shown


class LineUnquoter:
    """Removes one quote mark ("> " or ">") at the start of every line of a streamed text."""

    def __init__(self) -> None:
        self._line_start = True
        self._after_mark = False

    def feed(self, piece: str) -> str:
        out = []
        for char in piece:
            if self._line_start and char == ">":
                self._line_start, self._after_mark = False, True
                continue
            if self._after_mark and char == " ":
                self._after_mark = False
                continue
            self._after_mark = False
            self._line_start = char == "\n"
            out.append(char)
        return "".join(out)


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def _ngrams(words: list[str]) -> list[tuple[str, ...]]:
    return [tuple(words[i : i + COPY_NGRAM]) for i in range(len(words) - COPY_NGRAM + 1)]


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")
