"""The final status line, the one-line title and summary of a finished council, and the footer's
fields."""

from __future__ import annotations

from enum import Enum

from core.models.base import ErrorKind, counted
from core.models.stages import CouncilResult, CouncilStatus, MemberAnswer
from core.models.voice.agreement import agreement_word
from core.models.voice.authorship import Author, author_of, written_by
from core.models.voice.names import short_model


class Tone(str, Enum):
    """How a final status reads: each surface picks its mark (emoji, colour) for it."""

    OK = "ok"
    WARN = "warn"
    FAILED = "failed"
    STOPPED = "stopped"


def took(result: CouncilResult) -> str:
    """` in 3.1 s` (empty when the duration is unknown)."""
    seconds = result.timings.get("total_s")
    return f" in {seconds:.1f} s" if seconds is not None else ""


def members_answered(result: CouncilResult) -> str:
    return f"{sum(1 for a in result.answers if a.ok)}/{len(result.answers)} members answered"


def result_title(result: CouncilResult) -> str:
    """A finished council in one line, claiming no more than happened: the title of Slack's
    streamed answer (a failed or stopped one: its final status)."""
    if result.status in (CouncilStatus.FAILED, CouncilStatus.CANCELLED):
        return final_status(result)[1]
    synthesis = result.synthesis
    quick = "The quick council" if result.request.config.mode == "quick" else "The council"
    if synthesis is not None and author_of(synthesis) is Author.STAND_IN:
        return f"The chairman failed; {short_model(synthesis.model)} answered instead{took(result)}"
    failed = [short_model(a.model) for a in failed_answers(result)]
    if failed:
        them = "it" if len(failed) == 1 else "them"
        return f"{', '.join(failed)} failed; {quick.lower()} answered without {them}{took(result)}"
    if result.status is CouncilStatus.DEGRADED:
        return f"{quick} answered, with problems{took(result)}"
    return f"{quick} answered{took(result)}"


def summary_line(result: CouncilResult) -> str:
    """Under the answer, in one plain line: who answered, what failed, who the reviewers put
    first and how far they agreed (the figures are behind the stage buttons)."""
    synthesis = result.synthesis
    parts = [f"{sum(1 for a in result.answers if a.ok)} of {len(result.answers)} members answered"]
    failed = [short_model(a.model) for a in failed_answers(result)]
    if failed:
        parts.append(f"{', '.join(failed)} failed")
    if synthesis is not None and author_of(synthesis) is Author.STAND_IN:
        parts.append(f"the chairman failed, {short_model(synthesis.model)} wrote the answer")
    aggregate = result.aggregate
    if result.reviews and aggregate is not None and aggregate.entries and aggregate.agreement_w is not None:
        word = agreement_word(aggregate.agreement_w)
        parts.append(f"the reviewers put {short_model(aggregate.entries[0].model)} first ({word} agreement)")
    line = "; ".join(parts) + "."
    if result.request.config.mode == "quick":
        return f"A quick council: {line[0].lower()}{line[1:]}"
    return line[0].upper() + line[1:]


def mode_field(mode: str) -> str:
    return f"{mode} mode"


def final_status(result: CouncilResult) -> tuple[Tone, str]:
    """The status message's last line, without where the answer is (each surface says that)."""
    if result.status is CouncilStatus.FAILED:
        return Tone.FAILED, f"The council failed{took(result)}"
    if result.status is CouncilStatus.CANCELLED:
        return Tone.STOPPED, f"The council was stopped{took(result)}"
    tone = Tone.WARN if result.status is CouncilStatus.DEGRADED else Tone.OK
    done = "Finished with problems" if tone is Tone.WARN else "Done"
    return tone, f"{done}{took(result)}: {members_answered(result)}, {counted(len(result.reviews), 'review')}"


# A council stopped before its answer: what a surface that shows only the answer says instead.
STOPPED_BEFORE_ANSWER = "The council was stopped before it answered."


def failure_line(result: CouncilResult) -> str:
    """`The council failed: <cause>`: a failed council's one line, in place of an answer."""
    return f"The council failed: {result.error.message if result.error else 'unknown cause'}"


def gave_no_answer(name: str, why: str) -> str:
    """`gamma gave no answer: auth 401: invalid api key`."""
    return f"{name} gave no answer: {why}"


def no_answer(answer: MemberAnswer) -> str:
    """`gave_no_answer` of a member's answer (one of the result's notices)."""
    return gave_no_answer(answer.model, answer.error.short() if answer.error else "no answer")


def failed_answers(result: CouncilResult) -> list[MemberAnswer]:
    """The members that failed: not the ones the user skipped (synthesize now) or stopped."""
    return [a for a in result.answers if a.error is not None and a.error.kind is not ErrorKind.CANCELLED]


def failed_members(result: CouncilResult) -> list[str]:
    """`no_answer` of every member that failed."""
    return [no_answer(a) for a in failed_answers(result)]


def footer_fields(result: CouncilResult, name: str | None = None, *, brief: bool = False) -> list[str]:
    """The footer under an answer: `Council <id>`, the mode, who wrote it, members answered, time,
    tokens, cost. `name`: the writer's model as shown (short on chat platforms); `brief`: without
    members answered and tokens (under the summary line, which says who answered)."""
    fields = [f"Council {result.council_id}", mode_field(result.request.config.mode)]
    if result.synthesis is not None:
        fields.append(written_by(result.synthesis, name))
    if result.answers and not brief:
        fields.append(members_answered(result))
    seconds = result.timings.get("total_s")
    if seconds is not None:
        fields.append(f"{seconds:.1f} s")
    if not brief:
        fields.append(f"{result.usage.prompt_tokens + result.usage.completion_tokens:,} tokens")
    if result.usage.cost_usd:
        fields.append(f"${result.usage.cost_usd:.4f}")
    return fields
