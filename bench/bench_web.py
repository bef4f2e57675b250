"""The browser app over a large history: fill a database with N councils, serve bot/web with uvicorn
on loopback, and time pages over real HTTP (time to the response's first byte, as a browser waits).

Usage: python bench/bench_web.py [--councils 100000] [--db PATH] [--postgres] [--repeat 30]

The app runs as `council web` in its own process, as deployed; this process is the client.

Measured: the first page of `/` (history, newest first), a page deep in the history (keyset
cursor), a full-text search (`/?q=`), a stored council's page `/c/<id>`, and the weight of that
page: its HTML besides the council's own text (question, answers, reviews, synthesis), plus the
stylesheet and the script. Then the emphasis bomb: councils whose answer is nested emphasis
(`"*a " * 20000 + "b" + " a*" * 20000`, 117 KB, over a second of markdown-it) opened while `/` is
timed beside them: rendering is off the event loop and within a budget, so `/` stays under 100 ms.
The councils are stored through the real Storage code (each with three answers, four reviews and
a synthesis, varied words so that the full-text index is realistic).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import re
import statistics
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench_leaderboard import bench_database

from core.models import CouncilResult
from core.service import CouncilService
from core.settings import Settings
from tests.factories import make_result

ROOT = Path(__file__).resolve().parent.parent

# Text of common words (every council has them: a search for them is the worst case, all match)
# and, one word in five, rare ones (`term0` .. `term19999`: a search for one matches a few hundred).
COMMON = (
    "capital budget latency database migration cache index queue schema kernel compiler tokenizer "
    "volcano glacier harbour orchard violin sonnet theorem prism lattice gradient protocol archive"
).split()
RARE = 20_000


def realistic(i: int, rng: random.Random) -> CouncilResult:
    result = make_result(council_id=f"{i:016x}", channel_id=f"C{i % 20}", user_id=f"U{i % 50}")

    def words(n: int) -> str:
        return " ".join(rng.choice(COMMON) if rng.random() < 0.8 else f"term{rng.randrange(RARE)}" for _ in range(n))

    answers = [a.model_copy(update={"text": words(120)}) if a.text else a for a in result.answers]
    synthesis = result.synthesis.model_copy(update={"text": words(200)}) if result.synthesis else None
    request = result.request.model_copy(update={"question": f"Question {i}: {words(12)}?"})
    return result.model_copy(update={"answers": answers, "synthesis": synthesis, "request": request})


async def fill(service: CouncilService, councils: int) -> None:
    rng, started, batch = random.Random(7), time.perf_counter(), []
    for i in range(councils):
        batch.append(realistic(i, rng))
        if len(batch) == 2000:
            await service.storage.councils.save(batch)
            batch.clear()
    if batch:
        await service.storage.councils.save(batch)
    print(f"stored {councils:,} councils in {time.perf_counter() - started:.1f} s")


async def first_byte(client: httpx.AsyncClient, path: str, repeat: int) -> tuple[list[float], bytes]:
    timings, body = [], b""
    for _ in range(repeat):
        started = time.perf_counter()
        async with client.stream("GET", path) as response:
            chunks = response.aiter_raw()
            first = await anext(chunks)
            timings.append((time.perf_counter() - started) * 1000)
            body = first + b"".join([chunk async for chunk in chunks])
            assert response.status_code == 200, (path, response.status_code)
    return timings, body


def line(label: str, timings: list[float], limit_ms: float | None = None) -> None:
    median, p95 = statistics.median(timings), sorted(timings)[int(len(timings) * 0.95) - 1]
    verdict = "" if limit_ms is None else f"  (budget {limit_ms:.0f} ms: {'ok' if p95 < limit_ms else 'OVER'})"
    print(f"{label:44} median {median:6.1f} ms  p95 {p95:6.1f} ms{verdict}")


def council_text(result: CouncilResult) -> int:
    texts = [result.request.question, *(a.text or "" for a in result.answers), *(r.text or "" for r in result.reviews)]
    texts.append(result.synthesis.text if result.synthesis else "")
    return sum(len(t.encode()) for t in texts)


@contextlib.asynccontextmanager
async def council_web(database_url: str) -> AsyncIterator[str]:
    """`council web` as its own process on a free port (as deployed; the client is this process)."""
    env = {**os.environ, "DATABASE_URL": database_url, "LLM_BASE_URL": "http://127.0.0.1:9/v1", "PYTHONPATH": str(ROOT)}
    for name in ("COUNCIL_API_KEYS", "SLACK_CLIENT_ID", "DISCORD_CLIENT_ID"):
        env.pop(name, None)
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot.cli", "web", "--port", "0", env=env, stderr=asyncio.subprocess.PIPE
    )
    assert process.stderr is not None
    line = (await asyncio.wait_for(process.stderr.readline(), 60)).decode()
    found = re.search(r"http://[\d.]+:\d+", line)
    assert found, line
    try:
        yield found[0]
    finally:
        process.terminate()
        await process.wait()


async def measure(service: CouncilService, database_url: str, repeat: int) -> None:
    async with council_web(database_url) as url, httpx.AsyncClient(base_url=url, timeout=30) as client:
        await client.get("/")  # templates compiled, connections pooled: a warm server, as in use
        first, _ = await first_byte(client, "/", repeat)
        line("history, first page (25 of all)", first, 100)
        page = (await client.get("/", headers={"Accept": "application/json"})).json()
        for _ in range(200):  # 200 pages deep through the keyset cursor
            page = (
                await client.get("/", params={"after": page["next"]}, headers={"Accept": "application/json"})
            ).json()
        deep, _ = await first_byte(client, f"/?after={page['next']}", repeat)
        line("history, page 201 (keyset cursor)", deep)
        rare = (await client.get("/", params={"q": "term4242"}, headers={"Accept": "application/json"})).json()
        search, _ = await first_byte(client, "/?q=term4242", repeat)
        line(f"search, a rare word ({len(rare['councils'])}{'+' if rare['next'] else ''} shown)", search)
        search, _ = await first_byte(client, "/?q=volcano+sonnet", repeat)
        line("search, two words in every council (worst)", search)
        council_id = page["councils"][0]["council_id"]
        shown, body = await first_byte(client, f"/c/{council_id}", repeat)
        line("a stored council's page", shown, 50)
        css = len((await client.get("/static/app.css")).content)
        js = len((await client.get("/static/app.js")).content)
        result = await service.queries.get_result(council_id)
        text = council_text(result)
        besides = len(body) - text + css + js
        print(
            f"council page weight: HTML {len(body) / 1024:.1f} KB, of which the council's text {text / 1024:.1f} KB; "
            f"CSS {css / 1024:.1f} KB, JS {js / 1024:.1f} KB; besides the text {besides / 1024:.1f} KB "
            f"(budget 150 KB: {'ok' if besides < 150 * 1024 else 'OVER'})"
        )


BOMB = "*a " * 20000 + "b" + " a*" * 20000


async def bombs(service: CouncilService, count: int) -> list[str]:
    """`count` stored councils whose final answer is an emphasis bomb (each a little different, so
    that none is rendered from another's cache)."""
    ids = []
    for i in range(count):
        result = make_result(council_id=f"b0b{i:013x}")
        synthesis = result.synthesis.model_copy(update={"text": BOMB + f" variant {i}"}) if result.synthesis else None
        await service.storage.save_result(result.model_copy(update={"synthesis": synthesis}))
        ids.append(result.council_id)
    return ids


async def measure_bomb(service: CouncilService, database_url: str, repeat: int) -> None:
    ids = await bombs(service, 4)
    async with council_web(database_url) as url, httpx.AsyncClient(base_url=url, timeout=60) as client:
        await client.get("/")
        alone, _ = await first_byte(client, "/", repeat)
        line("history, first page, alone", alone)
        started = time.perf_counter()
        pages = [asyncio.create_task(client.get(f"/c/{council_id}")) for council_id in ids]
        beside, _ = await first_byte(client, "/", repeat)
        opened = await asyncio.gather(*pages)
        took = time.perf_counter() - started
        line(f"history beside {len(ids)} emphasis bombs opened", beside, 100)
        plain = sum('<pre class="plain">' in page.text for page in opened)
        print(f"the {len(ids)} bomb pages answered within {took:.1f} s, {plain} of them as plain text (over budget)")
        again, _ = await first_byte(client, f"/c/{ids[0]}", repeat)
        line("a bomb's page again (its HTML cached)", again, 50)


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--councils", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--db", help="keep the filled SQLite database here and reuse it on later runs")
    parser.add_argument("--postgres", action="store_true", help="run on a temporary PostgreSQL server")
    args = parser.parse_args()
    with bench_database(args.db, args.postgres) as (url, reuse):
        settings = Settings(_env_file=None, DATABASE_URL=url, LLM_BASE_URL="http://127.0.0.1:9/v1")
        async with await CouncilService.open(settings) as service:
            print(f"backend: {service.storage.backend}")
            if not reuse:
                await fill(service, args.councils)
            await measure(service, url, args.repeat)
            await measure_bomb(service, url, args.repeat)


if __name__ == "__main__":
    asyncio.run(main())
