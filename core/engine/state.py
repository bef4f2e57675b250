"""What one council has gathered so far: shared by its stages, read by the result."""

from __future__ import annotations

import random
import secrets
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic import BaseModel

from core.engine.batch import Batch, StagePolicy
from core.engine.control import CouncilControl
from core.models import (
    Aggregate,
    AgreementCheck,
    CouncilCheckpoint,
    CouncilConfig,
    CouncilRequest,
    ErrorInfo,
    ErrorKind,
    MemberAnswer,
    Review,
    RevisionRound,
    Synthesis,
    seats,
)
from core.models.deliberation import sample_key, seat_of_key
from core.models.search import SearchResult
from core.providers.base import CallOptions
from core.reading.material import CouncilMaterial
from core.shared.fences import Fence, new_nonce

LABELS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"

E = TypeVar("E", bound=BaseModel)


@dataclass
class CouncilState:
    request: CouncilRequest
    control: CouncilControl
    members: list[str]  # seats (`primary|fallback|...`); answers are keyed by seat
    answers: dict[str, MemberAnswer]
    asked: set[str] = field(default_factory=set)  # seats whose stage-1 call has ended (or was restored)
    agreement: AgreementCheck | None = None  # auto mode: whether the first two answers agree
    label_to_model: dict[str, str] = field(default_factory=dict)  # label -> the model that answered
    label_to_seat: dict[str, str] = field(default_factory=dict)
    late_reviews: Batch | None = None  # reviews left running once the first place was decided
    review_calls: dict[str, Any] = field(default_factory=dict)  # reviewer -> its ballots.ReviewCall
    answered_at: float | None = None  # perf_counter when the answer was complete (ChairmanFinished, not stopped)
    review_plans: dict[str, list[str]] = field(default_factory=dict)  # reviewer -> labels shown
    reviews: dict[str, Review] = field(default_factory=dict)
    aggregate: Aggregate | None = None  # the ranking the chairman is given
    late_aggregate: Aggregate | None = None  # the ranking with the reviews that came after it started
    synthesis: Synthesis | None = None
    skipped: set[str] = field(default_factory=set)  # "member" and "review:member" keys cut short by the user
    stage2_skipped_by_user: bool = False
    timings: dict[str, float] = field(default_factory=dict)
    rng: random.Random = field(default_factory=lambda: random.Random(secrets.randbits(64)))  # label, revision orders
    review_fence: Fence = field(default_factory=lambda: Fence(new_nonce()))
    chair_fence: Fence = field(default_factory=lambda: Fence(new_nonce()))  # another nonce
    # Files and sources go to every stage (core/reading/material.py); members write stage 1 seeing only this nonce.
    material_fence: Fence = field(default_factory=lambda: Fence(new_nonce()))
    material: CouncilMaterial = field(default_factory=CouncilMaterial)
    # Refine mode: the revision rounds run so far, and each seat's latest answer (core/engine/rounds.py).
    rounds: list[RevisionRound] = field(default_factory=list)
    latest: dict[str, str] = field(default_factory=dict)
    revision_fence: Fence = field(default_factory=lambda: Fence(new_nonce()))  # the members see this one
    started: float = field(default_factory=time.perf_counter)
    # What an earlier run of this council completed (a resumed council): not asked again.
    checkpoint: CouncilCheckpoint = field(default_factory=CouncilCheckpoint)
    # The chairman's one web search on a disputed fact (core/engine/fact_check.py): the service's
    # search (None: no backend, or search off for this council) and what it checked.
    fact_search: Callable[[str], Awaitable[list[SearchResult]]] | None = None
    fact_check_note: str | None = None
    # The synthesizer's "WHERE THEY DIFFER" section, held back from the answer (core/engine/disagreement.py).
    chair_section: str | None = None

    @classmethod
    def new(
        cls,
        request: CouncilRequest,
        control: CouncilControl,
        checkpoint: CouncilCheckpoint | None = None,
        fact_search: Callable[[str], Awaitable[list[SearchResult]]] | None = None,
        rng: random.Random | None = None,
    ) -> CouncilState:
        """`fact_search` is kept only when the council searched before stage 1 (`request.sources`).
        `rng`: where the label and revision orders come from (None: a fresh random seed)."""
        members = _distinct_seats(request.config.members)
        if request.config.mode == "auto":  # the first two seats only, unless they disagree (widen)
            members = _distinct_seats(request.config.first_seats) or members[:2]
        elif request.config.mode == "self-moa" and members:  # one seat, asked `samples` times
            members = [sample_key(members[0], n) for n in range(1, max(1, request.config.samples) + 1)]
        return cls(
            request,
            control,
            members,
            {m: MemberAnswer(model=m) for m in members},
            material=CouncilMaterial.from_request(request),
            checkpoint=checkpoint if checkpoint is not None else CouncilCheckpoint(),
            fact_search=fact_search if request.sources else None,
            rng=rng if rng is not None else random.Random(secrets.randbits(64)),
        )

    def others(self) -> list[str]:
        """Auto mode: the configured seats not taking part so far (asked if the council escalates)."""
        return [seat for seat in _distinct_seats(self.config.members) if seat not in self.answers]

    def widen(self) -> None:
        """Auto mode's escalation: every configured seat takes part, in configured order (the
        answers so far are kept; the others are asked by the next stage-1 pass)."""
        self.members = list(dict.fromkeys([*_distinct_seats(self.config.members), *self.members]))
        for seat in self.members:
            self.answers.setdefault(seat, MemberAnswer(model=seat))

    def pending_seats(self) -> list[str]:
        """Seats whose stage-1 answer is still to come (all of them at first; after an escalation,
        the ones auto mode had not asked)."""
        return [seat for seat in self.members if seat not in self.asked]

    def resumed_escalated(self) -> bool:
        """A resumed auto council whose earlier run had escalated: another seat's answer is stored."""
        return any((a.seat or a.model) in self.others() for a in self.checkpoint.answers)

    def stored_answers(self) -> dict[str, MemberAnswer]:
        """Stage-1 answers an earlier run settled, by seat (labels are assigned anew, the same way)."""
        stored = {(a.seat or a.model): a for a in self.checkpoint.answers}
        return {seat: a.model_copy(update={"label": None}) for seat, a in stored.items() if seat in self.answers}

    def stored_reviews(self, reviewers: Iterable[str]) -> dict[str, Review]:
        wanted = set(reviewers)
        return {r.reviewer: r for r in self.checkpoint.reviews if r.reviewer in wanted}

    @property
    def escalated(self) -> bool:
        return self.agreement is not None and self.agreement.escalated

    @staticmethod
    def was_skipped(error: ErrorInfo | None) -> bool:
        """A stored outcome the user cut short (Stop, Synthesize now), as `skipped` records it."""
        return error is not None and error.kind is ErrorKind.CANCELLED

    @property
    def config(self) -> CouncilConfig:
        return self.request.config

    def event(self, cls: type[E], **fields: Any) -> E:
        return cls(council_id=self.request.council_id, **fields)

    def policy(self) -> StagePolicy:
        """When stages 1 and 2 stop waiting: quorum, adaptive grace, hard limit."""
        config = self.config
        return StagePolicy(
            config.quorum, config.grace_s, config.member_timeout_s, config.grace_min_s, config.grace_factor
        )

    def options(self, max_tokens: int | None) -> CallOptions:
        return CallOptions(
            timeout_s=self.config.member_timeout_s, temperature=self.config.temperature, max_tokens=max_tokens
        )

    def member_options(self, key: str) -> CallOptions:
        """A member's stage-1 and revision calls: its lens' temperature and length over the council's
        (Self-MoA's samples: the sampling temperature)."""
        config = self.config
        lens = config.lens(key)
        temperature = config.sample_temperature if config.mode == "self-moa" else config.temperature
        return CallOptions(
            timeout_s=config.member_timeout_s,
            temperature=lens.temperature if lens and lens.temperature is not None else temperature,
            max_tokens=lens.max_tokens if lens and lens.max_tokens is not None else config.max_answer_tokens,
        )

    def persona(self, key: str) -> str | None:
        lens = self.config.lens(key)
        return lens.persona if lens else None

    def chain(self, key: str) -> list[str]:
        """The models a stage-1 key may ask: its seat's chain (a Self-MoA sample's: the sampled seat's)."""
        return seats.seat_models(seat_of_key(key))

    def all_ids(self) -> list[str]:
        return seats.all_models([*map(seat_of_key, self.members), self.config.chairman])

    def answer_of(self, model: str) -> MemberAnswer:
        """The answer a model gave (a label's model)."""
        label = next(label for label, m in self.label_to_model.items() if m == model)
        return self.answers[self.label_to_seat[label]]

    def nonces(self) -> tuple[str, ...]:
        return self.review_fence.nonce, self.chair_fence.nonce, self.revision_fence.nonce

    def latest_text(self, seat: str) -> str:
        """A seat's answer after the rounds so far (its first answer before any)."""
        return self.latest.get(seat) or self.answers[seat].text or ""

    def labelled_texts(self) -> dict[str, str]:
        """label -> each answer as reviewers and the chairman read it: the latest revision."""
        return {label: self.latest_text(seat) for label, seat in self.label_to_seat.items()}

    def review_skipped(self, reviewer: str) -> bool:
        return f"review:{reviewer}" in self.skipped


def _distinct_seats(specs: Iterable[str]) -> list[str]:
    # Duplicates would give one model two labels and two ballots.
    return list(dict.fromkeys(s for s in map(seats.clean_seat, specs) if s))
