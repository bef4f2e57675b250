"""Input limits, persisted sliding-window rate limits and the concurrency gate."""

import asyncio

import pytest

from core.errors import InputRejected, Overloaded, RateLimited
from core.limits import ConcurrencyGate, RateLimiter, validate_question
from core.storage import Storage


def test_validate_question():
    assert validate_question("  why?  ", 10) == "why?"
    with pytest.raises(InputRejected, match="Ask a question"):
        validate_question(" \n\t ", 10)
    with pytest.raises(InputRejected, match="5,123 characters; the limit is 4,000"):
        validate_question("x" * 5123, 4000)


async def test_sliding_window_persists_across_restarts(tmp_path):
    path = str(tmp_path / "c.db")
    t0 = 1_000_000.0
    async with await Storage.open(path) as storage:
        limiter = RateLimiter(storage)
        for i in range(3):
            await limiter.check_and_record(user_key="u", channel_key="c", user_limit_per_hour=3, channel_limit_per_hour=0, now=t0 + i * 60)
    async with await Storage.open(path) as storage:  # a restart
        limiter = RateLimiter(storage)
        with pytest.raises(RateLimited) as refused:
            await limiter.check_and_record(user_key="u", channel_key="c", user_limit_per_hour=3, channel_limit_per_hour=0, now=t0 + 600)
        # The first hit (t0) ages out at t0 + 3600.
        assert refused.value.retry_after_s == pytest.approx(3000)
        assert "limit 3" in refused.value.user_message and "50 minutes" in refused.value.user_message
        await limiter.check_and_record(user_key="u", channel_key="c", user_limit_per_hour=3, channel_limit_per_hour=0, now=t0 + 3601)
        # Another user is unaffected; the channel limit counts everyone.
        await limiter.check_and_record(user_key="v", channel_key="c", user_limit_per_hour=3, channel_limit_per_hour=5, now=t0 + 3602)  # 5th hit in the window
        with pytest.raises(RateLimited, match="This channel"):
            await limiter.check_and_record(user_key="w", channel_key="c", user_limit_per_hour=3, channel_limit_per_hour=4, now=t0 + 3603)


async def test_refused_requests_are_not_counted(tmp_path):
    async with await Storage.open(str(tmp_path / "c.db")) as storage:
        limiter = RateLimiter(storage)
        await limiter.check_and_record(user_key="u", channel_key="c", user_limit_per_hour=1, channel_limit_per_hour=0, now=0.0)
        for _ in range(3):
            with pytest.raises(RateLimited):
                await limiter.check_and_record(user_key="u", channel_key="c", user_limit_per_hour=1, channel_limit_per_hour=0, now=10.0)
        assert await storage.count_hits("user:u", -1) == 1


async def test_gate_is_fifo_reports_positions_and_refuses_overflow():
    gate = ConcurrencyGate(max_concurrent=1, max_queued=2)
    order, positions = [], []
    release = asyncio.Event()

    async def council(name):
        async def queued(position):
            positions.append((name, position))

        async with gate.slot(queued):
            order.append(name)
            await release.wait()

    first = asyncio.create_task(council("a"))
    await asyncio.sleep(0)
    waiting = [asyncio.create_task(council(n)) for n in ("b", "c")]
    await asyncio.sleep(0.01)
    assert gate.running == 1 and gate.waiting == 2 and positions == [("b", 1), ("c", 2)]
    with pytest.raises(Overloaded, match="2 councils are already waiting"):
        gate.check_capacity()
    release.set()
    await asyncio.gather(first, *waiting)
    assert order == ["a", "b", "c"] and gate.running == 0


async def test_gate_cancelled_waiter_leaks_nothing():
    gate = ConcurrencyGate(max_concurrent=1, max_queued=5)
    hold = asyncio.Event()

    async def holder():
        async with gate.slot():
            await hold.wait()

    async def waiter():
        async with gate.slot():
            pass

    h = asyncio.create_task(holder())
    await asyncio.sleep(0)
    w = asyncio.create_task(waiter())
    await asyncio.sleep(0.01)
    w.cancel()
    with pytest.raises(asyncio.CancelledError):
        await w
    assert gate.waiting == 0
    hold.set()
    await h
    assert gate.running == 0
    async with gate.slot():
        assert gate.running == 1
