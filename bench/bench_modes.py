"""Benchmark: quick mode against standard, in wall time and model calls.

Four members and a chairman answering in --latency seconds per call on the scripted LLM server,
through CouncilService with default settings. Standard: 4 answers, 4 reviews, 1 synthesis;
quick: 2 answers and the chairman's comparison-and-answer (3 calls, no review stage).

    python bench/bench_modes.py [--latency 0.5] [--repeat 3]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from core.models import CouncilMode, Origin  # noqa: E402
from core.service import CouncilService  # noqa: E402
from core.settings import Settings  # noqa: E402
from tests.llm_server import ByStage, Reply, ScriptedLLMServer, council_member  # noqa: E402

MEMBERS = ["m/one", "m/two", "m/three", "m/four"]
CHAIRMAN = "m/chair"
ANSWER = "The answer is 42, because six times seven is forty-two, as any multiplication table shows."


async def one_council(mode: CouncilMode, latency_s: float) -> tuple[float, float, int]:
    """(wall seconds, timings.total_s, model calls) of one council in `mode`."""
    async with ScriptedLLMServer() as server:
        for name in MEMBERS:
            server.script(name, council_member(f"{name}: 42.", latency_s=latency_s))
        chair = council_member("chair", latency_s=latency_s)
        server.script(
            CHAIRMAN, ByStage(chair.stage1, chair.stage2, Reply(f"PREFERRED: Response A\n{ANSWER}", latency_s))
        )
        with tempfile.TemporaryDirectory() as tmp:
            settings = Settings(
                _env_file=None,
                LLM_BASE_URL=server.base_url,
                LLM_API_KEY="bench-not-secret",
                COUNCIL_MODELS=",".join(MEMBERS),
                COUNCIL_CHAIRMAN=CHAIRMAN,
                DATABASE_URL=f"sqlite:///{tmp}/bench.db",
            )
            async with await CouncilService.open(settings) as service:
                started = time.perf_counter()
                run = await service.start_council("What is six times seven?", Origin(), mode=mode)
                result = await run.wait()
                wall = time.perf_counter() - started
        return wall, result.timings["total_s"], len(server.requests)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--latency", type=float, default=0.5, help="seconds per model call")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"4 members + chairman, {args.latency:g} s per call, median of {args.repeat}:")
    for mode in ("standard", "quick"):
        runs = [await one_council(mode, args.latency) for _ in range(args.repeat)]
        wall = statistics.median(r[0] for r in runs)
        total = statistics.median(r[1] for r in runs)
        calls = statistics.median(r[2] for r in runs)
        print(f"  {mode:<9} wall {wall:5.2f} s   timings.total_s {total:5.2f} s   model calls {calls:g}")


if __name__ == "__main__":
    asyncio.run(main())
