"""Copies of a council's nonces in model text, exact or near: models copy 16 hex digits imperfectly.

A near copy of a nonce has one hex digit added inside or after it, one character dropped, or is
split in two by one space (``3d07824f 9b5c16eb``). A digit added before it is not one (the nonce
goes, that one digit stays): holding back every hex digit that starts a word, in case a nonce
follows, cost streamed text 60-75% more CPU than before near copies, against 0-40% without it
(bench/bench_markers.py, fixed nonces). Nonces shorter than `NEAR_COPY_MIN` are matched exactly
only. Every copy with one edit keeps one half of the nonce intact: `has_half` is the quick test
that there is none, `first_copy` finds the leftmost copy from those halves, and `copy_at` reads
one from a place (also how far a beginning of one reaches, for a filter that holds it back).
"""

from __future__ import annotations

import re

NONCE_MOST = 32  # longer "nonces" are not ours (ours have 16 characters)
NEAR_COPY_MIN = 12  # a near copy of a shorter nonce could be an ordinary hex word
HEX_DIGITS = frozenset("0123456789abcdef")
_WORD_CHAR = re.compile("[A-Za-z0-9]")


def copy_starts(nonce: str) -> str:
    """The characters a copy of `nonce` can start with: its first, or its second (the first dropped)."""
    return nonce[:2] if len(nonce) >= NEAR_COPY_MIN else nonce[:1]


def _agreeing(text: str, at: int, limit: int, nonce: str, offset: int) -> int:
    """How many characters of `text[at:limit]` agree with `nonce[offset:]`, from their starts."""
    count = 0
    while offset + count < len(nonce) and at + count < limit and text[at + count] == nonce[offset + count]:
        count += 1
    return count


def copy_at(text: str, start: int, limit: int, nonce: str, *, ends_text: bool) -> tuple[int | None, int]:
    """Where the longest copy of `nonce` (exact or near, see the module docstring) that starts at
    `start` ends in `text[:limit]` (None: there is none), and where the longest beginning of one
    does (`start` when there is none). `ends_text`: `limit` is the end of the whole text (a digit
    added after the nonce must end a word: the text after it decides)."""
    size = len(nonce)
    if start < limit and text[start] != nonce[0] and (size < NEAR_COPY_MIN or text[start] != nonce[1]):
        return None, start  # the usual case: no copy starts here (see `copy_starts`)
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
    if (added in HEX_DIGITS and same > 0) or (added in " \t" and 0 < same < size):
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


def has_half(text: str, pos: int, endpos: int, nonce: str) -> bool:
    if len(nonce) < NEAR_COPY_MIN:
        return text.find(nonce, pos, endpos) >= 0
    half = len(nonce) // 2
    return text.find(nonce[:half], pos, endpos) >= 0 or text.find(nonce[half:], pos, endpos) >= 0


def first_copy(text: str, pos: int, endpos: int, nonce: str) -> tuple[int, int] | None:
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
                    whole, _ = copy_at(text, start, endpos, nonce, ends_text=True)
                    if whole is not None:
                        spans.append((start, whole))
            if spans:
                span = min(spans, key=lambda s: (s[0], -s[1]))
                if found is None or (span[0], -span[1]) < (found[0], -found[1]):
                    found = span
                break
            at = text.find(anchor, at + 1, endpos)
    return found
