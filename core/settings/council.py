"""How a council deliberates, and the limits on who may ask how much."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, PrivateAttr, field_validator
from pydantic_settings import NoDecode

from core.models.deliberation import MAX_ROUNDS
from core.models.rubric import DEFAULT_RUBRIC, Rubric, parse_rubric
from core.models.seats_file import SeatSpec, read_seats_file
from core.modes import CouncilMode, modes_help
from core.settings.group import CsvList, SettingsGroup, lower_name, split_csv

_WEIGHTS_FORM = 'must be `auto` or a JSON object like {"model id": 2}'


class CouncilSettings(SettingsGroup):
    models: CsvList = Field(
        default_factory=list,
        alias="COUNCIL_MODELS",
        description="Comma-separated seats (openrouter:ID, local:NAME, bare ids; primary|fallback chains); "
        "empty: tiny local models without a key, a strong OpenRouter line-up with one.",
    )
    chairman: str | None = Field(
        None,
        alias="COUNCIL_CHAIRMAN",
        description="The model that writes the final answer (a chain a|b too); empty: the first member.",
    )
    timeout_s: float = Field(120.0, alias="COUNCIL_TIMEOUT_S", gt=0, description="Timeout of one model call, seconds.")
    quorum: float = Field(
        0.5,
        alias="COUNCIL_QUORUM",
        gt=0,
        le=1,
        description="Once this fraction of members has answered, the stragglers only get the grace time.",
    )
    grace_s: float = Field(20.0, alias="COUNCIL_GRACE_S", ge=0, description="The longest grace of stragglers, seconds.")
    # Adaptive grace: stragglers get max(GRACE_MIN_S, GRACE_FACTOR x median latency so far), capped by GRACE_S.
    grace_min_s: float = Field(5.0, alias="COUNCIL_GRACE_MIN_S", ge=0, description="The shortest grace, seconds.")
    grace_factor: float = Field(
        2.0, alias="COUNCIL_GRACE_FACTOR", ge=0, description="Grace as a multiple of the median latency so far."
    )
    max_reviewers: int | None = Field(
        None,
        alias="COUNCIL_MAX_REVIEWERS",
        ge=2,
        description="Reviewers per answer in large councils (N*k reviews instead of N*(N-1)); "
        "empty: every other member.",
    )
    unsure_below: int = Field(
        0,
        alias="COUNCIL_UNSURE_BELOW",
        ge=0,
        le=101,
        description="Consensus (0-100) under which an answer says first that the council is unsure, when its "
        "line-up has no eval run to measure it: 0 never, 101 always.",
    )
    mode: CouncilMode = Field(
        "standard",
        alias="COUNCIL_MODE",
        description=f"Default mode of channels that set none: {modes_help()}.",
    )
    rounds: int | None = Field(
        None,
        alias="COUNCIL_ROUNDS",
        ge=1,
        le=MAX_ROUNDS,
        description=f"Revision rounds of refine mode, 1 to {MAX_ROUNDS} (they stop early when no member moves or "
        "the answers converge); empty: 1.",
    )
    seats_file: Path | None = Field(
        None,
        alias="COUNCIL_SEATS_FILE",
        description="A TOML file of [[seat]] tables (model, persona: text or a preset, temperature, max_tokens); "
        "when set, its seats are the members (instead of COUNCIL_MODELS).",
    )
    self_moa_model: str | None = Field(
        None,
        alias="COUNCIL_SELF_MOA_MODEL",
        description="The seat self-moa mode samples; empty: the channel's leaderboard leader among the members "
        "where it has enough ballots, else the first member.",
    )
    self_moa_samples: int | None = Field(
        None,
        alias="COUNCIL_SELF_MOA_SAMPLES",
        ge=1,
        le=16,
        description="How many times self-moa mode asks its seat; empty: the standard council's calls less one.",
    )
    self_moa_temperature: float = Field(
        0.7,
        alias="COUNCIL_SELF_MOA_TEMPERATURE",
        ge=0,
        le=2,
        description="The temperature of self-moa mode's samples.",
    )
    exclude_self: bool = Field(
        True, alias="COUNCIL_EXCLUDE_SELF", description="Reviewers do not see (or rank) their own answer."
    )
    max_answer_tokens: int | None = Field(
        None,
        alias="COUNCIL_MAX_ANSWER_TOKENS",
        description="Cap on tokens of each member answer (empty: provider default).",
    )
    ballot_format: Literal["text", "json", "auto"] = Field(
        "text",
        alias="COUNCIL_BALLOT_FORMAT",
        description="How reviewers give their ranking: text, json (structured output) or auto (json for remote "
        "models, text for local ones).",
    )
    reviewer_weights: Annotated[dict[str, float] | Literal["auto"], NoDecode] = Field(
        default_factory=dict,
        alias="COUNCIL_REVIEWER_WEIGHTS",
        description='Weight of each reviewer\'s ballot: a JSON object {"model id": 2} (others weigh 1), or auto '
        "(from each reviewer's stored agreement with the consensus); empty: every ballot weighs 1.",
    )

    # The rubric reviewers score each response on (core/models/rubric.py).
    rubric_spec: str = Field(
        DEFAULT_RUBRIC,
        alias="COUNCIL_RUBRIC",
        description="Criteria reviewers score each response on, comma-separated, optionally with the scale "
        "(`accuracy, clarity: 1-5`); `off` turns rubric scores and the consensus figure off.",
    )

    _split = field_validator("models", mode="before")(split_csv)
    _seats: list[SeatSpec] = PrivateAttr(default_factory=list)

    @field_validator("seats_file")
    @classmethod
    def _check_seats_file(cls, value: Path | None) -> Path | None:
        if value is not None:
            read_seats_file(value)  # a file that does not parse is refused at start-up: its line and the reason
        return value

    def model_post_init(self, context: Any, /) -> None:
        self._seats = read_seats_file(self.seats_file) if self.seats_file is not None else []

    @property
    def seats(self) -> list[SeatSpec]:
        """COUNCIL_SEATS_FILE's seats with their lenses (empty without the file)."""
        return self._seats

    @field_validator("rubric_spec")
    @classmethod
    def _check_rubric(cls, value: str) -> str:
        parse_rubric(value)  # a malformed rubric is refused at start-up, naming what is wrong
        return value

    @property
    def rubric(self) -> Rubric | None:
        return parse_rubric(self.rubric_spec)

    _lower = field_validator("ballot_format", "mode", mode="before")(lower_name)

    @field_validator("reviewer_weights", mode="before")
    @classmethod
    def _parse_weights(cls, value: Any) -> Any:
        if not isinstance(value, str):
            return value
        if value.strip().lower() == "auto":
            return "auto"
        try:
            weights = json.loads(value) if value.strip() else {}
        except ValueError:
            raise ValueError(_WEIGHTS_FORM) from None
        if not isinstance(weights, dict):
            raise ValueError(_WEIGHTS_FORM)
        return weights

    @field_validator("reviewer_weights")
    @classmethod
    def _positive_weights(cls, value: Any) -> Any:
        if isinstance(value, dict):
            bad = [model for model, weight in value.items() if not (math.isfinite(weight) and weight > 0)]
            if bad:
                raise ValueError("weights must be positive numbers; not for " + ", ".join(bad))
        return value


class LimitSettings(SettingsGroup):
    max_question_chars: int = Field(
        4000, alias="COUNCIL_MAX_QUESTION_CHARS", ge=1, description="Longest question, in characters."
    )
    max_history_chars: int = Field(
        12000,
        alias="COUNCIL_MAX_HISTORY_CHARS",
        ge=0,
        description="Thread history passed as context to follow-up questions, in characters (newest kept).",
    )
    max_concurrent_councils: int = Field(
        4, alias="COUNCIL_MAX_CONCURRENT", ge=1, description="Councils running at once."
    )
    max_queued_councils: int = Field(
        50, alias="COUNCIL_MAX_QUEUED", ge=0, description="Councils waiting for a free slot; more are refused."
    )
    user_limit_per_hour: int = Field(
        20, alias="RATE_LIMIT_USER_PER_HOUR", ge=0, description="Questions per user in a sliding hour (0: unlimited)."
    )
    channel_limit_per_hour: int = Field(
        60,
        alias="RATE_LIMIT_CHANNEL_PER_HOUR",
        ge=0,
        description="Questions per channel in a sliding hour (0: unlimited).",
    )
    daily_budget_usd: float | None = Field(
        None, alias="COUNCIL_DAILY_BUDGET_USD", description="Daily spend per channel in USD (empty: no budget)."
    )
    admin_users: CsvList = Field(
        default_factory=list,
        alias="COUNCIL_ADMIN_USERS",
        description="Comma-separated user ids allowed to run admin commands besides workspace admins / Manage Server.",
    )

    _split = field_validator("admin_users", mode="before")(split_csv)
