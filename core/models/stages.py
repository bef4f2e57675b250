"""What a council produces stage by stage: answers, reviews, the aggregate, the synthesis, the result."""

from __future__ import annotations

from datetime import datetime
from enum import Enum
from typing import Literal

from pydantic import AliasChoices, Field

from core.models.base import ErrorInfo, Model, Usage, utcnow
from core.models.deliberation import RevisionRound
from core.models.disagreement import Disagreement
from core.models.doubt import Unsure, judge
from core.models.requests import CouncilRequest


class Attempt(Model):
    """A model of a seat's chain that failed before the next one was asked."""

    model: str
    error: ErrorInfo


class MemberAnswer(Model):
    """Stage 1: one seat's answer, or why it has none. `model` is the model that answered (the
    seat's primary when none did); `attempts` the models of its chain that failed first."""

    model: str
    seat: str | None = None  # the seat's spec, `primary|fallback|...`
    attempts: list[Attempt] = Field(default_factory=list)
    label: str | None = None  # "A", "B", ... (global, in member order) when answered
    text: str | None = None
    error: ErrorInfo | None = None
    latency_s: float | None = None
    usage: Usage = Field(default_factory=Usage)

    @property
    def ok(self) -> bool:
        return self.error is None and bool(self.text)


class ParseStatus(str, Enum):
    COMPLETE = "complete"
    PARTIAL = "partial"
    NONE = "none"


class Review(Model):
    """Stage 2: one reviewer's evaluation and the ballot extracted from it."""

    reviewer: str  # model id of the reviewer
    text: str | None = None  # raw evaluation text
    shown_labels: list[str] = Field(default_factory=list)  # labels in the order presented
    ballot_labels: list[str] = Field(default_factory=list)  # parsed, best first
    ballot_models: list[str] = Field(default_factory=list)  # same, as model ids
    parse_status: ParseStatus = ParseStatus.NONE
    # Which format produced the ballot (None: the call failed, or a council stored before ballot
    # formats existed; those are also left out of the bias audit's running totals).
    format: Literal["json", "text"] | None = None
    # Rubric scores read from the review (rust/ranking/src/scores.rs): label -> criterion -> score.
    scores: dict[str, dict[str, float]] = Field(default_factory=dict)
    error: ErrorInfo | None = None
    latency_s: float | None = None
    usage: Usage = Field(default_factory=Usage)
    late: bool = False  # it arrived after the synthesis began: the chairman never saw it


class Dissent(Model):
    """A reviewer whose ballot disagrees with the aggregate (core/engine/dissent.py)."""

    reviewer: str
    preferred: str  # the model whose answer it ranked first
    preferred_label: str | None = None
    place: int | None = None  # where the aggregate puts the preferred answer
    tau: float | None = None  # Kendall's tau of its ballot against the aggregate
    reason: str = ""  # the sentence of its evaluation that says why (clipped)


class AggregateEntry(Model):
    model: str
    label: str | None = None
    position: int  # 1-based final place
    average_rank: float | None  # mean rank position over ballots that ranked it
    rankings_count: int  # number of ballots ranking it ("votes")
    borda: float = 0.0
    # Copeland's score (core/ranking.py): pairwise majorities won, a tie counting a half. Councils
    # stored before it had its name wrote it as `condorcet_wins`; the storage's column keeps that name.
    copeland: float = Field(0.0, validation_alias=AliasChoices("copeland", "condorcet_wins"))
    first_place_votes: int = 0


class Aggregate(Model):
    entries: list[AggregateEntry]  # best first
    agreement_w: float | None = None  # Kendall's W over complete-enough ballots
    method: str = "mean_rank"
    ballots_used: int = 0
    ballots_unparsed: int = 0
    # Each reviewer's Kendall tau against this ranking (its agreement with the consensus), and
    # the minority views among them.
    reviewer_tau: dict[str, float] = Field(default_factory=dict)
    dissent: list[Dissent] = Field(default_factory=list)
    ballots_late: int = 0  # reviews that arrived after the chairman had started (counted here)
    # Rubric scores: each answer's mean per criterion (model -> criterion -> mean) and the
    # consensus, 0-100 from the scores' spread (rust/ranking/src/scores.rs); None without scores.
    scores: dict[str, dict[str, float]] = Field(default_factory=dict)
    consensus: float | None = None


class Synthesis(Model):
    """Stage 3. `by_chairman` is False when a fallback member wrote it, or when (auto mode) the first
    two answers were the same and one stands as written (`agreed`: not a fallback)."""

    model: str
    text: str
    by_chairman: bool = True
    agreed: bool = False
    note: str | None = None  # why a fallback happened, shown first
    latency_s: float | None = None
    usage: Usage = Field(default_factory=Usage)
    attempts: list[Attempt] = Field(default_factory=list)  # chairman chain models that failed first

    @property
    def stood_in(self) -> bool:
        """A member (or a member's answer as written) stands in for a chairman that failed."""
        return not self.by_chairman and not self.agreed


class AgreementCheck(Model):
    """Auto mode: whether the first two answers agree (core/engine/auto.py). They agree when both
    are short and the same once normalised, or when the judge (the chairman) says so in the format
    of rust/ranking/src/verdict.rs; otherwise the council escalates to all three stages."""

    escalated: bool
    reason: str  # user-visible: "the first two answers disagreed", ...
    judge: str | None = None  # the model that judged (None: no judgement was asked)
    verdict: Literal["agree", "disagree", "none"] | None = None  # what its text said
    text: str | None = None  # its judgement, as written
    error: ErrorInfo | None = None
    latency_s: float | None = None
    usage: Usage = Field(default_factory=Usage)


class CouncilStatus(str, Enum):
    OK = "ok"
    DEGRADED = "degraded"  # produced an answer, but something failed (listed in notices)
    FAILED = "failed"  # no answer at all
    CANCELLED = "cancelled"


class CouncilResult(Model):
    council_id: str
    request: CouncilRequest
    status: CouncilStatus
    answers: list[MemberAnswer] = Field(default_factory=list)
    reviews: list[Review] = Field(default_factory=list)
    label_to_model: dict[str, str] = Field(default_factory=dict)
    aggregate: Aggregate | None = None
    synthesis: Synthesis | None = None
    notices: list[str] = Field(default_factory=list)  # user-facing degradation notes
    error: ErrorInfo | None = None  # why the council failed, when it did
    timings: dict[str, float] = Field(default_factory=dict)  # stage1_s, stage2_s, stage3_s, total_s
    usage: Usage = Field(default_factory=Usage)
    finished_at: datetime = Field(default_factory=utcnow)
    agreement: AgreementCheck | None = None  # auto mode's check of its first two answers
    # Where the final answer came from (core/engine/composition.py): member model, `sources` and
    # `chairman` (its own) -> share of the synthesis, summing to 1; None without a synthesis.
    composition: dict[str, float] | None = None
    # The ranking with the reviews that arrived after the synthesis began (Review.late); `aggregate`
    # is the one the chairman was given. None when no review came late.
    late_aggregate: Aggregate | None = None
    # Where the members stand (core/engine/disagreement.py); None without a synthesis.
    disagreement: Disagreement | None = None
    # Refine mode's revision rounds, in order (core/engine/rounds.py); `answers` keep the first answers.
    rounds: list[RevisionRound] = Field(default_factory=list)

    def final_text(self, answer: MemberAnswer) -> str | None:
        """A member's latest answer: its last revision's, else its first."""
        seat = answer.seat or answer.model
        for revision_round in reversed(self.rounds):
            for revision in revision_round.revisions:
                if revision.seat == seat and revision.text:
                    return revision.text
        return answer.text

    @property
    def degraded(self) -> bool:
        return self.status is CouncilStatus.DEGRADED

    @property
    def escalated(self) -> bool | None:
        """Auto mode: whether the full council deliberated (None: another mode, or never checked)."""
        return self.agreement.escalated if self.agreement is not None else None

    @property
    def unsure(self) -> Unsure | None:
        """Whether its consensus fell under the threshold its config carried (core/models/doubt.py):
        derived from what is stored, so a stored council says it as the live one did."""
        if self.synthesis is None:
            return None
        return judge(self.aggregate, self.request.config.unsure_below)
