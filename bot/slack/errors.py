"""What a Slack Web API refusal says: its `error` code, for decisions and for log lines.

Not every failure carries the Web API's JSON. While Slack is down its edge answers with an HTML
or plain-text page, sometimes labelled `application/json`, or with nothing at all; slack_sdk then
raises SlackApiError with a `response` whose `data` is a string, an empty dict, or no
SlackResponse at all (aiohttp's ClientResponse). Everything here reads such errors without
assuming more than is there, so that no failure path fails again while reporting one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def error_code(exc: BaseException) -> str:
    """The `error` of a Web API refusal; "" when there is none (no response, or a body that is not
    the Web API's JSON)."""
    code = _data(exc).get("error")
    return str(code) if code else ""


def http_status(exc: BaseException) -> int | None:
    """The HTTP status of the failed call, when there was a response."""
    response = getattr(exc, "response", None)
    for name in ("status_code", "status"):  # SlackResponse, aiohttp's ClientResponse
        status = getattr(response, name, None)
        if isinstance(status, int):
            return status
    return None


def refusal(exc: BaseException) -> str:
    """For a log line or a short user-facing note: the `error` Slack answered, else the HTTP status
    of an answer that was not the Web API's, else the exception itself (no response at all)."""
    code = error_code(exc)
    if code:
        return code
    status = http_status(exc)
    if status is not None:
        return f"HTTP {status}, not a Web API answer"
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def retry_after_of(exc: BaseException, default: float = 1.0) -> float | None:
    """Seconds to wait when Slack said `ratelimited` (or HTTP 429), else None."""
    if http_status(exc) != 429 and error_code(exc) != "ratelimited":
        return None
    headers = getattr(getattr(exc, "response", None), "headers", None) or {}
    value = next((v for k, v in headers.items() if str(k).lower() == "retry-after"), None)
    if isinstance(value, list):
        value = value[0] if value else None
    try:
        return max(0.0, float(value)) if value is not None else default
    except (TypeError, ValueError):
        return default


def _data(exc: BaseException) -> Mapping[str, Any]:
    """The Web API's JSON object of the failed call, or {} when the body was anything else."""
    data = getattr(getattr(exc, "response", None), "data", None)
    return data if isinstance(data, Mapping) else {}
