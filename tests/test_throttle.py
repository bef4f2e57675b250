"""The pacing shared by the Slack and Discord status messages (bot/throttle.py)."""

from __future__ import annotations

import asyncio
import itertools
import time

import pytest

from bot.throttle import ChannelPacer, Pace, Priority, Throttle

# Timing-sensitive (tenths of a second): under xdist these run one after the other in one worker.
pytestmark = pytest.mark.xdist_group("timing")

INTERVAL = 0.1


class Message:
    """A fake chat message: records what each write showed and when."""

    def __init__(self, answers: list[bool] | None = None, write_s: float = 0.0):
        self.state = 0
        self.writes: list[tuple[float, int]] = []
        self.answers = answers or []  # False: the platform said "slow down"
        self.write_s = write_s
        self.throttle = Throttle(self.write, INTERVAL)

    async def write(self) -> bool:
        shown = self.state  # read when the write happens, not when it was asked for
        await asyncio.sleep(self.write_s)
        self.writes.append((time.monotonic(), shown))
        ok = self.answers.pop(0) if self.answers else True
        self.throttle.pause(0.0 if ok else 2 * INTERVAL)
        return ok


async def test_writes_are_paced_and_coalesced():
    message = Message()
    message.throttle.pause()  # the message was just posted
    start = time.monotonic()
    for i in range(1, 30):
        message.state = i
        message.throttle.request()
        last_request = time.monotonic()
        await asyncio.sleep(INTERVAL / 10)
    # One write an interval at most, and one after: 4 for the nominal 0.28 s of requests, more
    # only when a loaded machine stretched those requests over more intervals.
    most = int((last_request - start) / INTERVAL) + 2
    await asyncio.sleep(2 * INTERVAL)
    times = [start] + [at for at, _ in message.writes]
    assert 2 <= len(message.writes) <= most
    assert all(b - a >= INTERVAL * 0.95 for a, b in itertools.pairwise(times))
    assert message.writes[-1][1] == 29  # the last write shows the latest state


async def test_a_rate_limited_write_is_retried_after_retry_after():
    message = Message(answers=[False])
    message.state = 1
    message.throttle.request()
    await asyncio.sleep(0.01)
    message.state = 2  # asked for while the write was refused: the retry shows it
    message.throttle.request()
    await asyncio.sleep(3 * INTERVAL)
    (first, shown_first), (second, shown_second) = message.writes
    assert (shown_first, shown_second) == (1, 2)
    assert second - first >= 2 * INTERVAL * 0.95


async def test_settle_drops_a_sleeping_write_and_waits_for_a_running_one():
    sleeping = Message()
    sleeping.throttle.pause()
    sleeping.throttle.request()
    await sleeping.throttle.settle()
    await asyncio.sleep(2 * INTERVAL)
    assert sleeping.writes == []

    running = Message(write_s=INTERVAL)
    running.throttle.request()
    await asyncio.sleep(0.01)
    await running.throttle.settle()
    assert len(running.writes) == 1  # finished before settle returned: the last write cannot cross it

    dropped = Message(write_s=INTERVAL)
    dropped.throttle.request()
    await asyncio.sleep(0.01)
    await dropped.throttle.settle(cancel_running=True)
    await asyncio.sleep(2 * INTERVAL)
    assert dropped.writes == []


async def test_no_background_writes_once_closed():
    message = Message()
    message.throttle.pause()
    message.throttle.request()
    message.throttle.close()
    await asyncio.sleep(2 * INTERVAL)
    message.throttle.request()
    await asyncio.sleep(2 * INTERVAL)
    assert message.writes == []


async def test_channel_pacer_paces_a_channel_answers_first_and_honours_retry_after():
    pacer = ChannelPacer(Pace(per_s=10.0, burst=2))
    granted: list[tuple[str, float]] = []
    started = time.monotonic()

    async def write(name: str, channel: str, priority: Priority) -> None:
        await pacer.turn(channel, priority)
        granted.append((name, time.monotonic() - started))

    progress = [asyncio.create_task(write(f"p{i}", "C1", Priority.PROGRESS)) for i in range(4)]
    await asyncio.sleep(0)
    answer = asyncio.create_task(write("answer", "C1", Priority.ANSWER))
    other = asyncio.create_task(write("other", "C2", Priority.PROGRESS))  # another channel: its own pace
    await asyncio.gather(*progress, answer, other)
    names = [n for n, _ in granted if n != "other"]
    assert names[:2] == ["p0", "p1"]  # the burst
    assert names[2] == "answer"  # then the answer before the waiting progress writes
    times = [t for n, t in granted if n != "other"]
    # 10 a second after the burst of 2: the k-th grant (from 1) comes no earlier than (k - 2) / 10 s
    # after the channel's first write. A bucket may catch up after a late wake-up (two grants
    # closer than 0.1 s on a loaded machine), never get ahead of that line.
    assert all(t >= (k - 2) / 10 - 0.005 for k, t in enumerate(times, 1) if k > 2), times
    assert dict(granted)["other"] < times[2]  # C2 did not wait for C1's pace

    pacer.retry_after("C1", 0.3)  # the platform said 429: the whole channel waits
    before = time.monotonic()
    await pacer.turn("C1", Priority.ANSWER)
    assert time.monotonic() - before >= 0.29

    cancelled = asyncio.create_task(pacer.turn("C1", Priority.PROGRESS))
    await asyncio.sleep(0.01)
    cancelled.cancel()  # leaves the line without blocking the next writer
    await asyncio.wait_for(pacer.turn("C1", Priority.PROGRESS), 1.0)
