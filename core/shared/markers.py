"""Internal prompt markers, kept out of every text a user sees: the door to them.

A marker is a fence the prompts put around model-written text, echoed (often mangled) by a model,
or a nonce of the running council, or a near copy of one. The parts, each in its module:

    marker_forms.py      what counts as a marker (the forms), and `MarkerRule`: one council's markers
    nonce_copies.py      exact and near copies of a council's nonces (one digit added, one dropped, split)
    prefix_patterns.py   regexes built with their prefix languages (how far a beginning reaches)
    marker_filter.py     `MarkerFilter`: the streaming hold-back filter

`strip_markers(text)` removes markers until none is left: removing one can join the text around
it into another ("END <nonce>RESPONSE" becomes "END RESPONSE"). So the result holds no marker,
and it is what a `MarkerFilter` shows of the same text streamed.
"""

from __future__ import annotations

from collections.abc import Iterable

from core.shared.fences import FENCE_KINDS
from core.shared.marker_filter import MAX_HELD, MarkerFilter
from core.shared.nonce_copies import has_half

__all__ = ["MAX_HELD", "MarkerFilter", "has_markers", "strip_markers"]


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
    return any(kind in upper for kind in FENCE_KINDS) or any(has_half(text, 0, len(text), n) for n in nonces)
