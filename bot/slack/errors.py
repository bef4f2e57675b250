"""What a Slack Web API refusal says: its `error` code, for decisions and for log lines."""

from __future__ import annotations

from slack_sdk.errors import SlackApiError


def error_code(exc: SlackApiError) -> str:
    """The `error` of a Web API refusal ("" when Slack sent no response)."""
    return str(exc.response.get("error", "")) if exc.response is not None else ""


def refusal(exc: Exception) -> str:
    """For a log line: the `error` Slack answered, else the exception itself (no response)."""
    response = getattr(exc, "response", None)
    return str(response.get("error")) if response is not None else str(exc)
