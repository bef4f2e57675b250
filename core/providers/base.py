"""What every model provider offers, and the typed errors it raises.

A provider turns chat messages into a `Completion`, optionally streaming text deltas.
Errors are typed so that the real cause (401, unknown model, timeout, ...) reaches the user.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from core.models import ChatMessage, Completion, ErrorInfo, ErrorKind


class ProviderError(Exception):
    """Base of provider failures. `message` must never contain a secret."""

    kind: ErrorKind = ErrorKind.UNKNOWN

    def __init__(self, message: str, *, status: int | None = None, retry_after_s: float | None = None):
        super().__init__(message)
        self.message = message
        self.status = status
        self.retry_after_s = retry_after_s

    def info(self) -> ErrorInfo:
        return ErrorInfo(kind=self.kind, message=self.message, status=self.status)


class AuthError(ProviderError):
    kind = ErrorKind.AUTH


class ModelNotFoundError(ProviderError):
    kind = ErrorKind.MODEL_NOT_FOUND


class RateLimitedError(ProviderError):
    kind = ErrorKind.RATE_LIMITED


class ProviderTimeoutError(ProviderError):
    kind = ErrorKind.TIMEOUT


class BadResponseError(ProviderError):
    kind = ErrorKind.BAD_RESPONSE


class ProviderUnavailableError(ProviderError):
    kind = ErrorKind.UNAVAILABLE


class ProviderConfigError(ProviderError):
    kind = ErrorKind.CONFIG


class ProcessStoppingError(ProviderError):
    """A call that would start once the process closed its providers: a stop, not a crash."""

    kind = ErrorKind.CANCELLED

    def __init__(self) -> None:
        super().__init__("the process is stopping")


@dataclass(frozen=True)
class KeyProof:
    """What an endpoint's key check established: `proven`, with `how` it was proven (or, when
    nothing could prove it, why not). A rejected key is an AuthError instead."""

    proven: bool
    how: str


@dataclass(frozen=True)
class TextDelta:
    """A piece of streamed text."""

    text: str


# A stream yields TextDelta items and ends with exactly one Completion (full text + usage).
StreamItem = TextDelta | Completion


@dataclass(frozen=True)
class CallOptions:
    timeout_s: float = 120.0
    temperature: float | None = None
    max_tokens: int | None = None
    # A stage-2 review must end with a ranking of these labels. Providers that can constrain
    # their output (local GGUF models, with a grammar) use it so that tiny models keep the
    # format; the others rely on the prompt alone.
    ranking_labels: tuple[str, ...] | None = None
    # Structured output (OpenAI `response_format`, e.g. a JSON schema). A provider that cannot
    # honour it raises BadResponseError with status 400, as an endpoint refusing it does.
    response_format: Mapping[str, Any] | None = None


@runtime_checkable
class Provider(Protocol):
    """One backend (an OpenAI-compatible endpoint, or in-process GGUF models)."""

    name: str

    async def complete(self, model: str, messages: Sequence[ChatMessage], options: CallOptions) -> Completion: ...

    def stream(
        self, model: str, messages: Sequence[ChatMessage], options: CallOptions
    ) -> AsyncIterator[StreamItem]: ...

    async def list_models(self) -> list[str]: ...

    def context_window(self, model: str) -> int | None:
        """Tokens one call of `model` can hold (prompt and answer), or None when unknown (then large)."""
        ...

    async def aclose(self) -> None: ...


@contextmanager
def redacted_errors(redact: Callable[[str], str]) -> Iterator[None]:
    """A ProviderError raised inside leaves with its message redacted."""
    try:
        yield
    except ProviderError as exc:
        exc.message = redact(exc.message)
        exc.args = (exc.message,)
        raise
