"""The keywords a question may start with: a council mode (`quick:`, `auto:`, `standard:`) and
`search:`.

Modes by name: `standard` (answers, peer reviews, synthesis), `quick` (two seats answer, the
chairman compares them) and `auto` (two seats answer; the whole council deliberates only when they
disagree, core/engine/auto.py)."""

from __future__ import annotations

import re
from typing import cast

from core.errors import InputRejected
from core.models import MODES, CouncilMode

_MODE_KEYWORD = re.compile(r"^\s*(" + "|".join(MODES) + r")\s*:\s*", re.IGNORECASE)


def parse_mode(mode: str) -> CouncilMode:
    """A mode name as a user typed it, or InputRejected listing the modes."""
    name = mode.strip().lower()
    if name not in MODES:
        raise InputRejected(f"Unknown mode `{mode.strip()}`: choose one of {', '.join(MODES)}.")
    return cast(CouncilMode, name)


def split_mode_keyword(question: str) -> tuple[str, CouncilMode | None]:
    """The question without a leading `quick:`/`auto:`/`standard:` keyword, and the mode it named."""
    match = _MODE_KEYWORD.match(question)
    if match is None:
        return question, None
    return question[match.end() :], parse_mode(match.group(1))


# "search: what changed in Python 3.14?" asks one question with web search, wherever the
# question is typed (a Slack mention or DM, a Discord mention). Any case; the colon is required
# so that a question that merely starts with the word "search" is not changed.
SEARCH_KEYWORD = "search:"
_SEARCH_KEYWORD = re.compile(r"^\s*search:\s*", re.IGNORECASE)


def split_search_keyword(question: str) -> tuple[str, bool]:
    """The question without a leading `search:` keyword, and whether it had one."""
    match = _SEARCH_KEYWORD.match(question)
    if match is None:
        return question, False
    return question[match.end() :], True
