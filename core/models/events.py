"""The events a running council emits, in order, to whoever follows it."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from core.models.base import Model
from core.models.deliberation import Revision, RevisionRound
from core.models.stages import Aggregate, AgreementCheck, CouncilResult, MemberAnswer, Review, Synthesis


class _Event(Model):
    council_id: str


class CouncilQueued(_Event):
    kind: Literal["queued"] = "queued"
    position: int


class CouncilStarted(_Event):
    kind: Literal["started"] = "started"
    members: list[str]
    chairman: str


class StageStarted(_Event):
    kind: Literal["stage_started"] = "stage_started"
    stage: Literal[1, 2, 3]


class SchedulePlanned(_Event):
    """The members do not all fit their endpoint's memory at once (COUNCIL_MEMORY_BUDGET_GB): they
    run in these batches, largest first (core/providers/scheduling.py)."""

    kind: Literal["schedule_planned"] = "schedule_planned"
    stage: Literal[1, 2, 3]
    batches: list[list[str]]

    @property
    def line(self) -> str:
        """`batch 1 of 2: a, c · batch 2 of 2: b`, as every interface shows it."""
        n = len(self.batches)
        return " · ".join(f"batch {i} of {n}: {', '.join(b)}" for i, b in enumerate(self.batches, 1))


class AgreementStarted(_Event):
    """Auto mode: the judge (the chairman) compares the first two answers."""

    kind: Literal["agreement_started"] = "agreement_started"
    judge: str


class AgreementChecked(_Event):
    """Auto mode: the first two answers agree (stage 3 follows) or not (the remaining members are
    asked: StageStarted(1) and MemberStarted again, then the reviews)."""

    kind: Literal["agreement_checked"] = "agreement_checked"
    check: AgreementCheck


class MemberStarted(_Event):
    kind: Literal["member_started"] = "member_started"
    model: str


class MemberWaiting(_Event):
    """A member of a later memory batch (SchedulePlanned) waits for its endpoint's memory before
    it is asked; MemberStarted follows when it is."""

    kind: Literal["member_waiting"] = "member_waiting"
    model: str


class MemberFinished(_Event):
    kind: Literal["member_finished"] = "member_finished"
    answer: MemberAnswer


class MemberFailed(_Event):
    kind: Literal["member_failed"] = "member_failed"
    answer: MemberAnswer


class ReviewFinished(_Event):
    kind: Literal["review_finished"] = "review_finished"
    review: Review


class RoundStarted(_Event):
    """Refine mode: revision round `number` begins; `members` (seats) are asked to revise."""

    kind: Literal["round_started"] = "round_started"
    number: int
    members: list[str]


class RevisionFinished(_Event):
    """One member's revision of a round (held, moved, or its failure: `revision.error`)."""

    kind: Literal["revision_finished"] = "revision_finished"
    revision: Revision


class RoundFinished(_Event):
    """A revision round is over: who moved toward whom, and whether the rounds end here."""

    kind: Literal["round_finished"] = "round_finished"
    round: RevisionRound


class AggregateReady(_Event):
    kind: Literal["aggregate_ready"] = "aggregate_ready"
    aggregate: Aggregate
    label_to_model: dict[str, str]


class ChairmanToken(_Event):
    kind: Literal["chairman_token"] = "chairman_token"
    model: str
    delta: str


class ChairmanFinished(_Event):
    kind: Literal["chairman_finished"] = "chairman_finished"
    synthesis: Synthesis


class CouncilFinished(_Event):
    kind: Literal["finished"] = "finished"
    result: CouncilResult


CouncilEvent = Annotated[
    CouncilQueued
    | CouncilStarted
    | StageStarted
    | SchedulePlanned
    | MemberStarted
    | MemberWaiting
    | MemberFinished
    | MemberFailed
    | ReviewFinished
    | AgreementStarted
    | AgreementChecked
    | RoundStarted
    | RevisionFinished
    | RoundFinished
    | AggregateReady
    | ChairmanToken
    | ChairmanFinished
    | CouncilFinished,
    Field(discriminator="kind"),
]
