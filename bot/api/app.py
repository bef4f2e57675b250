"""The ASGI application: `/v1/models`, `/v1/chat/completions`, and the MCP endpoint at `/mcp`."""

from __future__ import annotations

import contextlib
import json
import logging
from typing import Any

import anyio
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from bot.api import catalog
from bot.api.keys import LOCAL_USER, ApiKeys, origin_for
from bot.api.openai_types import ApiError, ChatRequest, api_error_for, chunk_body, completion_body
from bot.api.transcript import CouncilTranscript, Deltas
from core.errors import CouncilError
from core.models import Actor, CouncilFinished, CouncilResult, CouncilStatus, Origin, Platform
from core.models.files import AttachmentBatch
from core.service import CouncilRun, CouncilService, continued

log = logging.getLogger(__name__)

MCP_PATH = "/mcp"
ORIGIN_KEY = "council.origin"
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
        scope[ORIGIN_KEY] = origin_for(name)
        await self.app(scope, receive, send)


class CouncilResponse(Response):
    """Follows one council to its client. A client that goes away, streaming or not, stops the
    council at once: nobody would read the rest, and it would keep spending."""

    def __init__(self, service: CouncilService, run: CouncilRun, model: str, stream: bool):
        self.service, self.run, self.model, self.stream = service, run, model, stream
        self.completion_id = f"chatcmpl-{run.council_id}"
        self.transcript = CouncilTranscript()
        self.background = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        delivered = False
        try:
            async with anyio.create_task_group() as group:

                async def hang_up_watch() -> None:
                    while (await receive())["type"] != "http.disconnect":
                        pass
                    group.cancel_scope.cancel()

                group.start_soon(hang_up_watch)
                with contextlib.suppress(OSError):  # the client went away while we wrote
                    await (self._stream(send) if self.stream else self._complete(scope, receive, send))
                    delivered = True
                group.cancel_scope.cancel()
        finally:
            if not delivered and not self.run.done:
                with anyio.CancelScope(shield=True):
                    origin = self.run.request.origin
                    await self.service.stop(self.run.council_id, Actor(user_id=origin.user_id or LOCAL_USER))
                log.info("client disconnected: stopped council %s", self.run.council_id)

    async def _follow(self, on_deltas: Any = None) -> CouncilResult:
        async for event in self.run.events():
            if isinstance(event, CouncilFinished):
                result = event.result
                break
            deltas = self.transcript.on_event(event)
            if on_deltas is not None:
                await on_deltas(deltas)
        else:  # pragma: no cover - events() always ends with CouncilFinished
            raise RuntimeError("council events ended without a result")
        if on_deltas is not None:
            await on_deltas(self.transcript.finish(result))
        else:
            self.transcript.finish(result)
        return result

    async def _complete(self, scope: Scope, receive: Receive, send: Send) -> None:
        result = await self._follow()
        if result.status is CouncilStatus.FAILED:
            response: Response = ApiError(502, self.transcript.content, "server_error", "council_failed").response()
        else:
            body = completion_body(
                self.completion_id,
                self.model,
                self.transcript.content,
                self.transcript.reasoning,
                "stop",
                result.usage,
            )
            response = JSONResponse(body, headers={"x-council-id": self.run.council_id})
        await response(scope, receive, send)

    async def _stream(self, send: Send) -> None:
        async def event(body: dict[str, Any] | str) -> None:
            data = body if isinstance(body, str) else json.dumps(body, ensure_ascii=False)
            await send({"type": "http.response.body", "body": f"data: {data}\n\n".encode(), "more_body": True})

        async def deltas(found: Deltas) -> None:
            if found.reasoning:
                await event(chunk_body(self.completion_id, self.model, {"reasoning_content": found.reasoning}))
            if found.content:
                await event(chunk_body(self.completion_id, self.model, {"content": found.content}))

        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [
                    (b"content-type", b"text/event-stream; charset=utf-8"),
                    (b"cache-control", b"no-cache"),
                    (b"x-accel-buffering", b"no"),
                    (b"x-council-id", self.run.council_id.encode()),
                ],
            }
        )
        await event(chunk_body(self.completion_id, self.model, {"role": "assistant", "content": ""}))
        result = await self._follow(deltas)
        await event(chunk_body(self.completion_id, self.model, {}, finish_reason="stop", usage=result.usage))
        await event("[DONE]")
        await send({"type": "http.response.body", "body": b"", "more_body": False})


async def _json_body(request: Request) -> Any:
    try:
        return json.loads(await request.body() or b"null")
    except (ValueError, UnicodeDecodeError):
        raise ApiError(400, "The request body is not valid JSON.", "invalid_request_error", "invalid_json") from None


def _choice_for(model: str) -> catalog.CouncilChoice:
    choice = catalog.resolve(model)
    if choice is None:
        known = ", ".join(c.id for c in catalog.CHOICES)
        raise ApiError(
            404, f"The model `{model}` does not exist; use one of: {known}.", "invalid_request_error", "model_not_found"
        )
    return choice


async def _readable_files(service: CouncilService, chat: ChatRequest) -> AttachmentBatch:
    batch = await service.read_files(chat.files(), Platform.API)
    if chat.files() and not batch.attachments:
        # Nothing readable: answering without the files would mislead the caller.
        message = "None of the attached files could be read: " + "; ".join(batch.user_notices())
        raise ApiError(400, message, "invalid_request_error", "unreadable_files")
    return batch


async def _api_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ApiError)
    return exc.response()


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "invalid_request")
    return ApiError(exc.status_code, str(exc.detail), "invalid_request_error", code).response()


def create_app(service: CouncilService, keys: ApiKeys, *, mcp_app: ASGIApp | None = None, lifespan=None) -> ASGIApp:
    async def models(request: Request) -> Response:
        return JSONResponse(catalog.model_list())

    async def chat_completions(request: Request) -> Response:
        origin: Origin = request.scope[ORIGIN_KEY]
        chat = ChatRequest.from_json(await _json_body(request))
        choice = _choice_for(chat.model)
        question, history = chat.question_and_history()
        batch = await _readable_files(service, chat)
        try:
            run = await service.start_council(
                question,
                origin,
                history,
                members=choice.members,
                chairman=choice.chairman,
                attachments=batch.attachments,
                notices=batch.user_notices(),
                mode=choice.mode,
            )
        except CouncilError as exc:
            raise api_error_for(exc) from None
        return CouncilResponse(service, run, choice.id, stream=bool(chat.stream))

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
        Route("/v1/chat/completions", chat_completions, methods=["POST"]),
        Route("/health", health, methods=["GET"]),
        Route("/ready", ready, methods=["GET"]),
        Route("/metrics", metrics, methods=["GET"]),
    ]
    if mcp_app is not None:
        routes.append(Route(MCP_PATH, mcp_app, methods=["GET", "POST", "DELETE"]))
    app = Starlette(
        routes=routes,
        exception_handlers={ApiError: _api_error, HTTPException: _http_error},
        lifespan=lifespan,
    )
    return TraceContext(BearerAuth(app, keys))
