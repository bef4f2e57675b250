"""Benchmark: a council of four members answering in 0.5 s plus one that never answers.

With the default settings (COUNCIL_QUORUM 0.5, COUNCIL_GRACE_S 20, COUNCIL_GRACE_MIN_S 5,
COUNCIL_GRACE_FACTOR 2) the hung member gets the adaptive grace, max(5 s, 2 x 0.5 s) = 5 s after
the quorum, instead of the fixed 20 s: the issue's target is `timings.total_s` under 8 s (it was
21.6 s). Runs through CouncilService (admission, storage) against the scripted LLM server.

    python bench/bench_hung_member.py [--latency 0.5] [--repeat 1]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from core.models import Origin  # noqa: E402
from core.service import CouncilService  # noqa: E402
from core.settings import Settings  # noqa: E402
from tests.llm_server import Hang, ScriptedLLMServer, council_member  # noqa: E402

MEMBERS = ["fast/one", "fast/two", "fast/three", "fast/four"]
HUNG = "hung/five"


async def one_council(latency_s: float) -> dict[str, float]:
    async with ScriptedLLMServer(record=False) as server:
        for name in MEMBERS:
            server.script(name, council_member(f"{name}: 42.", latency_s=latency_s, synthesis="The answer is 42."))
        server.script(HUNG, Hang())
        with tempfile.TemporaryDirectory() as tmp:
            settings = Settings(
                _env_file=None,
                LLM_BASE_URL=server.base_url,
                LLM_API_KEY="bench-not-secret",
                COUNCIL_MODELS=",".join([*MEMBERS, HUNG]),
                COUNCIL_CHAIRMAN=MEMBERS[0],
                DATABASE_URL=f"sqlite:///{tmp}/bench.db",
            )
            async with await CouncilService.open(settings) as service:
                result = await service.ask("What is six times seven?", Origin())
    return result.timings


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--latency", type=float, default=0.5, help="seconds per call of the four members")
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    runs = [await one_council(args.latency) for _ in range(args.repeat)]
    total = statistics.median(r["total_s"] for r in runs)
    stage1 = statistics.median(r["stage1_s"] for r in runs)
    print(f"hung member, 4 x {args.latency:g} s + 1 never answering, default settings:")
    print(f"  timings.total_s  {total:.2f} s   (stage 1: {stage1:.2f} s; target < 8 s, was 21.6 s)")


if __name__ == "__main__":
    asyncio.run(main())
