"""What `council ask` and `council show` print: progress and the live synthesis on stderr, the result on stdout."""

from __future__ import annotations

import os
import re
import sys

from bot.cli_commands.invocation import council_command
from bot.render_text import aggregate_table, ballot_line, result_header
from core.models import (
    AgreementChecked,
    AgreementStarted,
    ChairmanToken,
    CouncilEvent,
    CouncilQueued,
    CouncilResult,
    MemberFailed,
    MemberFinished,
    MemberStarted,
    MemberWaiting,
    ReviewFinished,
    RevisionFinished,
    RoundFinished,
    RoundStarted,
    SchedulePlanned,
    StageStarted,
    Synthesis,
    seats,
)
from core.models.voice import (
    DIFFER_TITLE,
    READ_TITLE,
    STANDING_IN,
    WAITING_FOR_MEMORY,
    Author,
    author_of,
    ballots_read,
    check_line,
    deliberation_lines,
    differ_lines,
    footer_fields,
    judging_line,
    late_line,
    measured,
    member_failed,
    queued_line,
    read_lines,
    result_composition_line,
    result_dissent_lines,
    review_state,
    revision_line,
    round_title,
    rounds_lines,
    stage_title,
    stand_in_note,
    summary_line,
    written_by,
)


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
        self.chairman: list[str] = []  # the chairman seat's models: any other synthesizer stands in
        self.mode = "standard"  # the council's, and whether auto mode escalated: the stages' titles say it
        self.escalated = False

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
            stand_in = f", {STANDING_IN}" if self.chairman and model not in self.chairman else ""
            print(f"\n── {model}{stand_in} ──", file=sys.stderr, flush=True)
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
    if isinstance(event, AgreementStarted):
        term.note(f"\n⚖ {judging_line(event.judge)}")
    elif isinstance(event, AgreementChecked):
        term.escalated = event.check.escalated
        term.note(f"  {'↗' if event.check.escalated else '✓'} {check_line(event.check)}")
    elif isinstance(event, CouncilQueued):
        term.note(f"⏳ {queued_line(event.position)}")
    elif isinstance(event, StageStarted):
        term.note(f"\n▶ {stage_title(event.stage, mode=term.mode, escalated=term.escalated)}")
    elif isinstance(event, SchedulePlanned):
        term.note(f"  🧮 in memory: {event.line}")
    elif isinstance(event, MemberWaiting):
        term.note(f"  🧮 {event.model}: {WAITING_FOR_MEMORY}")
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
        term.note(f"  ✗ {member_failed(event.answer.model, event.answer)}")
    elif isinstance(event, ReviewFinished):
        r = event.review
        term.note(f"  {'✓' if r.ballot_models else '✗'} review by {r.reviewer}{review_state(r)}: {ballot_line(r)}")
    elif isinstance(event, ChairmanToken):
        term.stream(event.model, event.delta)
    elif isinstance(event, RoundStarted):
        term.note(f"\n▶ {round_title(event.number)}")
    elif isinstance(event, RevisionFinished):
        term.note(f"  {'↪' if event.revision.moved else '='} {revision_line(event.revision)}")
    elif isinstance(event, RoundFinished):
        term.note(f"  {rounds_lines([event.round])[0]}")


def print_result(
    result: CouncilResult,
    *,
    answer_shown: bool = False,
    answer_printed: bool = False,
    details: bool = True,
    link: str | None = None,
) -> None:
    """The result on stdout; `answer_shown`: the final answer is on the same screen already;
    `answer_printed`: `print_answer` printed it as soon as it was complete; `details`: end with the
    command that shows every stage (not when that command is the one printing)."""
    synthesis = result.synthesis
    if not answer_printed:  # else printed above the answer as it came out
        print_lead(measured.lead_lines(result))
    # A stand-in's answer comes first: its heading names the stand-in and the chairman's failure.
    stood_in = synthesis is not None and author_of(synthesis) is Author.STAND_IN
    if synthesis is not None and stood_in and not answer_printed:
        print_answer(synthesis, answer_shown=answer_shown)
    header = result_header(result, stand_in=False, lead=False)  # the stand-in's note is print_answer's
    if header:
        print(_plain(header) + "\n")
    if synthesis is not None and not stood_in and not answer_printed:
        print_answer(synthesis, answer_shown=answer_shown)
    _print_details(result)
    print(f"\n{summary_line(result)}")  # the line every chat surface puts under the answer
    council, *fields = footer_fields(result)
    print(" · ".join([council, result.status.value, *fields]))
    if details:
        print(f"Details: {council_command()} show {result.council_id}" + (f" · {link}" if link else ""))
    elif link:
        print(f"In the browser: {link}")


def _print_details(result: CouncilResult) -> None:
    """What follows the answer: how the council deliberated, what it read, the ranking, where the
    answer came from and where the members differ."""
    deliberation = deliberation_lines(result)
    if deliberation:
        print("━━ How the council deliberated ━━")
        print("\n".join(deliberation) + "\n")
    read = read_lines(result.request)
    if read:
        print(f"━━ {READ_TITLE} ━━")
        print("\n".join(read) + "\n")
    if result.aggregate is not None:
        print("━━ Aggregate ranking (lower mean rank is better) ━━")
        print(aggregate_table(result.aggregate).replace("```\n", "").replace("\n```", ""))
        if (ballots := ballots_read(result)) is not None:
            print(ballots)
        if (late := late_line(result)) is not None:
            print(late)
        print("".join(f"{line}\n" for line in result_dissent_lines(result)), end="")
    if (meter := result_composition_line(result)) is not None:
        print(meter)
    if differ := differ_lines(result):
        print(f"\n━━ {DIFFER_TITLE} ━━")
        print("\n".join(differ))


def print_lead(lines: list[str]) -> None:
    """Measured doubt and `best`'s strategy, before the answer."""
    for line in lines:
        print(f"❔ {line}", flush=True)
    if lines:
        print(flush=True)


def print_answer(synthesis: Synthesis, *, answer_shown: bool = False) -> None:
    """The final answer under a heading naming who wrote it. When the chairman failed, the heading
    names the stand-in and the note saying why comes next, before the answer (as in the chat apps)."""
    title = f"Final answer {written_by(synthesis)}"
    print(f"━━ {title}{': shown above' if answer_shown else ''} ━━", flush=True)
    if (note := stand_in_note(synthesis)) is not None:
        print(f"⚠ {note}", flush=True)
    print(flush=True)
    if not answer_shown:
        print(synthesis.text.strip() + "\n", flush=True)


def _plain(text: str) -> str:
    """Slack-style emoji shortcodes are noise on a terminal."""
    return re.sub(r":[a-z_]+: ", "", text)
