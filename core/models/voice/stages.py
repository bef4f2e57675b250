"""Stage titles while a council runs and in a finished one's details, which stages a result has
(its stage buttons), and the streamed tail of the answer."""

from __future__ import annotations

from core.models.stages import CouncilResult, MemberAnswer
from core.models.voice.differ import DIFFER_TITLE, differ_parts

# A member of a later memory batch (MemberWaiting), until it is asked: every interface's progress.
WAITING_FOR_MEMORY = "waiting for memory"

# While a council runs: what each stage does.
STAGE_TITLES = {1: "Stage 1 · members answer", 2: "Stage 2 · anonymous peer review", 3: "Stage 3 · chairman synthesis"}
# A finished council's stage details (buttons, modals, page sections): what each holds.
STAGE_VIEWS = {
    "answers": "Stage 1 · answers",
    "reviews": "Stage 2 · reviews",
    "ranking": "Aggregate ranking",
    "differ": DIFFER_TITLE,
}
STAGE_BUTTONS = {"answers": "Answers", "reviews": "Reviews", "ranking": "Ranking", "differ": DIFFER_TITLE}


def stage_progress(stage: int, *, mode: str = "standard", escalated: bool = False) -> str:
    """The chat status's first line while a council runs: the stage's title (`starting` before)."""
    if stage in STAGE_TITLES:
        return stage_title(stage, mode=mode, escalated=escalated)
    return "starting" if stage == 0 else "working"


def stage_title(stage: int, *, mode: str = "standard", escalated: bool = False) -> str:
    """A running stage's title, as it says what happens: after auto mode's escalation the other
    members answer, and a quick council's chairman compares the two answers."""
    if stage == 1 and escalated:
        return "Stage 1 · the other members answer"
    if stage == 3 and mode == "quick":
        return "Stage 3 · the chairman compares the two answers"
    return STAGE_TITLES[stage]


def answer_name(answer: MemberAnswer) -> str:
    """A stage-1 answer's heading: `Response A — alpha` (the model alone when it has no label)."""
    return f"Response {answer.label} — {answer.model}" if answer.label else answer.model


def answer_state(result: CouncilResult) -> str:
    """` · first answer` after a stage-1 answer's name when revision rounds followed, else empty."""
    return " · first answer" if result.rounds else ""


def revised_name(answer: MemberAnswer) -> str:
    """The heading of an answer's text after the revision rounds."""
    return f"{answer_name(answer)} · after the revision rounds"


def answer_took(answer: MemberAnswer) -> str:
    """` (1.2 s)` after an answer's heading (empty when its time is unknown)."""
    return f" ({answer.latency_s:.1f} s)" if answer.latency_s is not None else ""


def stages_of(result: CouncilResult) -> list[str]:
    """The stage details a result has (its stage buttons): no Reviews or Ranking button to open an
    empty stage (a quick council has no reviews), Where they differ when there is an account of it."""
    present = {
        "answers": bool(result.answers),
        "reviews": bool(result.reviews),
        "ranking": bool(result.reviews) and result.aggregate is not None,
        "differ": bool(differ_parts(result.disagreement)),
    }
    return [stage for stage in STAGE_VIEWS if present[stage]]


def stream_tail(text: str, limit: int) -> str:
    """The end of the chairman's text as it streams into a status message: its last `limit`
    characters, from a line break when one is near, with an ellipsis where it was cut."""
    if len(text) <= limit:
        return text
    tail = text[-limit:]
    cut = tail.find("\n")
    return "…" + (tail[cut + 1 :] if 0 <= cut < 200 else tail)
