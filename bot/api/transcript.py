"""Council events as two texts: progress for the reasoning block, and the answer as content.

Chat front ends (Open WebUI, LibreChat) fold `reasoning_content` into a collapsible block, so
the council's work goes there and the answer stays clean. Both texts only ever grow: a
stream cannot take back what it sent, so a chairman fallback is announced, not rewritten.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.render_text import ballot_line, ranking_line, short_model
from core.models import (
    Aggregate,
    AggregateReady,
    AgreementChecked,
    AgreementStarted,
    ChairmanFinished,
    ChairmanToken,
    CouncilConfig,
    CouncilEvent,
    CouncilQueued,
    CouncilResult,
    CouncilStarted,
    CouncilStatus,
    MemberFailed,
    MemberFinished,
    MemberWaiting,
    ReviewFinished,
    RevisionFinished,
    RoundFinished,
    RoundStarted,
    SchedulePlanned,
    StageStarted,
)
from core.models.doubt import judge
from core.models.stages import AgreementCheck
from core.models.voice import (
    STOPPED_BEFORE_ANSWER,
    WAITING_FOR_MEMORY,
    Author,
    author_of,
    chairman_replaced,
    check_line,
    council_opening,
    escalation_heading,
    failure_line,
    judging_line,
    measured,
    member_answered,
    member_failed,
    queued_line,
    review_state,
    revision_line,
    round_line,
    round_title,
    stage_title,
    stand_in_note,
    stood_as_written,
    writer_replaced,
)


@dataclass
class Deltas:
    reasoning: str = ""
    content: str = ""


class CouncilTranscript:
    """`config`: the council's, for what its answer says first (measured doubt once the ranking is
    known, the strategy `best` chose); None: a stored council, whose result says it."""

    def __init__(
        self, mode: str = "standard", members: list[str] | None = None, *, config: CouncilConfig | None = None
    ) -> None:
        self.config = config
        self.mode = mode  # the council's mode: quick and auto say what they do
        self.members = list(members or [])  # every seat: auto mode's escalation names them all
        self._escalated = False
        self.reasoning = ""
        self.content = ""
        self._aggregate: Aggregate | None = None
        self._lead_sent = False
        self.failure: str | None = None  # why a failed council has no answer (never content)
        self._chairman: str | None = None
        self._writer: str | None = None  # the model whose tokens are being streamed
        self._written = ""  # what that model has written so far
        self._check: AgreementCheck | None = None  # auto mode's check of the first two answers

    def on_event(self, event: CouncilEvent) -> Deltas:
        if isinstance(event, AggregateReady):
            self._aggregate = event.aggregate
        return self._grow(self._describe(event))

    def _lead(self, result: CouncilResult | None = None) -> str:
        """The lines an answer says first, once, before its first word of content."""
        if self._lead_sent:
            return ""
        self._lead_sent = True
        if result is not None:
            lines = measured.lead_lines(result)
        elif self.config is not None:
            unsure = judge(self._aggregate, self.config.unsure_below)
            lines = [measured.unsure_line(unsure)] if unsure is not None else []
            lines += [self.config.strategy.line] if self.config.strategy is not None else []
        else:
            lines = []
        return "".join(f"❔ {line}\n\n" for line in lines)

    def finish(self, result: CouncilResult) -> Deltas:
        """What is still missing once the council ended (an unstreamed answer). A failure is no
        content: it is kept in `failure`, for the adapter to send as an error."""
        if result.status is CouncilStatus.FAILED:
            self.failure = failure_line(result)
            return Deltas()
        if result.synthesis is not None and self._writer is None:
            return self._grow(Deltas(content=self._lead(result) + _fallback_note(result) + result.synthesis.text))
        if result.synthesis is None:
            return self._grow(Deltas(content=STOPPED_BEFORE_ANSWER))
        return Deltas()

    def _grow(self, deltas: Deltas) -> Deltas:
        self.reasoning += deltas.reasoning
        self.content += deltas.content
        return deltas

    def _describe(self, event: CouncilEvent) -> Deltas:
        if isinstance(event, ChairmanToken):
            return Deltas(content=self._token(event))
        if isinstance(event, ChairmanFinished):
            why = self._why(event)
            return Deltas(reasoning=f"- {why}\n" if why else "", content=self._finished_text(event))
        return Deltas(reasoning=self._progress_line(event))

    def _why(self, event: ChairmanFinished) -> str | None:
        """Why the answer is not the chairman's: a stand-in's note, or why one stands as written."""
        synthesis = event.synthesis
        if author_of(synthesis) is Author.AS_WRITTEN:
            return stood_as_written(self._check, synthesis, None)
        return stand_in_note(synthesis)

    def _token(self, event: ChairmanToken) -> str:
        prefix = self._lead()
        if event.model != self._writer:
            if self._writer is not None:
                prefix = f"\n\n---\n⚠️ {writer_replaced(short_model(self._writer), short_model(event.model))}\n\n"
            elif self._chairman and event.model != self._chairman:
                prefix += f"⚠️ {chairman_replaced(short_model(self._chairman), short_model(event.model))}\n\n"
            self._writer, self._written = event.model, ""
        self._written += event.delta
        return prefix + event.delta

    def _finished_text(self, event: ChairmanFinished) -> str:
        synthesis = event.synthesis
        if self._writer is None:
            self._writer, self._written = synthesis.model, synthesis.text
            note = stand_in_note(synthesis)
            return self._lead() + (f"⚠️ {note}\n\n" if note else "") + synthesis.text
        if synthesis.model == self._writer and synthesis.text.startswith(self._written):
            rest = synthesis.text[len(self._written) :]
        else:
            note = f"⚠️ {synthesis.note}\n\n" if synthesis.note else ""
            rest = f"\n\n---\n{note}{synthesis.text}"
        self._writer, self._written = synthesis.model, synthesis.text
        return rest

    def _progress_line(self, event: CouncilEvent) -> str:
        if isinstance(event, CouncilQueued):
            return f"{queued_line(event.position)}.\n"
        if isinstance(event, CouncilStarted):
            self._chairman = event.chairman
            members = [short_model(m) for m in event.members]
            return council_opening(self.mode, members, short_model(event.chairman)) + "\n"
        if isinstance(event, StageStarted):
            return f"\n**{stage_title(event.stage, mode=self.mode, escalated=self._escalated)}**\n"
        if isinstance(event, SchedulePlanned):
            return f"In memory: {event.line}.\n"
        if isinstance(event, MemberWaiting):
            return f"- {short_model(event.model)}: {WAITING_FOR_MEMORY}\n"
        if isinstance(event, MemberFinished):
            return f"- {member_answered(short_model(event.answer.model), event.answer.latency_s)}\n"
        if isinstance(event, MemberFailed):
            return f"- {member_failed(short_model(event.answer.model), event.answer)}\n"
        if isinstance(event, ReviewFinished):
            review = event.review
            return f"- {short_model(review.reviewer)}{review_state(review)}: {ballot_line(review)}\n"
        if isinstance(event, AggregateReady):
            return f"\nAggregate ranking: {ranking_line(event.aggregate)}\n"
        if isinstance(event, AgreementStarted):
            return f"- {judging_line(short_model(event.judge))}\n"
        if isinstance(event, RoundStarted):
            return f"\n**{round_title(event.number)}**\n"
        if isinstance(event, RevisionFinished):
            return f"- {revision_line(event.revision)}\n"
        if isinstance(event, RoundFinished):
            return f"{round_line(event.round)}\n"
        if isinstance(event, AgreementChecked):
            check = event.check
            self._check = check
            if not check.escalated:
                return f"- {check_line(check)}\n"
            self._escalated = True
            heading, everyone = escalation_heading(check.reason, [short_model(m) for m in self.members])
            return f"\n**{heading}** {everyone}\n"
        return ""


def _fallback_note(result: CouncilResult) -> str:
    note = stand_in_note(result.synthesis) if result.synthesis is not None else None
    return f"⚠️ {note}\n\n" if note else ""
