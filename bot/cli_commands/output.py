"""What `council ask` and `council show` print: progress and the live synthesis on stderr, the result on stdout."""

from __future__ import annotations

import os
import re
import sys

from bot.cli_commands.invocation import council_command
from bot.render_text import aggregate_table, ballot_line, result_header
from core.models import (
    ChairmanToken,
    CouncilEvent,
    CouncilQueued,
    CouncilResult,
    MemberFailed,
    MemberFinished,
    MemberStarted,
    ReviewFinished,
    StageStarted,
    Synthesis,
    seats,
)
from core.models.lines import dissent_lines, read_lines

STAGE_TITLES = {1: "Stage 1 · members answer", 2: "Stage 2 · anonymous peer review", 3: "Stage 3 · chairman synthesis"}


def same_terminal() -> bool:
    """True when stdout and stderr are one terminal: what was streamed on stderr is already on screen."""
    try:
        return os.isatty(1) and os.isatty(2) and os.path.samestat(os.fstat(1), os.fstat(2))
    except OSError:
        return False


class Terminal:
    """Progress lines and the live synthesis on stderr, the result on stdout: pipes get clean output."""

    def __init__(self, quiet: bool):
        self.quiet = quiet
        self.streaming_model: str | None = None
        self.streamed: dict[str, str] = {}  # model -> text shown live

    def was_shown(self, model: str, text: str) -> bool:
        """Whether exactly this text by this model is on screen already (streamed live)."""
        return not self.quiet and self.streamed.get(model, "").strip() == text.strip()

    def note(self, line: str) -> None:
        if not self.quiet:
            self._end_stream()
            print(line, file=sys.stderr, flush=True)

    def stream(self, model: str, delta: str) -> None:
        if self.quiet:
            return
        if self.streaming_model != model:
            self._end_stream()
            print(f"\n── {model} ──", file=sys.stderr, flush=True)
            self.streaming_model = model
            self.streamed[model] = ""
        self.streamed[model] += delta
        sys.stderr.write(delta)
        sys.stderr.flush()

    def _end_stream(self) -> None:
        if self.streaming_model is not None:
            print(file=sys.stderr, flush=True)
            self.streaming_model = None


def print_event(term: Terminal, event: CouncilEvent) -> None:
    if isinstance(event, CouncilQueued):
        term.note(f"⏳ waiting for a free slot (position {event.position})")
    elif isinstance(event, StageStarted):
        term.note(f"\n▶ {STAGE_TITLES[event.stage]}")
    elif isinstance(event, MemberStarted):
        term.note(f"  … {event.model} is thinking")
    elif isinstance(event, MemberFinished):
        a = event.answer
        fallback = seats.fallback_note(a.model, a.attempts)
        term.note(
            f"  ✓ {a.model} answered ({a.latency_s or 0:.1f} s, {a.usage.completion_tokens} tokens)"
            + (f": {fallback}" if fallback else "")
        )
    elif isinstance(event, MemberFailed):
        term.note(f"  ✗ {event.answer.model} failed: {event.answer.error.short() if event.answer.error else '?'}")
    elif isinstance(event, ReviewFinished):
        r = event.review
        term.note(f"  {'✓' if r.ballot_models else '✗'} review by {r.reviewer}: {ballot_line(r)}")
    elif isinstance(event, ChairmanToken):
        term.stream(event.model, event.delta)


def print_result(
    result: CouncilResult, *, answer_shown: bool = False, answer_printed: bool = False, details: bool = True
) -> None:
    """The result on stdout; `answer_shown`: the final answer is on the same screen already;
    `answer_printed`: `print_answer` printed it as soon as it was complete; `details`: end with the
    command that shows every stage (not when that command is the one printing)."""
    header = result_header(result)
    if header:
        print(_plain(header) + "\n")
    if result.synthesis is not None and not answer_printed:
        print_answer(result.synthesis, answer_shown=answer_shown)
    read = read_lines(result.request)
    if read:
        print("━━ What the council read ━━")
        print("\n".join(read) + "\n")
    if result.aggregate is not None:
        print("━━ Aggregate ranking (lower mean rank is better) ━━")
        print(aggregate_table(result.aggregate).replace("```\n", "").replace("\n```", ""))
        parsed = sum(1 for r in result.reviews if r.ballot_models)
        print(f"Ballots read: {parsed} of {len(result.reviews)}")
        print("".join(f"{line}\n" for line in dissent_lines(result.aggregate)), end="")
    seconds = result.timings.get("total_s")
    cost = f", ${result.usage.cost_usd:.4f}" if result.usage.cost_usd else ""
    print(
        f"\nCouncil {result.council_id} · {result.status.value} · "
        f"{seconds or 0:.1f} s · {result.usage.prompt_tokens + result.usage.completion_tokens} tokens{cost}"
    )
    if details:
        print(f"Details: {council_command()} show {result.council_id}")


def print_answer(synthesis: Synthesis, *, answer_shown: bool = False) -> None:
    who = "Chairman" if synthesis.by_chairman else "Fallback synthesizer"
    if answer_shown:
        print(f"━━ Final answer ({who}: {synthesis.model}): shown above ━━\n", flush=True)
    else:
        print(f"━━ Final answer ({who}: {synthesis.model}) ━━\n", flush=True)
        print(synthesis.text.strip() + "\n", flush=True)


def _plain(text: str) -> str:
    """Slack-style emoji shortcodes are noise on a terminal."""
    return re.sub(r":[a-z_]+: ", "", text)
