"""Typed values that cross module boundaries: requests, answers, reviews, results, events.

Everything here is a pydantic model so that it serialises to JSON for storage, `--json`
output and exports without bespoke code. Nothing here knows about Slack or Discord.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from enum import Enum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from core.models.files import ExtractedAttachment
from core.models.rubric import Rubric
from core.models.search import SearchResult


def new_council_id() -> str:
    return uuid.uuid4().hex[:16]


def utcnow() -> datetime:
    return datetime.now(UTC)


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """ "1 council", "2 councils": a count and its noun, as a reader expects it."""
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"


class _Model(BaseModel):
    model_config = ConfigDict(frozen=False, extra="forbid", defer_build=True)


# --------------------------------------------------------------------------- errors


class ErrorKind(str, Enum):
    AUTH = "auth"  # 401/403: bad or missing key
    MODEL_NOT_FOUND = "model_not_found"  # 404 / unknown model id
    RATE_LIMITED = "rate_limited"  # 429 after retries
    TIMEOUT = "timeout"  # per-call timeout or council deadline
    BAD_RESPONSE = "bad_response"  # invalid JSON, empty choices, refused content
    UNAVAILABLE = "unavailable"  # 5xx after retries, connection refused
    CANCELLED = "cancelled"  # the user stopped the council
    CONFIG = "config"  # misconfiguration detected before any call
    UNKNOWN = "unknown"


class ErrorInfo(_Model):
    """The real cause of a failure, safe to show a user (never contains a secret)."""

    kind: ErrorKind
    message: str
    status: int | None = None

    def short(self) -> str:
        code = f" {self.status}" if self.status else ""
        return f"{self.kind.value}{code}: {self.message}"


# --------------------------------------------------------------------------- chat


class ChatMessage(_Model):
    role: Literal["system", "user", "assistant"]
    content: str
    # Images shown with this message, as `data:` URLs; providers send them as OpenAI image parts.
    images: list[str] = Field(default_factory=list, repr=False)


class Usage(_Model):
    prompt_tokens: int = 0
    completion_tokens: int = 0
    # Provider-reported cost where available (OpenRouter), else priced from settings.
    cost_usd: float | None = None

    def __add__(self, other: Usage) -> Usage:
        cost = None
        if self.cost_usd is not None or other.cost_usd is not None:
            cost = (self.cost_usd or 0.0) + (other.cost_usd or 0.0)
        return Usage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            cost_usd=cost,
        )


class Completion(_Model):
    """One finished model call."""

    model: str
    text: str
    usage: Usage = Field(default_factory=Usage)
    latency_s: float = 0.0
    finish_reason: str | None = None


# --------------------------------------------------------------------------- requests


class Platform(str, Enum):
    CLI = "cli"
    SLACK = "slack"
    DISCORD = "discord"
    API = "api"  # the OpenAI-compatible API and the MCP server (bot/api)


class Origin(_Model):
    """Who asked and where; used for rate limits, per-channel config and history."""

    platform: Platform = Platform.CLI
    workspace_id: str | None = None  # Slack team id / Discord guild id
    channel_id: str | None = None
    thread_id: str | None = None  # Slack thread_ts / Discord thread channel id
    user_id: str | None = None
    user_name: str | None = None

    @property
    def channel_key(self) -> str:
        """Stable key for per-channel config and limits."""
        return f"{self.platform.value}:{self.workspace_id or '-'}:{self.channel_id or '-'}"

    @property
    def user_key(self) -> str:
        return f"{self.platform.value}:{self.workspace_id or '-'}:{self.user_id or '-'}"


class Actor(_Model):
    """A user invoking an admin operation, with what the platform says about them."""

    user_id: str
    is_platform_admin: bool = False  # Slack admin/owner, Discord Manage Server


class ConversationTurn(_Model):
    """An earlier message of a thread, passed as context for a follow-up question."""

    role: Literal["user", "assistant"]
    content: str
    author: str | None = None


# What one of our chat messages is to its council (migrations/0011_council_messages.sql).
MessageRole = Literal["question", "progress", "answer"]
# What a council's follower calls for each message it posts: (channel_id, message_id, role).
RecordPost = Callable[[str, str, MessageRole], Awaitable[None]]


class KeyClaim(_Model):
    """Which council an API Idempotency-Key names (core/records/idempotency.py)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    council_id: str  # the council of this key (maybe an earlier request's)
    fingerprint: str  # of the request that first used the key
    fresh: bool  # True: this request claimed the key and starts the council


class MessageRef(_Model):
    """The council a message we posted belongs to, and what the message is there."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    council_id: str
    role: MessageRole


CouncilMode = Literal["standard", "quick", "auto"]
MODES: tuple[CouncilMode, ...] = ("standard", "quick", "auto")


class CouncilConfig(_Model):
    """The effective configuration of one council (stored as a snapshot with it).

    `members` are seats and `chairman` is one: `primary|fallback|...` (core/models/seats.py)."""

    members: list[str]
    chairman: str
    mode: CouncilMode = "standard"  # quick: two seats answer, the chairman compares them (no reviews)
    # auto: these two seats answer first (quick mode's choice, made at admission; empty: the first
    # two members); the rest of `members` are asked only if their answers disagree (core/engine/auto.py).
    first_seats: list[str] = Field(default_factory=list)
    exclude_self_review: bool = True
    member_timeout_s: float = 120.0  # one model call
    quorum: float = 0.5  # fraction of members whose answers start the grace clock
    grace_s: float = 20.0  # the most stragglers may still wait once quorum is met
    grace_min_s: float = 5.0  # adaptive grace: max(grace_min_s, grace_factor x median latency), capped by grace_s
    grace_factor: float = 2.0
    max_reviewers: int | None = None  # reviewers per answer (None: every other member)
    max_answer_tokens: int | None = None
    temperature: float | None = None
    # How reviewers are asked for their ballot (core/engine/ballots.py): the text FINAL RANKING,
    # or structured JSON output with a fallback to text for models that refuse it.
    ballot_format: Literal["text", "json", "auto"] = "text"
    # The weight of each member's ballot (COUNCIL_REVIEWER_WEIGHTS, resolved at admission by
    # core/engine/weights.py); a reviewer left out weighs 1.
    reviewer_weights: dict[str, float] = Field(default_factory=dict)
    # What reviewers score each response on besides ranking it (COUNCIL_RUBRIC; None: no scores,
    # as in councils stored before issue 33).
    rubric: Rubric | None = None


class AnswerFormat(_Model):
    """The shape the final answer must have (the API's `response_format`): one JSON object, which
    with `json_schema` must also fit that schema. Members answer freely; the synthesizer writes JSON."""

    kind: Literal["json_object", "json_schema"]
    name: str | None = None
    json_schema: dict[str, Any] | None = None


class CouncilRequest(_Model):
    question: str
    config: CouncilConfig
    history: list[ConversationTurn] = Field(default_factory=list)
    origin: Origin = Field(default_factory=Origin)
    council_id: str = Field(default_factory=new_council_id)
    created_at: datetime = Field(default_factory=utcnow)
    # What the council read besides the question (issue 13): attached files, web search results,
    # and the members whose models were shown the attached images.
    attachments: list[ExtractedAttachment] = Field(default_factory=list)
    sources: list[SearchResult] = Field(default_factory=list)
    image_members: list[str] = Field(default_factory=list)
    answer_format: AnswerFormat | None = None
    # The W3C trace context (traceparent, tracestate) of its submission when traces are on
    # (core/telemetry/tracing.py): stored with a durable council, so that the worker that
    # resumes it continues the same trace. Empty when not tracing.
    trace: dict[str, str] = Field(default_factory=dict)


# --------------------------------------------------------------------------- stages


class Attempt(_Model):
    """A model of a seat's chain that failed before the next one was asked."""

    model: str
    error: ErrorInfo


class MemberAnswer(_Model):
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


class Review(_Model):
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


class Dissent(_Model):
    """A reviewer whose ballot disagrees with the aggregate (core/engine/dissent.py)."""

    reviewer: str
    preferred: str  # the model whose answer it ranked first
    preferred_label: str | None = None
    place: int | None = None  # where the aggregate puts the preferred answer
    tau: float | None = None  # Kendall's tau of its ballot against the aggregate
    reason: str = ""  # the sentence of its evaluation that says why (clipped)


class AggregateEntry(_Model):
    model: str
    label: str | None = None
    position: int  # 1-based final place
    average_rank: float | None  # mean rank position over ballots that ranked it
    rankings_count: int  # number of ballots ranking it ("votes")
    borda: float = 0.0
    condorcet_wins: float = 0.0  # Copeland/Schulze score as reported by the ranking module
    first_place_votes: int = 0


class Aggregate(_Model):
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


class Synthesis(_Model):
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


class AgreementCheck(_Model):
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


class CouncilResult(_Model):
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

    @property
    def degraded(self) -> bool:
        return self.status is CouncilStatus.DEGRADED

    @property
    def escalated(self) -> bool | None:
        """Auto mode: whether the full council deliberated (None: another mode, or never checked)."""
        return self.agreement.escalated if self.agreement is not None else None


# --------------------------------------------------------------------------- durable councils


class CouncilCheckpoint(_Model):
    """What a council had completed when its process stopped: stage-1 answers (failed ones too:
    the stage had settled them) and stage-2 reviews, in the order they arrived. The engine
    resumes from it without calling those models again."""

    answers: list[MemberAnswer] = Field(default_factory=list)
    reviews: list[Review] = Field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not self.answers and not self.reviews


class Destination(BaseModel):
    """Where a council is shown: everything a runner needs to write there, as plain ids. Stored
    with a durable council's job, so that any worker can post into the original thread."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    platform: Platform
    channel_id: str  # where the answer goes: a Slack channel, a Discord thread (or channel)
    thread_id: str | None = None  # Slack: the thread's ts (Discord threads are channels)
    status_id: str | None = None  # the status message, once posted (Slack ts, Discord message id)
    status_channel_id: str | None = None  # its channel when not `channel_id` (a /council starter message)
    # Slack Enterprise Grid: the organisation, and whether the app is installed org-wide there (its
    # installation is then the organisation's and posts for every workspace of it): with the
    # origin's team, what a worker needs to find the installation whose token writes here.
    enterprise_id: str | None = None
    is_enterprise_install: bool = False

    @property
    def status_channel(self) -> str:
        return self.status_channel_id or self.channel_id

    def with_status(self, status_id: str) -> Destination:
        return self.model_copy(update={"status_id": status_id})


class ControlAction(str, Enum):
    STOP = "stop"
    SYNTHESIZE = "synthesize"


class CouncilJob(_Model):
    """A council that can run on any worker (and resume there): council_jobs in the database."""

    request: CouncilRequest
    destination: Destination | None = None
    search: bool = False  # search the web before stage 1
    prepared: bool = False  # files and search read before stage 1 (then kept in `request`)
    control: ControlAction | None = None  # a Stop / Synthesize now that arrived for it
    attempts: int = 0  # how many workers have taken it (more than 1: resumed)


# --------------------------------------------------------------------------- events


class _Event(_Model):
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
    | SchedulePlanned
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


# --------------------------------------------------------------------------- history


class CouncilSummary(_Model):
    council_id: str
    created_at: datetime
    question: str
    status: CouncilStatus
    members: list[str]
    chairman: str
    mode: CouncilMode = "standard"
    winner: str | None = None
    agreement_w: float | None = None
    consensus: float | None = None  # of the rubric scores (issue 33)
    cost_usd: float | None = None
    duration_s: float | None = None
    origin: Origin = Field(default_factory=Origin)
    votes_good: int = 0  # readers' feedback (core/records/feedback.py)
    votes_bad: int = 0
    files: list[str] = Field(default_factory=list)  # names of the files it read
    sources: int = 0  # web search results it was given


class UnfinishedCouncil(_Model):
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


class ChannelSettings(_Model):
    """Per-channel overrides set by admins; None means "use the default"."""

    channel_key: str
    members: list[str] | None = None
    chairman: str | None = None
    user_limit_per_hour: int | None = None
    channel_limit_per_hour: int | None = None
    daily_budget_usd: float | None = None
    search: bool | None = None  # web search before stage 1; None: COUNCIL_SEARCH_DEFAULT
    mode: CouncilMode | None = None  # the channel's default mode; None: standard
    # Models an asker may choose per question (issue 33); None: the channel's members, their
    # fallbacks and its chairman (core/channels/admin.py: allowed_models).
    allowed_models: list[str] | None = None


class LeaderboardRow(_Model):
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


class RateCheck(_Model):
    """A rate with its 95% Wilson interval against the value a fair reviewer would show."""

    rate: float | None
    expected: float
    ballots: int
    low: float | None
    high: float | None
    flagged: bool


# Why a correlation is not given (core/bias.py): every ballot ranked two answers, fewer than ten
# ballots, or answers of one length.
Withheld = Literal["pairs", "few", "equal"]


class CorrelationCheck(_Model):
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


class BiasEntry(_Model):
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


class ModelApproval(_Model):
    """Readers' votes on the answers a model wrote as chairman, and on councils it won."""

    model: str
    chairman_good: int = 0
    chairman_bad: int = 0
    winner_good: int = 0
    winner_bad: int = 0


class SeatModelStats(_Model):
    """One model of a seat's chain, from the stored per-model statistics."""

    model: str
    answers: int = 0  # councils it was asked in (as a primary or a fallback)
    failure_rate: float = 0.0
    average_latency_s: float | None = None


class SeatStats(_Model):
    seat: str  # `primary|fallback|...`
    models: list[SeatModelStats]


class Leaderboard(_Model):
    scope: str
    rows: list[LeaderboardRow]
    councils: int
    ballots: int
    computed_s: float = 0.0
    approval: list[ModelApproval] = Field(default_factory=list)
    bias: list[BiasEntry] = Field(default_factory=list)
    seats: list[SeatStats] = Field(default_factory=list)  # the configured seats with fallbacks


# --------------------------------------------------------------------------- storage rows


class BallotOrders(_Model):
    orders: list[list[str]]  # each stored ballot's model ids, best first
    councils: int  # how many councils they come from


class BallotCounts(_Model):
    orders: list[list[str]]  # each distinct stored ballot's model ids, best first
    counts: list[int]  # how often each was cast
    councils: int  # how many councils they come from


class ModelStats(_Model):
    model: str
    councils: int = 0  # councils it was a member of
    failures: int = 0  # stage-1 answers that failed
    first_places: int = 0  # councils it won (aggregate position 1)
    mean_average_rank: float | None = None
    average_latency_s: float | None = None
    cost_usd: float | None = None


class AuditEntry(_Model):
    at: datetime
    channel_key: str
    actor_id: str
    action: str
    detail: dict


class DailyUsage(_Model):
    day: str  # YYYY-MM-DD (UTC)
    councils: int
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float


# --------------------------------------------------------------------------- tenants (core/tenants)


class TenantKeyInfo(_Model):
    """What may be shown of a tenant's own provider key: never the key, only its last 4 characters."""

    tenant: str  # slack:<team id> or discord:<guild id>
    key_tail: str
    base_url: str | None = None  # None: the default endpoint (OpenRouter)
    members: list[str] | None = None  # None: the operator's line-up
    chairman: str | None = None
    updated_at: datetime
    updated_by: str

    @property
    def masked(self) -> str:
        return f"…{self.key_tail}"


class TenantSpend(_Model):
    """A tenant's spend today against its daily budget (None: no budget)."""

    tenant: str
    spent_today_usd: float
    daily_budget_usd: float | None = None


class PurgeCounts(_Model):
    """What `council purge` deleted of one tenant."""

    tenant: str
    councils: int = 0
    channel_settings: int = 0
    keys: int = 0
    installations: int = 0
