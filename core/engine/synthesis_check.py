"""Whether a synthesis can stand as the council's final answer.

A chairman can fail without an error, small models especially: it echoes the prompt's markers,
stops after a lead-in ("The answer to this question is:"), or copies the prompt's instructions
and reviews back. Such a synthesis is degenerate and is treated like a failed chairman (see
core/engine/council.py, stage 3).

Not everything in the prompt is the prompt's own voice. The members' answers, the question, the
thread's earlier turns, attached files and search results are material the synthesis is meant to
use: restating the question, quoting a member or repeating the thread's earlier answer is what a
good synthesis does. Only what is left of the prompt once that material is cut out (its
instructions, the reviews, the ranking table, the markers) counts as copying.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from core.shared.markers import MarkerFilter

# Near-empty: fewer words than this, and fewer than this share of the shortest member answer
# (so that "Paris." still stands when the members answered "Paris" too).
NEAR_EMPTY_WORDS = 8
NEAR_EMPTY_SHARE = 0.25
# A short text ending in a colon announces an answer it never gives ("The answer to this question is:").
LEAD_IN_WORDS = 20
# Mostly a copy of the prompt: this share of the synthesis' word n-grams occurs in the prompt's
# own text (its instructions, the reviews, the ranking) and in none of the material it quotes.
COPY_NGRAM = 5
COPY_SHARE = 0.5
# Below this many words an opening is too short to call a copy: a sentence may well share a phrase
# with the instructions ("Here is the single best final answer for the user: ..."). A streamed
# opening that looks like a copy is held until it has this many words, then judged.
COPY_MIN_WORDS = 40
# A complete synthesis shorter than that is judged too, if this many of its n-grams (ten words and
# more) are the prompt's own: "The final answer to the question is 42." is an answer, and
# "Combine the answers above into one final answer to the question." is an echo.
COPY_MIN_GRAMS = 6

_WORD = re.compile(r"\w+")


class SynthesisJudge:
    """Judges the syntheses written from one prompt (the prompt's n-grams are counted once).

    `prompt`: everything the synthesizer was given. `answers`: the members' answers. `material`:
    the rest of what the prompt quotes for the synthesis to use (the question, the thread's earlier
    turns, file texts, search results). Answers and material are cut out of the prompt before its
    n-grams are taken, so none spans a quoted text and the words around it either.
    """

    def __init__(
        self, prompt: str = "", answers: Sequence[str] = (), material: Sequence[str] = (), *, structured: bool = False
    ):
        # A JSON answer (the API's response_format) is judged by its schema, not by its length:
        # `{"answer": 42}` is complete.
        self._structured = structured
        answer_words = [_words(answer) for answer in answers]
        self._shortest_answer = min((len(words) for words in answer_words), default=NEAR_EMPTY_WORDS)
        quoted = [words for words in (*answer_words, *(_words(text) for text in material)) if words]
        usable = {gram for words in quoted for gram in _ngrams(words)}
        own = (gram for segment in _cut_out(_words(prompt), quoted) for gram in _ngrams(segment))
        self._copyable = set(own) - usable

    def reason(self, text: str, *, markers: int, finished: bool = True) -> str | None:
        """Why `text` (already stripped of `markers` markers) is no usable synthesis, or None.

        With `finished=False` (a stream in progress) only what more text cannot repair is judged.
        """
        if markers:
            return "it repeated the prompt's internal markers"
        words = _words(text)
        by_length = finished and not self._structured
        if by_length and len(words) < min(NEAR_EMPTY_WORDS, NEAR_EMPTY_SHARE * self._shortest_answer):
            return f"it is nearly empty ({_count(len(words), 'word')})"
        if by_length and len(words) < LEAD_IN_WORDS and text.rstrip().endswith(":"):
            return f"it stops after a lead-in ({_count(len(words), 'word')} ending in a colon)"
        copied, share = self._copied(words)
        if share >= COPY_SHARE and (len(words) >= COPY_MIN_WORDS or (finished and copied >= COPY_MIN_GRAMS)):
            return f"it mostly copies the prompt ({share:.0%} of it is the prompt's own text)"
        return None

    def undecided(self, text: str) -> bool:
        """Whether `text` (a streamed opening) looks like a copy but is too short to be judged one."""
        words = _words(text)
        return len(words) < COPY_MIN_WORDS and self._copied(words)[1] >= COPY_SHARE

    def _copied(self, words: list[str]) -> tuple[int, float]:
        """How many of the n-grams of `words` are the prompt's own text, and their share."""
        grams = _ngrams(words)
        copied = sum(1 for gram in grams if gram in self._copyable)
        return copied, copied / len(grams) if grams else 0.0


class SynthesisScreen:
    """What of a streamed synthesis may be shown, and whether it can stand at all.

    Markers are removed as the text arrives (MarkerFilter). The opening is held back until it
    has OPENING_WORDS words and passes the judge, so that a synthesis that only echoes markers,
    or stops after a lead-in, is never shown; an opening that looks like a copy of the prompt is
    held until it is long enough to be judged (SynthesisJudge.undecided). After that the text
    flows, until a marker turns up: from then on nothing more is shown and `reason` says why the
    synthesis is unusable.
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
        if not finished and (len(_words(self.text)) < self.OPENING_WORDS or self.judge.undecided(self.text)):
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


def _cut_out(words: list[str], quoted: Sequence[list[str]]) -> list[list[str]]:
    """`words` split into the runs left between occurrences of the `quoted` word sequences."""
    text = f" {' '.join(words)} "
    for run in sorted(quoted, key=len, reverse=True):  # a longer quote first: it may hold a shorter one
        needle = f" {' '.join(run)} "
        pieces, start = [], 0
        # str.find, not a regex: a quote is thousands of words, compiling it would cost more than the rest.
        while (found := text.find(needle, start)) != -1:
            pieces.append(text[start : found + 1])
            start = found + len(needle) - 1  # its closing space stays: a quote right after it is cut too
        text = "|".join([*pieces, text[start:]])  # "|" is no word: it splits
    return [segment.split() for segment in text.split("|")]


def _ngrams(words: list[str]) -> list[tuple[str, ...]]:
    return [tuple(words[i : i + COPY_NGRAM]) for i in range(len(words) - COPY_NGRAM + 1)]


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")
