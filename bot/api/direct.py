"""A member (or the chairman) answering alone through the API: the model's own completion, in the
OpenAI shapes, streamed or not (the service's side: core/direct.py)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from starlette.responses import JSONResponse, Response, StreamingResponse

from bot.api.openai_types import ChatRequest, api_error_for, chunk_body, completion_body, usage_chunk
from core.errors import CouncilError
from core.models import Origin, new_council_id
from core.service import CouncilService


async def direct_answer(service: CouncilService, origin: Origin, chat: ChatRequest) -> Response:
    """A member (or the chairman) answering alone: the model's own completion, nothing else."""
    completion_id = f"chatcmpl-{new_council_id()}"
    temperature, max_tokens = chat.temperature, chat.max_completion_tokens or chat.max_tokens
    messages = chat.chat_messages()
    try:
        if not chat.stream:
            completion = await service.direct.complete(
                origin, chat.model, messages, temperature=temperature, max_tokens=max_tokens
            )
            body = completion_body(
                completion_id,
                chat.model,
                completion.text,
                "",
                completion.finish_reason or "stop",
                completion.usage,
            )
            return JSONResponse(body)
        pieces = await service.direct.stream(
            origin, chat.model, messages, temperature=temperature, max_tokens=max_tokens
        )
    except CouncilError as exc:
        raise api_error_for(exc) from None

    async def events() -> AsyncIterator[str]:
        yield _sse(chunk_body(completion_id, chat.model, {"role": "assistant", "content": ""}))
        try:
            async for piece in pieces:
                if isinstance(piece, str):
                    yield _sse(chunk_body(completion_id, chat.model, {"content": piece}))
                else:
                    yield _sse(chunk_body(completion_id, chat.model, {}, finish_reason=piece.finish_reason or "stop"))
                    if chat.include_usage:
                        yield _sse(usage_chunk(completion_id, chat.model, piece.usage))
        except CouncilError as exc:  # the model failed mid-way: OpenAI's in-stream error shape
            error = api_error_for(exc)
            yield _sse({"error": {"message": error.message, "type": error.type, "code": error.code, "param": None}})
        yield _sse("[DONE]")

    return StreamingResponse(
        events(), media_type="text/event-stream", headers={"cache-control": "no-cache", "x-accel-buffering": "no"}
    )


def _sse(body: dict[str, Any] | str) -> str:
    data = body if isinstance(body, str) else json.dumps(body, ensure_ascii=False)
    return f"data: {data}\n\n"
