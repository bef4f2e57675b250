"""Follow one council and keep Slack up to date: a throttled status message, then the answer.

The status message is edited with `chat.update` at most once per `interval` (1.2 s by default;
Slack allows roughly one message write per second per channel), coalescing: whatever happened in
between is shown by the next edit. A `ratelimited` answer postpones the next edit by its
Retry-After (the Web API client itself also retries 429s after Retry-After).
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import TYPE_CHECKING, Callable

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.progress import CouncilProgress
from bot.slack import render
from core.models import CouncilFinished, CouncilResult

if TYPE_CHECKING:
    from core.service import CouncilRun, CouncilService

log = logging.getLogger(__name__)

EDIT_INTERVAL_S = 1.2


def retry_after_of(exc: SlackApiError, default: float = 1.0) -> float | None:
    """Seconds to wait when Slack said `ratelimited`, else None."""
    response = exc.response
    if response is None or (response.status_code != 429 and response.get("error") != "ratelimited"):
        return None
    headers = {k.lower(): v for k, v in (response.headers or {}).items()}
    value = headers.get("retry-after")
    if isinstance(value, list):
        value = value[0] if value else None
    try:
        return max(0.0, float(value)) if value is not None else default
    except ValueError:
        return default


class StatusUpdater:
    """Edits one message with the latest state, at most once per `interval`, coalescing."""

    def __init__(self, client: AsyncWebClient, channel: str, ts: str, interval: float = EDIT_INTERVAL_S):
        self.client = client
        self.channel = channel
        self.ts = ts
        self.interval = interval
        self.edits = 0
        self.ratelimited = 0
        self._not_before = time.monotonic() + interval  # the message was just written
        self._render: Callable[[], render.Message] | None = None
        self._task: asyncio.Task[None] | None = None
        self._sleeping = False

    def update(self, make: Callable[[], render.Message]) -> None:
        """Schedule an edit; `make()` is evaluated when the edit happens (the latest state wins)."""
        self._render = make
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._run())

    async def _run(self) -> None:
        while self._render is not None:
            wait = self._not_before - time.monotonic()
            if wait > 0:
                self._sleeping = True
                try:
                    await asyncio.sleep(wait)
                finally:
                    self._sleeping = False
            make, self._render = self._render, None
            if make is not None and not await self._edit(make()):
                self._render = self._render or make  # rate limited: try again after Retry-After

    async def _edit(self, message: render.Message) -> bool:
        """True when done (or failed for good), False when Slack asked us to slow down."""
        try:
            await self.client.chat_update(channel=self.channel, ts=self.ts, **message)
            self.edits += 1
            self._not_before = time.monotonic() + self.interval
            return True
        except SlackApiError as exc:
            delay = retry_after_of(exc)
            if delay is not None:
                self.ratelimited += 1
                self._not_before = time.monotonic() + max(delay, self.interval)
                log.info("status update rate limited; next edit in %.1f s", delay)
                return False
            log.warning("could not update the status message: %s", exc.response.get("error") if exc.response else exc)
        except Exception as exc:  # a network hiccup must not end the council's display
            log.warning("could not update the status message: %s", exc)
        self._not_before = time.monotonic() + self.interval
        return True

    async def finish(self, message: render.Message, attempts: int = 3) -> None:
        """The last edit, after any pending one, still respecting the interval and rate limits."""
        self._render = None
        if self._task is not None and not self._task.done():
            if self._sleeping:
                self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass
        for _ in range(attempts):
            wait = self._not_before - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            if await self._edit(message):
                return


class CouncilFollower:
    """Posts the status message of a running council in its thread, then the result."""

    def __init__(
        self,
        service: "CouncilService",
        client: AsyncWebClient,
        run: "CouncilRun",
        channel: str,
        thread_ts: str,
        *,
        interval: float = EDIT_INTERVAL_S,
    ):
        self.service = service
        self.client = client
        self.run = run
        self.channel = channel
        self.thread_ts = thread_ts
        self.interval = interval
        self.progress = CouncilProgress(run.council_id)
        self.updater: StatusUpdater | None = None

    async def follow(self) -> CouncilResult:
        run, cid = self.run, self.run.council_id
        status_ts: str | None = None
        try:
            posted = await self.client.chat_postMessage(
                channel=self.channel, thread_ts=self.thread_ts, **render.status_message(cid, None)
            )
            status_ts = posted["ts"]
            self.updater = StatusUpdater(self.client, self.channel, status_ts, self.interval)
        except Exception as exc:  # without a status message the council still answers
            log.warning("could not post the status message of %s: %s", cid, exc)

        def current() -> render.Message:
            return render.status_message(cid, self.progress)

        async for event in run.events():
            self.progress.apply(event)
            if isinstance(event, CouncilFinished):
                break
            if self.updater is not None:
                self.updater.update(current)
        result = self.progress.result or await run.wait()
        try:
            await self.post_result(result)
            final = render.final_status(result)
        except Exception:
            log.exception("could not post the result of council %s", cid)
            final = f":warning: The answer could not be posted here; get it with `/council export {cid}`."
        if self.updater is not None:
            await self.updater.finish(render.status_message(cid, None, running=False, final=final))
        return result

    async def post_result(self, result: CouncilResult) -> None:
        for message in render.result_messages(result):
            await self.client.chat_postMessage(
                channel=self.channel, thread_ts=self.thread_ts, unfurl_links=False, unfurl_media=False, **message
            )
        if render.is_long(result):
            filename, title, content = render.answer_file(result)
            await self.client.files_upload_v2(
                channel=self.channel,
                thread_ts=self.thread_ts,
                filename=filename,
                title=title,
                content=content,
                initial_comment=f"Full answer of council `{result.council_id}`",
            )
