"""Settings read from the environment and `.env` (pydantic-settings).

Every setting has a safe default except secrets. Secrets are `SecretStr`, so they never
print in logs, reprs or errors. `.env.example` documents each one.
"""

from __future__ import annotations

import json
import math
import re
from typing import Annotated, Any, Literal

from pydantic import Field, SecretStr, ValidationError, ValidationInfo, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict, SettingsError

from core.database_url import DatabaseTarget, parse_database_url
from core.errors import ConfigurationError
from core.models.rubric import DEFAULT_RUBRIC, Rubric, parse_rubric
from core.paths import default_database_url

OPENROUTER_BASE_URL = "https://openrouter.ai/api/v1"

# Used when no provider key is configured: tiny GGUF models that run in-process.
LOCAL_DEFAULT_MEMBERS = ["local:smollm2", "local:gemma3-270m", "local:smollm2-creative"]
# SmolLM2 is instruction-tuned; the bundled Gemma 3 270M is a base model that echoes its prompt.
LOCAL_DEFAULT_CHAIRMAN = "local:smollm2"

# Used when a key is configured but no members are named.
REMOTE_DEFAULT_MEMBERS = [
    "openai/gpt-5.1",
    "google/gemini-3-pro-preview",
    "anthropic/claude-sonnet-4.5",
    "x-ai/grok-4",
]
REMOTE_DEFAULT_CHAIRMAN = "google/gemini-3-pro-preview"

# Slack OAuth distribution's two pages, on COUNCIL_PUBLIC_URL: "Add to Slack", and the redirect URL
# that the Slack app's OAuth settings list.
SLACK_INSTALL_PATH = "/slack/install"
SLACK_REDIRECT_PATH = "/slack/oauth_redirect"


def _split_csv(value: Any) -> Any:
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    return value


CsvList = Annotated[list[str], NoDecode]


class Settings(BaseSettings):
    # An empty value (as in a copy of .env.example) means "not set": the default applies.
    model_config = SettingsConfigDict(
        env_file=".env", env_file_encoding="utf-8", extra="ignore", populate_by_name=True, env_ignore_empty=True
    )

    # ----------------------------------------------------------------- providers
    llm_base_url: str | None = Field(None, alias="LLM_BASE_URL")
    llm_api_key: SecretStr | None = Field(None, alias="LLM_API_KEY")
    openrouter_api_key: SecretStr | None = Field(None, alias="OPENROUTER_API_KEY")
    openrouter_base_url: str = Field(OPENROUTER_BASE_URL, alias="OPENROUTER_BASE_URL")
    llm_max_retries: int = Field(3, alias="LLM_MAX_RETRIES", ge=0, le=10)
    llm_retry_base_s: float = Field(0.5, alias="LLM_RETRY_BASE_S", ge=0)
    llm_retry_max_s: float = Field(20.0, alias="LLM_RETRY_MAX_S", ge=0)
    llm_max_connections: int = Field(100, alias="LLM_MAX_CONNECTIONS", ge=1)
    # JSON object: {"model id": [usd per 1M prompt tokens, usd per 1M completion tokens]}
    model_prices: Annotated[dict[str, tuple[float, float]], NoDecode] = Field(
        default_factory=dict, alias="MODEL_PRICES"
    )
    # Issue 33: memory-aware scheduling of model calls (core/providers/scheduling.py).
    council_memory_budget_gb: str | None = Field(
        None,
        alias="COUNCIL_MEMORY_BUDGET_GB",
        description="Memory (GB) of an endpoint's models that may be in use at once: a number for every endpoint, "
        "or a JSON object of endpoint (`local`, `openrouter` or its base URL) to GB. Unset: no memory scheduling.",
    )
    model_memory_gb: Annotated[dict[str, float], NoDecode] = Field(
        default_factory=dict,
        alias="MODEL_MEMORY_GB",
        description="Each model's memory in GB, a JSON object of model id to GB; local: models default to their "
        "file's size plus their context.",
    )
    llm_max_concurrent: str | None = Field(
        None,
        alias="LLM_MAX_CONCURRENT",
        description="Model calls in flight at once per endpoint: a number, or a JSON object of endpoint to number "
        "(for endpoints that serve one request at a time). Unset: no limit.",
    )

    # ----------------------------------------------------------------- local models
    local_models_dir: str | None = Field(None, alias="LOCAL_MODELS_DIR")
    local_n_ctx: int = Field(4096, alias="LOCAL_N_CTX", ge=512)
    local_n_threads: int | None = Field(None, alias="LOCAL_N_THREADS")
    local_max_tokens: int = Field(384, alias="LOCAL_MAX_TOKENS", ge=16)

    # ----------------------------------------------------------------- council
    council_models: CsvList = Field(default_factory=list, alias="COUNCIL_MODELS")
    council_chairman: str | None = Field(None, alias="COUNCIL_CHAIRMAN")
    council_timeout_s: float = Field(120.0, alias="COUNCIL_TIMEOUT_S", gt=0)
    council_quorum: float = Field(0.5, alias="COUNCIL_QUORUM", gt=0, le=1)
    council_grace_s: float = Field(20.0, alias="COUNCIL_GRACE_S", ge=0)
    # Adaptive grace: stragglers get max(GRACE_MIN_S, GRACE_FACTOR x median latency so far), capped by GRACE_S.
    council_grace_min_s: float = Field(5.0, alias="COUNCIL_GRACE_MIN_S", ge=0)
    council_grace_factor: float = Field(2.0, alias="COUNCIL_GRACE_FACTOR", ge=0)
    # Reviewers per answer with many seats (N·k reviews instead of N·(N-1)); empty: every other member.
    council_max_reviewers: int | None = Field(None, alias="COUNCIL_MAX_REVIEWERS", ge=2)
    # The default mode of channels that set none: standard (three stages), quick (two answers
    # compared) or auto (two answers; the whole council only when they disagree).
    council_mode: Literal["standard", "quick", "auto"] = Field("standard", alias="COUNCIL_MODE")
    council_exclude_self: bool = Field(True, alias="COUNCIL_EXCLUDE_SELF")
    council_max_answer_tokens: int | None = Field(None, alias="COUNCIL_MAX_ANSWER_TOKENS")
    # Issue 12, ballots: how reviewers give their ranking (core/engine/ballots.py), and how much
    # each one's ballot weighs: a JSON object {"model id": weight} (others weigh 1) or `auto`
    # (from each reviewer's stored agreement with the consensus, core/engine/weights.py).
    council_ballot_format: Literal["text", "json", "auto"] = Field("text", alias="COUNCIL_BALLOT_FORMAT")
    council_reviewer_weights: Annotated[dict[str, float] | Literal["auto"], NoDecode] = Field(
        default_factory=dict, alias="COUNCIL_REVIEWER_WEIGHTS"
    )
    # Issue 33: the rubric reviewers score each response on (core/models/rubric.py).
    council_rubric: str = Field(
        DEFAULT_RUBRIC,
        alias="COUNCIL_RUBRIC",
        description="Criteria reviewers score each response on, comma-separated, optionally with the scale "
        "(`accuracy, clarity: 1-5`); `off` turns rubric scores and the consensus figure off.",
    )

    # ----------------------------------------------------------------- limits
    max_question_chars: int = Field(4000, alias="COUNCIL_MAX_QUESTION_CHARS", ge=1)
    max_history_chars: int = Field(12000, alias="COUNCIL_MAX_HISTORY_CHARS", ge=0)
    max_concurrent_councils: int = Field(4, alias="COUNCIL_MAX_CONCURRENT", ge=1)
    max_queued_councils: int = Field(50, alias="COUNCIL_MAX_QUEUED", ge=0)
    user_limit_per_hour: int = Field(20, alias="RATE_LIMIT_USER_PER_HOUR", ge=0)
    channel_limit_per_hour: int = Field(60, alias="RATE_LIMIT_CHANNEL_PER_HOUR", ge=0)
    daily_budget_usd: float | None = Field(None, alias="COUNCIL_DAILY_BUDGET_USD")
    admin_users: CsvList = Field(default_factory=list, alias="COUNCIL_ADMIN_USERS")

    # ----------------------------------------------------------------- storage
    # Empty: council.db in the user's data directory, so history does not depend on the working directory.
    database_url: str = Field(default_factory=default_database_url, alias="DATABASE_URL")
    retention_days: int | None = Field(None, alias="COUNCIL_RETENTION_DAYS")

    # ----------------------------------------------------------------- durable councils (core/durable)
    # A process that stops renewing its lease for this long is dead: its councils are resumed or marked.
    lease_s: float = Field(30.0, alias="COUNCIL_LEASE_S", ge=1)
    # Councils one worker process runs at once on PostgreSQL (empty: COUNCIL_MAX_CONCURRENT).
    worker_concurrency: int | None = Field(None, alias="COUNCIL_WORKER_CONCURRENCY", ge=1)
    # Worker heartbeat period, and the silence after which its councils are resumed by another worker.
    queue_heartbeat_s: float = Field(5.0, alias="COUNCIL_QUEUE_HEARTBEAT_S", gt=0)
    queue_stalled_s: float = Field(15.0, alias="COUNCIL_QUEUE_STALLED_S", gt=0)

    # ----------------------------------------------------------------- slack
    slack_bot_token: SecretStr | None = Field(None, alias="SLACK_BOT_TOKEN")
    slack_app_token: SecretStr | None = Field(None, alias="SLACK_APP_TOKEN")
    slack_signing_secret: SecretStr | None = Field(None, alias="SLACK_SIGNING_SECRET")
    slack_api_url: str | None = Field(None, alias="SLACK_API_URL")
    # "auto": progress through chat.startStream where the workspace allows it, else chat.update.
    slack_streaming: Literal["auto", "off"] = Field("auto", alias="SLACK_STREAMING")
    # Suggested prompts shown when someone opens the app's Messages tab: prompts separated by `;`,
    # each "Title | message" or just the message. Empty: the built-in ones (bot/slack/agent.py).
    slack_suggested_prompts: Annotated[list[str], NoDecode] = Field(
        default_factory=list, alias="SLACK_SUGGESTED_PROMPTS"
    )

    # ----------------------------------------------------------------- many workspaces (core/tenants)
    # OAuth distribution: with both set (and SLACK_SIGNING_SECRET), Slack runs bolt's OAuth flow and
    # every team is answered with its own installation's token (SLACK_BOT_TOKEN must then be unset).
    slack_client_id: str | None = Field(None, alias="SLACK_CLIENT_ID")
    slack_client_secret: SecretStr | None = Field(None, alias="SLACK_CLIENT_SECRET")
    # The public https base of this deployment: the OAuth redirect URL is <it>/slack/oauth_redirect.
    public_url: str | None = Field(None, alias="COUNCIL_PUBLIC_URL")
    # Fernet keys (comma-separated, newest first) that encrypt installations' tokens and tenants' keys.
    secret_key: SecretStr | None = Field(None, alias="COUNCIL_SECRET_KEY")
    # Refuse councils of a workspace or server that has not set its own provider key.
    require_tenant_key: bool = Field(False, alias="COUNCIL_REQUIRE_TENANT_KEY")
    # An uninstalled workspace loses its tokens at once; with this also its councils, keys and settings.
    purge_on_uninstall: bool = Field(False, alias="COUNCIL_PURGE_ON_UNINSTALL")
    # Daily spend of one workspace or server (all its channels); `council budget` sets one per tenant.
    tenant_daily_budget_usd: float | None = Field(None, alias="COUNCIL_TENANT_DAILY_BUDGET_USD", ge=0)

    # ----------------------------------------------------------------- discord
    discord_token: SecretStr | None = Field(None, alias="DISCORD_TOKEN")
    discord_guild_id: int | None = Field(None, alias="DISCORD_GUILD_ID")
    discord_api_url: str | None = Field(None, alias="DISCORD_API_URL")
    # Gateway shards (README, "Deploying past one process"). Unset: one connection, no sharding
    # (Discord requires shards from 2,500 guilds). A number, or "auto" for Discord's recommendation.
    discord_shard_count: int | Literal["auto"] | None = Field(None, alias="DISCORD_SHARD_COUNT")
    # The shards this process runs, e.g. "0-3" or "4,5" (one range per process); unset: all of them.
    discord_shard_ids: Annotated[list[int], NoDecode] | None = Field(None, alias="DISCORD_SHARD_IDS")

    # ----------------------------------------------------------------- attachments and web search
    # Issue 13, read by core/reading/attachments (AttachmentLimits.from_settings) and core/reading/search
    # (search_backend_from_settings). Kept apart from the blocks above on purpose.
    attachment_max_file_mb: float = Field(20.0, alias="COUNCIL_ATTACHMENT_MAX_FILE_MB", gt=0)
    attachment_max_total_mb: float = Field(50.0, alias="COUNCIL_ATTACHMENT_MAX_TOTAL_MB", gt=0)
    attachment_max_files: int = Field(5, alias="COUNCIL_ATTACHMENT_MAX_FILES", ge=0)
    # Extracted text of all files of one question; the rest is cut with a visible note.
    attachment_max_chars: int = Field(100_000, alias="COUNCIL_ATTACHMENT_MAX_CHARS", ge=1)
    attachment_max_pages: int = Field(200, alias="COUNCIL_ATTACHMENT_MAX_PAGES", ge=1)
    attachment_fetch_timeout_s: float = Field(30.0, alias="COUNCIL_ATTACHMENT_FETCH_TIMEOUT_S", gt=0)
    # Issue 28: every file is read in a worker process killed at this deadline, whose address space
    # is capped at this size (core/reading/attachments/readers.py); at most this many read at once per process.
    attachment_read_s: float = Field(10.0, alias="COUNCIL_ATTACHMENT_READ_S", gt=0)
    attachment_read_mb: int = Field(256, alias="COUNCIL_ATTACHMENT_READ_MB", ge=128)
    attachment_readers: int = Field(2, alias="COUNCIL_ATTACHMENT_READERS", ge=1)

    search_backend: Literal["off", "searxng", "brave", "tavily"] = Field("off", alias="COUNCIL_SEARCH")
    searxng_url: str | None = Field(None, alias="SEARXNG_URL")
    brave_api_key: SecretStr | None = Field(None, alias="BRAVE_API_KEY")
    tavily_api_key: SecretStr | None = Field(None, alias="TAVILY_API_KEY")
    search_results: int = Field(5, alias="COUNCIL_SEARCH_RESULTS", ge=1, le=20)
    search_timeout_s: float = Field(10.0, alias="COUNCIL_SEARCH_TIMEOUT_S", gt=0)
    # Search is per channel (`/council-admin search on|off`) and per question; this is the
    # channels' default when a backend is selected.
    search_default: bool = Field(False, alias="COUNCIL_SEARCH_DEFAULT")
    # Model ids that take images; when set it decides alone, else the provider's model list does.
    vision_models: CsvList = Field(default_factory=list, alias="COUNCIL_VISION_MODELS")

    @field_validator("search_backend", mode="before")
    @classmethod
    def _search_backend_name(cls, value: Any) -> Any:
        if isinstance(value, str):
            return value.strip().lower() or "off"
        return value

    @field_validator("searxng_url", "brave_api_key", "tavily_api_key", mode="before")
    @classmethod
    def _blank_search_value_is_none(cls, value: Any) -> Any:
        return None if isinstance(value, str) and not value.strip() else value

    # None (unset or blank): INFO for the long-running processes, WARNING for the terminal's own
    # commands, which show the council themselves (bot/cli.py).
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"] | None = Field(None, alias="LOG_LEVEL")
    # ----------------------------------------------------------------- operating (core/telemetry)
    # text, or json: one JSON object per line (time, level, logger, message, council id, ...).
    log_format: Literal["text", "json"] = Field("text", alias="LOG_FORMAT")
    # /metrics, /health and /ready on this port for the processes that serve no HTTP (worker,
    # Socket Mode, Discord gateway); empty: none (`--metrics-port` overrides it).
    metrics_port: int | None = Field(None, alias="COUNCIL_METRICS_PORT", ge=0, le=65535)
    # Questions and answers in trace spans (OpenTelemetry, OTEL_* settings); off: ids, models, counts only.
    trace_content: bool = Field(False, alias="COUNCIL_TRACE_CONTENT")
    # ----------------------------------------------------------------- OpenAI-compatible API and MCP (bot/api)
    # `name:key,name2:key2`; each name is the user its councils are stored, limited and budgeted under.
    api_keys: SecretStr | None = Field(None, alias="COUNCIL_API_KEYS")
    api_host: str = Field("127.0.0.1", alias="COUNCIL_API_HOST")
    api_port: int = Field(8000, alias="COUNCIL_API_PORT", ge=0, le=65535)
    # The Host names the API answers to (DNS rebinding). Empty: the loopback names when it listens
    # on loopback, any name otherwise (the keys guard it then).
    api_allowed_hosts: CsvList = Field(default_factory=list, alias="COUNCIL_API_ALLOWED_HOSTS")
    # Browser origins (`https://chat.example.com`) allowed to call the API; any other Origin is refused.
    api_cors_origins: CsvList = Field(default_factory=list, alias="COUNCIL_API_CORS_ORIGINS")
    # Names from COUNCIL_API_KEYS of trusted front ends (Open WebUI) that may name their end user
    # (the request's `user`, or X-OpenWebUI-User-Id): limits and history are then per end user.
    api_trusted_keys: CsvList = Field(default_factory=list, alias="COUNCIL_API_TRUSTED_KEYS")
    # The model that answers a chat front end's background tasks (titles, tags, follow-ups) alone,
    # instead of a council. Empty: the member with the lowest stored latency (else the first).
    api_task_model: str | None = Field(None, alias="COUNCIL_API_TASK_MODEL")

    _split = field_validator(
        "council_models",
        "admin_users",
        "vision_models",
        "api_allowed_hosts",
        "api_cors_origins",
        "api_trusted_keys",
        mode="before",
    )(_split_csv)

    @field_validator("slack_suggested_prompts", mode="before")
    @classmethod
    def _split_prompts(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [part.strip() for part in value.split(";") if part.strip()]
        return value

    @field_validator("council_ballot_format", "council_mode", "log_format", mode="before")
    @classmethod
    def _lower_name(cls, value: Any) -> Any:
        return value.strip().lower() if isinstance(value, str) else value

    @field_validator("council_rubric")
    @classmethod
    def _check_rubric(cls, value: str) -> str:
        parse_rubric(value)  # a malformed rubric is refused at start-up, naming what is wrong
        return value

    @property
    def rubric(self) -> Rubric | None:
        return parse_rubric(self.council_rubric)

    @field_validator("council_reviewer_weights", mode="before")
    @classmethod
    def _parse_weights(cls, value: Any) -> Any:
        if not isinstance(value, str):
            return value
        if value.strip().lower() == "auto":
            return "auto"
        try:
            weights = json.loads(value) if value.strip() else {}
        except ValueError:
            raise ValueError('must be `auto` or a JSON object like {"model id": 2}') from None
        if not isinstance(weights, dict):
            raise ValueError('must be `auto` or a JSON object like {"model id": 2}')
        return weights

    @field_validator("council_reviewer_weights")
    @classmethod
    def _positive_weights(cls, value: Any) -> Any:
        if isinstance(value, dict):
            bad = [model for model, weight in value.items() if not (math.isfinite(weight) and weight > 0)]
            if bad:
                raise ValueError("weights must be positive numbers; not for " + ", ".join(bad))
        return value

    @field_validator("model_memory_gb", mode="before")
    @classmethod
    def _parse_memory(cls, value: Any) -> Any:
        if isinstance(value, str):
            return json.loads(value) if value.strip() else {}
        return value

    @field_validator("council_memory_budget_gb", "llm_max_concurrent")
    @classmethod
    def _check_per_endpoint(cls, value: str | None, info: ValidationInfo) -> str | None:
        per_endpoint(value, (info.field_name or "").upper())  # refused at start-up, naming the setting
        return value

    @field_validator("model_prices", mode="before")
    @classmethod
    def _parse_prices(cls, value: Any) -> Any:
        if isinstance(value, str):
            return json.loads(value) if value.strip() else {}
        return value

    @field_validator(
        "llm_api_key",
        "openrouter_api_key",
        "slack_bot_token",
        "slack_app_token",
        "slack_signing_secret",
        "slack_client_secret",
        "secret_key",
        "discord_token",
        mode="before",
    )
    @classmethod
    def _blank_secret_is_unset(cls, value: Any) -> Any:
        # `DISCORD_TOKEN=` as copied from .env.example means "not configured", not an empty token.
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("discord_shard_count", mode="before")
    @classmethod
    def _shard_count(cls, value: Any) -> Any:
        if isinstance(value, str) and value.strip().isdigit():
            value = int(value.strip())
        if isinstance(value, int) and value < 1:
            raise ValueError("must be at least 1 (or auto)")
        return value

    @field_validator("discord_shard_ids", mode="before")
    @classmethod
    def _shard_ids(cls, value: Any) -> Any:
        if not isinstance(value, str):
            return value
        ids: list[int] = []
        for part in (p.strip() for p in value.split(",") if p.strip()):
            first, _, last = part.partition("-")
            if not first.isdigit() or (last and not last.isdigit()):
                raise ValueError('give shard ids like "0-3" or "0,2,4"')
            ids.extend(range(int(first), int(last or first) + 1))
        return ids or None

    @field_validator("discord_shard_ids")
    @classmethod
    def _shard_ids_fit(cls, value: list[int] | None, info: ValidationInfo) -> list[int] | None:
        if value is None:
            return None
        count = info.data.get("discord_shard_count")
        if not isinstance(count, int):
            raise ValueError("needs DISCORD_SHARD_COUNT set to a number (every process must agree on it)")
        if any(shard >= count for shard in value):
            raise ValueError(f"shard ids run from 0 to {count - 1} (DISCORD_SHARD_COUNT={count})")
        return sorted(set(value))

    @field_validator("log_level", mode="before")
    @classmethod
    def _upper_level(cls, value: Any) -> Any:
        return (value.strip().upper() or None) if isinstance(value, str) else value

    @field_validator("database_url", mode="before")
    @classmethod
    def _blank_is_default(cls, value: Any) -> Any:
        return default_database_url() if isinstance(value, str) and not value.strip() else value

    @field_validator(
        "council_chairman",
        "council_max_reviewers",
        "llm_base_url",
        "slack_api_url",
        "discord_api_url",
        "slack_client_id",
        "public_url",
        "tenant_daily_budget_usd",
        "api_task_model",
        mode="before",
    )
    @classmethod
    def _blank_is_none(cls, value: Any) -> Any:
        return None if isinstance(value, str) and not value.strip() else value

    # ----------------------------------------------------------------- derived

    @property
    def has_remote_provider(self) -> bool:
        return bool(self.llm_base_url or self.openrouter_api_key)

    @property
    def default_members(self) -> list[str]:
        if self.council_models:
            return list(self.council_models)
        return list(REMOTE_DEFAULT_MEMBERS if self.has_remote_provider else LOCAL_DEFAULT_MEMBERS)

    @property
    def default_chairman(self) -> str:
        if self.council_chairman:
            return self.council_chairman
        if self.council_models:
            return self.council_models[0]
        return REMOTE_DEFAULT_CHAIRMAN if self.has_remote_provider else LOCAL_DEFAULT_CHAIRMAN

    @property
    def uses_local_defaults(self) -> bool:
        return not self.council_models and not self.has_remote_provider

    @property
    def slack_oauth(self) -> bool:
        """Slack runs as a distributed app (bolt's OAuth flow) rather than on one bot token."""
        return bool(self.slack_client_id and self.slack_client_secret)

    @property
    def slack_oauth_missing(self) -> list[str]:
        """The settings OAuth distribution needs beside SLACK_CLIENT_ID/SECRET that are not set."""
        needed = (
            ("SLACK_SIGNING_SECRET", self.slack_signing_secret),
            ("COUNCIL_PUBLIC_URL", self.public_url),
            ("COUNCIL_SECRET_KEY", self.secret_key),
        )
        return [name for name, value in needed if not value]

    def slack_oauth_url(self, path: str) -> str | None:
        """SLACK_INSTALL_PATH or SLACK_REDIRECT_PATH on COUNCIL_PUBLIC_URL (None while it is unset)."""
        return self.public_url.rstrip("/") + path if self.public_url else None

    @property
    def database(self) -> DatabaseTarget:
        """Where DATABASE_URL points (backend, location, a display form without the password),
        or ConfigurationError saying what forms it takes."""
        try:
            return parse_database_url(self.database_url)
        except ValueError as exc:
            raise ConfigurationError(f"{exc}. Unset it to use {default_database_url()}.") from None


def load_settings(**overrides: Any) -> Settings:
    """Settings from the environment and `.env`, or ConfigurationError naming each bad variable."""
    try:
        return Settings(**overrides)
    except ValidationError as exc:
        raise ConfigurationError(describe_invalid(exc)) from None
    except SettingsError as exc:  # a value pydantic-settings could not even decode (e.g. bad JSON)
        field = re.search(r'field "(\w+)"', str(exc))
        info = Settings.model_fields.get(field.group(1)) if field else None
        name = (info.alias if info else None) or "a setting"
        raise ConfigurationError(
            f"{name}: the value cannot be read ({exc.__cause__ or exc}). Fix it in the environment or .env."
        ) from None


def describe_invalid(exc: ValidationError) -> str:
    """One line naming each variable and what is wrong with it; secret values are never quoted."""
    secret_names = {
        field.alias or name for name, field in Settings.model_fields.items() if "SecretStr" in str(field.annotation)
    }
    problems = []
    for error in exc.errors():
        name = str(error["loc"][0]) if error["loc"] else "settings"
        given = "" if name in secret_names else f" (got {error.get('input')!r})"
        reason = error["msg"].removeprefix("Value error, ")
        problems.append(f"{name}: {reason}{given}")
    return "; ".join(problems) + ". Fix it in the environment or .env (see .env.example)."


def per_endpoint(value: str | None, setting: str) -> dict[str, float] | float | None:
    """A number for every endpoint, or a JSON object of endpoint to number; None when unset."""
    text = (value or "").strip()
    if not text:
        return None
    try:
        parsed = json.loads(text)
    except ValueError:
        raise ValueError(f"{setting} must be a number or a JSON object of endpoint to number") from None
    if isinstance(parsed, (int, float)) and not isinstance(parsed, bool) and parsed > 0:
        return float(parsed)
    if isinstance(parsed, dict) and all(
        isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0 for v in parsed.values()
    ):
        return {str(k).rstrip("/"): float(v) for k, v in parsed.items()}
    raise ValueError(f"{setting} must be a positive number or a JSON object of endpoint to positive number")
