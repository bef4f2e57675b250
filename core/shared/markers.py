"""Internal prompt markers, kept out of every text a user sees.

The stage 2 and 3 prompts fence model-written text between markers such as
``<<<RESPONSE A 3f9c0d1e2b4a5968>>>`` and ``<<<END REVIEW 2 3f9c0d1e2b4a5968>>>`` (see
core/engine/prompts.py). Small models echo them, often mangled (``<<<RESPONSE 626abc6bbe532717>>``,
``END RESPONSE A``, a bare nonce). What counts as a marker here:

* an opening bracket run, then a fence kind (any case), optionally ``END``, a label and a nonce;
* an upper-case fence kind with ``END`` before it, or a nonce or a closing bracket run after it;
* a nonce of the running council, wherever it appears (``MarkerFilter(nonces=...)``), or a near
  copy of one (models copy 16 hex digits imperfectly): with one hex digit added inside or after
  it, one character dropped, or split in two by one space (``3d07824f 9b5c16eb``). A digit added
  before it is not (the nonce goes, that one digit stays): holding back every hex digit that
  starts a word, in case a nonce follows, cost streamed text 60-75% more CPU than before near
  copies, against 0-40% without it (bench/bench_markers.py, fixed nonces). Nonces shorter than
  `NEAR_COPY_MIN` are matched exactly only.

Plain words stay: "the response", "END of the REVIEW", "RESPONSES" and Python's ``>>>`` prompt
are ordinary text. A marker is removed with the blanks after it and the end of its line. Its
runs are bounded (at most 8 brackets, blanks and gaps of a few characters), so that a marker is
never longer than `LONGEST_MARKER` characters: what is left of a longer run is ordinary text.

`strip_markers(text)` removes markers until none is left: removing one can join the text around
it into another ("END <nonce>RESPONSE" becomes "END RESPONSE"). So the result holds no marker.

`MarkerFilter` does the same on a stream and shows every piece as soon as no later text can
change it. What it has shown never ends in the beginning of a marker (that tail is held until
the next pieces settle it), so no later text, nor removing a marker from it, can complete a
marker with text already shown: the concatenated stream holds no marker either, and equals
`strip_markers` of the whole text. One exception bounds the wait: a run of marker beginnings
longer than `MAX_HELD` ("END END END ...") is shown from its start, and a marker that later
completes such a shown beginning loses its unshown part instead. The stream still holds no
marker, but it may then keep a few characters that the whole text would not.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Iterable
from dataclasses import dataclass

from core.shared.fences import FENCE_KINDS


@dataclass(frozen=True)
class _Pattern:
    """A regex and its prefix language: `prefix` matches every prefix (empty and whole included)
    of every string `full` matches. Lookaheads go into `full` only, so `prefix` may match more
    than that: holding back a little too much is harmless, too little would leak. `most` is the
    length of the longest string `full` matches."""

    full: str
    prefix: str
    most: int


def _words(*words: str, ignore_case: bool = False) -> _Pattern:
    group = "(?i:" if ignore_case else "(?:"
    prefixes = sorted({word[:end] for word in words for end in range(len(word) + 1)}, key=len, reverse=True)
    return _Pattern(
        group + "|".join(map(re.escape, words)) + ")",
        group + "|".join(map(re.escape, prefixes)) + ")",
        max(map(len, words)),
    )


def _chars(cls: str, least: int, most: int) -> _Pattern:
    """`least` to `most` characters of `cls`. Possessive (no backtracking, fast): what follows a run
    never starts with a character of it, or is a lookahead that fails on a shorter run as well."""
    return _Pattern(f"{cls}{{{least},{most}}}+", f"{cls}{{0,{most}}}+", most)


def _seq(*parts: _Pattern) -> _Pattern:
    # Nested, not one alternative per part: a failing prefix then re-reads each part only once.
    prefix = parts[-1].prefix
    for part in reversed(parts[:-1]):
        prefix = f"(?:{part.full}{prefix}|{part.prefix})"
    return _Pattern("".join(part.full for part in parts), prefix, sum(part.most for part in parts))


def _opt(part: _Pattern) -> _Pattern:
    return _Pattern(f"(?:{part.full})?", part.prefix, part.most)


def _alt(*parts: _Pattern) -> _Pattern:
    return _Pattern(
        "(?:" + "|".join(part.full for part in parts) + ")",
        "(?:" + "|".join(part.prefix for part in parts) + ")",
        max(part.most for part in parts),
    )


def _repeated(part: _Pattern, least: int, most: int) -> _Pattern:
    """`part` `least` to `most` times, possessive as in `_chars` (`part` ends in a bracket that what
    follows the run never starts with)."""
    return _Pattern(
        f"(?:{part.full}){{{least},{most}}}+", f"(?:{part.full}){{0,{most - 1}}}+{part.prefix}", most * part.most
    )


def _guarded(part: _Pattern, before: str = "", after: str = "") -> _Pattern:
    # A lookbehind holds for prefixes as well; a lookahead can only be checked on the whole.
    return _Pattern(before + part.full + after, before + part.prefix, part.most)


_NOT_IN_WORD = "(?<![A-Za-z0-9])"
_WORD_ENDS = "(?![A-Za-z0-9])"
_BLANK = "[ \\t]"
_BLANKS, _SOME_BLANKS = _chars(_BLANK, 0, 8), _chars(_BLANK, 1, 8)
_GAP = _chars(_BLANK, 0, 2)  # inside a bracket run: fences.neutralise spaces "<<<" out to "< < <"
_BRACKETS = 8  # at most, in an opening or closing run
# "<<<" or "< < <"; unambiguous, so no backtracking blow-up.
_OPENING = _seq(_words("<"), _repeated(_seq(_GAP, _words("<")), 0, _BRACKETS - 1))
_CLOSING = _repeated(_seq(_GAP, _words(">")), 1, _BRACKETS)
_LINE_END = _seq(_BLANKS, _opt(_words("\n")))
_NONCE = _seq(_SOME_BLANKS, _guarded(_chars("[0-9a-f]", 8, 32), after=_WORD_ENDS))  # any nonce: echoes lose a few


def _kind(ignore_case: bool) -> _Pattern:
    words = _words(*FENCE_KINDS, ignore_case=ignore_case)
    return words if ignore_case else _guarded(words, after=_WORD_ENDS)  # after "<" it is no prose


def _end(ignore_case: bool) -> _Pattern:
    return _seq(_words("END", ignore_case=ignore_case), _SOME_BLANKS)


def _label(ignore_case: bool) -> _Pattern:
    letter = "[A-Za-z]" if ignore_case else "[A-Z]"
    return _seq(_SOME_BLANKS, _guarded(_alt(_chars(letter, 1, 1), _chars("[0-9]", 1, 2)), after=_WORD_ENDS))


def _marker_forms() -> _Pattern:
    """Every marker but the running council's bare nonces (which `_Rule` finds with str.find)."""
    worded = [  # forms that start with a word: not in the middle of one ("WEEKEND RESPONSE A")
        # RESPONSE A 626abc6bbe532717, END QUESTION 626abc6bbe532717>>>
        _seq(_opt(_end(False)), _kind(False), _opt(_label(False)), _NONCE, _opt(_CLOSING)),
        # END RESPONSE A
        _seq(_end(False), _kind(False), _opt(_label(False)), _opt(_CLOSING)),
        # RESPONSE A>>>
        _seq(_kind(False), _opt(_label(False)), _CLOSING),
    ]
    # <<<RESPONSE A nonce>>>, < < <END review 2> > >, <<RESPONSE
    bracketed = _seq(_OPENING, _BLANKS, _opt(_end(True)), _kind(True), _opt(_label(True)), _opt(_NONCE), _opt(_CLOSING))
    return _seq(_alt(bracketed, _guarded(_alt(*worded), before=_NOT_IN_WORD)), _LINE_END)


# Compiled once: the council's nonces are matched apart from these (compiling costs ~10 ms).
_FORMS = _marker_forms()
_MARKER, _MARKER_PREFIX = re.compile(_FORMS.full), re.compile(_FORMS.prefix)
_FIRSTS = frozenset({"<", "E", *(kind[0] for kind in FENCE_KINDS)})  # where these forms can start
_AFTER_NONCE = _seq(_opt(_CLOSING), _LINE_END)
_NONCE_TAIL, _NONCE_TAIL_PREFIX = re.compile(_AFTER_NONCE.full), re.compile(_AFTER_NONCE.prefix)
_NONCE_MOST = 32  # longer "nonces" are not ours (ours have 16 characters)
NEAR_COPY_MIN = 12  # a near copy of a shorter nonce could be an ordinary hex word
_HEX = frozenset("0123456789abcdef")
_WORD_CHAR = re.compile("[A-Za-z0-9]")
LONGEST_MARKER = max(_FORMS.most, _NONCE_MOST + 1 + _AFTER_NONCE.most)  # + 1: a near copy's added digit
# The filter holds back at most this many characters (see MarkerFilter._cut).
MAX_HELD = 200
assert MAX_HELD >= LONGEST_MARKER, "a single marker must fit in what the filter can hold"
_REMEMBERED = 4096  # beginnings a filter remembers (see _Rule._reach)


class _Rule:
    """The markers of one council: the fixed forms and its nonces."""

    def __init__(self, nonces: Iterable[str]) -> None:
        self.nonces = sorted({nonce for nonce in nonces if 0 < len(nonce) <= _NONCE_MOST}, key=len, reverse=True)
        near = [nonce for nonce in self.nonces if len(nonce) >= NEAR_COPY_MIN]
        # A copy starts with the nonce's first character, or its second (the first dropped).
        firsts = "".join(sorted(_FIRSTS | {nonce[0] for nonce in self.nonces} | {nonce[1] for nonce in near}))
        self._starts = re.compile("[" + re.escape(firsts) + "]")  # a character class: re caches it
        self._reaches: dict[str, int] = {}  # see _reach

    def first(self, text: str, pos: int, endpos: int) -> tuple[int, int] | None:
        """The span of the leftmost marker in `text[pos:endpos]`, as one regex would find it."""
        found = _MARKER.search(text, pos, endpos)
        best = found.span() if found else None
        for nonce in self.nonces:  # longest first: at one place the longest nonce is the marker
            if not _has_half(text, pos, endpos, nonce):
                continue  # the usual case: no copy (each has a half of the nonce, see _first_copy)
            span = _first_copy(text, pos, endpos, nonce)
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

    def beginnings(self, text: str, pos: int) -> _Beginnings:
        """The beginnings of markers that start in `text[pos:]`."""
        spans = []
        for match in self._starts.finditer(text, pos):
            start = match.start()
            if (reach := self._reach(text, start)) > start:
                spans.append((start, reach))
        return _Beginnings(spans)

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
            reach = _longest(_MARKER_PREFIX, text, start, limit)
        for nonce in self.nonces:
            whole, prefix = _copy_at(text, start, limit, nonce, ends_text=False)
            if whole is not None:
                reach = max(reach, _longest(_NONCE_TAIL_PREFIX, text, whole, limit))
            reach = max(reach, prefix)
        return reach


def _agreeing(text: str, at: int, limit: int, nonce: str, offset: int) -> int:
    """How many characters of `text[at:limit]` agree with `nonce[offset:]`, from their starts."""
    count = 0
    while offset + count < len(nonce) and at + count < limit and text[at + count] == nonce[offset + count]:
        count += 1
    return count


def _copy_at(text: str, start: int, limit: int, nonce: str, *, ends_text: bool) -> tuple[int | None, int]:
    """Where the longest copy of `nonce` (exact or near, see the module docstring) that starts at
    `start` ends in `text[:limit]` (None: there is none), and where the longest beginning of one
    does (`start` when there is none). `ends_text`: `limit` is the end of the whole text (a digit
    added after the nonce must end a word: the text after it decides)."""
    size = len(nonce)
    if start < limit and text[start] != nonce[0] and (size < NEAR_COPY_MIN or text[start] != nonce[1]):
        return None, start  # the usual case: no copy starts here (see _Rule's `firsts`)
    same = _agreeing(text, start, limit, nonce, 0)
    whole = start + size if same == size else None
    at = start + same
    if size < NEAR_COPY_MIN:
        return whole, at
    if at == limit:  # where the text ends, all but the last character is a copy too
        return (at if ends_text and same == size - 1 else whole), at
    reach = at
    added = text[at]
    # One character added: a hex digit (inside or after the nonce), or a blank inside.
    if (added in _HEX and same > 0) or (added in " \t" and 0 < same < size):
        rest = _agreeing(text, at + 1, limit, nonce, same)
        reach = max(reach, at + 1 + rest)
        if same + rest == size:
            after = at + 1 + rest
            if same < size or (after == limit and ends_text) or (after < limit and not _WORD_CHAR.match(text, after)):
                whole = after
    # One character dropped.
    if same < size:
        rest = _agreeing(text, at, limit, nonce, same + 1)
        reach = max(reach, at + rest)
        if same + 1 + rest == size and (whole is None or at + rest > whole):
            whole = at + rest
    return whole, reach


def _has_half(text: str, pos: int, endpos: int, nonce: str) -> bool:
    if len(nonce) < NEAR_COPY_MIN:
        return text.find(nonce, pos, endpos) >= 0
    half = len(nonce) // 2
    return text.find(nonce[:half], pos, endpos) >= 0 or text.find(nonce[half:], pos, endpos) >= 0


def _first_copy(text: str, pos: int, endpos: int, nonce: str) -> tuple[int, int] | None:
    """The span of the leftmost copy of `nonce` (exact or near) in `text[pos:endpos]`, the longest
    one where several start at one place."""
    if len(nonce) < NEAR_COPY_MIN:
        at = text.find(nonce, pos, endpos)
        return (at, at + len(nonce)) if at >= 0 else None
    # A copy with one edit keeps one half of the nonce intact: look for the halves, then read around.
    half = len(nonce) // 2
    found: tuple[int, int] | None = None
    for anchor, starts_before in ((nonce[:half], (0,)), (nonce[half:], (half, half + 1, half - 1))):
        at = text.find(anchor, pos, endpos)
        while at >= 0 and (found is None or at - max(starts_before) < found[0]):
            spans = []
            for before in starts_before:
                start = at - before
                if pos <= start:
                    # As a regex with `endpos` would: the text is read as if it ended there.
                    whole, _ = _copy_at(text, start, endpos, nonce, ends_text=True)
                    if whole is not None:
                        spans.append((start, whole))
            if spans:
                span = min(spans, key=lambda s: (s[0], -s[1]))
                if found is None or (span[0], -span[1]) < (found[0], -found[1]):
                    found = span
                break
            at = text.find(anchor, at + 1, endpos)
    return found


def _longest(prefix: re.Pattern[str], text: str, start: int, limit: int) -> int:
    """The end of the longest match at `start`, up to `limit`, of `prefix` (a prefix language)."""
    found = prefix.match(text, start, limit)
    if found is None:
        return start
    low = found.end()
    # Usually the longest already; if not, every prefix of a match matches too: halve the rest.
    if low == limit or not prefix.fullmatch(text, start, low + 1):
        return low
    low, high = low + 1, limit
    while low < high:
        middle = (low + high + 1) // 2
        if prefix.fullmatch(text, start, middle):
            low = middle
        else:
            high = middle - 1
    return low


class _Beginnings:
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


class MarkerFilter:
    """Removes markers from a text that arrives in pieces (see the module docstring).

    `feed(piece)` returns what can be shown now, `flush()` the rest once the text is complete.
    Leading blanks of the whole text are dropped too, so that a text opening with a marker does
    not open with an empty line. `markers` counts what was removed; `text` is what was returned.
    """

    def __init__(self, nonces: Iterable[str] = ()):
        self._rule = _Rule(nonces)
        self._held = ""
        self._open = 0  # how many shown characters at the end of `text` could still begin a marker
        self.markers = 0
        self.text = ""

    def feed(self, piece: str) -> str:
        if not self._held and not self._open and not self._rule.could_start(piece):
            return self._show(piece)  # the usual token: nothing to hold, nothing to remove
        return self._settle(self._held + piece, final=False)

    def flush(self) -> str:
        held, self._held = self._held, ""
        return self._settle(held, final=True)

    def _settle(self, pending: str, *, final: bool) -> str:
        """Show what of `pending` (the text after `text`) no later text can change; hold the rest."""
        # The shown characters a marker may still start in, and the one before them (a lookbehind).
        context = self.text[max(0, len(self.text) - self._open - 1) :]
        shown_from = len(context)
        first = shown_from - min(self._open, len(self.text))  # where a marker may start
        whole, scan = context + pending, first
        while True:
            # Beginnings the cut may have to hold (most pieces hold none).
            window = max(first, len(whole) - MAX_HELD - LONGEST_MARKER)
            beginnings = self._rule.beginnings(whole, window)
            if final or not beginnings:
                cut, opened = len(whole), None
            else:
                cut, opened = self._cut(whole, shown_from, beginnings)
            found = self._rule.first(whole, scan, len(whole)) if beginnings or window > first else None
            if found is None or found[0] >= cut:  # a marker starting before the cut is settled
                break
            start, end = found
            if end <= shown_from:  # wholly shown: cannot be (see _cut); look past it
                scan = end
                continue
            # Removed one at a time, leftmost first: removing one may join the halves of another,
            # and that order is one a stream can follow. A part already shown stays (see _cut).
            whole = whole[: max(start, shown_from)] + whole[end:]
            self.markers += 1
            scan = max(first, start - LONGEST_MARKER)
        if opened is not None and cut > shown_from:
            cut, opened = self._unfinished(whole, first, shown_from, cut)
        self._held = whole[cut:]
        self._open = 0 if opened is None else cut - opened
        return self._show(whole[shown_from:cut])

    @staticmethod
    def _cut(whole: str, shown_from: int, beginnings: _Beginnings) -> tuple[int, int | None]:
        """Where what can be shown ends, and where a marker beginning that it ends in starts (None
        unless the cut had to be forced).

        Nothing shown may end in the beginning of a marker: later text could complete it, or join
        it, once markers in between are removed. So the cut moves back over every such tail
        ("END <nonce>" holds "END " as well as the nonce) until none is left, or until more than
        `MAX_HELD` characters would be held: then the cut is forced, and the marker beginning it
        ends in stays open (see the module docstring)."""
        floor = max(shown_from, len(whole) - MAX_HELD)
        cut = len(whole)
        while (opened := beginnings.opened(cut)) is not None:
            if opened < floor:
                return floor, beginnings.opened(floor)
            cut = opened
        return cut, None

    def _unfinished(self, whole: str, first: int, shown_from: int, cut: int) -> tuple[int, int | None]:
        """A forced cut, moved back before any marker that `whole[:cut]` would end with (if the
        text ended there: a lookahead passes at its end)."""
        while cut > shown_from and (inside := self._rule.first(whole, first, cut)) is not None:
            cut = max(shown_from, inside[0])
        return cut, self._rule.beginnings(whole, max(first, cut - LONGEST_MARKER)).opened(cut)

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
    if not _could_hold_a_marker(text, nonces):
        return False
    markers = MarkerFilter(nonces)
    markers.feed(text)
    markers.flush()
    return markers.markers > 0


def _could_hold_a_marker(text: str, nonces: Iterable[str]) -> bool:
    # Most texts mention no fence kind at all: skip the filter for them (answers are long).
    upper = text.upper()
    return any(kind in upper for kind in FENCE_KINDS) or any(_has_half(text, 0, len(text), n) for n in nonces)
