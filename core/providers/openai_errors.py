"""What an OpenAI-compatible endpoint's failure means: a typed ProviderError carrying the
provider's own words (never the key), or a `Retry` when the failure is transient."""

from __future__ import annotations

import email.utils
import json
import time
from typing import Any

import httpx

from core.providers.base import (
    AuthError,
    BadResponseError,
    ModelNotFoundError,
    ProviderError,
    ProviderUnavailableError,
    RateLimitedError,
)
from core.providers.retry import Retry

MAX_DETAIL = 300
_RETRYABLE_STATUS = {408, 409, 425, 429, 500, 502, 503, 504, 520, 522, 524, 529}


def classify(
    status: int, detail: str, model: str, provider: str, response: httpx.Response | None
) -> ProviderError | Retry:
    """Map an HTTP status (and the provider's message) to a typed error, or a retry."""
    suffix = f": {detail}" if detail else ""
    lowered = detail.lower()
    if status in (401, 403):
        return AuthError(f"the API key was rejected by {provider} ({status}){suffix}", status=status)
    if (
        status == 404
        or "model_not_found" in lowered
        or ("model" in lowered and "not" in lowered and "exist" in lowered)
    ):
        return ModelNotFoundError(f"model `{model}` was not found at {provider}{suffix}", status=status)
    retry_after = _retry_after(response) if response is not None else None
    if status == 429:
        return Retry(
            RateLimitedError(
                f"{provider} is rate limiting requests (429){suffix}", status=status, retry_after_s=retry_after
            )
        )
    if status in _RETRYABLE_STATUS or status >= 500:
        return Retry(
            ProviderUnavailableError(f"{provider} failed ({status}){suffix}", status=status, retry_after_s=retry_after)
        )
    return BadResponseError(f"{provider} refused the request ({status}){suffix}", status=status)


def unwrap(outcome: ProviderError | Retry) -> ProviderError:
    return outcome.error if isinstance(outcome, Retry) else outcome


def unreachable(provider: str, exc: httpx.HTTPError) -> Retry:
    """A connection that failed before any answer: always worth another attempt."""
    return Retry(ProviderUnavailableError(f"{provider} is unreachable: {describe(exc)}"))


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after")
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        parsed = email.utils.parsedate_to_datetime(value)
        return max(0.0, parsed.timestamp() - time.time()) if parsed else None


def error_detail(response: httpx.Response) -> str:
    try:
        return detail_of(response.json())
    except (json.JSONDecodeError, UnicodeDecodeError, ValueError):
        return response.text.strip()[:MAX_DETAIL]


def detail_of(body: Any) -> str:
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict):
            message = error.get("message") or error.get("detail") or ""
            code = error.get("code")
            text = f"{message} ({code})" if code and str(code) not in str(message) else str(message)
            return text[:MAX_DETAIL]
        return str(error)[:MAX_DETAIL]
    return str(body)[:MAX_DETAIL]


def error_code(body: dict) -> int:
    error = body.get("error")
    code = error.get("code") if isinstance(error, dict) else None
    return code if isinstance(code, int) else 500


def describe(exc: httpx.HTTPError) -> str:
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
