"""The fences prompts put around model-written text, and the defusing of what could forge one.

Stage 2 and 3 prompts embed text written by models (answers, reviews, files, sources): each sits
between markers that carry a random per-council nonce (``<<<RESPONSE A 3f9c...>>>``), and anything
in it that looks like a marker or a ballot header is defused (core/engine/prompts.py says why).
Kept on the ground floor: the engine builds prompts with them, core/reading fences the material,
core/providers' local prompts and core/shared/markers.py know the header and the kinds.
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass

RANKING_HEADER = "FINAL RANKING:"
# The kinds of fenced block the prompts use ("<<<RESPONSE A nonce>>>", "<<<END REVIEW 2 nonce>>>").
# core/shared/markers.py recognises these words to keep echoed markers out of what users see; FILE and
# SOURCE fence the material of core/reading/material.py.
FENCE_KINDS = ("RESPONSE", "REVIEW", "QUESTION", "CONVERSATION", "FILE", "SOURCE")

# Runs of angle brackets are spaced out: still readable ("< < <END ...> > >"), never a fence.
_BRACKET_RUN = re.compile(r"<{3,}|>{3,}")
# The ballot header is defined by rust/ranking/src/parse.rs (rules 1 and 2: "final" and
# "ranking(s)" apart by any run of spaces or tabs, full-width letters folded to ASCII). This
# pattern is deliberately wider (any case, any run of punctuation or markdown between, "ranked"):
# it may defuse more than a header, never less (tests/test_neutralise_property.py). A match
# becomes a visible, harmless mention.
_HEADER_LIKE = re.compile(r"final[\W_]*rank(?:ings?|ed)?", re.IGNORECASE)
HEADER_REPLACEMENT = "[ranking header quoted from a response]"
# Invisible characters. The parser keeps them, so one inside the words already breaks a header;
# detection still ignores them and defuses "FI\u200bNAL RANKING" too: a reviewer copying that
# text easily loses the invisible characters and so writes the forged header as its own.
_DROPPED = frozenset("\u00ad\u200b\u200c\u200d\u2060\ufeff")


def new_nonce() -> str:
    """A fresh fence nonce (64 random bits, hex)."""
    return secrets.token_hex(8)


def neutralise(text: str) -> str:
    """Defuse fence markers and ballot headers inside model-written text.

    After this, no header of the ranking format (rust/ranking/src/parse.rs) remains, so a quoted
    answer cannot supply the reviewer's ballot."""
    # The substring checks skip the regexes for the usual, harmless text (prompts are hot).
    if "<<<" in text or ">>>" in text:
        text = _BRACKET_RUN.sub(lambda m: " ".join(m.group()), text)
    folded, origin = _fold(text)
    if "final" not in folded.lower():
        return text
    pieces, last = [], 0
    for match in _HEADER_LIKE.finditer(folded):
        start, end = origin[match.start()], origin[match.end() - 1] + 1
        pieces += [text[last:start], HEADER_REPLACEMENT]
        last = end
    return "".join(pieces) + text[last:] if pieces else text


def _fold(text: str) -> tuple[str, list[int]]:
    """The text with full-width ASCII folded (as parse.rs rule 1 does) and invisible characters
    left out, and the index in `text` of each folded char."""
    if text.isascii():
        return text, range(len(text))  # type: ignore[return-value]
    chars, origin = [], []
    for index, char in enumerate(text):
        if char in _DROPPED:
            continue
        if "\uff01" <= char <= "\uff5e":  # full-width ASCII
            char = chr(ord(char) - 0xFEE0)
        chars.append(char)
        origin.append(index)
    return "".join(chars), origin


@dataclass(frozen=True)
class Fence:
    """Delimiters for one council's prompts; `nonce` is secret to the members."""

    nonce: str

    def wrap(self, kind: str, text: str) -> str:
        """`text` between an opening and a closing marker of `kind` (e.g. "RESPONSE A")."""
        assert kind.split()[0] in FENCE_KINDS, kind  # markers.py must know every kind
        return f"<<<{kind} {self.nonce}>>>\n{neutralise(text).strip()}\n<<<END {kind} {self.nonce}>>>"
