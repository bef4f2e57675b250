"""Slack's live display of a council: one streamed message (chat.startStream/appendStream/stopStream).

The message shows the council as a plan of tasks (a task per member, one for the reviews, one
for the chairman), then the chairman's text as it is written (a long answer cut as on every
surface, bot/long_answer.py), and `chat.stopStream` ends it
with the ranking, the footer and the stage buttons under the answer. Appends are coalesced: at
most one call per `interval` carries every task change and the new text. Streamed messages
cannot carry buttons while they stream, so the runner's status message (bot/following.py)
becomes a small control message holding Stop / Synthesize now, deleted once the streamed
message holds the answer. A stream that breaks (an append refused for good) hands the display
to that status message, and the answer is posted.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.councils import is_long
from bot.long_answer import cut_answer, live_extent
from bot.progress import CouncilProgress
from bot.slack import stream_render
from bot.slack.errors import refusal, retry_after_of
from bot.slack.stream_render import Chunk, opening_of_progress
from bot.throttle import SLACK_PACE, ChannelPacer, Priority, Throttle
from core.models import CouncilResult
from core.models.voice import Opening, cut_note

log = logging.getLogger(__name__)

EDIT_INTERVAL_S = 1.2
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


def shown_text(text: str, sent: int, *, final: bool) -> str:
    """What the streamed message is to show of the answer `text` (`sent` of it already shown):
    while it is written, what no later cut can fall before (`live_extent`); at the end, the
    answer as every surface cuts it (`cut_answer`)."""
    return cut_answer(text, at_least=sent) if final else text[: max(sent, live_extent(text))]


def _start_args(
    channel: str, thread_ts: str, title: str, *, team_id: str | None, user_id: str | None
) -> dict[str, Any]:
    args: dict[str, Any] = {
        "channel": channel,
        "thread_ts": thread_ts,
        "task_display_mode": "plan",
        "chunks": [{"type": "plan_update", "title": title}],
    }
    if team_id:
        args["recipient_team_id"] = team_id
    if user_id:
        args["recipient_user_id"] = user_id
    return args


class StreamedContent:
    """What the streamed message shows, as far as Slack accepted it: the plan's title, its tasks,
    what went wrong (said before the answer's first word) and the chairman's text so far; and the
    chunks that bring it up to date."""

    def __init__(self) -> None:
        self.title: str | None = None
        self.tasks: dict[str, Chunk] = {}
        self.text_model: str | None = None
        self.text_sent = 0  # characters of the chairman's (raw) text that Slack has
        self.streamed = ""  # that text
        self.diverged = False  # the streamed text is no longer the start of the answer
        self.opened: Opening | None = None  # what the text said first (once some text is shown)

    def said_first(self, result: CouncilResult) -> bool:
        """The streamed text opened with everything the result must say before its answer (or
        none of it is shown yet: its opening comes from the result)."""
        return self.opened is None or self.opened.covers(Opening.of_result(result))

    def pending(
        self,
        progress: CouncilProgress | None,
        *,
        final: bool,
        result: CouncilResult | None = None,
        text: str | None = None,
    ) -> tuple[list[Chunk], Callable[[], None]]:
        """The chunks that bring Slack up to date, and what to remember once it accepted them."""
        chunks: list[Chunk] = []
        title = stream_render.stream_title(progress, result)
        if title != self.title:
            chunks.append({"type": "plan_update", "title": title})
        tasks = stream_render.stream_tasks(progress, result) if progress is not None else []
        changed = [t for t in tasks if self.tasks.get(t["id"]) != t]
        chunks += changed
        sent = self.text_sent
        model, text = self._text_to_stream(progress, text)
        piece = ""
        opened = self.opened
        if text is not None and not self.diverged:
            rest = shown_text(text, sent, final=final)[sent:]
            piece = rest[: _cut(rest, STREAM_PIECE_MAX, final)]
            if piece and opened is None:  # the answer's first words: what went wrong comes before them
                opened = Opening.of_result(result) if result is not None else opening_of_progress(progress)
                if (said := stream_render.opening_text(opened)) is not None:
                    chunks.append({"type": "markdown_text", "text": said})
            if piece:
                chunks.append({"type": "markdown_text", "text": stream_render.stream_text(piece)})

        def commit() -> None:
            self.opened = opened
            self.title = title
            for task in changed:
                self.tasks[task["id"]] = task
            self.text_model = model
            self.text_sent = sent + len(piece)
            self.streamed += piece

        return chunks, commit

    def closing(
        self, progress: CouncilProgress | None, result: CouncilResult, text: str | None
    ) -> tuple[list[Chunk], Callable[[], None], bool]:
        """The chunks before chat.stopStream, what to remember, and whether the answer's file goes
        under the message (`text`: the answer, when the streamed message holds it)."""
        chunks, commit = self.pending(progress, final=True, result=result, text=text)
        attached = False
        if text is not None:
            attached = is_long(result)
            if attached:  # after the shown blocks, outside any of them (bot/long_answer.py)
                chunks.append({"type": "markdown_text", "text": f"\n\n_{cut_note(text)}_"})
        elif self.text_sent:
            chunks.append({"type": "markdown_text", "text": "\n\n_The final answer is posted below._"})
        return chunks, commit, attached

    def _text_to_stream(self, progress: CouncilProgress | None, text: str | None) -> tuple[str | None, str | None]:
        """(whose text is streamed, the text to stream): `text` when given, else the chairman's
        text so far, as long as the synthesizer did not change once some of it was shown."""
        model = self.text_model
        if text is None and progress is not None and not self.diverged:
            if progress.chairman_model != model and progress.chairman_text:
                if self.text_sent:  # another synthesizer restarted the text: what is shown cannot be taken back
                    self.diverged = True
                else:
                    model = progress.chairman_model
            if not self.diverged and progress.chairman_model == model:
                text = progress.chairman_text
        return model, text


class ProgressStream:
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
        link: str | None = None,
    ):
        self.client = client
        self.link = link  # the council's page in the browser app (COUNCIL_PUBLIC_URL), under the answer
        self.channel = channel
        self.ratelimited = 0
        self.pacer = pacer or ChannelPacer(SLACK_PACE)
        self._throttle = Throttle(self._append, interval, before=lambda: self.pacer.turn(channel, Priority.PROGRESS))
        self.thread_ts = thread_ts
        self.team_id = team_id
        self.user_id = user_id
        self.ts: str | None = None
        self.calls = 0
        self.shown = StreamedContent()
        self.attached = False  # the answer is longer than the stream: its file goes under it
        self._progress: CouncilProgress | None = None

    @property
    def broken(self) -> bool:
        """An append failed for good: the status message takes over."""
        return self._throttle.closed

    async def start(self) -> None:
        """chat.startStream; raises SlackApiError (or anything else) when Slack will not stream here."""
        title = stream_render.stream_title(None)
        await self.pacer.turn(self.channel, Priority.START)
        response = await self.client.chat_startStream(
            **_start_args(self.channel, self.thread_ts, title, team_id=self.team_id, user_id=self.user_id)
        )
        self.calls += 1
        ts = response.get("ts")
        if not ts:
            raise RuntimeError("chat.startStream answered without a ts")
        self.ts = str(ts)
        self.shown.title = title
        self._throttle.pause()

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
            log.warning(failed, refusal(exc))
        except Exception as exc:  # a network hiccup must not end the council's display
            log.warning(failed, exc)
        else:
            self._throttle.pause()
            return True
        return None

    def note(self, status_above: bool) -> str:
        """The control message's line: where the streamed progress is."""
        return stream_render.STREAM_CONTROL_NOTE_BELOW if status_above else stream_render.STREAM_CONTROL_NOTE

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
        return self.shown.pending(self._progress, final=final, result=result, text=text)

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
            synthesis is not None
            and not self.broken
            and not self.shown.diverged
            and synthesis.text.startswith(self.shown.streamed)
            and self.shown.said_first(result)  # else the posted answer says it first
        )
        text = synthesis.text if holds and synthesis is not None else None
        if text is not None:
            await self._append_long_rest(text)
        if self.broken:
            await self._stop_quietly(result)
            return False
        chunks, commit, self.attached = self.shown.closing(self._progress, result, text)
        args: dict[str, Any] = {"chunks": chunks} if chunks else {}
        if holds:
            args["blocks"] = stream_render.stream_final_blocks(
                result, attached=self.attached, said_first=self.shown.opened, link=self.link
            )
        while True:  # rate limited: wait and try again; refused for good: `broken`
            await self._throttle.wait_turn()
            if await self._call("chat_stopStream", Priority.ANSWER, **args):
                commit()
                return holds
            if self.broken:
                return False

    async def _append_long_rest(self, text: str) -> None:
        """What is left of the answer, piece by piece, while more than one piece is left."""
        while (
            not self.broken
            and len(shown_text(text, self.shown.text_sent, final=True)) - self.shown.text_sent > STREAM_PIECE_MAX
        ):
            chunks, commit = self._pending(final=True, text=text)
            await self._throttle.wait_turn()
            if await self._call("chat_appendStream", Priority.ANSWER, chunks=chunks):
                commit()

    async def _stop_quietly(self, result: CouncilResult) -> None:
        """Close a broken stream if Slack still lets us (one try, errors ignored)."""
        if self.ts is None:
            return
        try:
            await self.pacer.turn(self.channel, Priority.PROGRESS)
            await self.client.chat_stopStream(
                channel=self.channel,
                ts=self.ts,
                chunks=stream_render.stream_tasks(self._progress, result) if self._progress is not None else None,
            )
            self.calls += 1
        except Exception as exc:
            log.info("could not stop the broken stream: %s", exc)
