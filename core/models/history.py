"""What the records show of past councils: summaries, channel settings, rates, the leaderboard and bias audit."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field

from core.models.base import Model
from core.models.deliberation import Lens
from core.models.requests import CouncilMode, Origin
from core.models.stages import CouncilStatus


class CouncilSummary(Model):
    council_id: str
    created_at: datetime
    question: str
    status: CouncilStatus
    members: list[str]
    chairman: str
    mode: CouncilMode = "standard"
    winner: str | None = None
    agreement_w: float | None = None
    consensus: float | None = None  # of the rubric scores
    cost_usd: float | None = None
    duration_s: float | None = None
    origin: Origin = Field(default_factory=Origin)
    votes_good: int = 0  # readers' feedback (core/records/feedback.py)
    votes_bad: int = 0
    files: list[str] = Field(default_factory=list)  # names of the files it read
    sources: int = 0  # web search results it was given


class UnfinishedCouncil(Model):
    """A council stored as running: it runs, or it was interrupted (the process running it stopped
    renewing its lease, and no live process has stored it as failed yet)."""

    council_id: str
    created_at: datetime
    question: str
    members: list[str]
    chairman: str
    mode: CouncilMode = "standard"
    origin: Origin = Field(default_factory=Origin)
    interrupted: bool = False


class ChannelSettings(Model):
    """Per-channel overrides set by admins; None means "use the default"."""

    channel_key: str
    members: list[str] | None = None
    chairman: str | None = None
    user_limit_per_hour: int | None = None
    channel_limit_per_hour: int | None = None
    daily_budget_usd: float | None = None
    search: bool | None = None  # web search before stage 1; None: COUNCIL_SEARCH_DEFAULT
    mode: CouncilMode | None = None  # the channel's default mode; None: standard
    # Models an asker may choose per question; None: the channel's members, their
    # fallbacks and its chairman (core/channels/admin.py: allowed_models).
    allowed_models: list[str] | None = None
    # Who is mentioned in the thread when an answer here is unsure (core/models/doubt.py's
    # `kind:id` form: a Slack user group or user, a Discord role); None: nobody.
    unsure_mention: str | None = None
    # Each seat's lens set by the channel's admins (seat -> Lens); None: COUNCIL_SEATS_FILE's.
    lenses: dict[str, Lens] | None = None


class LeaderboardRow(Model):
    model: str
    rating: float
    low: float  # bootstrap 95% interval
    high: float
    councils: int
    ballots: int
    win_rate: float  # share of councils where it placed first
    average_rank: float | None = None
    average_latency_s: float | None = None
    failure_rate: float = 0.0
    cost_per_council_usd: float | None = None


class RateCheck(Model):
    """A rate with its 95% Wilson interval against the value a fair reviewer would show."""

    rate: float | None
    expected: float
    ballots: int
    low: float | None
    high: float | None
    flagged: bool


# Why a correlation is not given (core/records/bias.py): every ballot ranked two answers, fewer than ten
# ballots, or answers of one length.
Withheld = Literal["pairs", "few", "equal"]


class CorrelationCheck(Model):
    """A correlation with its 95% Fisher-z interval (fair value 0), or None and why (`withheld`)."""

    correlation: float | None
    pairs: int
    ballots: int
    low: float | None
    high: float | None
    flagged: bool
    withheld: Withheld | None = None


# Fewer ballots than this and the bias audit flags nothing: its intervals are too wide to mean anything.
MIN_BALLOTS = 10


class BiasEntry(Model):
    """One reviewer's bias audit (core/records/bias.py): position bias in the top-level fields."""

    reviewer: str
    first_position_rate: float | None  # share of its ballots ranking first the answer shown first
    expected: float  # mean of 1/n over those ballots (n: answers shown)
    ballots: int
    low: float | None
    high: float | None
    flagged: bool
    self_preference: RateCheck | None = None  # own answer ranked first, when it was shown its own
    length: CorrelationCheck | None = None  # answer length vs rank position (< 0: prefers longer)


class ModelApproval(Model):
    """Readers' votes on the answers a model wrote as chairman, and on councils it won."""

    model: str
    chairman_good: int = 0
    chairman_bad: int = 0
    winner_good: int = 0
    winner_bad: int = 0


class SeatModelStats(Model):
    """One model of a seat's chain, from the stored per-model statistics."""

    model: str
    answers: int = 0  # councils it was asked in (as a primary or a fallback)
    failure_rate: float = 0.0
    average_latency_s: float | None = None


class SeatStats(Model):
    seat: str  # `primary|fallback|...`
    models: list[SeatModelStats]


class Leaderboard(Model):
    scope: str
    rows: list[LeaderboardRow]
    councils: int
    ballots: int
    computed_s: float = 0.0
    approval: list[ModelApproval] = Field(default_factory=list)
    bias: list[BiasEntry] = Field(default_factory=list)
    seats: list[SeatStats] = Field(default_factory=list)  # the configured seats with fallbacks
