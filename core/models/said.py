"""Sentences of the thread's work waiting for the one presentation module: what a cut answer
says, and the API's link line. Every surface formats these; none words them itself."""

from __future__ import annotations


def cut_note(answer: str) -> str:
    """Under the shown start of a long answer (bot/long_answer.py)."""
    return f"The answer is cut here: the whole answer ({len(answer):,} characters) is in the attached Markdown file."


def link_line(url: str) -> str:
    """The one-line Markdown link the API's answer ends with (COUNCIL_API_LINK)."""
    return f"[Open this council in the browser]({url})"
