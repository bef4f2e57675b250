"""Benchmark of the council engine: wall time against the critical path.

Councils of 4 members run against models with a fixed latency. The critical path of one
council is the slowest stage-1 call + the slowest review + the chairman's stream; anything
above it is engine (and transport) overhead. Measured for 1 council and for N concurrent ones.

Two transports:
  http    real loopback HTTP: tests.llm_server.ScriptedLLMServer (in its own process) behind
          the real ProviderRouter (httpx over core.providers.transport's aiohttp transport)
  aiohttp the same server behind a bare aiohttp client: what HTTP costs with a leaner client
  engine  an in-process router that only sleeps: isolates the engine's own overhead
  floor   the same calls on the same sleeping router with bare asyncio.gather and no engine:
          what the event loop alone costs when N councils move in lock-step

    python bench/bench_engine.py                      # both, 1 and 200 councils
    python bench/bench_engine.py --mode http --councils 200 --latency 0.2
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import resource
import sys
import time
import tracemalloc
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from functools import partial

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from core.engine.council import run_council
from core.models import Completion, CouncilConfig, CouncilFinished, CouncilRequest, CouncilStatus, Usage
from core.providers.base import TextDelta

MEMBERS = ["bench/alpha", "bench/beta", "bench/gamma", "bench/delta"]
CHAIRMAN = "bench/chair"
ANSWER = "The answer is forty-two, because " + "it follows from the premises. " * 20
REVIEW = (
    "All four are fine; A is clearest.\n\nFINAL RANKING:\n1. Response A\n2. Response B\n3. Response C\n4. Response D"
)
SYNTHESIS_CHUNKS = 10


@dataclass
class Timing:
    latency_s: float  # one stage-1 or stage-2 call
    chunk_s: float  # delay before each streamed chunk of the chairman

    @property
    def critical_path_s(self) -> float:
        return 2 * self.latency_s + SYNTHESIS_CHUNKS * self.chunk_s


# --------------------------------------------------------------------------- engine-only router


class SleepingRouter:
    """complete() sleeps `latency_s`; stream() yields chunks `chunk_s` apart. No I/O at all."""

    def __init__(self, timing: Timing):
        self.timing = timing

    async def complete(self, model, messages, options) -> Completion:
        await asyncio.sleep(self.timing.latency_s)
        text = REVIEW if "FINAL RANKING" in messages[-1].content else ANSWER
        return Completion(model=model, text=text, usage=Usage(prompt_tokens=100, completion_tokens=50))

    async def stream(self, model, messages, options) -> AsyncIterator[TextDelta | Completion]:
        parts = []
        for i in range(SYNTHESIS_CHUNKS):
            await asyncio.sleep(self.timing.chunk_s)
            parts.append(f"part {i} ")
            yield TextDelta(parts[-1])
        yield Completion(model=model, text="".join(parts), usage=Usage(prompt_tokens=500, completion_tokens=80))

    async def aclose(self) -> None:
        pass


# --------------------------------------------------------------------------- HTTP transport


def _behaviours(timing: Timing) -> dict:
    from tests.llm_server import ByStage, Reply

    synthesis = " ".join(f"part{i}" for i in range(SYNTHESIS_CHUNKS))  # one SSE chunk per word

    def member() -> ByStage:
        return ByStage(
            Reply(ANSWER, delay_s=timing.latency_s),
            Reply(REVIEW, delay_s=timing.latency_s),
            Reply(synthesis, token_delay_s=timing.chunk_s),
        )

    return {model: member() for model in [*MEMBERS, CHAIRMAN]}


async def serve(timing: Timing) -> None:
    """Run the ScriptedLLMServer until stdin closes; print its base URL first."""
    from tests.llm_server import ScriptedLLMServer

    async with ScriptedLLMServer(_behaviours(timing), record=False) as server:
        print(server.base_url, flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)


async def http_router(timing: Timing, max_connections: int = 2000):
    """A real ProviderRouter over loopback HTTP to a ScriptedLLMServer in its own process.

    The server gets its own process (and core): in-process, its request handling would be
    charged to the engine's event loop and hide what the engine itself costs.
    """
    from core.providers.router import ProviderRouter
    from core.settings import Settings

    base_url, stop = await _server_process(timing)
    settings = Settings(
        _env_file=None,
        LLM_BASE_URL=base_url,
        LLM_API_KEY="bench-key",
        LLM_MAX_CONNECTIONS=max_connections,
        LLM_MAX_RETRIES=0,
        DATABASE_URL="sqlite:///:memory:",
    )
    router = ProviderRouter(settings)

    async def close() -> None:
        await router.aclose()
        await stop()

    return router, close


class AiohttpRouter:
    """A bare OpenAI-compatible client on aiohttp, for comparison with ProviderRouter (httpx).

    Same wire protocol and server; no retries or error typing. It exists to show how much of
    the HTTP figure is the HTTP client's own cost rather than the engine's.
    """

    def __init__(self, base_url: str):
        import aiohttp

        self.base_url = base_url
        self.session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0))

    def _body(self, model, messages, stream: bool) -> dict:
        return {
            "model": model,
            "messages": [{"role": m.role, "content": m.content} for m in messages],
            "stream": stream,
        }

    async def complete(self, model, messages, options) -> Completion:
        async with self.session.post(f"{self.base_url}/chat/completions", json=self._body(model, messages, False)) as r:
            body = await r.json()
        return Completion(model=model, text=body["choices"][0]["message"]["content"])

    async def stream(self, model, messages, options) -> AsyncIterator[TextDelta | Completion]:
        import json

        parts = []
        async with self.session.post(f"{self.base_url}/chat/completions", json=self._body(model, messages, True)) as r:
            async for line in r.content:
                line = line.strip()
                if not line.startswith(b"data: ") or line == b"data: [DONE]":
                    continue
                choices = json.loads(line[6:]).get("choices") or [{}]
                piece = (choices[0].get("delta") or {}).get("content")
                if piece:
                    parts.append(piece)
                    yield TextDelta(piece)
        yield Completion(model=model, text="".join(parts))

    async def aclose(self) -> None:
        await self.session.close()


SCRIPT = os.path.abspath(__file__)


async def _server_process(timing: Timing):
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        SCRIPT,
        "--serve",
        "--latency",
        str(timing.latency_s),
        "--chunk",
        str(timing.chunk_s),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )
    base_url = (await proc.stdout.readline()).decode().strip()

    async def stop() -> None:
        proc.stdin.close()
        await proc.wait()

    return base_url, stop


async def aiohttp_router(timing: Timing):
    base_url, stop = await _server_process(timing)
    router = AiohttpRouter(base_url)

    async def close() -> None:
        await router.aclose()
        await stop()

    return router, close


# --------------------------------------------------------------------------- runner


def _request(i: int) -> CouncilRequest:
    config = CouncilConfig(members=MEMBERS, chairman=CHAIRMAN, member_timeout_s=60, quorum=1.0, grace_s=30)
    return CouncilRequest(question=f"Question number {i}: what is six times seven?", config=config)


async def _one(router, i: int) -> tuple[float, int, CouncilStatus, dict[str, float]]:
    start = time.perf_counter()
    events = 0
    status, timings = CouncilStatus.FAILED, {}
    async for event in run_council(_request(i), router):
        events += 1
        if isinstance(event, CouncilFinished):
            status, timings = event.result.status, event.result.timings
    return time.perf_counter() - start, events, status, timings


async def measure(router, councils: int) -> dict:
    gc.collect()
    cpu0 = time.process_time()
    start = time.perf_counter()
    results = await asyncio.gather(*(_one(router, i) for i in range(councils)))
    wall = time.perf_counter() - start
    cpu = time.process_time() - cpu0
    statuses = {r[2].value for r in results}
    if statuses != {"ok"}:
        print(f"  ! not every council succeeded: {sorted(statuses)}", file=sys.stderr)
    stages = {k: sum(r[3].get(k, 0.0) for r in results) / councils for k in ("stage1_s", "stage2_s", "stage3_s")}
    return {
        "stages": stages,
        "councils": councils,
        "wall_s": wall,
        "mean_council_s": sum(r[0] for r in results) / councils,
        "max_council_s": max(r[0] for r in results),
        "events": sum(r[1] for r in results),
        "cpu_s": cpu,
        "statuses": statuses,
    }


def report(mode: str, timing: Timing, row: dict) -> None:
    critical = timing.critical_path_s
    overhead = (row["wall_s"] - critical) / critical * 100
    print(
        f"{mode:6} councils={row['councils']:4d}  wall={row['wall_s']:.3f}s  critical_path={critical:.3f}s  "
        f"overhead={overhead:+.1f}%  slowest_council={row['max_council_s']:.3f}s  "
        f"mean_council={row['mean_council_s']:.3f}s  cpu={row['cpu_s']:.2f}s  events={row['events']}  "
        f"status={','.join(sorted(row['statuses']))}"
    )
    if row["stages"]:
        print(f"{'':6} mean stage times: " + "  ".join(f"{k}={v:.3f}s" for k, v in row["stages"].items()))


async def bench(mode: str, timing: Timing, counts: list[int], make: Callable) -> None:
    router, close = await make(timing)
    try:
        # Warm-up at full size: imports, and (over HTTP) a pool of open connections, as a
        # long-running bot has. Cold numbers are printed too.
        report(f"{mode}*", timing, await measure(router, max(counts)))
        for count in counts:
            report(mode, timing, await measure(router, count))
    finally:
        await close()


async def _bare_council(router: SleepingRouter, i: int) -> tuple[float, int, CouncilStatus, dict[str, float]]:
    """The calls of one council without the engine: 4 answers, 4 reviews, one stream."""
    start = time.perf_counter()
    messages = [type("M", (), {"content": f"q{i}"})()]
    for _ in range(2):
        await asyncio.gather(*(router.complete(m, messages, None) for m in MEMBERS))
    async for _ in router.stream(CHAIRMAN, messages, None):
        pass
    return time.perf_counter() - start, 0, CouncilStatus.OK, {}


async def floor(timing: Timing, counts: list[int]) -> None:
    router = SleepingRouter(timing)
    for count in counts:
        cpu0, start = time.process_time(), time.perf_counter()
        results = await asyncio.gather(*(_bare_council(router, i) for i in range(count)))
        wall = time.perf_counter() - start
        report(
            "floor",
            timing,
            {
                "councils": count,
                "wall_s": wall,
                "events": 0,
                "statuses": {"ok"},
                "mean_council_s": sum(r[0] for r in results) / count,
                "max_council_s": max(r[0] for r in results),
                "cpu_s": time.process_time() - cpu0,
                "stages": {},
            },
        )


async def _sleeping(timing: Timing):
    router = SleepingRouter(timing)
    return router, router.aclose


async def traced_peak(timing: Timing, councils: int) -> float:
    """Peak Python heap (MiB) of N concurrent engine-only councils, via tracemalloc."""
    router = SleepingRouter(timing)
    tracemalloc.start()
    await measure(router, councils)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 2**20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mode", choices=["http", "aiohttp", "engine", "floor", "all"], default="all")
    parser.add_argument("--councils", type=int, default=200)
    parser.add_argument("--latency", type=float, default=0.2, help="seconds per stage-1/stage-2 call")
    parser.add_argument("--chunk", type=float, default=0.02, help="seconds between chairman chunks")
    parser.add_argument("--max-connections", type=int, default=2000, help="HTTP pool size (LLM_MAX_CONNECTIONS)")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)  # the server process
    args = parser.parse_args()
    timing = Timing(args.latency, args.chunk)
    if args.serve:
        asyncio.run(serve(timing))
        return
    counts = [1, args.councils]
    print(
        f"python {sys.version.split()[0]}, {os.cpu_count()} CPU(s); 4 members + chairman; "
        f"call latency {timing.latency_s}s, chairman {SYNTHESIS_CHUNKS} chunks x {timing.chunk_s}s"
    )
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}  (* = cold warm-up run)")
    if args.mode in ("floor", "all"):
        asyncio.run(floor(timing, counts))
    if args.mode in ("engine", "all"):
        asyncio.run(bench("engine", timing, counts, _sleeping))
    if args.mode in ("aiohttp", "all"):
        asyncio.run(bench("aiohttp", timing, counts, aiohttp_router))
    if args.mode in ("http", "all"):
        asyncio.run(bench("http", timing, counts, partial(http_router, max_connections=args.max_connections)))
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS of this process: {rss:.1f} MiB")
    if args.mode in ("engine", "all"):
        peak = asyncio.run(traced_peak(timing, args.councils))
        print(f"engine-only peak Python heap for {args.councils} concurrent councils (tracemalloc): {peak:.1f} MiB")


if __name__ == "__main__":
    main()
