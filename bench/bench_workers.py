"""Durable councils per second with one worker process vs several, on one PostgreSQL queue.

Usage: python bench/bench_workers.py [--councils 36] [--workers 1,3] [--concurrency 4] [--latency 0.3]

Starts a throw-away PostgreSQL server (tests/pg_server.py) and the scripted LLM server (every
model call takes `--latency` seconds). For each worker count it starts that many worker
processes (this script with `--worker`: a CouncilService running its procrastinate worker,
`--concurrency` councils at a time each, delivering by waiting for the result and claiming it),
then this process accepts `--councils` councils through `submit_council` (the path a chat bot
takes) and times until every one is stored. Intake and work are separate processes, as in a
deployment with `council worker`.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from core.durable.runs import CouncilRun  # noqa: E402
from core.models import Destination, Origin, Platform  # noqa: E402
from core.service import CouncilService  # noqa: E402
from core.settings import Settings  # noqa: E402

MEMBERS = ["m1", "m2", "m3"]


def settings(llm_url: str, database_url: str, concurrency: int) -> Settings:
    return Settings(
        _env_file=None,
        LLM_BASE_URL=llm_url,
        LLM_API_KEY="bench",
        COUNCIL_MODELS=",".join(MEMBERS),
        COUNCIL_CHAIRMAN="m1",
        DATABASE_URL=database_url,
        RATE_LIMIT_USER_PER_HOUR=0,
        RATE_LIMIT_CHANNEL_PER_HOUR=0,
        COUNCIL_MAX_QUEUED=10_000,
        COUNCIL_WORKER_CONCURRENCY=concurrency,
        COUNCIL_QUEUE_HEARTBEAT_S=1,
        LOG_LEVEL="WARNING",
    )


async def worker(llm_url: str, database_url: str, concurrency: int) -> None:
    service = await CouncilService.open(settings(llm_url, database_url, concurrency))

    async def deliver(run: CouncilRun, destination: Destination, resumed: bool) -> None:
        await run.wait()
        await service.durable.claim_delivery(run.council_id)

    service.register_deliverer(Platform.SLACK, deliver)
    try:
        await service.durable.work()
    finally:
        await service.aclose()


async def finished(service: CouncilService) -> int:
    rows = await service.storage.db.fetchall("SELECT COUNT(*) FROM councils WHERE status != 'running'")
    return int(rows[0][0])


async def measure(llm_url: str, database_url: str, workers: int, args: argparse.Namespace) -> float:
    processes = [
        await asyncio.create_subprocess_exec(
            sys.executable,
            __file__,
            "--worker",
            llm_url,
            database_url,
            str(args.concurrency),
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        for _ in range(workers)
    ]
    service = await CouncilService.open(settings(llm_url, database_url, args.concurrency))
    try:
        await service.durable.queue()  # the queue's schema exists before the workers look for jobs
        await asyncio.sleep(3)  # the workers are up and listening
        before = await finished(service)
        started = time.perf_counter()
        for i in range(args.councils):
            origin = Origin(platform=Platform.SLACK, workspace_id="T", channel_id="C", user_id=f"U{i}")
            destination = Destination(platform=Platform.SLACK, channel_id="C", thread_id=f"{i}.0")
            await service.submit_council(f"Question {i}: what is {i} times seven?", origin, destination=destination)
        for _ in range(int(600 / 0.05)):  # polled: the councils finish in other processes
            if await finished(service) >= before + args.councils:
                return args.councils / (time.perf_counter() - started)
            await asyncio.sleep(0.05)
        raise TimeoutError("the councils did not all finish within 10 minutes")
    finally:
        await service.aclose()
        for process in processes:
            process.terminate()
        await asyncio.gather(*(p.wait() for p in processes))


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--councils", type=int, default=36)
    parser.add_argument("--workers", default="1,3", help="worker process counts to compare")
    parser.add_argument("--concurrency", type=int, default=4, help="councils one worker runs at once")
    parser.add_argument("--latency", type=float, default=0.3, help="seconds each model call takes")
    parser.add_argument("--worker", nargs=3, metavar=("LLM_URL", "DATABASE_URL", "CONCURRENCY"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        llm_url, database_url, concurrency = args.worker
        await worker(llm_url, database_url, int(concurrency))
        return

    from tests.llm_server import ScriptedLLMServer, council_member
    from tests.pg_server import PostgresServer

    server = PostgresServer().start()
    try:
        async with ScriptedLLMServer(record=False) as llm:
            for name in MEMBERS:
                llm.script(name, council_member(f"{name}: 42.", latency_s=args.latency))
            print(
                f"{args.councils} councils, 3 members, {args.latency:.2f} s per model call, "
                f"{args.concurrency} councils at a time per worker process"
            )
            for count in [int(n) for n in args.workers.split(",")]:
                rate = await measure(llm.base_url, server.new_database(), count, args)
                print(f"  {count} worker process(es): {rate:.2f} councils/s")
    finally:
        server.stop()


if __name__ == "__main__":
    asyncio.run(main())
