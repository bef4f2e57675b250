"""A council's answer as a chat completion (`CouncilResponse`): followed live, or, for a request
that repeats an Idempotency-Key once the council has finished, its story told again from its
result (core/records/story.py: kept in memory for a while, then read from the database).

A council that failed is an error, never an answer: a 502 when not streaming, and in a stream an
OpenAI-shaped error event (`data: {"error": {...}}`), which the openai SDKs raise and chat front
ends show as an error. Neither invites a retry: each would run, and pay for, another council.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
from starlette.responses import JSONResponse, Response
from starlette.types import Receive, Scope, Send

from bot.api import json_answer
from bot.api.keys import LOCAL_USER
from bot.api.openai_types import ApiError, ChatRequest, chunk_body, completion_body, council_metadata, usage_chunk
from bot.api.transcript import CouncilTranscript, Deltas
from core.models import Actor, AnswerFormat, CouncilFinished, CouncilResult, CouncilStatus
from core.models.voice import STOPPED_BEFORE_ANSWER, link_line
from core.service import CouncilRun, CouncilService

log = logging.getLogger(__name__)

SSE_HEADERS = [
    (b"content-type", b"text/event-stream; charset=utf-8"),
    (b"cache-control", b"no-cache"),
    (b"x-accel-buffering", b"no"),
]


def final_content(result: CouncilResult, transcript: CouncilTranscript, answer_format: AnswerFormat | None) -> str:
    """The answer's content once the council ended (the transcript has seen `finish`), or the
    ApiError that takes its place."""
    if result.status is CouncilStatus.FAILED:
        raise ApiError(502, transcript.failure or "The council failed.", "server_error", "council_failed", retry=False)
    if answer_format is None:
        return transcript.content
    if result.synthesis is None:
        raise ApiError(502, STOPPED_BEFORE_ANSWER, "server_error", "council_stopped", retry=False)
    try:
        return json_answer.fit(result.synthesis.text, answer_format)
    except json_answer.AnswerMisfit as exc:
        raise ApiError(
            502,
            f"The council's answer does not fit response_format: {exc}.",
            "server_error",
            "response_format_unmet",
            param="response_format",
            retry=False,
        ) from None


class _Completion(Response):
    """What a live and a stored answer share: the request's wishes and the two ways to send."""

    def __init__(self, council_id: str, model: str, chat: ChatRequest, answer_format: AnswerFormat | None):
        self.council_id, self.model, self.chat, self.answer_format = council_id, model, chat, answer_format
        self.completion_id = f"chatcmpl-{council_id}"
        self.link: str | None = None  # the council's page in the browser app, in the metadata
        self.link_in_answer = False  # COUNCIL_API_LINK: the answer also ends with it, for front ends that drop metadata
        self.transcript = CouncilTranscript()
        self.background = None

    async def _send_completion(self, result: CouncilResult, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            content = final_content(result, self.transcript, self.answer_format)
        except ApiError as error:
            response: Response = error.response()
        else:
            body = completion_body(
                self.completion_id,
                self.model,
                content + self._link_line(),
                self.transcript.reasoning,
                "stop",
                result.usage,
                council_metadata(result, self.link),
            )
            response = JSONResponse(body, headers={"x-council-id": self.council_id})
        await response(scope, receive, send)

    async def _start_stream(self, send: Send) -> None:
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [*SSE_HEADERS, (b"x-council-id", self.council_id.encode())],
            }
        )
        await self._event(send, chunk_body(self.completion_id, self.model, {"role": "assistant", "content": ""}))

    async def _end_stream(self, send: Send, result: CouncilResult, unsent: Deltas) -> None:
        """After the council's events: the rest of the answer, or the error event; then the
        finish chunk, usage when asked (`stream_options.include_usage`), and [DONE]."""
        try:
            content = final_content(result, self.transcript, self.answer_format)
        except ApiError as error:
            log.info("council %s ended without an answer: %s", self.council_id, error.message)
            await self._event(send, error.body())
            await send({"type": "http.response.body", "body": b"", "more_body": False})
            return
        rest = content if self.answer_format is not None else unsent.content + self._link_line()
        if rest:
            await self._event(send, chunk_body(self.completion_id, self.model, {"content": rest}))
        finish = chunk_body(
            self.completion_id, self.model, {}, finish_reason="stop", metadata=council_metadata(result, self.link)
        )
        await self._event(send, finish)
        if self.chat.include_usage:
            await self._event(send, usage_chunk(self.completion_id, self.model, result.usage))
        await self._event(send, "[DONE]")
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _deltas(self, send: Send, found: Deltas) -> None:
        if found.reasoning:
            await self._event(send, chunk_body(self.completion_id, self.model, {"reasoning_content": found.reasoning}))
        if found.content and self.answer_format is None:  # JSON goes out whole, once it fits
            await self._event(send, chunk_body(self.completion_id, self.model, {"content": found.content}))

    def _link_line(self) -> str:
        """The link to the council's page as the answer's last line (COUNCIL_API_LINK), after a
        blank line; nothing for a JSON answer, whose text must stay the object."""
        if not (self.link_in_answer and self.link) or self.answer_format is not None:
            return ""
        return "\n\n" + link_line(self.link)

    @staticmethod
    async def _event(send: Send, body: dict[str, Any] | str) -> None:
        data = body if isinstance(body, str) else json.dumps(body, ensure_ascii=False)
        await send({"type": "http.response.body", "body": f"data: {data}\n\n".encode(), "more_body": True})


class CouncilResponse(_Completion):
    """Follows one council to its client. When the client that started it goes away, streaming or
    not, the council stops at once: nobody would read the rest, and it would keep spending. (A
    client that repeated its Idempotency-Key follows without that power: the first one decides.)"""

    def __init__(
        self,
        service: CouncilService,
        run: CouncilRun,
        model: str,
        chat: ChatRequest,
        answer_format: AnswerFormat | None,
        *,
        starter: bool,
        on_hang_up: Callable[[], Awaitable[None]] | None = None,
    ):
        super().__init__(run.council_id, model, chat, answer_format)
        self.service, self.run, self.starter, self.on_hang_up = service, run, starter, on_hang_up
        self.link = service.settings.council_url(run.council_id)
        self.link_in_answer = service.settings.api.answer_link
        config = run.request.config
        self.transcript = CouncilTranscript(config.mode, config.members, config=config)

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
                    await (self._stream(send) if self.chat.stream else self._complete(scope, receive, send))
                    delivered = True
                group.cancel_scope.cancel()
        finally:
            if not delivered and not self.run.done and self.starter:
                with anyio.CancelScope(shield=True):
                    origin = self.run.request.origin
                    await self.service.stop(self.run.council_id, Actor(user_id=origin.user_id or LOCAL_USER))
                    if self.on_hang_up is not None:
                        await self.on_hang_up()
                log.info("client disconnected: stopped council %s", self.run.council_id)

    async def _follow(self, send: Send | None) -> tuple[CouncilResult, Deltas]:
        """The council's events into the transcript (streamed as they come when `send`), until
        its result; returns it with what `finish` added."""
        async for event in self.run.events():
            if isinstance(event, CouncilFinished):
                return event.result, self.transcript.finish(event.result)
            deltas = self.transcript.on_event(event)
            if send is not None:
                await self._deltas(send, deltas)
        raise RuntimeError("council events ended without a result")  # pragma: no cover

    async def _complete(self, scope: Scope, receive: Receive, send: Send) -> None:
        result, _ = await self._follow(None)
        await self._send_completion(result, scope, receive, send)

    async def _stream(self, send: Send) -> None:
        await self._start_stream(send)
        result, unsent = await self._follow(send)
        await self._end_stream(send, result, unsent)
