"""Benchmark: quick and auto modes against standard, in wall time and model calls.

Four members and a chairman answering in --latency seconds per call on the scripted LLM server,
through CouncilService with default settings. Standard: 4 answers, 4 reviews, 1 synthesis;
quick: 2 answers and the chairman's comparison-and-answer (3 calls, no review stage); auto: 2
answers, then what their agreement decides (core/engine/auto.py), in four scenarios:

  same short answer       both first answers "42.": the first stands as written
  long, judged to agree   two long answers, the chairman's verdict AGREE, then a light synthesis
  long, judged to differ  the verdict DISAGREE: escalation to the whole council
  different short answers "m/one: 42." and "m/two: 42.": escalation without a judgement

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
# scenario -> (each member's answer, the chairman's judgement)
SCENARIOS: dict[str, tuple[dict[str, str], str]] = {
    "same short answer": ({m: "42." for m in MEMBERS}, "VERDICT: AGREE"),
    "long, judged to agree": ({m: f"{ANSWER} ({m})" for m in MEMBERS}, "Same conclusion.\nVERDICT: AGREE"),
    "long, judged to differ": ({m: f"{ANSWER} ({m})" for m in MEMBERS}, "They differ.\nVERDICT: DISAGREE"),
    "different short answers": ({m: f"{m}: 42." for m in MEMBERS}, "VERDICT: AGREE"),
}


async def one_council(mode: CouncilMode, scenario: str, latency_s: float) -> tuple[float, float, int, bool | None]:
    """(wall seconds, timings.total_s, model calls, escalated) of one council in `mode`."""
    answers, judgement = SCENARIOS[scenario]
    async with ScriptedLLMServer() as server:
        for name in MEMBERS:
            server.script(name, council_member(answers[name], latency_s=latency_s))
        chair = council_member("chair", latency_s=latency_s)
        synthesis = Reply(f"PREFERRED: Response A\n{ANSWER}", latency_s)
        server.script(CHAIRMAN, ByStage(chair.stage1, chair.stage2, synthesis, Reply(judgement, latency_s)))
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
        return wall, result.timings["total_s"], len(server.requests), result.escalated


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--latency", type=float, default=0.5, help="seconds per model call")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"4 members + chairman, {args.latency:g} s per call, median of {args.repeat}:")
    for scenario in SCENARIOS:
        print(f"{scenario}:")
        for mode in ("standard", "quick", "auto"):
            runs = [await one_council(mode, scenario, args.latency) for _ in range(args.repeat)]
            wall = statistics.median(r[0] for r in runs)
            total = statistics.median(r[1] for r in runs)
            calls = statistics.median(r[2] for r in runs)
            escalated = f"   escalated {runs[0][3]}" if mode == "auto" else ""
            print(f"  {mode:<9} wall {wall:5.2f} s   timings.total_s {total:5.2f} s   model calls {calls:g}{escalated}")


if __name__ == "__main__":
    asyncio.run(main())
