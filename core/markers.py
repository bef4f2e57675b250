"""Internal prompt markers, kept out of every text a user sees.

The stage 2 and 3 prompts fence model-written text between markers such as
``<<<RESPONSE A 3f9c0d1e2b4a5968>>>`` and ``<<<END REVIEW 2 3f9c0d1e2b4a5968>>>`` (see
core/prompts.py). Small models echo them, often mangled (``<<<RESPONSE 626abc6bbe532717>>``,
``END RESPONSE A``, a bare nonce). What counts as a marker here:

* an opening bracket run, then a fence kind (any case), optionally ``END``, a label and a nonce;
* an upper-case fence kind with ``END`` before it, or a nonce or a closing bracket run after it;
* a nonce of the running council, wherever it appears (``MarkerFilter(nonces=...)``).

Plain words stay: "the response", "END of the REVIEW", "RESPONSES" and Python's ``>>>`` prompt
are ordinary text. A marker is removed with the blanks after it and the end of its line.

`MarkerFilter` does this on a stream: it holds back a tail that could still grow into a marker
until the next pieces settle it, so nothing is ever shown and then taken back.
`strip_markers(text)` is the same rule applied to a whole text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from core.prompts import FENCE_KINDS


@dataclass(frozen=True)
class _Pattern:
    """A regex and its prefix language: `prefix` matches every prefix (empty and whole included)
    of every string `full` matches. Lookaheads go into `full` only, so `prefix` may match more
    than that: holding back a little too much is harmless, too little would leak."""

    full: str
    prefix: str


def _words(*words: str, ignore_case: bool = False) -> _Pattern:
    group = "(?i:" if ignore_case else "(?:"
    prefixes = sorted({word[:end] for word in words for end in range(len(word) + 1)}, key=len, reverse=True)
    return _Pattern(group + "|".join(map(re.escape, words)) + ")", group + "|".join(map(re.escape, prefixes)) + ")")


def _chars(cls: str, least: int, most: int | None = None) -> _Pattern:
    top = "" if most is None else str(most)
    return _Pattern(f"{cls}{{{least},{top}}}", f"{cls}{{0,{top}}}")


def _seq(*parts: _Pattern) -> _Pattern:
    fulls = [part.full for part in parts]
    prefixes = ["".join(fulls[:i]) + part.prefix for i, part in enumerate(parts)]
    return _Pattern("".join(fulls), "(?:" + "|".join(prefixes) + ")")


def _opt(part: _Pattern) -> _Pattern:
    return _Pattern(f"(?:{part.full})?", part.prefix)


def _alt(*parts: _Pattern) -> _Pattern:
    return _Pattern(
        "(?:" + "|".join(part.full for part in parts) + ")", "(?:" + "|".join(part.prefix for part in parts) + ")"
    )


def _repeated(part: _Pattern, least: int) -> _Pattern:
    """`part` `least` or more times (0 or 1)."""
    return _Pattern(f"(?:{part.full}){'*+'[least]}", f"(?:{part.full})*{part.prefix}")


def _guarded(part: _Pattern, before: str = "", after: str = "") -> _Pattern:
    # A lookbehind holds for prefixes as well; a lookahead can only be checked on the whole.
    return _Pattern(before + part.full + after, before + part.prefix)


_NOT_IN_WORD = "(?<![A-Za-z0-9])"
_WORD_ENDS = "(?![A-Za-z0-9])"
_BLANK = "[ \\t]"
_NONCE_CHARS = _chars("[0-9a-f]", 8, 32)  # 16 in our fences; echoes lose or repeat a few
_MAX_HELD = 200  # characters; a real marker is under 60


# One entry per running council (its nonces): compiling costs ~16 ms, so a council must not
# compile again because 64 others ran in between (200 concurrent councils did).
@lru_cache(maxsize=2048)
def _marker(nonces: tuple[str, ...]) -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    """The compiled patterns of a marker given the running council's nonces: the marker, its
    prefixes, and the characters a marker can start with."""
    blanks, some_blanks = _chars(_BLANK, 0), _chars(_BLANK, 1)
    # "<<<" or "< < <" (prompts.neutralise spaces runs out); unambiguous, so no backtracking blow-up.
    opening = _seq(_words("<"), _repeated(_seq(blanks, _words("<")), 0))
    closing = _repeated(_seq(blanks, _words(">")), 1)
    line_end = _seq(blanks, _opt(_words("\n")))

    def kind(ignore_case: bool) -> _Pattern:
        words = _words(*FENCE_KINDS, ignore_case=ignore_case)
        return words if ignore_case else _guarded(words, after=_WORD_ENDS)  # after "<" it is no prose

    def end(ignore_case: bool) -> _Pattern:
        return _seq(_words("END", ignore_case=ignore_case), some_blanks)

    def label(ignore_case: bool) -> _Pattern:
        letter = "[A-Za-z]" if ignore_case else "[A-Z]"
        return _seq(some_blanks, _guarded(_alt(_chars(letter, 1, 1), _chars("[0-9]", 1, 2)), after=_WORD_ENDS))

    nonce = _seq(some_blanks, _guarded(_NONCE_CHARS, after=_WORD_ENDS))
    worded = [  # forms that start with a word: not in the middle of one ("WEEKEND RESPONSE A")
        # RESPONSE A 626abc6bbe532717, END QUESTION 626abc6bbe532717>>>
        _seq(_opt(end(False)), kind(False), _opt(label(False)), nonce, _opt(closing)),
        # END RESPONSE A
        _seq(end(False), kind(False), _opt(label(False)), _opt(closing)),
        # RESPONSE A>>>
        _seq(kind(False), _opt(label(False)), closing),
    ]
    # <<<RESPONSE A nonce>>>, < < <END review 2> > >, <<RESPONSE
    bracketed = _seq(opening, blanks, _opt(end(True)), kind(True), _opt(label(True)), _opt(nonce), _opt(closing))
    forms = [bracketed, _guarded(_alt(*worded), before=_NOT_IN_WORD)]
    if nonces:  # the running council's nonces, wherever they are
        forms.append(_seq(_words(*nonces), _opt(closing)))
    marker = _seq(_alt(*forms), line_end)
    firsts = {"<", *(kind[0] for kind in FENCE_KINDS), "E", *(nonce[0] for nonce in nonces)}
    starts = "[" + "".join(re.escape(char) for char in sorted(firsts)) + "]"
    return re.compile(marker.full), re.compile(marker.prefix), re.compile(starts)


class MarkerFilter:
    """Removes markers from a text that arrives in pieces (see the module docstring).

    `feed(piece)` returns what can be shown now, `flush()` the rest once the text is complete.
    Leading blanks of the whole text are dropped too, so that a text opening with a marker does
    not open with an empty line. `markers` counts what was removed; `text` is what was returned.
    """

    def __init__(self, nonces: Iterable[str] = ()):
        self._full, self._prefix, self._starts = _marker(tuple(sorted(set(nonces))))
        self._held = ""
        self.markers = 0
        self.text = ""

    def feed(self, piece: str) -> str:
        context = self.text[-1:]  # what a marker's lookbehind sees before the text
        text = self._held + piece
        while True:
            hold_from = self._hold_start(context, text)
            # Matched against the whole text, so that a lookahead sees what follows the shown part.
            head, removed = self._remove(context, text, until=hold_from)
            if not removed:
                break
            text = head  # removing one may have joined the halves of another
        self._held = text[hold_from:]
        return self._show(text[:hold_from])

    def flush(self) -> str:
        context, text, self._held = self.text[-1:], self._held, ""
        removed = 1
        while removed:  # removing one may have joined the halves of another
            text, removed = self._remove(context, text)
        return self._show(text)

    def _hold_start(self, context: str, text: str) -> int:
        """Where the tail that could still become a marker starts (len(text) when there is none)."""
        # Only the last _MAX_HELD characters are candidates: a longer "prefix" is a run of brackets or
        # blanks, and what it lets through holds no marker word (its end is still held and checked).
        whole, offset = context + text, len(context)
        for match in self._starts.finditer(whole, max(offset, len(whole) - _MAX_HELD)):
            if self._prefix.fullmatch(whole, match.start()):
                return match.start() - offset
        return len(text)

    def _remove(self, context: str, text: str, until: int | None = None) -> tuple[str, int]:
        """`text` without the markers that end by `until` (`context` is the character shown before it)."""
        whole, kept, last = context + text, [], len(context)
        limit = len(whole) if until is None else len(context) + until
        for match in self._full.finditer(whole, last):
            if match.end() > limit:
                break
            kept.append(whole[last : match.start()])
            last = match.end()
        self.markers += len(kept)
        return "".join(kept) + whole[last:], len(kept)

    def _show(self, text: str) -> str:
        if not self.text:
            text = text.lstrip()
        self.text += text
        return text


def strip_markers(text: str, nonces: Iterable[str] = ()) -> str:
    """`text` without markers: what a MarkerFilter shows of it."""
    if not _could_hold_a_marker(text, nonces):
        return text.lstrip()
    markers = MarkerFilter(nonces)
    return markers.feed(text) + markers.flush()


def has_markers(text: str, nonces: Iterable[str] = ()) -> bool:
    markers = MarkerFilter(nonces)
    markers.feed(text)
    markers.flush()
    return markers.markers > 0


def _could_hold_a_marker(text: str, nonces: Iterable[str]) -> bool:
    # Most texts mention no fence kind at all: skip the filter for them (answers are long).
    upper = text.upper()
    return any(kind in upper for kind in FENCE_KINDS) or any(nonce in text for nonce in nonces)
