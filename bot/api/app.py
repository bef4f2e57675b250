"""The ASGI application: `/v1/models`, `/v1/chat/completions`, and the MCP endpoint at `/mcp`.

A model id is a council (bot/api/catalog.py) or one of the council's members or its chairman,
which answers alone (bot/api/direct.py)."""

from __future__ import annotations

import hashlib
import json
import logging
import uuid
from dataclasses import dataclass
from typing import Any

import anyio
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from bot.api import catalog, json_answer
from bot.api.completion import CouncilResponse
from bot.api.direct import direct_answer
from bot.api.front_end_tasks import is_front_end_task
from bot.api.guard import CrossSiteGuard
from bot.api.keys import LOCAL_USER, ApiKeys, caller_origin
from bot.api.openai_types import ApiError, ChatRequest, api_error_for, completion_body
from core.errors import CouncilError
from core.models import AnswerFormat, KeyClaim, Origin, Platform
from core.models.files import AttachmentBatch
from core.service import CouncilService, continued

log = logging.getLogger(__name__)

MCP_PATH = "/mcp"
KEY_NAME = "council.key_name"  # the scope entry BearerAuth leaves for the endpoints
MAX_JSON_DEPTH = 64  # a chat request nests a few levels; deeper is no request of ours
MAX_IDEMPOTENCY_KEY = 255
OPEN_PATHS = frozenset({"/health", "/ready", "/metrics"})  # for probes and Prometheus: no key


class TraceContext:
    """A request's `traceparent` makes its council a child of the caller's span (pure ASGI, so
    the context holds for the whole response, streamed or not)."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        with continued(headers):
            await self.app(scope, receive, send)


class BearerAuth:
    """Pure ASGI (a BaseHTTPMiddleware would hide client disconnects from the endpoints)."""

    def __init__(self, app: ASGIApp, keys: ApiKeys):
        self.app, self.keys = app, keys

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        name = LOCAL_USER
        if self.keys.enabled and scope["path"] not in OPEN_PATHS:
            headers = dict(scope["headers"])
            found = self.keys.name_for(headers.get(b"authorization", b"").decode("latin-1"))
            if found is None:
                error = ApiError(
                    401,
                    "Missing or wrong API key: send `Authorization: Bearer <key>` with a key from COUNCIL_API_KEYS.",
                    "invalid_request_error",
                    "invalid_api_key",
                )
                await error.response()(scope, receive, send)
                return
            name = found
        scope[KEY_NAME] = name
        await self.app(scope, receive, send)


async def _json_body(request: Request) -> Any:
    try:
        raw = await request.body()
    except ClientDisconnect:
        log.info("client disconnected before sending its whole request to %s", request.url.path)
        raise _Gone() from None
    try:
        body = json.loads(raw or b"null")
    except (ValueError, UnicodeDecodeError, RecursionError):
        raise ApiError(400, "The request body is not valid JSON.", "invalid_request_error", "invalid_json") from None
    if _depth_exceeds(body, MAX_JSON_DEPTH):
        raise ApiError(
            400, f"The request body nests deeper than {MAX_JSON_DEPTH} levels.", "invalid_request_error", "invalid_json"
        )
    return body


class _Gone(Exception):
    """The client went away while sending its request: nobody is left to answer."""


def _depth_exceeds(value: Any, limit: int) -> bool:
    level: list[Any] = [value]
    for _ in range(limit):
        level = [
            child
            for item in level
            if isinstance(item, dict | list)
            for child in (item.values() if isinstance(item, dict) else item)
        ]
        if not level:
            return False
    return any(isinstance(item, dict | list) for item in level)


def _unknown_model(model: str, direct: list[str]) -> ApiError:
    known = ", ".join([*(c.id for c in catalog.CHOICES), *direct])
    return ApiError(
        404,
        f"The model `{model}` does not exist; use one of: {known}.",
        "invalid_request_error",
        "model_not_found",
        param="model",
    )


async def _readable_files(service: CouncilService, chat: ChatRequest) -> AttachmentBatch:
    batch = await service.reading.read_files(chat.files(), Platform.API)
    if chat.files() and not batch.attachments:
        # Nothing readable: answering without the files would mislead the caller.
        message = "None of the attached files could be read: " + "; ".join(batch.user_notices())
        raise ApiError(400, message, "invalid_request_error", "unreadable_files")
    return batch


def _idempotency_key(request: Request) -> str | None:
    key = request.headers.get("idempotency-key")
    if key is None:
        return None
    key = key.strip()
    if not key or len(key) > MAX_IDEMPOTENCY_KEY:
        raise ApiError(
            400,
            f"Idempotency-Key must be 1 to {MAX_IDEMPOTENCY_KEY} characters.",
            "invalid_request_error",
            "invalid_idempotency_key",
        )
    return key


async def _api_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ApiError)
    return exc.response()


async def _gone(request: Request, exc: Exception) -> Response:
    return Response(status_code=400)  # never read: the client is gone


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "invalid_request")
    return ApiError(exc.status_code, str(exc.detail), "invalid_request_error", code).response()


@dataclass(frozen=True)
class _KeyHold:
    """An Idempotency-Key this request claimed, until its council runs."""

    service: CouncilService
    claim: KeyClaim
    scope: str
    key: str

    async def release(self) -> None:
        await self.service.idempotency.release(self.claim, self.scope, self.key)


class ChatCompletions:
    """`POST /v1/chat/completions`: a front end's background task, an idempotent retry, a member
    answering alone (its model id), or a council."""

    def __init__(self, service: CouncilService, keys: ApiKeys):
        self.service, self.keys = service, keys

    async def handle(self, request: Request) -> Response:
        body = await _json_body(request)
        chat = ChatRequest.from_json(body)
        origin = caller_origin(self.keys, request.scope[KEY_NAME], request.headers, chat.user)
        choice = catalog.resolve(chat.model)
        if choice is None:
            direct = await self.service.direct.available(origin)
            if chat.model not in direct:
                raise _unknown_model(chat.model, direct)
            return await direct_answer(self.service, origin, chat)
        answer_format = json_answer.requested_format(chat.response_format)
        if is_front_end_task(chat):
            return await self._task(chat, choice, origin)
        question, history = chat.question_and_history()
        key = _idempotency_key(request)
        hold = None
        if key is not None:
            fingerprint = _fingerprint(body)
            claim = await self.service.idempotency.claim(origin.user_key, key, fingerprint)
            if not claim.fresh:
                return await self._again(claim, fingerprint, chat, choice, answer_format)
            hold = _KeyHold(self.service, claim, origin.user_key, key)
        members, chairman = chat.seats()
        lenses = chat.lenses()
        try:
            batch = await _readable_files(self.service, chat)
            run = await self.service.start_council(
                question,
                origin,
                history,
                council_id=hold.claim.council_id if hold else None,
                members=members or choice.members,
                chairman=chairman or choice.chairman,
                attachments=batch.attachments,
                notices=batch.user_notices(),
                mode=choice.mode,
                answer_format=answer_format,
                lenses=lenses,
            )
        except BaseException as exc:
            if hold is not None:  # nothing started: the key is free for a retry
                with anyio.CancelScope(shield=True):
                    await hold.release()
            if isinstance(exc, CouncilError):
                raise api_error_for(exc) from None
            raise
        on_hang_up = hold.release if hold else None  # the council is stopped: a retry must start another
        return CouncilResponse(self.service, run, choice.id, chat, answer_format, starter=True, on_hang_up=on_hang_up)

    async def _task(self, chat: ChatRequest, choice: catalog.CouncilChoice, origin: Origin) -> Response:
        try:
            completion = await self.service.tasks.answer(chat.messages[-1].text, origin, max_tokens=chat.max_tokens)
        except CouncilError as exc:
            raise api_error_for(exc) from None
        log.info("front-end task answered by %s for %s", completion.model, origin.user_id)
        task_id = f"chatcmpl-task-{uuid.uuid4().hex[:16]}"
        body = completion_body(task_id, choice.id, completion.text, "", "stop", completion.usage)
        return JSONResponse(body, headers={"x-council-task-model": completion.model})

    async def _again(
        self,
        claim: KeyClaim,
        fingerprint: str,
        chat: ChatRequest,
        choice: catalog.CouncilChoice,
        answer_format: AnswerFormat | None,
    ) -> Response:
        """A request that repeats an Idempotency-Key: the key's council, never a second one."""
        if claim.fingerprint != fingerprint:
            raise ApiError(
                422,
                "This Idempotency-Key was used with a different request in the last 24 hours; use a new key.",
                "invalid_request_error",
                "idempotency_key_reused",
            )
        try:  # running here, or finished: followed from its start (its story, once it has finished)
            run = await self.service.runs.follow(claim.council_id)
        except CouncilError:
            raise ApiError(
                409,
                "The council of this Idempotency-Key has not finished yet (another process runs it); retry shortly.",
                "invalid_request_error",
                "idempotency_key_in_use",
                retry_after_s=5,
            ) from None
        return CouncilResponse(self.service, run, choice.id, chat, answer_format, starter=False)


def _fingerprint(body: dict[str, Any]) -> str:
    """What must match for a repeated Idempotency-Key: the request, whether streamed or not."""
    asked = {key: value for key, value in body.items() if key not in ("stream", "stream_options")}
    return hashlib.sha256(json.dumps(asked, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def create_app(
    service: CouncilService,
    keys: ApiKeys,
    *,
    hosts: frozenset[str] | None = None,
    mcp_app: ASGIApp | None = None,
    lifespan=None,
) -> ASGIApp:
    """`hosts`: the Host names served (None: any; guard.allowed_hosts); browser origins are
    COUNCIL_API_CORS_ORIGINS."""

    async def models(request: Request) -> Response:
        origin = caller_origin(keys, request.scope[KEY_NAME], request.headers, None)
        return JSONResponse(catalog.model_list(await service.direct.available(origin)))

    async def health(request: Request) -> Response:
        return Response("ok", media_type="text/plain")

    async def ready(request: Request) -> Response:
        readiness = await service.telemetry.ready()
        return Response(readiness.body(), status_code=readiness.status, media_type="application/json")

    async def metrics(request: Request) -> Response:
        body, content_type = await service.telemetry.metrics()
        return Response(body, headers={"Content-Type": content_type})

    routes: list[Any] = [
        Route("/v1/models", models, methods=["GET"]),
        Route("/v1/chat/completions", ChatCompletions(service, keys).handle, methods=["POST"]),
        Route("/health", health, methods=["GET"]),
        Route("/ready", ready, methods=["GET"]),
        Route("/metrics", metrics, methods=["GET"]),
    ]
    if mcp_app is not None:
        routes.append(Route(MCP_PATH, mcp_app, methods=["GET", "POST", "DELETE"]))
    app = Starlette(
        routes=routes,
        exception_handlers={ApiError: _api_error, HTTPException: _http_error, _Gone: _gone},
        lifespan=lifespan,
    )
    return CrossSiteGuard(TraceContext(BearerAuth(app, keys)), hosts, service.settings.api.cors_origins)
