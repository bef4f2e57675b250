"""The events a running council emits, in order, to whoever follows it."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from core.models.base import Model
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


class MemberFinished(_Event):
    kind: Literal["member_finished"] = "member_finished"
    answer: MemberAnswer


class MemberFailed(_Event):
    kind: Literal["member_failed"] = "member_failed"
    answer: MemberAnswer


class ReviewFinished(_Event):
    kind: Literal["review_finished"] = "review_finished"
    review: Review


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
    | MemberStarted
    | MemberFinished
    | MemberFailed
    | ReviewFinished
    | AgreementStarted
    | AgreementChecked
    | AggregateReady
    | ChairmanToken
    | ChairmanFinished
    | CouncilFinished,
    Field(discriminator="kind"),
]
