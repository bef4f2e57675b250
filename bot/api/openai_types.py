"""The OpenAI Chat Completions shapes the API reads and writes, and its error envelope."""

from __future__ import annotations

import json
import math
import time
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from starlette.responses import JSONResponse

from bot.api.content_files import FILE_PARTS, part_file
from core.errors import (
    BudgetExceeded,
    CouncilError,
    InputRejected,
    ModelFailed,
    NotFound,
    Overloaded,
    RateLimited,
    UnknownModels,
)
from core.models import ChatMessage, ConversationTurn, CouncilResult, Usage
from core.models.files import IncomingFile
from core.models.voice import measured, self_moa_line, told

_TEXT_PARTS = {"text", "input_text"}
# The longest Retry-After the openai SDKs wait out; past it they retry at once, to no purpose.
SDK_LONGEST_WAIT_S = 60
OVERLOADED_RETRY_S = 10  # a full queue drains in seconds: worth a retry


class ApiError(Exception):
    """A refusal rendered as `{"error": {"message", "type", "code", "param"}}` with an HTTP status.

    `x-should-retry` tells the openai SDKs (which retry 408, 409, 429 and 5xx by default) whether a
    retry can help: never for a request we refused or a council that ran and failed (each retry
    would run and pay for another), and not for a wait longer than the SDKs would sit out."""

    def __init__(
        self,
        status: int,
        message: str,
        type_: str,
        code: str | None = None,
        retry_after_s: float | None = None,
        *,
        param: str | None = None,
        retry: bool | None = None,
    ):
        super().__init__(message)
        self.status, self.message, self.type, self.code = status, message, type_, code
        self.retry_after_s, self.param = retry_after_s, param
        self.retry = _retry_helps(status, retry_after_s) if retry is None else retry

    def body(self) -> dict[str, Any]:
        return {"error": {"message": self.message, "type": self.type, "code": self.code, "param": self.param}}

    def headers(self) -> dict[str, str]:
        headers = {"x-should-retry": "true" if self.retry else "false"}
        if self.retry_after_s:
            headers["Retry-After"] = str(max(1, math.ceil(self.retry_after_s)))
        return headers

    def response(self) -> JSONResponse:
        return JSONResponse(self.body(), status_code=self.status, headers=self.headers())


def _retry_helps(status: int, retry_after_s: float | None) -> bool:
    if status == 429:
        return retry_after_s is None or retry_after_s <= SDK_LONGEST_WAIT_S
    return status >= 500 or status in (408, 409)


def api_error_for(exc: CouncilError) -> ApiError:
    """The service's refusals, each with the status an OpenAI client expects."""
    if isinstance(exc, RateLimited):
        return ApiError(429, exc.user_message, "rate_limit_error", "rate_limit_exceeded", exc.retry_after_s)
    if isinstance(exc, BudgetExceeded):
        return ApiError(429, exc.user_message, "insufficient_quota", "daily_budget_exceeded", exc.retry_after_s)
    if isinstance(exc, Overloaded):
        return ApiError(503, exc.user_message, "server_error", "overloaded", OVERLOADED_RETRY_S)
    if isinstance(exc, UnknownModels):
        return ApiError(400, exc.user_message, "invalid_request_error", "model_not_found")
    if isinstance(exc, InputRejected):
        return ApiError(400, exc.user_message, "invalid_request_error", "invalid_request")
    if isinstance(exc, NotFound):
        return ApiError(404, exc.user_message, "invalid_request_error", "not_found")
    if isinstance(exc, ModelFailed):
        return ApiError(502, exc.user_message, "server_error", exc.kind)
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
    """Sampling fields the council cannot honour (top_p, seed, ...) are ignored, as OpenAI-compatible
    servers do; what a client relies on (`n` > 1, a forced tool call) is refused with a 400 naming the
    parameter (`refuse_unsupported`). A member asked directly honours `temperature` and `max_tokens`."""

    model_config = ConfigDict(extra="ignore")

    model: str = Field(min_length=1)
    messages: list[RequestMessage] = Field(min_length=1)
    stream: bool | None = False
    stream_options: StreamOptions | None = None
    n: int | None = None
    tools: list[Any] | None = None
    tool_choice: str | dict[str, Any] | None = None
    response_format: dict[str, Any] | None = None
    temperature: float | None = Field(None, ge=0, le=2)
    # Heeded by a front end's task and a member asked directly (one model), not by a council.
    max_tokens: int | None = Field(None, ge=1)
    max_completion_tokens: int | None = Field(None, ge=1)  # the newer name of max_tokens
    # The end user, heeded for keys in COUNCIL_API_TRUSTED_KEYS only: a string (OpenAI), or the
    # object Open WebUI sends to pipelines ({"id", "name", ...}).
    user: str | dict[str, Any] | None = None
    # OpenAI's request `metadata` (string values): `members` (comma-separated model ids or seats)
    # and `chairman` choose this council's, `lenses` its members' lenses (a JSON object, seat ->
    # a preset's name or a persona); other keys are ignored.
    metadata: dict[str, Any] | None = None

    def lenses(self) -> dict[str, str] | None:
        """The lenses `metadata` chose (an object, or its JSON as OpenAI's string values); ApiError
        when it is neither."""
        given = (self.metadata or {}).get("lenses")
        if given is None or given == "":
            return None
        if isinstance(given, str):
            try:
                given = json.loads(given)
            except ValueError:
                given = None
        if not isinstance(given, dict) or not all(isinstance(v, str) for v in given.values()):
            raise ApiError(
                400,
                'metadata.lenses: a JSON object from a member to a preset or a persona, e.g. {"model-a": "skeptic"}',
                "invalid_request_error",
                "invalid_request",
                param="metadata.lenses",
            )
        return {str(seat): persona for seat, persona in given.items()}

    def seats(self) -> tuple[list[str] | None, str | None]:
        """The members and chairman `metadata` chose (None: the model's own)."""
        data = self.metadata or {}
        members = data.get("members")
        if isinstance(members, str):
            members = [m for m in members.replace(",", " ").split() if m]
        chosen = [str(m) for m in members] if isinstance(members, list) and members else None
        chairman = data.get("chairman")
        return chosen, (chairman.strip() or None) if isinstance(chairman, str) else None

    def chat_messages(self) -> list[ChatMessage]:
        """The conversation as a member answering alone reads it: its text (files are read only
        by councils), `developer` as `system`, tool messages left out."""
        roles = {"system": "system", "developer": "system", "user": "user", "assistant": "assistant"}
        return [
            ChatMessage(role=roles[m.role], content=m.text)  # type: ignore[arg-type]
            for m in self.messages
            if m.role in roles and m.text.strip()
        ]

    @classmethod
    def from_json(cls, body: Any) -> ChatRequest:
        if not isinstance(body, dict):
            raise ApiError(400, "The request body must be a JSON object.", "invalid_request_error", "invalid_json")
        try:
            chat = cls.model_validate(body)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first["loc"]) or "body"
            message = str(first["msg"]).removeprefix("Value error, ")
            raise ApiError(
                400, f"{where}: {message}", "invalid_request_error", "invalid_request", param=where
            ) from None
        chat.refuse_unsupported()
        return chat

    def refuse_unsupported(self) -> None:
        """A council writes one answer and calls no tools: a request that needs either would get
        free text it cannot use."""
        if self.n is not None and self.n != 1:
            raise ApiError(
                400,
                f"n: the council writes one answer per request; n={self.n} is not supported "
                "(send n=1 or leave it out).",
                "invalid_request_error",
                "unsupported_parameter",
                param="n",
            )
        forced = self.tool_choice == "required" or isinstance(self.tool_choice, dict)
        if self.tools and forced:
            raise ApiError(
                400,
                "tool_choice: the council calls no tools, so it cannot be made to call one "
                '(leave tool_choice out, or "auto" / "none").',
                "invalid_request_error",
                "unsupported_parameter",
                param="tool_choice",
            )

    @property
    def include_usage(self) -> bool:
        return bool(self.stream_options and self.stream_options.include_usage)

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
    completion_id: str,
    model: str,
    content: str,
    reasoning: str,
    finish_reason: str,
    usage: Usage,
    metadata: dict[str, Any] | None = None,
) -> dict[str, Any]:
    message = {"role": "assistant", "content": content, "reasoning_content": reasoning}
    body = {
        "id": completion_id,
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason, "logprobs": None}],
        "usage": usage_body(usage),
    }
    return body | ({"metadata": metadata} if metadata is not None else {})


def council_metadata(result: CouncilResult, link: str | None = None) -> dict[str, Any]:
    """What a council's completion says about it besides the answer (`metadata`, as in the export);
    `link`: its page in the browser app (COUNCIL_PUBLIC_URL)."""
    config = result.request.config
    unsure = result.unsure
    metadata = {
        "council_id": result.council_id,
        "status": result.status.value,
        "escalated": result.escalated,
        # who wrote the answer (chairman, as_written, stand_in) and the sentence saying so, the
        # members that failed, the ballots read, late reviews, the mode: as the web page and MCP say them
        **told(result),
        # Agreement of the ballots (Kendall's W) and of the rubric scores (consensus 0-100),
        # with each answer's mean score per criterion (model -> criterion -> mean).
        "agreement_w": result.aggregate.agreement_w if result.aggregate else None,
        "consensus": result.aggregate.consensus if result.aggregate else None,
        "scores": result.aggregate.scores if result.aggregate else {},
        # where the answer came from, measured (member, `sources`, `chairman` -> share)
        "composition": result.composition,
        # measured doubt (consensus under the line-up's eval threshold) and the strategy `best` chose
        "unsure": unsure is not None,
        "unsure_line": measured.unsure_line(unsure) if unsure is not None else None,
        "strategy": config.strategy.model_dump(mode="json") if config.strategy else None,
        # where the members stand: agreed, contested, unique, open, and which parts were written or measured
        "disagreement": result.disagreement.model_dump(mode="json") if result.disagreement else None,
        # refine mode: one list per round, `{"member", "moved", "toward"}` per member
        "rounds": [r.moves() for r in result.rounds],
        "lenses": {seat: lens.model_dump(mode="json") for seat, lens in config.lenses.items()},
        "self_moa": self_moa_line(config, sum(1 for a in result.answers if a.ok)),
    }
    return {**metadata, "url": link} if link else metadata


def chunk_body(
    completion_id: str,
    model: str,
    delta: dict[str, Any],
    finish_reason: str | None = None,
    metadata: dict[str, Any] | None = None,
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": completion_id,
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason, "logprobs": None}],
    }
    if metadata is not None:
        body["metadata"] = metadata
    return body


def usage_chunk(completion_id: str, model: str, usage: Usage) -> dict[str, Any]:
    """The last chunk of a stream whose request set `stream_options.include_usage`, as OpenAI
    sends it: no choices, the whole council's usage."""
    return {
        "id": completion_id,
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
        "choices": [],
        "usage": usage_body(usage),
    }
