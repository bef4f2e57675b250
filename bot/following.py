"""Follow one council and show it in a chat thread: the one runner both chat adapters use.

The runner owns what is the same on every platform: the status message (posted, edited at most
once per `interval` with the latest progress, coalescing, finished with the outcome), the order
of the writes, the answer and a long answer's file, and what happens when a write is refused.
Each platform supplies a small `Surface` (post, edit, delete, attach, render, and how it says
"rate limited"); Slack's can also open a live display (its streamed message).

Every write waits for its channel's turn (`bot.throttle.ChannelPacer`, shared by every council
in the channel): answers first, then first messages, then progress edits. A rate-limited write
stops the whole channel for its Retry-After and goes again until the platform takes it; any
other refusal of the answer is logged with the council id and the status says where to get it.

Started from stored data alone: a `Destination` (serialisable: platform, channel, thread, the
status message once posted) and a council id are all `resume` needs, with a surface built from
settings (`bot.slack.surface.slack_surface`, `bot.discord.surface.discord_surface`), so a
process other than the one that received the question can follow the council and post into
the original thread.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from bot.councils import AnswerFile, answer_file, is_long
from bot.progress import CouncilProgress
from bot.throttle import ChannelPacer, Priority, Throttle
from core.models import (
    CouncilEvent,
    CouncilFinished,
    CouncilQueued,
    CouncilRequest,
    CouncilResult,
    Destination,
    MessageRole,
)

if TYPE_CHECKING:
    from core.messages import CouncilMessages
    from core.runs import CouncilRun
    from core.service import CouncilService

__all__ = ["CouncilFollower", "Destination", "Surface", "deliver", "deliver_durable", "resume", "running_worker"]

log = logging.getLogger(__name__)
T = TypeVar("T")
Message = Any  # a platform's message: Slack {"text", "blocks"}, Discord send/edit keyword arguments


class Followable(Protocol):
    """A council to follow: `core.runs.CouncilRun`, or anything that replays its events."""

    @property
    def council_id(self) -> str: ...

    request: CouncilRequest
    queued_position: int | None

    def events(self) -> AsyncIterator[CouncilEvent]: ...

    async def wait(self) -> CouncilResult: ...


@dataclass(frozen=True)
class StatusView:
    """What the status message shows: progress (None: convening), or a fixed `note` (the control
    message beside a live display), or the `final` line (then without Stop / Synthesize now)."""

    request: CouncilRequest
    progress: CouncilProgress | None = None
    final: str | None = None
    note: str | None = None

    @property
    def running(self) -> bool:
        return self.final is None


class Renderer(Protocol):
    """A platform's drawing of the council: its render module (bot/slack/render.py,
    bot/discord/render.py) is one."""

    def status_view(self, view: StatusView) -> Message: ...

    def result_messages(self, result: CouncilResult) -> list[Message]:
        """The answer as messages, the stage buttons under the last (a long answer cut and
        saying so: the runner attaches its file)."""
        ...

    def final_status(self, result: CouncilResult) -> str: ...

    def not_posted(self, council_id: str) -> str:
        """The status line when the answer could not be posted (it is stored: export it)."""
        ...

    def resumed_note(self) -> Message:
        """Said in the thread when another process resumes a council (its first one stopped)."""
        ...


class LiveDisplay(Protocol):
    """A platform's richer progress display (Slack's streamed message); the status message is
    then a small control message beside it, deleted once the display holds the answer."""

    @property
    def broken(self) -> bool: ...

    @property
    def channel(self) -> str:
        """Where its message is."""
        ...

    @property
    def ts(self) -> str | None:
        """Its message's id once started (Slack's ts)."""
        ...

    def note(self, status_above: bool) -> str: ...

    def update(self, progress: CouncilProgress) -> None: ...

    async def finish(self, result: CouncilResult) -> bool:
        """True when the display now holds the answer (nothing to post but a long answer's file)."""
        ...


class Surface(Protocol):
    """One platform's writes, each a single try: the runner paces and retries them."""

    pacer: ChannelPacer
    interval: float  # between two edits of a status message

    @property
    def render(self) -> Renderer: ...

    def retry_after(self, exc: Exception) -> float | None:
        """Seconds the platform asked us to wait when `exc` says rate limited, else None."""
        ...

    async def post(self, destination: Destination, message: Message) -> str:
        """Post into the destination's thread; the new message's id."""
        ...

    async def edit(self, channel_id: str, message_id: str, message: Message) -> None: ...

    async def delete(self, channel_id: str, message_id: str) -> None: ...

    async def attach(self, destination: Destination, file: AnswerFile, caption: str) -> None:
        """A file (a long answer's full text) into the destination's thread, with `caption`."""
        ...

    async def open_live(self, destination: Destination, request: CouncilRequest) -> LiveDisplay | None:
        """The live display for this council, or None (the status message shows progress)."""
        ...


async def deliver(surface: Surface, channel: str, priority: Priority, write: Callable[[], Awaitable[T]]) -> T:
    """One write to `channel` at its pace; rate limited, the channel waits out Retry-After and the
    write goes again until the platform takes it; any other refusal raises."""
    while True:
        await surface.pacer.turn(channel, priority)
        try:
            return await write()
        except Exception as exc:
            delay = surface.retry_after(exc)
            if delay is None:
                raise
            surface.pacer.retry_after(channel, delay)
            log.info("write to channel %s rate limited; trying again in %.1f s", channel, delay)


class StatusUpdater:
    """Edits one message with the latest state, at most once per `interval`, coalescing."""

    def __init__(self, surface: Surface, channel: str, message_id: str):
        self.surface = surface
        self.channel = channel
        self.message_id = message_id
        self.edits = 0
        self._render: Callable[[], Message] | None = None
        self._throttle = Throttle(
            self._edit_latest, surface.interval, before=lambda: surface.pacer.turn(channel, Priority.PROGRESS)
        )
        self._throttle.pause()  # the message was just written

    def update(self, make: Callable[[], Message]) -> None:
        """Schedule an edit; `make()` is evaluated when the edit happens (the latest state wins)."""
        self._render = make
        self._throttle.request()

    async def _edit_latest(self) -> bool:
        assert self._render is not None
        return await self._edit(self._render())

    async def _edit(self, message: Message, priority: Priority | None = None) -> bool:
        """True when done (or failed for good: logged), False when rate limited (the channel and
        the next edit wait out Retry-After). With `priority` it first waits for the channel's turn
        (background edits had theirs)."""
        try:
            if priority is not None:
                await self.surface.pacer.turn(self.channel, priority)
            await self.surface.edit(self.channel, self.message_id, message)
        except Exception as exc:  # a network hiccup must not end the council's display
            delay = self.surface.retry_after(exc)
            if delay is not None:
                self.surface.pacer.retry_after(self.channel, delay)
                self._throttle.pause(delay)
                log.info("status edit rate limited; next one in %.1f s", delay)
                return False
            log.warning("could not update the status message: %s", exc)
        else:
            self.edits += 1
        self._throttle.pause()
        return True

    async def finish_quietly(self) -> None:
        """Drop any pending edit (the message is about to go)."""
        await self._throttle.settle(cancel_running=True)

    async def finish(self, message: Message) -> None:
        """The last edit, after any pending one, at the interval; rate limited, it waits and
        tries again until the platform takes it."""
        await self._throttle.settle()
        while True:
            await self._throttle.wait_turn()
            if await self._edit(message, Priority.ANSWER):
                return


class CouncilFollower:
    """Shows a running council in its destination (a live display, or the status message), then
    the result. `on_status` hears the destination once its status message exists (to store it);
    `messages` maps each message posted to the council (thread history reads it: bot/history.py)."""

    def __init__(
        self,
        surface: Surface,
        destination: Destination,
        run: Followable,
        *,
        on_status: Callable[[Destination], Awaitable[None]] | None = None,
        claim: Callable[[], Awaitable[bool]] | None = None,
        messages: CouncilMessages | None = None,
    ):
        self.surface = surface
        self.destination = destination
        self.run = run
        self.on_status = on_status
        # Asked before the answer goes out: False when another process posts it (a durable
        # council: DurableCouncils.claim_delivery), so that it is posted once.
        self.claim = claim
        self.messages = messages
        self.progress = CouncilProgress(run.council_id)
        self.live: LiveDisplay | None = None
        self.updater: StatusUpdater | None = None
        if destination.status_id is not None:  # a status message posted before (or by another process)
            self.updater = StatusUpdater(surface, destination.status_channel, destination.status_id)

    async def _record(self, channel_id: str, message_id: str, role: MessageRole) -> None:
        """Map a message just posted to the council (never raises: CouncilMessages.record)."""
        if self.messages is not None:
            await self.messages.record(self.destination.platform, channel_id, message_id, self.run.council_id, role)

    async def _record_live(self, role: MessageRole) -> None:
        live = self.live
        if live is not None and live.ts is not None:
            await self._record(live.channel, live.ts, role)

    def _status(self, progress: CouncilProgress | None, **kwargs: Any) -> Message:
        return self.surface.render.status_view(StatusView(self.run.request, progress, **kwargs))

    async def _post_status(self, message: Message) -> None:
        """The council's one status message (its queue place first, when it waits)."""
        destination = self.destination
        try:
            posted = await deliver(
                self.surface, destination.channel_id, Priority.START, lambda: self.surface.post(destination, message)
            )
        except Exception as exc:  # without a status message the council still answers
            log.warning("could not post the status message of %s: %s", self.run.council_id, exc)
            return
        self.destination = destination.model_copy(update={"status_id": posted, "status_channel_id": None})
        await self._record(destination.channel_id, posted, "progress")
        self.updater = StatusUpdater(self.surface, self.destination.status_channel, posted)
        if self.on_status is not None:
            await self.on_status(self.destination)

    async def _begin(self, *, live: bool) -> None:
        """The council has started: open the live display (where the platform has one) and show
        the status message, turning the queue-place message into it when there is one."""
        if live:
            self.live = await self.surface.open_live(self.destination, self.run.request)
            await self._record_live("progress")  # until it holds the answer
        note = self.live.note(status_above=self.updater is not None) if self.live is not None else None
        first = self._status(None, note=note)
        if self.updater is None:
            await self._post_status(first)
        elif self.live is not None:
            self.updater.update(lambda: first)

    async def follow(self, *, live: bool = True) -> CouncilResult:
        """Until the council ends, then its answer; `live=False` never opens a live display."""
        run = self.run
        started = False
        if self.updater is not None:  # adopted: bring it up to date (the id, the buttons, the state)
            self.progress.queued_position = run.queued_position
            self.updater.update(self._current)
        if run.queued_position is None:
            await self._begin(live=live)
            started = True
        elif self.updater is None:  # one small message until it starts: queued councils must not flood
            self.progress.queued_position = run.queued_position
            await self._post_status(self._current())
        async for event in run.events():
            self.progress.apply(event)
            if isinstance(event, CouncilFinished):
                break
            if isinstance(event, CouncilQueued):
                continue
            if not started:
                started = True
                await self._begin(live=live)
            if self.live is not None and not self.live.broken:
                self.live.update(self.progress)
            elif self.updater is not None:
                self.updater.update(self._current)  # no live display, or it broke: the status shows it all
        return await self.show(self.progress.result or await run.wait())

    def _current(self) -> Message:
        return self._status(self.progress)

    async def show(self, result: CouncilResult) -> CouncilResult:
        """The answer (in the live display, or posted), a long answer's file, the final status."""
        cid = result.council_id
        if not await self._claimed():
            await self._leave_answer_to_another(result)
            return result
        in_live = False
        if self.live is not None:
            try:
                in_live = await self.live.finish(result)
            except Exception as exc:
                log.warning("could not finish the live display of council %s: %s", cid, exc)
            if in_live:
                await self._record_live("answer")
        try:
            if not in_live:
                await self.post_result(result)
            if is_long(result):
                await self.attach(result)
            final = self.surface.render.final_status(result)
        except Exception as exc:  # refused for good; the answer stays in the database
            log.error("could not post the result of council %s (%s); it is stored, see export", cid, exc)
            final = self.surface.render.not_posted(cid)
        if self.updater is not None:
            if in_live and await self.delete_status():
                return result
            await self.updater.finish(self._status(None, final=final))
        return result

    async def _claimed(self) -> bool:
        if self.claim is None:
            return True
        try:
            return await self.claim()
        except Exception as exc:  # a database that cannot say: post (twice beats never)
            log.warning("could not claim the delivery of council %s (%s); posting it", self.run.council_id, exc)
            return True

    async def _leave_answer_to_another(self, result: CouncilResult) -> None:
        log.info("council %s is answered by another process; not posting it again", result.council_id)
        if self.updater is not None:
            await self.updater.finish_quietly()

    async def post_result(self, result: CouncilResult) -> None:
        destination = self.destination
        for message in self.surface.render.result_messages(result):
            post = functools.partial(self.surface.post, destination, message)
            posted = await deliver(self.surface, destination.channel_id, Priority.ANSWER, post)
            await self._record(destination.channel_id, posted, "answer")

    async def attach(self, result: CouncilResult) -> None:
        """The full text of a long answer, as a Markdown file under it (the same on every platform)."""
        destination, file = self.destination, answer_file(result)
        caption = f"Full answer of council `{result.council_id}`"
        await deliver(
            self.surface,
            destination.channel_id,
            Priority.ANSWER,
            lambda: self.surface.attach(destination, file, caption),
        )

    async def delete_status(self) -> bool:
        """The control message has done its job once the live display holds the answer."""
        updater = self.updater
        assert updater is not None
        await updater.finish_quietly()
        try:
            await deliver(
                self.surface,
                updater.channel,
                Priority.ANSWER,
                lambda: self.surface.delete(updater.channel, updater.message_id),
            )
            return True
        except Exception as exc:
            log.info("could not delete the control message: %s", exc)
            return False


async def deliver_durable(
    service: CouncilService, surface: Surface, run: CouncilRun, destination: Destination, resumed: bool
) -> None:
    """A durable council, wherever it was accepted, shown and answered in its thread: every
    platform's deliverer (`CouncilService.register_deliverer`). A resumed one says so first; the
    status message is remembered (a later resume edits it) and the answer is posted only by the
    process that claims it."""
    cid = run.council_id
    if resumed:
        note = surface.render.resumed_note()
        try:
            posted = await deliver(
                surface, destination.channel_id, Priority.START, lambda: surface.post(destination, note)
            )
            await service.messages.record(destination.platform, destination.channel_id, posted, cid, "progress")
        except Exception as exc:
            log.warning("could not say that council %s resumed: %s", cid, exc)

    async def keep(shown: Destination) -> None:
        await service.durable.keep_destination(cid, shown)

    async def claim() -> bool:
        return await service.durable.claim_delivery(cid)

    follower = CouncilFollower(surface, destination, run, on_status=keep, claim=claim, messages=service.messages)
    await follower.follow()


@asynccontextmanager
async def running_worker(service: CouncilService, enabled: bool = True) -> AsyncIterator[None]:
    """The service's worker beside a bot (it runs councils, wherever they were accepted). Start
    it once the process's bots have registered their deliverers: it serves their queues."""
    task = asyncio.create_task(service.durable.work(), name="council-worker") if enabled else None
    try:
        yield
    finally:
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)


async def resume(
    service: CouncilService,
    surface: Surface,
    destination: Destination,
    council_id: str,
    *,
    on_status: Callable[[Destination], Awaitable[None]] | None = None,
) -> CouncilResult:
    """Follow a council from stored data: its run when this process has it (events replay from
    the start, so the status catches up), else its stored result is shown (posted, with the
    final status). Raises NotFound (core.errors) when there is neither."""
    messages = service.messages
    run = service.get_run(council_id)
    if run is not None:
        return await CouncilFollower(surface, destination, run, on_status=on_status, messages=messages).follow()
    result = await service.get_result(council_id)
    stored = CouncilFollower(surface, destination, _Stored(result), on_status=on_status, messages=messages)
    return await stored.show(result)


class _Stored:
    """A finished council as a Followable: its one event is its end."""

    def __init__(self, result: CouncilResult):
        self.result = result
        self.request = result.request
        self.queued_position: int | None = None

    @property
    def council_id(self) -> str:
        return self.result.council_id

    async def events(self) -> AsyncIterator[CouncilEvent]:
        yield CouncilFinished(council_id=self.result.council_id, result=self.result)

    async def wait(self) -> CouncilResult:
        return self.result
