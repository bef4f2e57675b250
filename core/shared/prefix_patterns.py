"""Regular expressions built together with their prefix languages.

A `Pattern` is a regex (`full`) and one (`prefix`) that matches every beginning of what `full`
matches: a streaming filter holds back a text's tail while `prefix` says it could still grow into
a match (core/shared/marker_filter.py). The helpers build both at once from words, character runs,
sequences, options, alternatives and bounded repetitions; `longest` finds how far a beginning reaches.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Pattern:
    """A regex and its prefix language: `prefix` matches every prefix (empty and whole included)
    of every string `full` matches. Lookaheads go into `full` only, so `prefix` may match more
    than that: holding back a little too much is harmless, too little would leak. `most` is the
    length of the longest string `full` matches."""

    full: str
    prefix: str
    most: int


def words(*choices: str, ignore_case: bool = False) -> Pattern:
    """One of the words `choices`."""
    group = "(?i:" if ignore_case else "(?:"
    prefixes = sorted({word[:end] for word in choices for end in range(len(word) + 1)}, key=len, reverse=True)
    return Pattern(
        group + "|".join(map(re.escape, choices)) + ")",
        group + "|".join(map(re.escape, prefixes)) + ")",
        max(map(len, choices)),
    )


def chars(cls: str, least: int, most: int) -> Pattern:
    """`least` to `most` characters of `cls`. Possessive (no backtracking, fast): what follows a run
    never starts with a character of it, or is a lookahead that fails on a shorter run as well."""
    return Pattern(f"{cls}{{{least},{most}}}+", f"{cls}{{0,{most}}}+", most)


def seq(*parts: Pattern) -> Pattern:
    # Nested, not one alternative per part: a failing prefix then re-reads each part only once.
    prefix = parts[-1].prefix
    for part in reversed(parts[:-1]):
        prefix = f"(?:{part.full}{prefix}|{part.prefix})"
    return Pattern("".join(part.full for part in parts), prefix, sum(part.most for part in parts))


def opt(part: Pattern) -> Pattern:
    return Pattern(f"(?:{part.full})?", part.prefix, part.most)


def alt(*parts: Pattern) -> Pattern:
    return Pattern(
        "(?:" + "|".join(part.full for part in parts) + ")",
        "(?:" + "|".join(part.prefix for part in parts) + ")",
        max(part.most for part in parts),
    )


def repeated(part: Pattern, least: int, most: int) -> Pattern:
    """`part` `least` to `most` times, possessive as in `chars` (`part` ends in a bracket that what
    follows the run never starts with)."""
    return Pattern(
        f"(?:{part.full}){{{least},{most}}}+", f"(?:{part.full}){{0,{most - 1}}}+{part.prefix}", most * part.most
    )


def guarded(part: Pattern, before: str = "", after: str = "") -> Pattern:
    # A lookbehind holds for prefixes as well; a lookahead can only be checked on the whole.
    return Pattern(before + part.full + after, before + part.prefix, part.most)


def longest(prefix: re.Pattern[str], text: str, start: int, limit: int) -> int:
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
