"""The keywords a question may start with: a council mode (`quick:`, `auto:`, `standard:`),
`search:`, and its own council (`members: a, b; chairman: c`); `split_keywords` reads them all.

Modes by name: `standard` (answers, peer reviews, synthesis), `quick` (two seats answer, the
chairman compares them) and `auto` (two seats answer; the whole council deliberates only when they
disagree, core/engine/auto.py)."""

from __future__ import annotations

import re
from dataclasses import dataclass
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


# "members: gpt-x, claude-y; chairman: gemini-z What is ...?" picks one question's council.
# Clauses `members:` (comma-separated model ids or seats `primary|fallback`) and `chairman:` (one),
# in any order, joined by `;` or a line break; the prefix ends after a clause's last id when no `,`
# or separator follows.
_CLAUSE = re.compile(r"\s*(members|chairman)\s*:\s*", re.IGNORECASE)
_MODEL_ID = re.compile(r"[\w.:/@|+~-]+")
_SEPARATOR = re.compile(r"[ \t]*(?:;|\r?\n)")


def split_seats_prefix(question: str) -> tuple[str, list[str] | None, str | None]:
    """The question without a leading `members: a, b; chairman: c`, and the members and chairman it
    named (None: not named). InputRejected when a clause names nothing or names the chairman twice."""
    members: list[str] | None = None
    chairman: str | None = None
    p = 0
    while (clause := _CLAUSE.match(question, p)) is not None:
        name, p = clause.group(1).lower(), clause.end()
        ids: list[str] = []
        while (model := _MODEL_ID.match(question, p)) is not None:
            ids.append(model.group(0))
            p = model.end()
            comma = re.compile(r"\s*,\s*").match(question, p)
            if comma is None:
                break
            p = comma.end()
        if not ids or (name == "chairman" and len(ids) > 1):
            raise InputRejected(
                f"`{name}:` needs {'model ids' if name == 'members' else 'one model id'}: "
                "e.g. `members: model-a, model-b; chairman: model-c Your question`."
            )
        if name == "members":
            members = ids
        else:
            chairman = ids[0]
        separator = _SEPARATOR.match(question, p)
        if separator is None:
            break
        p = separator.end()
    if members is None and chairman is None:
        return question, None, None
    return question[p:].lstrip(), members, chairman


@dataclass(frozen=True)
class Keywords:
    """What a question's leading keywords chose (None: not chosen)."""

    question: str
    mode: CouncilMode | None = None
    search: bool = False
    members: list[str] | None = None
    chairman: str | None = None


def split_keywords(question: str) -> Keywords:
    """Every leading keyword of a chat question, in any order: `quick:`/`auto:`/`standard:`,
    `search:`, and `members: a, b; chairman: c`."""
    mode: CouncilMode | None = None
    searched = False
    members: list[str] | None = None
    chairman: str | None = None
    while True:
        rest, named_mode = split_mode_keyword(question)
        rest, named_search = split_search_keyword(rest)
        rest, named_members, named_chairman = split_seats_prefix(rest)
        if rest == question:
            return Keywords(question, mode, searched, members, chairman)
        question = rest
        mode = named_mode or mode
        searched = searched or named_search
        members = named_members or members
        chairman = named_chairman or chairman
