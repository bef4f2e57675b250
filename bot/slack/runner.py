"""Follow one council and keep Slack up to date, streamed where Slack allows it.

Streaming (`streaming="auto"`): one `chat.startStream` message in the thread shows the council
as a plan of tasks (a task per member, one for the reviews, one for the chairman), then the
chairman's text as it is written (`chat.appendStream`), and `chat.stopStream` ends it with the
ranking, the footer and the stage buttons under the answer. Appends are coalesced: at most one
call per `interval` carries every task change and the new text. Streamed messages cannot carry
buttons while they stream, so a small control message under it holds Stop / Synthesize now, and
is deleted once the streamed message holds the answer.

Fallback (streaming off, or `chat.startStream` refused: `unknown_method`, `feature_not_enabled`,
`not_allowed_token_type`, any error): the status message is edited with `chat.update` at most
once per `interval` (1.2 s by default; Slack allows roughly one message write per second per
channel), coalescing, then the answer is posted as a reply. A stream that breaks later (an append
refused for good) hands the display to the same status message, and the answer is posted.

Every write to a channel waits for the channel's turn (`bot.throttle.ChannelPacer`, shared by
all the councils in that channel): answers first, then first messages, then progress. A
`ratelimited` answer stops the whole channel for its Retry-After; a council's answer is retried
until Slack takes it (or refuses it for another reason, logged with the council id). A queued
council shows one small "queued, position N" message until it starts; that message then becomes
its status (or control) message.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.councils import LONG_ANSWER_CHARS, answer_file, is_long
from bot.progress import CouncilProgress
from bot.slack import render
from bot.slack.render import Chunk
from bot.throttle import SLACK_PACE, ChannelPacer, Priority, Throttle
from core.models import CouncilFinished, CouncilQueued, CouncilResult

if TYPE_CHECKING:
    from core.service import CouncilRun, CouncilService

log = logging.getLogger(__name__)

EDIT_INTERVAL_S = 1.2
STREAM_TEXT_MAX = LONG_ANSWER_CHARS  # of the chairman's text streamed; a longer answer is attached
STREAM_PIECE_MAX = 7000  # raw characters per markdown_text chunk (Slack: 12,000 after neutralising)
# chat.startStream errors meaning "not in this workspace/app/token": no use trying again soon.
STREAM_UNSUPPORTED = frozenset(
    {
        "unknown_method",
        "not_allowed_token_type",
        "feature_not_enabled",
        "missing_scope",
        "not_supported",
        "method_deprecated",
        "invalid_auth_type",
    }
)


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


async def deliver(
    client: AsyncWebClient, pacer: ChannelPacer, channel: str, method: str, priority: Priority, **args: Any
) -> Any:
    """One write to `channel` at the channel's pace. A 429 stops the channel for its Retry-After and
    the write is tried again, until Slack takes it; any other refusal raises (SlackApiError)."""
    while True:
        await pacer.turn(channel, priority)
        try:
            return await getattr(client, method)(channel=channel, **args)
        except SlackApiError as exc:
            delay = retry_after_of(exc)
            if delay is None:
                raise
            pacer.retry_after(channel, delay)
            log.info("%s to %s rate limited; trying again in %.1f s", method, channel, delay)


class _PacedWrites:
    """Writes to one message at the pace of a Throttle, each waiting for the channel's turn."""

    def __init__(
        self,
        client: AsyncWebClient,
        channel: str,
        write: Callable[[], Awaitable[bool]],
        interval: float,
        pacer: ChannelPacer | None = None,
    ):
        self.client = client
        self.channel = channel
        self.ratelimited = 0
        self.pacer = pacer or ChannelPacer(SLACK_PACE)
        self._throttle = Throttle(write, interval, before=lambda: self.pacer.turn(channel, Priority.PROGRESS))

    async def _send(self, method: str, failed: str, *, priority: Priority | None = None, **args: Any) -> bool | None:
        """True when Slack took it; False when rate limited (the channel and the next write wait
        out Retry-After); None when it failed otherwise, logged with the format `failed`. With
        `priority` the write first waits for the channel's turn (background writes had theirs)."""
        try:
            if priority is not None:
                await self.pacer.turn(self.channel, priority)
            await getattr(self.client, method)(channel=self.channel, **args)
        except SlackApiError as exc:
            delay = retry_after_of(exc)
            if delay is not None:
                self.ratelimited += 1
                self.pacer.retry_after(self.channel, delay)
                self._throttle.pause(delay)
                log.info("%s rate limited; next call in %.1f s", method, delay)
                return False
            log.warning(failed, exc.response.get("error") if exc.response else exc)
        except Exception as exc:  # a network hiccup must not end the council's display
            log.warning(failed, exc)
        else:
            self._throttle.pause()
            return True
        return None


class StatusUpdater(_PacedWrites):
    """Edits one message with the latest state, at most once per `interval`, coalescing."""

    def __init__(
        self,
        client: AsyncWebClient,
        channel: str,
        ts: str,
        interval: float = EDIT_INTERVAL_S,
        pacer: ChannelPacer | None = None,
    ):
        super().__init__(client, channel, self._edit_latest, interval, pacer)
        self.ts = ts
        self.edits = 0
        self._render: Callable[[], render.Message] | None = None
        self._throttle.pause()  # the message was just written

    def update(self, make: Callable[[], render.Message]) -> None:
        """Schedule an edit; `make()` is evaluated when the edit happens (the latest state wins)."""
        self._render = make
        self._throttle.request()

    async def _edit_latest(self) -> bool:
        assert self._render is not None
        return await self._edit(self._render())

    async def _edit(self, message: render.Message, priority: Priority | None = None) -> bool:
        """True when done (or failed for good), False when Slack asked us to slow down."""
        sent = await self._send(
            "chat_update", "could not update the status message: %s", priority=priority, ts=self.ts, **message
        )
        if sent:
            self.edits += 1
        elif sent is None:
            self._throttle.pause()
        return sent is not False

    async def finish_quietly(self) -> None:
        """Drop any pending edit (the message is about to go)."""
        await self._throttle.settle(cancel_running=True)

    async def finish(self, message: render.Message) -> None:
        """The last edit, after any pending one, still respecting the interval and rate limits
        (rate limited, it waits and tries again until Slack takes it)."""
        await self._throttle.settle()
        while True:
            await self._throttle.wait_turn()
            if await self._edit(message, Priority.ANSWER):
                return


def _cut(text: str, limit: int, final: bool) -> int:
    """How much of `text` to send now: at most `limit` characters, ending at whitespace so that
    separately neutralised pieces never join into a ping (`<` + `!here>`, `@he` + `re`). At the
    end (`final`) everything goes; a piece without any whitespace is cut where no `<` or `@` is near."""
    if final and len(text) <= limit:
        return len(text)
    window = text[:limit]
    for i in range(len(window), 0, -1):
        if window[i - 1].isspace():
            return i
    if not final and len(text) < 4 * limit:
        return 0  # wait for a space
    cut = len(window)
    while cut > 1 and (window[cut - 1] == "<" or "@" in window[max(0, cut - 10) : cut]):
        cut -= 1
    return cut if cut > 1 else len(window)


class ProgressStream(_PacedWrites):
    """One streamed message (chat.startStream/appendStream/stopStream): the council's tasks,
    then the chairman's text. Appends at most once per `interval`, coalescing; each append sends
    only what changed since the last one Slack accepted."""

    def __init__(
        self,
        client: AsyncWebClient,
        channel: str,
        thread_ts: str,
        *,
        team_id: str | None,
        user_id: str | None,
        interval: float = EDIT_INTERVAL_S,
        pacer: ChannelPacer | None = None,
    ):
        super().__init__(client, channel, self._append, interval, pacer)
        self.thread_ts = thread_ts
        self.team_id = team_id
        self.user_id = user_id
        self.ts: str | None = None
        self.calls = 0
        self.diverged = False  # the streamed text is no longer the start of the answer
        self.text_sent = 0  # characters of the chairman's (raw) text that Slack has
        self.streamed = ""  # that text
        self.attached = False  # the answer is longer than the stream: its file goes under it
        self._text_model: str | None = None
        self._tasks: dict[str, Chunk] = {}
        self._title: str | None = None
        self._progress: CouncilProgress | None = None

    @property
    def broken(self) -> bool:
        """An append failed for good: the status message takes over."""
        return self._throttle.closed

    async def start(self) -> None:
        """chat.startStream; raises SlackApiError (or anything else) when Slack will not stream here."""
        title = render.stream_title(None)
        args: dict[str, Any] = {
            "channel": self.channel,
            "thread_ts": self.thread_ts,
            "task_display_mode": "plan",
            "chunks": [{"type": "plan_update", "title": title}],
        }
        if self.team_id:
            args["recipient_team_id"] = self.team_id
        if self.user_id:
            args["recipient_user_id"] = self.user_id
        await self.pacer.turn(self.channel, Priority.START)
        response = await self.client.chat_startStream(**args)
        self.calls += 1
        ts = response.get("ts")
        if not ts:
            raise RuntimeError("chat.startStream answered without a ts")
        self.ts = str(ts)
        self._title = title
        self._throttle.pause()

    # ------------------------------------------------------------- appends

    def update(self, progress: CouncilProgress) -> None:
        """Schedule an append with the latest state (evaluated when the append happens)."""
        self._progress = progress
        self._throttle.request()

    async def _append(self) -> bool:
        """False when rate limited: the same changes (and more) after Retry-After."""
        chunks, commit = self._pending(final=False)
        if not chunks:
            return True
        if await self._call("chat_appendStream", chunks=chunks):
            commit()
            return True
        return False

    def _pending(
        self, *, final: bool, result: CouncilResult | None = None, text: str | None = None
    ) -> tuple[list[Chunk], Callable[[], None]]:
        """The chunks that bring Slack up to date, and what to remember once it accepted them."""
        progress = self._progress
        chunks: list[Chunk] = []
        title = render.stream_title(progress, result)
        if title != self._title:
            chunks.append({"type": "plan_update", "title": title})
        tasks = render.stream_tasks(progress, result) if progress is not None else []
        changed = [t for t in tasks if self._tasks.get(t["id"]) != t]
        chunks += changed
        sent = self.text_sent
        model = self._text_model
        if text is None and progress is not None and not self.diverged:
            if progress.chairman_model != model and progress.chairman_text:
                if sent:  # another synthesizer restarted the text: what is shown cannot be taken back
                    self.diverged = True
                else:
                    model = progress.chairman_model
            if not self.diverged and progress.chairman_model == model:
                text = progress.chairman_text
        piece = ""
        if text is not None and not self.diverged and sent < STREAM_TEXT_MAX:
            rest = text[sent:STREAM_TEXT_MAX]
            cut = _cut(rest, STREAM_PIECE_MAX, final)
            piece = rest[:cut]
            if piece:
                chunks.append({"type": "markdown_text", "text": render.stream_text(piece)})

        def commit() -> None:
            self._title = title
            for task in changed:
                self._tasks[task["id"]] = task
            self._text_model = model
            self.text_sent = sent + len(piece)
            self.streamed += piece

        return chunks, commit

    async def _call(self, method: str, priority: Priority | None = None, **args: Any) -> bool:
        """True when Slack took it, False when rate limited (try again later); `broken` when refused."""
        sent = await self._send(
            method,
            f"{method} failed (%s); showing progress in the status message instead",
            priority=priority,
            ts=self.ts,
            **args,
        )
        if sent:
            self.calls += 1
        elif sent is None:
            self._throttle.close()
        return bool(sent)

    # ------------------------------------------------------------- the end

    async def finish(self, result: CouncilResult) -> bool:
        """Send the last tasks and the rest of the answer, then chat.stopStream.

        True when the streamed message now holds the answer (with the ranking, footer and stage
        buttons under it; `attached` says a long answer's file is still to upload); False when
        the caller must post the result as a reply (the stream broke, a fallback synthesizer
        restarted the text, or there is no answer)."""
        await self._throttle.settle()  # a sleeping append is dropped: this sends everything
        synthesis = result.synthesis
        holds = (
            synthesis is not None and not self.broken and not self.diverged and synthesis.text.startswith(self.streamed)
        )
        text = synthesis.text if holds and synthesis is not None else None
        while text is not None and not self.broken and len(text[self.text_sent : STREAM_TEXT_MAX]) > STREAM_PIECE_MAX:
            chunks, commit = self._pending(final=True, text=text)  # a long rest, piece by piece
            await self._throttle.wait_turn()
            if await self._call("chat_appendStream", Priority.ANSWER, chunks=chunks):
                commit()
        if self.broken:
            await self.stop_quietly(result)
            return False
        chunks, commit = self._pending(final=True, result=result, text=text)
        if text is not None:
            self.attached = len(text) > STREAM_TEXT_MAX or is_long(result)
            if self.attached:
                chunks.append({"type": "markdown_text", "text": "\n\n…"})
        elif self.text_sent:
            chunks.append({"type": "markdown_text", "text": "\n\n_The final answer is posted below._"})
        args: dict[str, Any] = {"chunks": chunks} if chunks else {}
        if holds:
            args["blocks"] = render.stream_final_blocks(result, attached=self.attached)
        while True:  # rate limited: wait and try again; refused for good: `broken`
            await self._throttle.wait_turn()
            if await self._call("chat_stopStream", Priority.ANSWER, **args):
                commit()
                return holds
            if self.broken:
                return False

    async def stop_quietly(self, result: CouncilResult) -> None:
        """Close a broken stream if Slack still lets us (one try, errors ignored)."""
        if self.ts is None:
            return
        try:
            await self.pacer.turn(self.channel, Priority.PROGRESS)
            await self.client.chat_stopStream(
                channel=self.channel,
                ts=self.ts,
                chunks=render.stream_tasks(self._progress, result) if self._progress is not None else None,
            )
            self.calls += 1
        except Exception as exc:
            log.info("could not stop the broken stream: %s", exc)


class CouncilFollower:
    """Shows a running council in its thread (streamed, or a status message), then the result."""

    def __init__(
        self,
        service: CouncilService,
        client: AsyncWebClient,
        run: CouncilRun,
        channel: str,
        thread_ts: str,
        *,
        interval: float = EDIT_INTERVAL_S,
        streaming: bool = False,
        on_stream_refused: Callable[[str], None] | None = None,
        pacer: ChannelPacer | None = None,
    ):
        self.service = service
        self.client = client
        self.run = run
        self.channel = channel
        self.thread_ts = thread_ts
        self.interval = interval
        self.streaming = streaming
        self.on_stream_refused = on_stream_refused
        self.pacer = pacer or ChannelPacer(SLACK_PACE)
        self.progress = CouncilProgress(run.council_id)
        self.updater: StatusUpdater | None = None
        self.stream: ProgressStream | None = None

    async def open_stream(self) -> ProgressStream | None:
        """Start the streamed message, or None: then this council uses the status message."""
        origin = self.run.request.origin
        stream = ProgressStream(
            self.client,
            self.channel,
            self.thread_ts,
            team_id=origin.workspace_id,
            user_id=origin.user_id,
            interval=self.interval,
            pacer=self.pacer,
        )
        try:
            await stream.start()
            return stream
        except SlackApiError as exc:
            code = str(exc.response.get("error", "")) if exc.response is not None else ""
            log.info(
                "chat.startStream refused (%s): council %s shows progress with chat.update",
                code or exc,
                self.run.council_id,
            )
            if self.on_stream_refused is not None:
                self.on_stream_refused(code)
        except Exception as exc:
            log.warning(
                "chat.startStream failed (%s): council %s shows progress with chat.update", exc, self.run.council_id
            )
        return None

    async def _post_status(self, message: render.Message) -> None:
        """The council's one status message (its queue place first, when it waits)."""
        try:
            posted = await deliver(
                self.client,
                self.pacer,
                self.channel,
                "chat_postMessage",
                Priority.START,
                thread_ts=self.thread_ts,
                **message,
            )
            self.updater = StatusUpdater(self.client, self.channel, posted["ts"], self.interval, self.pacer)
        except Exception as exc:  # without a status message the council still answers
            log.warning("could not post the status message of %s: %s", self.run.council_id, exc)

    async def _begin(self) -> None:
        """The council has started: open the stream (where Slack streams) and show the status
        message, turning the queue-place message into it when there is one."""
        cid = self.run.council_id
        if self.streaming:
            self.stream = await self.open_stream()
        # A queued council's message was posted before the stream: it sits above it.
        note = render.STREAM_CONTROL_NOTE if self.updater is None else render.STREAM_CONTROL_NOTE_BELOW
        first = (
            render.status_message(cid, None, note=note) if self.stream is not None else render.status_message(cid, None)
        )
        if self.updater is None:
            await self._post_status(first)
        elif self.stream is not None:
            self.updater.update(lambda: first)

    async def follow(self) -> CouncilResult:
        run, cid = self.run, self.run.council_id
        started = False
        if run.queued_position is None:
            await self._begin()
            started = True
        else:  # one small message until it starts: queued councils must not flood the channel
            self.progress.queued_position = run.queued_position
            await self._post_status(render.status_message(cid, self.progress))

        def current() -> render.Message:
            return render.status_message(cid, self.progress)

        async for event in run.events():
            self.progress.apply(event)
            if isinstance(event, CouncilFinished):
                break
            if isinstance(event, CouncilQueued):
                continue
            if not started:
                started = True
                await self._begin()
            stream = self.stream
            if stream is not None and not stream.broken:
                stream.update(self.progress)
            elif self.updater is not None:
                self.updater.update(current)  # no stream, or it broke: the status message shows it all
        result = self.progress.result or await run.wait()
        if not await self._claim_delivery():
            await self._leave_answer_to_another(result)
            return result
        stream = self.stream
        in_stream = False
        if stream is not None:
            try:
                in_stream = await stream.finish(result)
            except Exception as exc:
                log.warning("could not finish the stream of council %s: %s", cid, exc)
        try:
            if in_stream:
                if stream is not None and stream.attached:
                    await self.upload_answer(result)
            else:
                await self.post_result(result)
            final = render.final_status(result)
        except Exception as exc:  # Slack refused it for good; the answer stays in the database
            code = exc.response.get("error") if isinstance(exc, SlackApiError) and exc.response else exc
            log.error("could not post the result of council %s (%s); it is stored, see export", cid, code)
            final = f":warning: The answer could not be posted here; get it with `/council export {cid}`."
        if self.updater is not None:
            if in_stream and await self.delete_status():
                return result
            await self.updater.finish(render.status_message(cid, None, running=False, final=final))
        return result

    async def _claim_delivery(self) -> bool:
        """Whether this follower posts the answer: one claim per council across every process
        (a council resumed elsewhere, a redelivered job). A database that cannot say: post."""
        try:
            return await self.service.claim_delivery(self.run.council_id)
        except Exception as exc:
            log.warning("could not claim the delivery of council %s (%s); posting it", self.run.council_id, exc)
            return True

    async def _leave_answer_to_another(self, result: CouncilResult) -> None:
        log.info("council %s is answered by another process; not posting it again", self.run.council_id)
        if self.stream is not None:
            await self.stream.stop_quietly(result)
        if self.updater is not None:
            await self.updater.finish_quietly()

    async def delete_status(self) -> bool:
        """The control message has done its job once the streamed message holds the answer."""
        assert self.updater is not None
        await self.updater.finish_quietly()
        try:
            await deliver(self.client, self.pacer, self.channel, "chat_delete", Priority.ANSWER, ts=self.updater.ts)
            return True
        except Exception as exc:
            log.info("could not delete the control message: %s", exc)
            return False

    async def post_result(self, result: CouncilResult) -> None:
        for message in render.result_messages(result):
            await deliver(
                self.client,
                self.pacer,
                self.channel,
                "chat_postMessage",
                Priority.ANSWER,
                thread_ts=self.thread_ts,
                unfurl_links=False,
                unfurl_media=False,
                **message,
            )
        if is_long(result):
            await self.upload_answer(result)

    async def upload_answer(self, result: CouncilResult) -> None:
        """The full text of a long answer, as a Markdown file in the thread."""
        filename, title, content = answer_file(result)
        await self.pacer.turn(self.channel, Priority.ANSWER)
        await self.client.files_upload_v2(
            channel=self.channel,
            thread_ts=self.thread_ts,
            filename=filename,
            title=title,
            content=content,
            initial_comment=f"Full answer of council `{result.council_id}`",
        )
