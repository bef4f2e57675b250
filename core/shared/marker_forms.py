"""What counts as an internal prompt marker in model text, and the markers of one council.

The stage 2 and 3 prompts fence model-written text between markers such as
``<<<RESPONSE A 3f9c0d1e2b4a5968>>>`` and ``<<<END REVIEW 2 3f9c0d1e2b4a5968>>>`` (see
core/engine/prompts.py). Small models echo them, often mangled (``<<<RESPONSE 626abc6bbe532717>>``,
``END RESPONSE A``, a bare nonce). What counts as a marker here:

* an opening bracket run, then a fence kind (any case), optionally ``END``, a label and a nonce;
* an upper-case fence kind with ``END`` before it, or a nonce or a closing bracket run after it;
* a nonce of the running council, wherever it appears (`MarkerRule(nonces)`), or a near copy of
  one (core/shared/nonce_copies.py).

Plain words stay: "the response", "END of the REVIEW", "RESPONSES" and Python's ``>>>`` prompt
are ordinary text. A marker is removed with the blanks after it and the end of its line. Its
runs are bounded (at most 8 brackets, blanks and gaps of a few characters), so that a marker is
never longer than `LONGEST_MARKER` characters: what is left of a longer run is ordinary text.

The forms are built with their prefix languages (core/shared/prefix_patterns.py), so that a
streaming filter (core/shared/marker_filter.py) knows how far the beginning of one reaches.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Iterable

from core.shared.fences import FENCE_KINDS
from core.shared.nonce_copies import NONCE_MOST, copy_at, copy_starts, first_copy, has_half
from core.shared.prefix_patterns import Pattern, alt, chars, guarded, longest, opt, repeated, seq, words

_NOT_IN_WORD = "(?<![A-Za-z0-9])"
_WORD_ENDS = "(?![A-Za-z0-9])"
_BLANK = "[ \\t]"
_BLANKS, _SOME_BLANKS = chars(_BLANK, 0, 8), chars(_BLANK, 1, 8)
_GAP = chars(_BLANK, 0, 2)  # inside a bracket run: fences.neutralise spaces "<<<" out to "< < <"
_BRACKETS = 8  # at most, in an opening or closing run
# "<<<" or "< < <"; unambiguous, so no backtracking blow-up.
_OPENING = seq(words("<"), repeated(seq(_GAP, words("<")), 0, _BRACKETS - 1))
_CLOSING = repeated(seq(_GAP, words(">")), 1, _BRACKETS)
_LINE_END = seq(_BLANKS, opt(words("\n")))
_NONCE = seq(_SOME_BLANKS, guarded(chars("[0-9a-f]", 8, 32), after=_WORD_ENDS))  # any nonce: echoes lose a few


def _kind(ignore_case: bool) -> Pattern:
    kinds = words(*FENCE_KINDS, ignore_case=ignore_case)
    return kinds if ignore_case else guarded(kinds, after=_WORD_ENDS)  # after "<" it is no prose


def _end(ignore_case: bool) -> Pattern:
    return seq(words("END", ignore_case=ignore_case), _SOME_BLANKS)


def _label(ignore_case: bool) -> Pattern:
    letter = "[A-Za-z]" if ignore_case else "[A-Z]"
    return seq(_SOME_BLANKS, guarded(alt(chars(letter, 1, 1), chars("[0-9]", 1, 2)), after=_WORD_ENDS))


def _marker_forms() -> Pattern:
    """Every marker but the running council's bare nonces (which `MarkerRule` finds with str.find)."""
    worded = [  # forms that start with a word: not in the middle of one ("WEEKEND RESPONSE A")
        # RESPONSE A 626abc6bbe532717, END QUESTION 626abc6bbe532717>>>
        seq(opt(_end(False)), _kind(False), opt(_label(False)), _NONCE, opt(_CLOSING)),
        # END RESPONSE A
        seq(_end(False), _kind(False), opt(_label(False)), opt(_CLOSING)),
        # RESPONSE A>>>
        seq(_kind(False), opt(_label(False)), _CLOSING),
    ]
    # <<<RESPONSE A nonce>>>, < < <END review 2> > >, <<RESPONSE
    bracketed = seq(_OPENING, _BLANKS, opt(_end(True)), _kind(True), opt(_label(True)), opt(_NONCE), opt(_CLOSING))
    return seq(alt(bracketed, guarded(alt(*worded), before=_NOT_IN_WORD)), _LINE_END)


# Compiled once: the council's nonces are matched apart from these (compiling costs ~10 ms).
_FORMS = _marker_forms()
_MARKER, _MARKER_PREFIX = re.compile(_FORMS.full), re.compile(_FORMS.prefix)
_FIRSTS = frozenset({"<", "E", *(kind[0] for kind in FENCE_KINDS)})  # where these forms can start
_AFTER_NONCE = seq(opt(_CLOSING), _LINE_END)
_NONCE_TAIL, _NONCE_TAIL_PREFIX = re.compile(_AFTER_NONCE.full), re.compile(_AFTER_NONCE.prefix)
LONGEST_MARKER = max(_FORMS.most, NONCE_MOST + 1 + _AFTER_NONCE.most)  # + 1: a near copy's added digit
_REMEMBERED = 4096  # beginnings a rule remembers (see MarkerRule._reach)


class MarkerRule:
    """The markers of one council: the fixed forms and its nonces (exact or near copies)."""

    def __init__(self, nonces: Iterable[str]) -> None:
        self.nonces = sorted({nonce for nonce in nonces if 0 < len(nonce) <= NONCE_MOST}, key=len, reverse=True)
        firsts = "".join(sorted(_FIRSTS.union(*map(copy_starts, self.nonces))))
        self._starts = re.compile("[" + re.escape(firsts) + "]")  # a character class: re caches it
        self._reaches: dict[str, int] = {}  # see _reach

    def first(self, text: str, pos: int, endpos: int) -> tuple[int, int] | None:
        """The span of the leftmost marker in `text[pos:endpos]`, as one regex would find it."""
        found = _MARKER.search(text, pos, endpos)
        best = found.span() if found else None
        for nonce in self.nonces:  # longest first: at one place the longest nonce is the marker
            if not has_half(text, pos, endpos, nonce):
                continue  # the usual case: no copy (each has a half of the nonce, see first_copy)
            span = first_copy(text, pos, endpos, nonce)
            if span is None:
                continue
            tail = _NONCE_TAIL.match(text, span[1], endpos)
            start, end = span[0], tail.end() if tail else span[1]
            if best is not None and start < best[1] and best[0] < end:
                # Overlapping markers are one ("<<<RESPONSE A 626abc6b be532717>>>": the fence's
                # form ends inside a split copy of the nonce): no half of either stays.
                best = (min(start, best[0]), max(end, best[1]))
            elif best is None or start < best[0]:
                best = (start, end)
        return best

    def could_start(self, text: str) -> bool:
        """Whether a marker could start anywhere in `text`."""
        return self._starts.search(text) is not None

    def beginnings(self, text: str, pos: int) -> Beginnings:
        """The beginnings of markers that start in `text[pos:]`."""
        spans = []
        for match in self._starts.finditer(text, pos):
            start = match.start()
            if (reach := self._reach(text, start)) > start:
                spans.append((start, reach))
        return Beginnings(spans)

    def _reach(self, text: str, start: int) -> int:
        """Where the longest beginning of a marker at `start` ends (`start` when there is none)."""
        limit = min(len(text), start + LONGEST_MARKER)
        # It depends on the text from the character before `start` (a lookbehind) to `limit`. A held
        # run of beginnings is read again with every piece: remember what each reached.
        seen = text[max(0, start - 1) : limit] if start else "\0" + text[:limit]
        if (known := self._reaches.get(seen)) is None:
            if len(self._reaches) >= _REMEMBERED:
                self._reaches.clear()
            known = self._reaches[seen] = self._measure(text, start, limit) - start
        return start + known

    def _measure(self, text: str, start: int, limit: int) -> int:
        reach = start
        if text[start] in _FIRSTS:
            reach = longest(_MARKER_PREFIX, text, start, limit)
        for nonce in self.nonces:
            whole, prefix = copy_at(text, start, limit, nonce, ends_text=False)
            if whole is not None:
                reach = max(reach, longest(_NONCE_TAIL_PREFIX, text, whole, limit))
            reach = max(reach, prefix)
        return reach


class Beginnings:
    """The beginnings of markers in a text: from each start, the text up to any place up to its
    end could still grow into a marker."""

    def __init__(self, spans: list[tuple[int, int]]) -> None:  # (start, end), ascending starts
        self._starts = [start for start, _ in spans]
        self._furthest = list(itertools.accumulate((end for _, end in spans), max))

    def __bool__(self) -> bool:
        return bool(self._starts)

    def opened(self, cut: int) -> int | None:
        """The first start of a beginning that the text before `cut` ends in, if any."""
        index = bisect.bisect_left(self._furthest, cut)  # the first beginning that reaches `cut`
        if index < len(self._starts) and self._starts[index] < cut:
            return self._starts[index]
        return None
