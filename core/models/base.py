"""The base of every shared model, small helpers, and a model call's messages, usage and errors."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from enum import Enum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


def new_council_id() -> str:
    return uuid.uuid4().hex[:16]


def utcnow() -> datetime:
    return datetime.now(UTC)


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """ "1 council", "2 councils": a count and its noun, as a reader expects it."""
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"


class Model(BaseModel):
    model_config = ConfigDict(frozen=False, extra="forbid", defer_build=True)


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


class ErrorInfo(Model):
    """The real cause of a failure, safe to show a user (never contains a secret)."""

    kind: ErrorKind
    message: str
    status: int | None = None

    def short(self) -> str:
        code = f" {self.status}" if self.status else ""
        return f"{self.kind.value}{code}: {self.message}"


class ChatMessage(Model):
    role: Literal["system", "user", "assistant"]
    content: str
    # Images shown with this message, as `data:` URLs; providers send them as OpenAI image parts.
    images: list[str] = Field(default_factory=list, repr=False)


class Usage(Model):
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


class Completion(Model):
    """One finished model call."""

    model: str
    text: str
    usage: Usage = Field(default_factory=Usage)
    latency_s: float = 0.0
    finish_reason: str | None = None
