"""Leaderboard over a large history: fill a database with N councils, then time `service.leaderboard`.

Usage: python bench/bench_leaderboard.py [--councils 100000] [--rounds 1000] [--postgres]
SQLite by default; `--postgres` starts a throw-away PostgreSQL server (tests/pg_server.py) instead.
The councils are synthetic (5 models of known strength, noisy reviewers) but stored through the
real Storage code, so the timing covers the SQL read, the Rust Bradley-Terry fit with bootstrap
intervals, and the per-model statistics.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import random
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.service import CouncilService
from core.settings import Settings
from tests.factories import make_result

MODELS = ["m-a", "m-b", "m-c", "m-d", "m-e"]  # true strength order


def noisy_order(rng: random.Random) -> tuple[str, ...]:
    # Each model's perceived quality = strength + noise; a sort gives a plausible council outcome.
    return tuple(sorted(MODELS, key=lambda m: MODELS.index(m) + rng.gauss(0, 1.2))[:3])


@contextlib.contextmanager
def bench_database(db: str | None, postgres: bool) -> Iterator[tuple[str, bool]]:
    """(DATABASE_URL, whether it is filled already): the SQLite file `db` (reused when it exists), a
    temporary one, or with `postgres` a throw-away PostgreSQL server (tests/pg_server.py)."""
    with tempfile.TemporaryDirectory() as tmp:
        if postgres:
            from tests.pg_server import PostgresServer

            server = PostgresServer().start()
            try:
                yield server.new_database(), False
            finally:
                server.stop()
            return
        path = Path(db) if db else Path(tmp, "bench.db")
        yield f"sqlite:///{path}", path.exists()


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--councils", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=1000)
    parser.add_argument("--db", help="keep the filled SQLite database here and reuse it on later runs")
    parser.add_argument("--postgres", action="store_true", help="run on a temporary PostgreSQL server")
    args = parser.parse_args()
    rng = random.Random(7)
    with bench_database(args.db, args.postgres) as (url, reuse):
        settings = Settings(_env_file=None, DATABASE_URL=url, LLM_BASE_URL="http://127.0.0.1:9/v1")
        service = await CouncilService.open(settings)
        print(f"backend: {service.storage.backend}")
        if not reuse:
            await fill(service, args.councils, rng)

        for label, origin, scope in (("all councils", None, "all"),):
            timings = []
            for _ in range(3):
                board = await service.leaderboard(origin, scope, rounds=args.rounds)
                timings.append(board.computed_s)
            print(
                f"leaderboard ({label}): {board.councils:,} councils, {board.ballots:,} ballots, {args.rounds} "
                f"bootstrap rounds: best {min(timings):.2f} s, median {sorted(timings)[1]:.2f} s"
            )
            for row in board.rows:
                print(
                    f"  {row.model:6} rating {row.rating:7.1f}  95% CI {row.low:7.1f}–{row.high:7.1f}  "
                    f"win {row.win_rate:.2f}"
                )
        await split(service, args.rounds)
        await service.aclose()


async def split(service: CouncilService, rounds: int) -> None:
    """Where the time goes (each part timed alone; the service overlaps the fit with the statistics),
    and the same history rated the way it was before running totals: every ballot read and
    bootstrapped one by one. Ratings must agree exactly, intervals statistically."""
    from core.ranking import leaderboard, leaderboard_counted

    started = time.perf_counter()
    counted = await service.storage.stats.ballot_counts()
    read_s = time.perf_counter() - started
    started = time.perf_counter()
    await service.storage.stats.model_stats()
    stats_s = time.perf_counter() - started
    started = time.perf_counter()
    new = leaderboard_counted(counted.orders, counted.counts, rounds=rounds, seed=0)
    fit_s = time.perf_counter() - started
    print(f"  split: ballot counts read {read_s:.3f} s, model stats {stats_s:.3f} s, fit + bootstrap {fit_s:.3f} s")

    started = time.perf_counter()
    orders = (await service.storage.stats.ballot_orders()).orders
    old_read_s = time.perf_counter() - started
    started = time.perf_counter()
    old = leaderboard(orders, rounds=rounds, seed=0)
    old_fit_s = time.perf_counter() - started
    print(f"  per-ballot way (before): ballots read {old_read_s:.2f} s, fit + bootstrap {old_fit_s:.2f} s")
    by_model = {r.model: r for r in old}
    for r in new:
        o = by_model[r.model]
        print(
            f"  {r.model:6} rating {r.rating:7.2f} vs {o.rating:7.2f} per ballot; CI width "
            f"{r.high - r.low:5.2f} vs {o.high - o.low:5.2f}"
        )


async def fill(service: CouncilService, councils: int, rng: random.Random) -> None:
    started = time.perf_counter()
    batch = []
    for i in range(councils):
        batch.append(make_result(council_id=f"{i:016x}", order=noisy_order(rng), channel_id=f"C{i % 20}"))
        if len(batch) == 2000:
            await service.storage.councils.save(batch)
            batch.clear()
    if batch:
        await service.storage.councils.save(batch)
    fill_s = time.perf_counter() - started
    print(f"stored {councils:,} councils in {fill_s:.1f} s")


if __name__ == "__main__":
    asyncio.run(main())
