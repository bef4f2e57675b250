"""A running council, live: Server-Sent Events at `/c/<id>/events`.

Each event is the council's own event (the ones the chat adapters follow: `CouncilRun.events()`),
as JSON, numbered from 1 in the council's order: a page opened late gets the replay and joins the
council where it is, and a dropped connection resumes after `Last-Event-ID`. Events that carry
model text also carry it as sanitized HTML (`html`), rendered here so that the page's script never
renders Markdown or trusts a model's text. The stream ends with the `finished` event.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

from markupsafe import Markup, escape
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from bot.web.context import Pages, ballot
from bot.web.render import RENDERER
from core.models import (
    ChairmanFinished,
    CouncilEvent,
    MemberAnswer,
    MemberFailed,
    MemberFinished,
    MemberWaiting,
    ReviewFinished,
    RoundFinished,
)
from core.models.share_links import SHARE_PARAM
from core.models.voice import WAITING_FOR_MEMORY, review_title, round_line
from core.service import CouncilRun

KEEPALIVE_S = 15.0  # a comment line this often keeps proxies from closing a quiet stream
RETRY_MS = 2000


async def event_html(event: CouncilEvent) -> Markup | None:
    """The fragment the live page inserts for an event that carries model text (rendered off the
    event loop, within its budget: bot/web/render.py)."""
    if isinstance(event, MemberFinished | MemberFailed):
        return await _answer(event.answer)
    if isinstance(event, ReviewFinished):
        review = event.review
        body = (
            await RENDERER.render(review.text)
            if review.error is None
            else Markup(f'<p class="note error">Failed: {escape(review.error.message)}</p>')
        )
        return Markup(
            f'<section class="panel"><h3>{escape(review_title(review))}</h3>'
            f'<div class="md evaluation">{body}</div>'
            f'<p class="ballot"><strong>Extracted ballot:</strong> {escape(ballot(review))}</p></section>'
        )
    if isinstance(event, ChairmanFinished):
        return Markup(f'<div class="md">{await RENDERER.render(event.synthesis.text)}</div>')
    if isinstance(event, RoundFinished):  # refine mode: who moved toward whom, one line
        return Markup(f'<p class="meta round">{escape(round_line(event.round))}</p>')
    return None


async def _answer(answer: MemberAnswer) -> Markup:
    if answer.error is not None:
        body = Markup(f'<p class="note error">Failed: {escape(answer.error.message)}</p>')
    else:
        body = Markup(f'<div class="md">{await RENDERER.render(answer.text)}</div>')
    return Markup(f'<section class="panel"><h3>{escape(answer.model)}</h3>{body}</section>')


async def sse(index: int, event: CouncilEvent) -> str:
    data: dict[str, Any] = event.model_dump(mode="json")
    if data.get("kind") == "finished":  # the page reloads to the stored council: no need to send it all
        data = {"kind": "finished", "council_id": event.council_id}
    html = await event_html(event)
    if html is not None:
        data["html"] = str(html)
    if isinstance(event, MemberWaiting):
        data["note"] = WAITING_FOR_MEMORY
    return f"id: {index}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"


def _last_id(request: Request) -> int:
    raw = request.headers.get("last-event-id") or request.query_params.get("last_event_id") or "0"
    return int(raw) if raw.isdigit() else 0


async def _stream(run: CouncilRun, after: int) -> AsyncIterator[str]:
    queue: asyncio.Queue[tuple[int, CouncilEvent] | None] = asyncio.Queue()

    async def pump() -> None:
        async for numbered in run.numbered(after):  # the run's own numbers: they survive a resume
            queue.put_nowait(numbered)
        queue.put_nowait(None)

    task = asyncio.create_task(pump())
    try:
        yield f"retry: {RETRY_MS}\n\n"
        while True:
            try:
                item = await asyncio.wait_for(queue.get(), KEEPALIVE_S)
            except TimeoutError:
                yield ": keep-alive\n\n"
                continue
            if item is None:
                return
            yield await sse(*item)
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


class LiveEvents:
    def __init__(self, pages: Pages):
        self.pages = pages

    async def events(self, request: Request) -> Response:
        council_id, share = request.path_params["council_id"], request.query_params.get(SHARE_PARAM)
        browse = self.pages.service.browse
        if share is not None:  # the page a share link opened follows the same one council
            run = await browse.following(None, council_id, share)
        else:
            run = await browse.following(self.pages.viewer(request), council_id)
        if run is None:
            # Stored long ago, or run by another process: nothing to follow here (204 stops EventSource).
            return Response(status_code=204)
        return StreamingResponse(
            _stream(run, _last_id(request)),
            media_type="text/event-stream",
            headers={"cache-control": "no-store", "x-accel-buffering": "no"},
        )
