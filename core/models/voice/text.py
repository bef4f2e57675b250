"""Long answers cut for a message, the API's link line, and a text as a quote."""

from __future__ import annotations


def cut_note(answer: str) -> str:
    """Under the shown start of a long answer (bot/long_answer.py)."""
    return f"The answer is cut here: the whole answer ({len(answer):,} characters) is in the attached Markdown file."


def link_line(url: str) -> str:
    """The one-line Markdown link the API's answer ends with (COUNCIL_API_LINK)."""
    return f"[Open this council in the browser]({url})"


def quote(text: str) -> str:
    """`text` as a quote: every line (at any line break, also a lone CR) starts with "> " and a blank
    one is ">", so the quoted text cannot end the quote. Callers escape or clip it first, as their
    medium needs (the chairman's prompts neutralise it: core/engine/prompts.py)."""
    return "\n".join(f"> {line}" if line.strip() else ">" for line in text.splitlines() or [""])
