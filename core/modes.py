"""The council's modes by name and what each does: the one list every interface shows (the
`--mode` choices and help, the web form, the settings reference, MCP, eval's configurations).

It is the modes section of the presentation module (core/models/voice/, which re-exports it),
kept apart because it imports nothing: `council --help` lists the modes without loading pydantic.
"""

from __future__ import annotations

from typing import Literal, get_args

# best: the mode the line-up's latest eval run measured best (core/admission/measured.py), resolved
# at admission into one of the others; a running council's mode is never `best`.
CouncilMode = Literal["standard", "quick", "auto", "refine", "self-moa", "best"]
MODES: tuple[CouncilMode, ...] = get_args(CouncilMode)
MODE_DESCRIPTIONS: dict[CouncilMode, str] = {
    "standard": "answers, peer reviews, synthesis",
    "quick": "two members answer, the chairman compares them",
    "auto": "two members answer, and the whole council deliberates only if they disagree",
    "refine": "the members revise their answers after reading each other's (COUNCIL_ROUNDS rounds), "
    "then reviews and synthesis",
    "self-moa": "the best member answers several times and the chairman aggregates the samples",
    "best": "the mode this line-up's latest `council eval` run measured cheapest among the most accurate",
}


def modes_help() -> str:
    """`standard: answers, peer reviews, synthesis; quick: ...; auto: ...` (help texts, settings)."""
    return "; ".join(f"{mode}: {MODE_DESCRIPTIONS[mode]}" for mode in MODES)
