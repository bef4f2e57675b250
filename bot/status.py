"""The council's status message, edited with the latest state at most once per interval."""

from __future__ import annotations

import logging
from collections.abc import Callable

from bot.surface import Message, Surface
from bot.throttle import Priority, Throttle

log = logging.getLogger(__name__)


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
