"""The streaming hold-back filter: markers (core/shared/marker_forms.py) removed from a text that
arrives in pieces, each piece shown as soon as no later text can change it.

What it has shown never ends in the beginning of a marker (that tail is held until the next
pieces settle it), so no later text, nor removing a marker from it, can complete a marker with
text already shown: the concatenated stream holds no marker either, and equals `strip_markers`
of the whole text. One exception bounds the wait: a run of marker beginnings longer than
`MAX_HELD` ("END END END ...") is shown from its start, and a marker that later completes such a
shown beginning loses its unshown part instead. The stream still holds no marker, but it may then
keep a few characters that the whole text would not.
"""

from __future__ import annotations

from collections.abc import Iterable

from core.shared.marker_forms import LONGEST_MARKER, Beginnings, MarkerRule

# The filter holds back at most this many characters (see MarkerFilter._cut).
MAX_HELD = 200
assert MAX_HELD >= LONGEST_MARKER, "a single marker must fit in what the filter can hold"


class MarkerFilter:
    """Removes markers from a text that arrives in pieces (see the module docstring).

    `feed(piece)` returns what can be shown now, `flush()` the rest once the text is complete.
    Leading blanks of the whole text are dropped too, so that a text opening with a marker does
    not open with an empty line. `markers` counts what was removed; `text` is what was returned.
    """

    def __init__(self, nonces: Iterable[str] = ()):
        self._rule = MarkerRule(nonces)
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
    def _cut(whole: str, shown_from: int, beginnings: Beginnings) -> tuple[int, int | None]:
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
