"""Input limits, persisted sliding-window rate limits and the concurrency gate."""

import asyncio

import pytest

from core.admission.limits import ConcurrencyGate, RateLimiter, validate_question
from core.errors import InputRejected, Overloaded, RateLimited
from core.storage import Storage


def test_validate_question():
    assert validate_question("  why?  ", 10) == "why?"
    for empty in ("", " \n\t "):
        with pytest.raises(InputRejected, match="Ask a question"):
            validate_question(empty, 10)
    assert validate_question("x" * 10, 10) == "x" * 10
    with pytest.raises(InputRejected, match="5,123 characters; the limit is 4,000"):
        validate_question("x" * 5123, 4000)


async def test_sliding_window_persists_across_restarts(tmp_path):
    path = str(tmp_path / "c.db")
    t0 = 1_000_000.0
    async with await Storage.open(path) as storage:
        limiter = RateLimiter(storage)
        for i in range(3):
            await limiter.check_and_record(
                user_key="u", channel_key="c", user_limit_per_hour=3, channel_limit_per_hour=0, now=t0 + i * 60
            )
    async with await Storage.open(path) as storage:  # a restart
        limiter = RateLimiter(storage)
        with pytest.raises(RateLimited) as refused:
            await limiter.check_and_record(
                user_key="u", channel_key="c", user_limit_per_hour=3, channel_limit_per_hour=0, now=t0 + 600
            )
        # The first hit (t0) ages out at t0 + 3600.
        assert refused.value.retry_after_s == pytest.approx(3000)
        assert "limit 3" in refused.value.user_message and "50 minutes" in refused.value.user_message
        await limiter.check_and_record(
            user_key="u", channel_key="c", user_limit_per_hour=3, channel_limit_per_hour=0, now=t0 + 3601
        )
        # Another user is unaffected; the channel limit counts everyone.
        await limiter.check_and_record(
            user_key="v", channel_key="c", user_limit_per_hour=3, channel_limit_per_hour=5, now=t0 + 3602
        )  # 5th hit in the window
        with pytest.raises(RateLimited, match="This channel"):
            await limiter.check_and_record(
                user_key="w", channel_key="c", user_limit_per_hour=3, channel_limit_per_hour=4, now=t0 + 3603
            )


async def test_refused_requests_are_not_counted(tmp_path):
    async with await Storage.open(str(tmp_path / "c.db")) as storage:
        limiter = RateLimiter(storage)
        await limiter.check_and_record(
            user_key="u", channel_key="c", user_limit_per_hour=1, channel_limit_per_hour=0, now=0.0
        )
        for _ in range(3):
            with pytest.raises(RateLimited):
                await limiter.check_and_record(
                    user_key="u", channel_key="c", user_limit_per_hour=1, channel_limit_per_hour=0, now=10.0
                )
        assert len(await storage.rate_limits.hits_since("user:u", -1)) == 1


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


async def test_refusal_message_and_retry_after(tmp_path):
    t0 = 5_000_000.0
    async with await Storage.open(str(tmp_path / "c.db")) as storage:
        limiter = RateLimiter(storage)
        for i in range(20):
            await limiter.check_and_record(
                user_key="u", channel_key="c", user_limit_per_hour=20, channel_limit_per_hour=0, now=t0 + i
            )
        with pytest.raises(RateLimited) as refused:
            await limiter.check_and_record(
                user_key="u", channel_key="c", user_limit_per_hour=20, channel_limit_per_hour=0, now=t0 + 2880
            )
        assert (
            refused.value.user_message
            == "You have asked 20 councils in the last hour (limit 20). Try again in 12 minutes."
        )
        assert refused.value.retry_after_s == pytest.approx(720)
        # An admin lowers the limit to 5: a slot frees when the 16th hit (t0 + 15) ages out.
        with pytest.raises(RateLimited) as refused:
            await limiter.check_and_record(
                user_key="u", channel_key="c", user_limit_per_hour=5, channel_limit_per_hour=0, now=t0 + 3600
            )
        assert (
            refused.value.retry_after_s == pytest.approx(15)
            and "Try again in 15 seconds." in refused.value.user_message
        )
        with pytest.raises(RateLimited) as refused:
            await limiter.check_and_record(
                user_key="u", channel_key="c", user_limit_per_hour=5, channel_limit_per_hour=0, now=t0 + 3614.5
            )
        assert "Try again in 1 second." in refused.value.user_message
        await limiter.check_and_record(
            user_key="u", channel_key="c", user_limit_per_hour=5, channel_limit_per_hour=0, now=t0 + 3616
        )


async def test_zero_means_unlimited_but_hits_are_still_recorded(tmp_path):
    async with await Storage.open(str(tmp_path / "c.db")) as storage:
        limiter = RateLimiter(storage)
        for i in range(30):
            await limiter.check_and_record(
                user_key="u", channel_key="c", user_limit_per_hour=0, channel_limit_per_hour=0, now=100.0 + i
            )
        assert (
            len(await storage.rate_limits.hits_since("user:u", 0)) == 30
            and len(await storage.rate_limits.hits_since("channel:c", 0)) == 30
        )
        with pytest.raises(RateLimited, match=r"You have asked 30 councils .*\(limit 10\)"):
            await limiter.check_and_record(
                user_key="u", channel_key="c", user_limit_per_hour=10, channel_limit_per_hour=0, now=200.0
            )


async def test_gate_refuses_in_slot_when_the_queue_is_full():
    gate = ConcurrencyGate(max_concurrent=1, max_queued=0)
    async with gate.slot():
        with pytest.raises(Overloaded, match="Every council slot is busy"):
            async with gate.slot():
                pass
        assert gate.running == 1 and gate.waiting == 0
    gate = ConcurrencyGate(max_concurrent=1, max_queued=1)
    async with gate.slot():
        queued = asyncio.create_task(_enter_and_leave(gate))
        await asyncio.sleep(0.01)
        with pytest.raises(Overloaded, match="1 council is already waiting"):
            async with gate.slot():
                pass
    await queued
    assert gate.running == 0 and gate.waiting == 0


async def _enter_and_leave(gate, on_queued=None, log=None, name=None):
    async with gate.slot(on_queued):
        if log is not None:
            log.append(name)
        await asyncio.sleep(0)


async def test_gate_waiter_cancelled_after_being_handed_a_slot_passes_it_on():
    gate = ConcurrencyGate(max_concurrent=1, max_queued=5)
    entered = []
    holder = gate.slot()
    await holder.__aenter__()
    first = asyncio.create_task(_enter_and_leave(gate, log=entered, name="first"))
    second = asyncio.create_task(_enter_and_leave(gate, log=entered, name="second"))
    await asyncio.sleep(0.01)
    assert gate.waiting == 2
    await holder.__aexit__(None, None, None)  # hands the slot to `first`...
    first.cancel()  # ...which is cancelled before it could run
    with pytest.raises(asyncio.CancelledError):
        await first
    await second
    assert entered == ["second"] and gate.running == 0 and gate.waiting == 0


async def test_gate_survives_a_failing_on_queued_callback():
    gate = ConcurrencyGate(max_concurrent=1, max_queued=5)
    entered = []

    async def broken(position):
        raise RuntimeError("could not post the queue notice")

    async with gate.slot():
        task = asyncio.create_task(_enter_and_leave(gate, broken, entered, "queued"))
        await asyncio.sleep(0.01)
        assert gate.waiting == 1
    await task
    assert entered == ["queued"] and gate.running == 0


async def test_gate_many_councils_with_cancellations_leak_nothing():
    gate = ConcurrencyGate(max_concurrent=2, max_queued=50)
    peak = 0
    inside = 0

    async def council(i):
        nonlocal peak, inside
        async with gate.slot():
            inside += 1
            peak = max(peak, inside)
            await asyncio.sleep(0.001 * (i % 3))
            inside -= 1

    tasks = [asyncio.create_task(council(i)) for i in range(30)]
    await asyncio.sleep(0)
    for t in tasks[5::4]:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    assert peak == 2 and gate.running == 0 and gate.waiting == 0
    async with gate.slot(), gate.slot():
        assert gate.running == 2
