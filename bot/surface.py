"""What a chat platform supplies to show a council (bot/following.py runs it): a `Surface` of
single-try writes and a `Renderer` that draws; `paced_write` paces and retries one write.

Every write waits for its channel's turn (`bot.throttle.ChannelPacer`, shared by every council
in the channel): answers first, then first messages, then progress edits. A rate-limited write
stops the whole channel for its Retry-After and goes again until the platform takes it.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from bot.throttle import ChannelPacer, Priority
from core.models import CouncilRequest, CouncilResult, Destination
from core.service import count_platform_write

if TYPE_CHECKING:
    from bot.councils import AnswerFile
    from bot.progress import CouncilProgress

log = logging.getLogger(__name__)
T = TypeVar("T")
Message = Any  # a platform's message: Slack {"text", "blocks"}, Discord send/edit keyword arguments


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

    def unsure_mention(self, result: CouncilResult, target: str) -> Message | None:
        """The thread message mentioning the channel's person, group or role when the answer is
        unsure (None: a target this platform cannot mention)."""
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

    async def end_live(self, channel_id: str, message_id: str) -> bool:
        """End a live display an earlier process left open (its council resumed elsewhere): False
        when the message is none, or already ended."""
        ...


async def paced_write(surface: Surface, channel: str, priority: Priority, write: Callable[[], Awaitable[T]]) -> T:
    """One write to `channel` at its pace; rate limited, the channel waits out Retry-After and the
    write goes again until the platform takes it; any other refusal raises."""
    platform = surface.pacer.pace.platform
    while True:
        await surface.pacer.turn(channel, priority)
        try:
            written = await write()
        except Exception as exc:
            delay = surface.retry_after(exc)
            count_platform_write(platform, "error" if delay is None else "rate_limited")
            if delay is None:
                raise
            surface.pacer.retry_after(channel, delay)
            log.info("write to channel %s rate limited; trying again in %.1f s", channel, delay)
            continue
        count_platform_write(platform, "ok")
        return written
