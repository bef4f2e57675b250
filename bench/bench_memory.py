"""Resident memory of a long-running `council api` process as councils go through it.

What an operator sees: `council api` on SQLite in its own process, the scripted server
(tests/llm_server.py, bench_engine's, in its own process) answering at once, councils asked over
the OpenAI-compatible endpoint with httpx, `--concurrency` at a time. After `--warmup` councils
(pools, caches, the allocator's arenas filled), the api process's resident memory (VmRSS) is
read every `--every` councils up to `--councils`; the growth per council after warm-up is what a
process keeps per council that it never gives back (docs/memory.md: the target is at most 10 KB).

    python bench/bench_memory.py
    python bench/bench_memory.py --councils 5000 --every 1000 --concurrency 50 --warmup 200
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import os
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import httpx  # noqa: E402
from bench_api import KEY, QUESTION, council_env  # noqa: E402
from bench_engine import Timing, _server_process  # noqa: E402


def rss_mb(pid: int) -> float:
    """Resident memory of a process (Linux /proc), in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for process {pid}")


async def start_api(env: dict[str, str]) -> tuple[asyncio.subprocess.Process, str, asyncio.Task[None]]:
    """`council api` on a free port; its stderr is read to the end in the background (a full pipe
    would block its logging, and so the process)."""
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot.cli", "api", "--port", "0",
        env={**os.environ, **env, "PYTHONPATH": str(ROOT)}, cwd=ROOT, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert process.stderr is not None
    line = (await process.stderr.readline()).decode()
    match = re.search(r"(http://\S+/v1)", line)
    if not match:
        raise SystemExit(f"council api did not start: {line}{(await process.stderr.read()).decode()}")
    stderr = process.stderr

    async def drain() -> None:
        while await stderr.read(65536):
            pass

    return process, match.group(1), asyncio.create_task(drain())


async def ask_many(http: httpx.AsyncClient, base_url: str, numbers: range, concurrency: int) -> None:
    """Councils numbered `numbers`, `concurrency` at a time; each must answer."""
    pending = iter(numbers)

    async def worker() -> None:
        for i in pending:  # one shared iterator: each number is asked once
            response = await http.post(
                f"{base_url}/chat/completions",
                headers={"Authorization": f"Bearer {KEY}"},
                json={"model": "llm-council", "messages": [{"role": "user", "content": f"{QUESTION} #{i}"}]},
            )
            response.raise_for_status()

    await asyncio.gather(*(worker() for _ in range(concurrency)))


async def measure(args: argparse.Namespace) -> None:
    base, stop_server = await _server_process(Timing(0.0, 0.0))
    tmp = Path(tempfile.mkdtemp(prefix="bench-memory-"))
    process, api_url, drain = await start_api({**council_env(base, tmp / "api.db"), "LOG_LEVEL": "WARNING"})
    try:
        # Idle connections are let go well before uvicorn's 5 s keep-alive closes them: a request
        # sent on one it is closing fails with ReadError (on a loaded machine, batches pause).
        limits = httpx.Limits(
            max_connections=args.concurrency * 2, max_keepalive_connections=args.concurrency * 2, keepalive_expiry=1.0
        )
        async with httpx.AsyncClient(timeout=300, limits=limits) as http:
            print(
                f"python {sys.version.split()[0]}, {os.cpu_count()} CPU(s); `council api` on SQLite, pid {process.pid}"
            )
            print(f"rss at start: {rss_mb(process.pid):.1f} MB")
            started = time.perf_counter()
            await ask_many(http, api_url, range(args.warmup), args.concurrency)
            base_mb = rss_mb(process.pid)
            print(f"rss after a warm-up of {args.warmup} councils: {base_mb:.1f} MB")
            print(f"\n{'councils':>9}{'rss MB':>10}{'growth MB':>11}{'KB/council':>12}{'councils/s':>12}")
            done = args.warmup
            for mark in itertools.count(args.every, args.every):
                if mark > args.councils:
                    break
                batch_started = time.perf_counter()
                await ask_many(http, api_url, range(done, args.warmup + mark), args.concurrency)
                rate = (args.warmup + mark - done) / (time.perf_counter() - batch_started)
                done = args.warmup + mark
                now = rss_mb(process.pid)
                per = (now - base_mb) * 1024 / mark
                print(f"{mark:>9}{now:>10.1f}{now - base_mb:>+11.1f}{per:>12.1f}{rate:>12.1f}")
            print(f"\n{done} councils in {time.perf_counter() - started:.0f}s")
    finally:
        process.terminate()
        await process.wait()
        drain.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await drain
        await stop_server()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--councils", type=int, default=5000, help="councils measured after the warm-up")
    parser.add_argument("--every", type=int, default=1000, help="read the resident memory every this many")
    parser.add_argument("--concurrency", type=int, default=50)
    parser.add_argument("--warmup", type=int, default=200)
    asyncio.run(measure(parser.parse_args()))


if __name__ == "__main__":
    main()
