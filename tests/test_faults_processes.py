"""PostgreSQL goes away under a running bot and comes back (issue 37): `council slack --http`
(its procrastinate worker in the same process)
loses its database while the councils' reviewers think. Checked: /ready answers 503 during
the outage and 200 after it, both councils are answered exactly once in their threads and stored
once each, and the process never prints a traceback."""

from __future__ import annotations

import asyncio
import time

import aiohttp
import pytest

from tests.test_durable_processes import (
    QUESTIONS,
    BotProcess,
    answers_in,
    asked,
    bot_env,
    fake,  # noqa: F401 (fixture)
    llm_slow_reviews,  # noqa: F401 (fixture)
    send,
    stored_counts,
    until_settled,
    waited,
)
from tests.test_slack_run import answers, mention

pytestmark = pytest.mark.slow
OUTAGE_S = 10.0  # long enough for psycopg_pool's uncapped reconnect backoff to reach 8 s
BACK_WITHIN_S = 6.0  # ready again this soon after the server is


async def ready_status(session: aiohttp.ClientSession, bot: BotProcess) -> tuple[int, str]:
    async with session.get(bot.url + "/ready") as response:
        return response.status, await response.text()


async def until_ready_is(session: aiohttp.ClientSession, bot: BotProcess, status: int, timeout: float) -> float:
    started = time.monotonic()
    while (seen := await ready_status(session, bot))[0] != status:
        assert time.monotonic() - started < timeout, f"/ready stayed {seen}: {bot.log.read_text()[-3000:]}"
        await asyncio.sleep(0.2)
    return time.monotonic() - started


async def test_postgresql_outage_under_a_running_bot(pg_server, llm_slow_reviews, fake, tmp_path):  # noqa: F811
    llm, database_url = llm_slow_reviews, pg_server.new_database()
    env = bot_env(llm, fake, database_url) | {"DATABASE_WAIT_S": "60"}
    bot = BotProcess(env, tmp_path / "bot.log")
    async with aiohttp.ClientSession() as session:
        try:
            await bot.start(session)
            await until_ready_is(session, bot, 200, 30)
            threads = []
            for i, question in enumerate(QUESTIONS):
                ts, body = mention(fake, question, f"Ev{i}")
                threads.append(ts)
                await send(session, bot, body)
            await waited(fake, lambda: asked(llm, QUESTIONS[0], 2) > 0, 60)

            await asyncio.to_thread(pg_server.stop_fast)
            unready_s = await until_ready_is(session, bot, 503, 15)
            await asyncio.sleep(OUTAGE_S)
            await asyncio.to_thread(pg_server.start_again)
            ready_s = await until_ready_is(session, bot, 200, BACK_WITHIN_S)

            await waited(fake, lambda: all(answers_in(fake, ts) >= 1 for ts in threads), 90)
            await until_settled(database_url)
            print(f"\n[pg outage] /ready 503 after {unready_s:.1f} s, 200 again {ready_s:.1f} s after the restart")
            assert [answers_in(fake, ts) for ts in threads] == [1, 1]
            assert len(answers(fake)) == 2
            councils, _, statuses = await stored_counts(database_url)
            assert councils == 2 and statuses == ["ok", "ok"]
        finally:
            await bot.stop()
