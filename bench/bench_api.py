"""Benchmark of the OpenAI-compatible API layer over calling the council service directly.

The scripted LLM server runs in its own process (bench_engine's), with a fixed latency per call:
councils of 4 members + chairman, so the critical path is 2 x latency + the chairman's chunks.

  direct  CouncilService.ask() in this process (the engine, storage, limits: what adapters call)
          (+ events rendered: also following every event into the API's transcript, no HTTP)
  api     `council api` in its own process, asked over loopback HTTP with httpx, without streaming
  stream  the same with `stream: true`: time to the first byte, to the first progress
          (reasoning) chunk and to the first answer token, and to `[DONE]`

Each for 1 council (median of --repeat runs) and N concurrent ones (default 50, median of --rounds).

    python bench/bench_api.py
    python bench/bench_api.py --councils 50 --latency 0.2 --repeat 5
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import httpx  # noqa: E402
from bench_engine import CHAIRMAN, MEMBERS, SYNTHESIS_CHUNKS, Timing, _server_process  # noqa: E402

from bot.api.transcript import CouncilTranscript  # noqa: E402
from core.models import CouncilFinished, Origin  # noqa: E402
from core.service import CouncilService  # noqa: E402
from core.settings import Settings  # noqa: E402

KEY = "bench-key-not-secret"
CPU: dict[tuple[str, int], float] = {}  # CPU seconds of the council's process in the last run of each kind
QUESTION = "What is six times seven, and why?"


def council_env(base_url: str, database: Path) -> dict[str, str]:
    return {
        "LLM_BASE_URL": base_url,
        "LLM_API_KEY": "bench-upstream",
        "LLM_MAX_RETRIES": "0",
        "LLM_MAX_CONNECTIONS": "2000",
        "COUNCIL_MODELS": ",".join(MEMBERS),
        "COUNCIL_CHAIRMAN": CHAIRMAN,
        "COUNCIL_MAX_CONCURRENT": "500",
        "COUNCIL_MAX_QUEUED": "500",
        "RATE_LIMIT_USER_PER_HOUR": "0",
        "RATE_LIMIT_CHANNEL_PER_HOUR": "0",
        "COUNCIL_API_KEYS": f"bench:{KEY}",
        "DATABASE_URL": f"sqlite:///{database}",
    }


async def _followed(service: CouncilService, question: str):
    """What the API does minus HTTP: follow every event and render the transcript."""
    run = await service.start_council(question, Origin())
    transcript = CouncilTranscript()
    async for event in run.events():
        if isinstance(event, CouncilFinished):
            transcript.finish(event.result)
            return event.result
        transcript.on_event(event)


async def direct(service: CouncilService, councils: int, follow: bool = False) -> float:
    started, cpu = time.perf_counter(), time.process_time()
    ask = (lambda q: _followed(service, q)) if follow else service.ask
    results = await asyncio.gather(*(ask(f"{QUESTION} #{i}") for i in range(councils)))
    took = time.perf_counter() - started
    CPU[("direct+" if follow else "direct", councils)] = time.process_time() - cpu
    assert all(r.status.value == "ok" for r in results), [r.status for r in results]
    return took


async def start_api(env: dict[str, str]):
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot.cli", "api", "--port", "0",
        env={**os.environ, **env, "PYTHONPATH": str(ROOT)}, cwd=ROOT, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    line = (await process.stderr.readline()).decode()
    match = re.search(r"(http://\S+/v1)", line)
    if not match:
        raise SystemExit(f"council api did not start: {line}{(await process.stderr.read()).decode()}")
    return process, match.group(1)


async def api_round(http: httpx.AsyncClient, base_url: str, councils: int, pid: int) -> float:
    async def one(i: int) -> None:
        response = await http.post(
            f"{base_url}/chat/completions",
            headers={"Authorization": f"Bearer {KEY}"},
            json={"model": "llm-council", "messages": [{"role": "user", "content": f"{QUESTION} #{i}"}]},
        )
        response.raise_for_status()

    started, cpu = time.perf_counter(), _cpu_of(pid)
    await asyncio.gather(*(one(i) for i in range(councils)))
    took = time.perf_counter() - started
    CPU[("api", councils)] = _cpu_of(pid) - cpu
    return took


def _cpu_of(pid: int) -> float:
    """User + system CPU seconds of a process so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def stream_once(http: httpx.AsyncClient, base_url: str) -> dict[str, float]:
    marks: dict[str, float] = {}
    started = time.perf_counter()
    async with http.stream(
        "POST", f"{base_url}/chat/completions", headers={"Authorization": f"Bearer {KEY}"},
        json={"model": "llm-council", "stream": True, "messages": [{"role": "user", "content": QUESTION}]},
    ) as response:  # fmt: skip
        async for chunk in response.aiter_raw():
            now = time.perf_counter() - started
            marks.setdefault("first_byte", now)
            if b"reasoning_content" in chunk:
                marks.setdefault("first_progress", now)
            if b'"content": "' in chunk and b'"content": ""' not in chunk:
                marks.setdefault("first_token", now)
            if b"[DONE]" in chunk:
                marks["done"] = now
    return marks


async def main_async(args: argparse.Namespace) -> None:
    timing = Timing(args.latency, args.chunk)
    base, stop_server = await _server_process(timing)
    tmp = Path(tempfile.mkdtemp(prefix="bench-api-"))
    try:
        print(
            f"python {sys.version.split()[0]}, {os.cpu_count()} CPU(s); 4 members + chairman; call latency "
            f"{timing.latency_s}s, chairman {SYNTHESIS_CHUNKS} chunks x {timing.chunk_s}s; "
            f"critical path {timing.critical_path_s:.3f}s"
        )
        print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        # One warm service for every run, as the API process has: pooled connections, SQLite open.
        service = await CouncilService.open(Settings(_env_file=None, **council_env(base, tmp / "direct.db")))
        try:
            await direct(service, 1)
            direct_one = statistics.median([await direct(service, 1) for _ in range(args.repeat)])
            direct_many = statistics.median([await direct(service, args.councils) for _ in range(args.rounds)])
            followed_one = statistics.median([await direct(service, 1, follow=True) for _ in range(args.repeat)])
            followed_many = statistics.median(
                [await direct(service, args.councils, follow=True) for _ in range(args.rounds)]
            )
        finally:
            await service.aclose()

        process, api_url = await start_api(council_env(base, tmp / "api.db"))
        try:
            limits = httpx.Limits(max_connections=1000, max_keepalive_connections=1000)
            async with httpx.AsyncClient(timeout=120, limits=limits) as http:
                await api_round(http, api_url, 1, process.pid)  # warm-up
                api_one = statistics.median(
                    [await api_round(http, api_url, 1, process.pid) for _ in range(args.repeat)]
                )
                api_many = statistics.median(
                    [await api_round(http, api_url, args.councils, process.pid) for _ in range(args.rounds)]
                )
                streams = [await stream_once(http, api_url) for _ in range(args.repeat)]
        finally:
            process.terminate()
            await process.wait()

        print(f"\n{'wall time':24}{'1 council':>12}{f'{args.councils} concurrent':>16}")
        print(f"{'direct (service.ask)':<24}{direct_one:>11.3f}s{direct_many:>15.3f}s")
        print(f"{'direct + events rendered':<24}{followed_one:>11.3f}s{followed_many:>15.3f}s")
        print(f"{'api (HTTP, no stream)':<24}{api_one:>11.3f}s{api_many:>15.3f}s")
        print(f"{'api overhead':<24}{api_one - direct_one:>+11.3f}s{api_many - direct_many:>+15.3f}s")
        n = args.councils
        print(f"\nCPU of the council's process for {n} concurrent councils (last run), per council:")
        for kind, label in (("direct", "direct"), ("direct+", "direct + events rendered"), ("api", "api process")):
            print(f"  {label:<26}{CPU[(kind, n)] / n * 1000:>8.1f} ms")
        print(f"  {'api overhead':<26}{(CPU[('api', n)] - CPU[('direct', n)]) / n * 1000:>+8.1f} ms")
        print(f"\nstreamed, 1 council (median of {args.repeat}):")
        for mark in ("first_byte", "first_progress", "first_token", "done"):
            values = [s[mark] for s in streams if mark in s]
            print(f"  {mark:<16}{statistics.median(values) * 1000:>9.1f} ms")
    finally:
        await stop_server()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--councils", type=int, default=50)
    parser.add_argument("--latency", type=float, default=0.2, help="seconds per stage-1/stage-2 call")
    parser.add_argument("--chunk", type=float, default=0.02, help="seconds between chairman chunks")
    parser.add_argument("--repeat", type=int, default=5, help="runs of 1 council (median)")
    parser.add_argument("--rounds", type=int, default=3, help="runs of N concurrent councils (median)")
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
