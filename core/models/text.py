"""Normalising user text at the service boundary, for every interface alike."""

from __future__ import annotations

import unicodedata

REPLACEMENT = "\ufffd"


def clean_text(text: str) -> str:
    """`text` as valid Unicode in NFC: lone surrogates become U+FFFD.

    Lone surrogates arrive from undecodable bytes (a terminal's `caf\\xe9` reaches Python's argv as
    U+DCE9), from JSON escapes and from platform payloads; SQLite and every encoder refuse them.
    A UTF-16 round trip pairs up surrogates that form a character and replaces only the lone ones.
    """
    fixed = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return unicodedata.normalize("NFC", fixed)


def clip(text: str, limit: int) -> str:
    """At most `limit` characters, an ellipsis where it was cut."""
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
