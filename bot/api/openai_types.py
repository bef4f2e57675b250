"""The OpenAI Chat Completions shapes the API reads and writes, and its error envelope."""

from __future__ import annotations

import math
import time
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from starlette.responses import JSONResponse

from bot.api.content_files import FILE_PARTS, part_file
from core.errors import BudgetExceeded, CouncilError, InputRejected, NotFound, Overloaded, RateLimited, UnknownModels
from core.models import ConversationTurn, Usage
from core.models.files import IncomingFile

_TEXT_PARTS = {"text", "input_text"}


class ApiError(Exception):
    """A refusal rendered as `{"error": {"message", "type", "code"}}` with an HTTP status."""

    def __init__(
        self, status: int, message: str, type_: str, code: str | None = None, retry_after_s: float | None = None
    ):
        super().__init__(message)
        self.status, self.message, self.type, self.code, self.retry_after_s = (
            status,
            message,
            type_,
            code,
            retry_after_s,
        )

    def response(self) -> JSONResponse:
        headers = {"Retry-After": str(max(1, math.ceil(self.retry_after_s)))} if self.retry_after_s else None
        body = {"error": {"message": self.message, "type": self.type, "code": self.code, "param": None}}
        return JSONResponse(body, status_code=self.status, headers=headers)


def api_error_for(exc: CouncilError) -> ApiError:
    """The service's refusals, each with the status an OpenAI client expects."""
    if isinstance(exc, RateLimited):
        return ApiError(429, exc.user_message, "rate_limit_error", "rate_limit_exceeded", exc.retry_after_s)
    if isinstance(exc, BudgetExceeded):
        return ApiError(429, exc.user_message, "insufficient_quota", "daily_budget_exceeded", exc.retry_after_s)
    if isinstance(exc, Overloaded):
        return ApiError(503, exc.user_message, "server_error", "overloaded", 10)
    if isinstance(exc, UnknownModels):
        return ApiError(400, exc.user_message, "invalid_request_error", "model_not_found")
    if isinstance(exc, InputRejected):
        return ApiError(400, exc.user_message, "invalid_request_error", "invalid_request")
    if isinstance(exc, NotFound):
        return ApiError(404, exc.user_message, "invalid_request_error", "not_found")
    return ApiError(403, exc.user_message, "permission_error", "forbidden")


# --------------------------------------------------------------------------- requests


class RequestMessage(BaseModel):
    model_config = ConfigDict(extra="ignore")

    role: Literal["system", "developer", "user", "assistant", "tool", "function"]
    content: str | list[dict[str, Any]] | None = None

    @field_validator("content")
    @classmethod
    def _known_parts(cls, content: Any) -> Any:
        for part in content if isinstance(content, list) else []:
            kind = part.get("type")
            if kind in _TEXT_PARTS:
                continue
            if kind in FILE_PARTS:
                part_file(part, 1)  # a malformed part is a 400 here, before anything runs
                continue
            if kind == "input_audio":
                raise ValueError("the council reads text, documents and images; `input_audio` parts are not supported")
            raise ValueError(f"unknown content part type `{kind}`")
        return content

    def files(self) -> list[IncomingFile]:
        """The image and file parts of this message, in order."""
        parts = self.content if isinstance(self.content, list) else []
        return [part_file(p, i) for i, p in enumerate((p for p in parts if p.get("type") in FILE_PARTS), 1)]

    @property
    def text(self) -> str:
        if isinstance(self.content, list):
            return "\n".join(str(part.get("text") or "") for part in self.content if part.get("type") in _TEXT_PARTS)
        return self.content or ""


class StreamOptions(BaseModel):
    model_config = ConfigDict(extra="ignore")
    include_usage: bool = False


class ChatRequest(BaseModel):
    """Fields the council cannot honour (temperature, tools, n, ...) are ignored, as OpenAI-compatible
    servers do."""

    model_config = ConfigDict(extra="ignore")

    model: str = Field(min_length=1)
    messages: list[RequestMessage] = Field(min_length=1)
    stream: bool | None = False
    stream_options: StreamOptions | None = None

    @classmethod
    def from_json(cls, body: Any) -> ChatRequest:
        if not isinstance(body, dict):
            raise ApiError(400, "The request body must be a JSON object.", "invalid_request_error", "invalid_json")
        try:
            return cls.model_validate(body)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first["loc"]) or "body"
            message = str(first["msg"]).removeprefix("Value error, ")
            raise ApiError(400, f"{where}: {message}", "invalid_request_error", "invalid_request") from None

    def question_and_history(self) -> tuple[str, list[ConversationTurn]]:
        """The last user message is the question; earlier user/assistant turns are the history.
        System and tool messages are not the council's to follow: its stages have their own prompts."""
        last_user = max((i for i, m in enumerate(self.messages) if m.role == "user"), default=None)
        if last_user is None:
            raise ApiError(400, "messages: no user message to answer.", "invalid_request_error", "invalid_request")
        history = [
            ConversationTurn(role=m.role, content=m.text)  # type: ignore[arg-type]
            for m in self.messages[:last_user]
            if m.role in ("user", "assistant") and m.text.strip()
        ]
        return self.messages[last_user].text, history

    def files(self) -> list[IncomingFile]:
        """Files attached to the question (the last user message); earlier turns' files are not re-read."""
        users = [m for m in self.messages if m.role == "user"]
        return users[-1].files() if users else []


# --------------------------------------------------------------------------- responses


def usage_body(usage: Usage) -> dict[str, Any]:
    return {
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "total_tokens": usage.prompt_tokens + usage.completion_tokens,
    }


def completion_body(
    completion_id: str, model: str, content: str, reasoning: str, finish_reason: str, usage: Usage
) -> dict[str, Any]:
    message = {"role": "assistant", "content": content, "reasoning_content": reasoning}
    return {
        "id": completion_id,
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason, "logprobs": None}],
        "usage": usage_body(usage),
    }


def chunk_body(
    completion_id: str,
    model: str,
    delta: dict[str, Any],
    finish_reason: str | None = None,
    usage: Usage | None = None,
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": completion_id,
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason, "logprobs": None}],
    }
    if usage is not None:
        body["usage"] = usage_body(usage)
    return body
