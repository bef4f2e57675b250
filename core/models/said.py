"""Sentences of the thread's work waiting for the one presentation module: what a cut answer
says, and the API's link line. Every surface formats these; none words them itself."""

from __future__ import annotations

from core.models.stages import CouncilResult, CouncilStatus


def cut_note(answer: str) -> str:
    """Under the shown start of a long answer (bot/long_answer.py)."""
    return f"The answer is cut here: the whole answer ({len(answer):,} characters) is in the attached Markdown file."


def link_line(url: str) -> str:
    """The one-line Markdown link the API's answer ends with (COUNCIL_API_LINK)."""
    return f"[Open this council in the browser]({url})"


def chairman_replaced(chairman: str, writer: str) -> str:
    """Said before a stand-in's streamed answer (its note, with the cause, comes once it has finished)."""
    return f"The chairman {chairman} failed; {writer} wrote this answer instead."


def _short(model: str) -> str:
    return model.split(":", 1)[-1].rsplit("/", 1)[-1]


def result_title(result: CouncilResult) -> str:
    """A finished council in one line, claiming no more than happened: the title of Slack's
    streamed answer."""
    seconds = result.timings.get("total_s")
    took = f" in {seconds:.1f} s" if seconds is not None else ""
    synthesis = result.synthesis
    quick = "The quick council" if result.request.config.mode == "quick" else "The council"
    if synthesis is not None and synthesis.stood_in:
        return f"The chairman failed; {_short(synthesis.model)} answered instead{took}"
    failed = [_short(a.model) for a in result.answers if a.error is not None]
    if failed:
        them = "it" if len(failed) == 1 else "them"
        return f"{', '.join(failed)} failed; {quick.lower()} answered without {them}{took}"
    if result.status is CouncilStatus.DEGRADED:
        return f"{quick} answered, with problems{took}"
    return f"{quick} answered{took}"


def summary_line(result: CouncilResult) -> str:
    """Under the answer, in one plain line: who answered, what failed, who the reviewers put
    first and how far they agreed (the figures are behind the stage buttons)."""
    synthesis = result.synthesis
    answered = sum(1 for a in result.answers if a.ok)
    parts = [f"{answered} of {len(result.answers)} members answered"]
    failed = [_short(a.model) for a in result.answers if a.error is not None]
    if failed:
        parts.append(f"{', '.join(failed)} failed")
    if synthesis is not None and synthesis.stood_in:
        parts.append(f"the chairman failed, {_short(synthesis.model)} wrote the answer")
    aggregate = result.aggregate
    if result.reviews and aggregate is not None and aggregate.entries and aggregate.agreement_w is not None:
        w = aggregate.agreement_w
        word = "strong" if w >= 0.7 else "moderate" if w >= 0.4 else "weak"
        parts.append(f"the reviewers put {_short(aggregate.entries[0].model)} first ({word} agreement)")
    line = "; ".join(parts) + "."
    if result.request.config.mode == "quick":
        return f"A quick council: {line[0].lower()}{line[1:]}"
    return line[0].upper() + line[1:]
