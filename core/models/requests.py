"""What asks for a council: where a question comes from, who asks, the council's configuration, the request."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import datetime
from enum import Enum
from typing import Any, Literal

from pydantic import ConfigDict, Field

from core.models.base import Model, new_council_id, utcnow
from core.models.deliberation import Lens, seat_of_key
from core.models.doubt import UnsureThreshold
from core.models.files import ExtractedAttachment
from core.models.rubric import Rubric
from core.models.search import SearchResult
from core.models.strategy import Strategy
from core.modes import MODES as MODES  # what each mode does: core/modes.py
from core.modes import CouncilMode as CouncilMode


class Platform(str, Enum):
    CLI = "cli"
    SLACK = "slack"
    DISCORD = "discord"
    API = "api"  # the OpenAI-compatible API and the MCP server (bot/api)


class Origin(Model):
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


class Actor(Model):
    """A user invoking an admin operation, with what the platform says about them."""

    user_id: str
    is_platform_admin: bool = False  # Slack admin/owner, Discord Manage Server


class ConversationTurn(Model):
    """An earlier message of a thread, passed as context for a follow-up question."""

    role: Literal["user", "assistant"]
    content: str
    author: str | None = None


# What one of our chat messages is to its council (migrations/0011_council_messages.sql).
MessageRole = Literal["question", "progress", "answer"]
# What a council's follower calls for each message it posts: (channel_id, message_id, role).
RecordPost = Callable[[str, str, MessageRole], Awaitable[None]]


class KeyClaim(Model):
    """Which council an API Idempotency-Key names (core/records/idempotency.py)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    council_id: str  # the council of this key (maybe an earlier request's)
    fingerprint: str  # of the request that first used the key
    fresh: bool  # True: this request claimed the key and starts the council


class MessageRef(Model):
    """The council a message we posted belongs to, and what the message is there."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    council_id: str
    role: MessageRole


class CouncilConfig(Model):
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
    # as in councils stored before rubrics existed).
    rubric: Rubric | None = None
    # Below this consensus the result says it is unsure (the line-up's last eval run, else
    # COUNCIL_UNSURE_BELOW; None: never), and the strategy `best` chose (None: no `best` asked).
    unsure_below: UnsureThreshold | None = None
    strategy: Strategy | None = None
    unsure_mention: str | None = None  # the channel's `kind:id` to mention when unsure (core/models/doubt.py)
    # Revision rounds after stage 1 (refine mode, COUNCIL_ROUNDS; core/engine/rounds.py): at most this many.
    rounds: int = 0
    # Each seat's lens (persona, temperature, answer length), by its spec: only its own prompts see it.
    lenses: dict[str, Lens] = Field(default_factory=dict)
    # Self-MoA (core/engine/self_moa.py): `members` is the one seat, asked `samples` times at
    # `sample_temperature`; the chairman aggregates the samples.
    samples: int = 0
    sample_temperature: float | None = None

    def lens(self, seat: str) -> Lens | None:
        """The lens of a seat (or of the seat a Self-MoA sample asks), None without one."""
        found = self.lenses.get(seat) or self.lenses.get(seat_of_key(seat))
        return found if found is not None and not found.empty else None


class AnswerFormat(Model):
    """The shape the final answer must have (the API's `response_format`): one JSON object, which
    with `json_schema` must also fit that schema. Members answer freely; the synthesizer writes JSON."""

    kind: Literal["json_object", "json_schema"]
    name: str | None = None
    json_schema: dict[str, Any] | None = None


class CouncilRequest(Model):
    question: str
    config: CouncilConfig
    history: list[ConversationTurn] = Field(default_factory=list)
    origin: Origin = Field(default_factory=Origin)
    council_id: str = Field(default_factory=new_council_id)
    created_at: datetime = Field(default_factory=utcnow)
    # What the council read besides the question: attached files, web search results,
    # and the members whose models were shown the attached images.
    attachments: list[ExtractedAttachment] = Field(default_factory=list)
    sources: list[SearchResult] = Field(default_factory=list)
    image_members: list[str] = Field(default_factory=list)
    answer_format: AnswerFormat | None = None
    # The W3C trace context (traceparent, tracestate) of its submission when traces are on
    # (core/telemetry/tracing.py): stored with a durable council, so that the worker that
    # resumes it continues the same trace. Empty when not tracing.
    trace: dict[str, str] = Field(default_factory=dict)
