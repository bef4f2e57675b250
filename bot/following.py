"""Follow one council and show it in a chat thread: the one runner both chat adapters use.

The runner owns what is the same on every platform: the status message (posted, edited at most
once per `interval` with the latest progress, coalescing, finished with the outcome), the order
of the writes, the answer and a long answer's file, and what happens when a write is refused.
Each platform supplies a small `Surface` (post, edit, delete, attach, render, and how it says
"rate limited"); Slack's can also open a live display (its streamed message).

Every write goes through `bot.surface.paced_write` (paced per channel, rate limits waited out); any
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
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from bot.councils import answer_file, is_long
from bot.progress import CouncilProgress
from bot.status import StatusUpdater
from bot.surface import LiveDisplay, Message, StatusView, Surface, paced_write
from bot.throttle import Priority
from core.models import (
    CouncilEvent,
    CouncilFinished,
    CouncilQueued,
    CouncilRequest,
    CouncilResult,
    Destination,
    MessageRole,
    RecordPost,
)

if TYPE_CHECKING:
    from core.service import CouncilMessages, CouncilRun, CouncilService

__all__ = ["CouncilFollower", "deliver_durable", "resume", "running_worker"]

log = logging.getLogger(__name__)
T = TypeVar("T")


class Followable(Protocol):
    """A council to follow: `core.durable.runs.CouncilRun`, or anything that replays its events."""

    @property
    def council_id(self) -> str: ...

    request: CouncilRequest
    queued_position: int | None

    def events(self) -> AsyncIterator[CouncilEvent]: ...

    async def wait(self) -> CouncilResult: ...


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
        # Maps each message posted to the council (thread history reads it: bot/history.py).
        self.record_post = messages.for_council(destination.platform, run.council_id) if messages else _record_nothing
        self.progress = CouncilProgress(run.council_id, mode=run.request.config.mode)
        self.live: LiveDisplay | None = None
        self.updater: StatusUpdater | None = None
        if destination.status_id is not None:  # a status message posted before (or by another process)
            self.updater = StatusUpdater(surface, destination.status_channel, destination.status_id)

    async def _record_live(self, role: MessageRole) -> None:
        live = self.live
        if live is not None and live.ts is not None:
            await self.record_post(live.channel, live.ts, role)

    def _status(self, progress: CouncilProgress | None, **kwargs: Any) -> Message:
        return self.surface.render.status_view(StatusView(self.run.request, progress, **kwargs))

    async def _post_status(self, message: Message) -> None:
        """The council's one status message (its queue place first, when it waits)."""
        destination = self.destination
        try:
            posted = await paced_write(
                self.surface, destination.channel_id, Priority.START, lambda: self.surface.post(destination, message)
            )
        except Exception as exc:  # without a status message the council still answers
            log.warning("could not post the status message of %s: %s", self.run.council_id, exc)
            return
        self.destination = destination.model_copy(update={"status_id": posted, "status_channel_id": None})
        await self.record_post(destination.channel_id, posted, "progress")
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
                await post_answer(self.surface, self.destination, result, self.record_post)
            if is_long(result):
                await attach_full_answer(self.surface, self.destination, result)
            await self._call_to_unsure(result)
            final = self.surface.render.final_status(result)
        except Exception as exc:  # refused for good; the answer stays in the database
            log.error("could not post the result of council %s (%s); it is stored, see export", cid, exc)
            final = self.surface.render.not_posted(cid)
        if self.updater is not None:
            if in_live and await self.delete_status():
                return result
            await self.updater.finish(self._status(None, final=final))
        return result

    async def _call_to_unsure(self, result: CouncilResult) -> None:
        """An unsure answer mentions the person, group or role its channel named (once, under it)."""
        target = result.request.config.unsure_mention
        message = self.surface.render.unsure_mention(result, target) if target and result.unsure else None
        if message is not None:
            post = functools.partial(self.surface.post, self.destination, message)
            posted = await paced_write(self.surface, self.destination.channel_id, Priority.ANSWER, post)
            await self.record_post(self.destination.channel_id, posted, "answer")

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

    async def delete_status(self) -> bool:
        """The control message has done its job once the live display holds the answer."""
        updater = self.updater
        assert updater is not None
        await updater.finish_quietly()
        try:
            await paced_write(
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
        await _end_earlier_live(service, surface, destination, cid)
        note = surface.render.resumed_note()
        try:
            posted = await paced_write(
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


async def _end_earlier_live(service: CouncilService, surface: Surface, destination: Destination, cid: str) -> None:
    """A resumed council's earlier live display (Slack's streamed "Stage 1/3"), left open by the
    process that stopped, is ended with a line saying the council goes on below, not left frozen."""
    for channel, message_id in await service.messages.progress_of(destination.platform, cid):
        if message_id == destination.status_id:
            continue  # the status message: the resumed council edits it
        try:
            ended = await paced_write(
                surface, channel, Priority.START, functools.partial(surface.end_live, channel, message_id)
            )
        except Exception as exc:
            log.info("could not end the earlier display of council %s: %s", cid, exc)
            continue
        if ended:
            log.info("council %s: ended the live display %s its stopped process left open", cid, message_id)


@asynccontextmanager
async def running_worker(service: CouncilService, enabled: bool = True) -> AsyncIterator[None]:
    """The service's worker beside a bot (it runs councils, wherever they were accepted). Start
    it once the process's bots have registered their deliverers: it serves their queues. On the
    way out the councils stop with it, before the bot closes its platform client (enter this
    inside the client's context): their deliveries would write to a closed client."""
    task = asyncio.create_task(service.durable.work(), name="council-worker") if enabled else None
    try:
        yield
    finally:
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        await service.stop_councils()


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
    run = service.runs.get(council_id)
    if run is not None:
        return await CouncilFollower(surface, destination, run, on_status=on_status, messages=messages).follow()
    stored = await service.runs.follow(council_id)  # the stored council, as a finished run
    follower = CouncilFollower(surface, destination, stored, on_status=on_status, messages=messages)
    return await follower.show(await stored.wait())


async def post_answer(
    surface: Surface, destination: Destination, result: CouncilResult, record_post: RecordPost
) -> None:
    """The answer's messages (the stage buttons under the last), each mapped to the council."""
    for message in surface.render.result_messages(result):
        post = functools.partial(surface.post, destination, message)
        posted = await paced_write(surface, destination.channel_id, Priority.ANSWER, post)
        await record_post(destination.channel_id, posted, "answer")


async def attach_full_answer(surface: Surface, destination: Destination, result: CouncilResult) -> None:
    """The full text of a long answer, as a Markdown file under it (the same on every platform)."""
    file = answer_file(result)
    caption = f"Full answer of council `{result.council_id}`"
    await paced_write(
        surface, destination.channel_id, Priority.ANSWER, lambda: surface.attach(destination, file, caption)
    )


async def _record_nothing(channel_id: str, message_id: str, role: MessageRole) -> None:
    """Where no message map is kept (the terminal), a post is recorded nowhere."""
