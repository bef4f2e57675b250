"""Council modes by name: `standard` (answers, peer reviews, synthesis), `quick` (two seats
answer, the chairman compares them) and `auto` (two seats answer; the whole council deliberates
only when they disagree, core/engine/auto.py). A question may start with `quick:`, `auto:` or
`standard:`."""

from __future__ import annotations

import re
from typing import cast

from core.errors import InputRejected
from core.models import MODES, CouncilMode

_KEYWORD = re.compile(r"^\s*(" + "|".join(MODES) + r")\s*:\s*", re.IGNORECASE)


def parse_mode(mode: str) -> CouncilMode:
    """A mode name as a user typed it, or InputRejected listing the modes."""
    name = mode.strip().lower()
    if name not in MODES:
        raise InputRejected(f"Unknown mode `{mode.strip()}`: choose one of {', '.join(MODES)}.")
    return cast(CouncilMode, name)


def split_mode_keyword(question: str) -> tuple[str, CouncilMode | None]:
    """The question without a leading `quick:`/`auto:`/`standard:` keyword, and the mode it named."""
    match = _KEYWORD.match(question)
    if match is None:
        return question, None
    return question[match.end() :], parse_mode(match.group(1))
