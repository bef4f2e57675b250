"""What one council has gathered so far: shared by its stages, read by the result."""

from __future__ import annotations

import random
import secrets
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic import BaseModel

from core import prompts
from core.engine.control import CouncilControl
from core.material import CouncilMaterial
from core.models import (
    Aggregate,
    CouncilCheckpoint,
    CouncilConfig,
    CouncilRequest,
    ErrorInfo,
    ErrorKind,
    MemberAnswer,
    Review,
    Synthesis,
)
from core.providers.base import CallOptions

LABELS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"

E = TypeVar("E", bound=BaseModel)


@dataclass
class CouncilState:
    request: CouncilRequest
    control: CouncilControl
    members: list[str]
    answers: dict[str, MemberAnswer]
    label_to_model: dict[str, str] = field(default_factory=dict)
    reviews: dict[str, Review] = field(default_factory=dict)
    aggregate: Aggregate | None = None
    synthesis: Synthesis | None = None
    skipped: set[str] = field(default_factory=set)  # "member" and "review:member" keys cut short by the user
    stage2_skipped_by_user: bool = False
    timings: dict[str, float] = field(default_factory=dict)
    rng: random.Random = field(default_factory=lambda: random.Random(secrets.randbits(64)))  # review label orders
    review_fence: prompts.Fence = field(default_factory=lambda: prompts.Fence(prompts.new_nonce()))
    chair_fence: prompts.Fence = field(default_factory=lambda: prompts.Fence(prompts.new_nonce()))  # another nonce
    # Files and sources go to every stage (core/material.py); members write stage 1 seeing only this nonce.
    material_fence: prompts.Fence = field(default_factory=lambda: prompts.Fence(prompts.new_nonce()))
    material: CouncilMaterial = field(default_factory=CouncilMaterial)
    started: float = field(default_factory=time.perf_counter)
    # What an earlier run of this council completed (a resumed council): not asked again.
    checkpoint: CouncilCheckpoint = field(default_factory=CouncilCheckpoint)

    @classmethod
    def new(
        cls, request: CouncilRequest, control: CouncilControl, checkpoint: CouncilCheckpoint | None = None
    ) -> CouncilState:
        # Duplicates would give one model two labels and two ballots.
        members = list(dict.fromkeys(request.config.members))
        state = cls(request, control, members, {m: MemberAnswer(model=m) for m in members})
        state.material = CouncilMaterial.from_request(request)
        if checkpoint is not None:
            state.checkpoint = checkpoint
        return state

    def stored_answers(self) -> dict[str, MemberAnswer]:
        """Stage-1 answers an earlier run settled, by member (labels are assigned anew, the same way)."""
        return {
            a.model: a.model_copy(update={"label": None}) for a in self.checkpoint.answers if a.model in self.answers
        }

    def stored_reviews(self, reviewers: Iterable[str]) -> dict[str, Review]:
        wanted = set(reviewers)
        return {r.reviewer: r for r in self.checkpoint.reviews if r.reviewer in wanted}

    @staticmethod
    def was_skipped(error: ErrorInfo | None) -> bool:
        """A stored outcome the user cut short (Stop, Synthesize now), as `skipped` records it."""
        return error is not None and error.kind is ErrorKind.CANCELLED

    @property
    def config(self) -> CouncilConfig:
        return self.request.config

    def event(self, cls: type[E], **fields: Any) -> E:
        return cls(council_id=self.request.council_id, **fields)

    def options(self, max_tokens: int | None) -> CallOptions:
        return CallOptions(
            timeout_s=self.config.member_timeout_s, temperature=self.config.temperature, max_tokens=max_tokens
        )

    def all_ids(self) -> list[str]:
        return [*self.members, self.config.chairman]

    def nonces(self) -> tuple[str, str]:
        return self.review_fence.nonce, self.chair_fence.nonce

    def labelled_texts(self) -> dict[str, str]:
        return {label: self.answers[m].text or "" for label, m in self.label_to_model.items()}

    def review_skipped(self, reviewer: str) -> bool:
        return f"review:{reviewer}" in self.skipped
