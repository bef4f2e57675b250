"""When a chat write may go out, for every adapter: one rule for a channel, one for a message.

`ChannelPacer` paces every write to one channel across all the councils in it (Slack allows
about one message per second per channel with short bursts; Discord 5 per 5 s): a token bucket
per channel, writes granted by priority (a council's answer before a status edit, so a burst of
councils cannot starve the answers), and a platform's 429 Retry-After stops the whole channel.

`Throttle` keeps one message up to date: at most one write per `interval`, coalescing; whatever
changed meanwhile rides on the next write, which reads the latest state when it happens. The
adapter supplies the write and says how it went; this module only decides when.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from enum import IntEnum


@dataclass(frozen=True)
class Pace:
    """A platform's per-channel write allowance: `per_s` sustained, `burst` back to back."""

    per_s: float
    burst: int
    platform: str = "chat"  # whose allowance: the `platform` label of the writes counted (bot/surface.py)


# Slack: ~1 message per second per channel, short bursts tolerated.
SLACK_PACE = Pace(per_s=1.0, burst=2, platform="slack")
# Discord: 5 per 5 s per channel. A bucket lets through at most burst + per_s * 5 s in any 5 s:
# 2 + 2.75 stays under 5 with room for network jitter.
DISCORD_PACE = Pace(per_s=0.55, burst=2, platform="discord")


class Priority(IntEnum):
    """Lower goes first when several writes wait for the same channel."""

    ANSWER = 0  # a council's result, refusals, final edits: must be delivered
    START = 1  # the first message of a council (its status or queue place)
    PROGRESS = 2  # status edits and stream appends: coalesced, fine to delay


@dataclass
class _ChannelState:
    tokens: float
    stamp: float
    blocked_until: float = 0.0
    waiting: list[tuple[int, int, asyncio.Future[None]]] = field(default_factory=list)
    dispatcher: asyncio.Task[None] | None = None


class ChannelPacer:
    """Grants writes per channel at the platform's pace, best priority first (FIFO within one)."""

    def __init__(self, pace: Pace):
        self.pace = pace
        self._channels: dict[str, _ChannelState] = {}
        self._order = itertools.count()

    async def turn(self, channel: str, priority: Priority = Priority.START) -> None:
        """Wait until a write to `channel` may go now (cancellation leaves the line cleanly)."""
        state = self._channels.get(channel)
        if state is None:
            state = self._channels[channel] = _ChannelState(tokens=self.pace.burst, stamp=time.monotonic())
        granted: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(state.waiting, (int(priority), next(self._order), granted))
        if state.dispatcher is None or state.dispatcher.done():
            state.dispatcher = asyncio.create_task(self._dispatch(state), name=f"pacer-{channel}")
        await granted

    def retry_after(self, channel: str, seconds: float) -> None:
        """The platform refused a write (429): nothing more goes to `channel` for `seconds`."""
        state = self._channels.get(channel)
        if state is None:
            state = self._channels[channel] = _ChannelState(tokens=0.0, stamp=time.monotonic())
        state.tokens = 0.0
        state.stamp = time.monotonic()
        state.blocked_until = max(state.blocked_until, time.monotonic() + seconds)

    async def _dispatch(self, state: _ChannelState) -> None:
        pace = self.pace
        while state.waiting:
            if state.waiting[0][2].done():  # cancelled while waiting
                heapq.heappop(state.waiting)
                continue
            now = time.monotonic()
            state.tokens = min(float(pace.burst), state.tokens + (now - state.stamp) * pace.per_s)
            state.stamp = now
            wait = max(state.blocked_until - now, (1.0 - state.tokens) / pace.per_s if state.tokens < 1.0 else 0.0)
            if wait > 0:
                await asyncio.sleep(wait)
                continue
            _, _, granted = heapq.heappop(state.waiting)
            state.tokens -= 1.0
            granted.set_result(None)


class Throttle:
    """Runs `write` in the background, at most once per `interval`, coalescing requests.

    `write` reads the latest state itself and returns False to be tried again (rate limited);
    the adapter calls `pause` after each attempt, so that its own final writes (which go
    through `wait_turn`, not the background) keep the same pace."""

    def __init__(
        self,
        write: Callable[[], Awaitable[bool]],
        interval: float,
        *,
        before: Callable[[], Awaitable[None]] | None = None,
    ):
        """`before` is awaited ahead of every background write, still cancellable by `settle`
        (the channel's turn, so that a write waiting for the channel can be dropped)."""
        self.interval = interval
        self._before = before
        self.closed = False  # the message is given up on: no more background writes
        self._write = write
        self._not_before = 0.0
        self._pending = False
        self._task: asyncio.Task[None] | None = None
        self._sleeping = False

    def request(self) -> None:
        """Ask for a write; one already waiting will carry this change too."""
        self._pending = True
        if not self.closed and (self._task is None or self._task.done()):
            self._task = asyncio.create_task(self._run())

    def pause(self, retry_after: float = 0.0) -> None:
        """No write before `interval` from now, or `retry_after` if the platform asked for longer."""
        self._not_before = time.monotonic() + max(retry_after, self.interval)

    def close(self) -> None:
        self.closed = True

    async def wait_turn(self) -> None:
        wait = self._not_before - time.monotonic()
        if wait > 0:
            await asyncio.sleep(wait)

    async def _run(self) -> None:
        while self._pending and not self.closed:
            self._sleeping = True  # only while waiting: `settle` may then drop this write
            try:
                await self.wait_turn()
                if self._before is not None:
                    await self._before()
            finally:
                self._sleeping = False
            self._pending = False
            if not await self._write():
                self._pending = True  # the same change, and anything newer, after the pause

    async def settle(self, *, cancel_running: bool = False) -> None:
        """Before the last write: drop the waiting write (the last one shows everything), but
        let one already talking to the platform finish so the two cannot cross, unless
        `cancel_running` (the message is about to go)."""
        self._pending = False
        task = self._task
        if task is not None and not task.done():
            if self._sleeping or cancel_running:
                task.cancel()
            try:
                await task
            except asyncio.CancelledError:
                pass
