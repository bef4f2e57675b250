"""Benchmark: what a revision round (refine mode) costs beyond its calls' time.

Councils of 4 members run on an in-process router that only sleeps (no I/O): a stage-1 or review
call takes `latency`, the chairman streams 10 chunks. A refine council with R rounds makes R more
rounds of parallel calls, so its calls' time is the standard council's plus R x latency; what it
takes beyond that is the engine's overhead per round (the revision prompts, the measurement of who
moved toward whom in Rust, the convergence check, the events). Every revision moves (member i
rewrites its answer as member i+1's), so no round ends early and every measurement runs.

    python bench/bench_rounds.py                       # 1 and 50 concurrent councils, 1 and 2 rounds
    python bench/bench_rounds.py --councils 1 --latency 0.2 --words 1000

The target: a round costs its calls' time plus under 3%. Printed per line: the wall time beyond the calls'
(fastest of the repeats) and the engine's CPU time per round and council (median; CPU time is what
another process on a shared machine cannot inflate).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from collections.abc import AsyncIterator

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from core.engine.council import run_council
from core.models import Completion, CouncilConfig, CouncilFinished, CouncilRequest, CouncilStatus, Usage
from core.providers.base import TextDelta

MEMBERS = ["bench/alpha", "bench/beta", "bench/gamma", "bench/delta"]
CHAIRMAN = "bench/chair"
REVIEW = "A is clearest.\n\nFINAL RANKING:\n1. Response A\n2. Response B\n3. Response C\n4. Response D"
CHUNKS = 10
_TOPICS = ("rivers", "engines", "forests", "markets")


def answers(words: int) -> list[str]:
    """Four different answers of about `words` words (different vocabulary: nothing converges)."""
    out = []
    for topic in _TOPICS:
        sentences = (" ".join(f"{topic}{n}w{j}" for j in range(12)) + "." for n in range(words // 12))
        out.append(" ".join(sentences))
    return out


class SleepingRouter:
    def __init__(self, latency_s: float, chunk_s: float, texts: list[str]):
        self.latency_s, self.chunk_s, self.texts = latency_s, chunk_s, texts

    async def complete(self, model, messages, options) -> Completion:
        await asyncio.sleep(self.latency_s)
        last = messages[-1].content
        if "FINAL RANKING" in last:
            text = REVIEW
        elif "`KEEP:`" in last:  # a revision: member i's latest answer becomes member i+1's
            own = messages[-2].content
            text = "REASON: the next answer is better argued.\n" + self.texts[(self.texts.index(own) + 1) % 4]
        else:
            text = self.texts[MEMBERS.index(model)]
        return Completion(model=model, text=text, usage=Usage(prompt_tokens=100, completion_tokens=50))

    async def stream(self, model, messages, options) -> AsyncIterator[TextDelta | Completion]:
        parts = []
        for i in range(CHUNKS):
            await asyncio.sleep(self.chunk_s)
            parts.append(f"part {i} ")
            yield TextDelta(parts[-1])
        yield Completion(model=model, text="".join(parts), usage=Usage(prompt_tokens=500, completion_tokens=80))


async def one(router: SleepingRouter, rounds: int) -> float:
    config = CouncilConfig(
        members=MEMBERS, chairman=CHAIRMAN, mode="refine" if rounds else "standard", rounds=rounds, rubric=None
    )
    start = time.perf_counter()
    result = None
    async for event in run_council(CouncilRequest(question="q?", config=config), router):
        if isinstance(event, CouncilFinished):
            result = event.result
    assert result is not None and result.status is CouncilStatus.OK, result and result.notices
    assert len(result.rounds) == rounds and all(r.moved for x in result.rounds for r in x.revisions)
    return time.perf_counter() - start


async def wall(router: SleepingRouter, rounds: int, councils: int) -> tuple[float, float]:
    """(wall seconds, CPU seconds of this process) of `councils` councils run at once."""
    start, cpu = time.perf_counter(), time.process_time()
    await asyncio.gather(*(one(router, rounds) for _ in range(councils)))
    return time.perf_counter() - start, time.process_time() - cpu


async def measure(args: argparse.Namespace) -> None:
    router = SleepingRouter(args.latency, args.chunk, answers(args.words))
    await wall(router, 1, 1)  # warm-up: imports, the Rust module, caches
    for councils in args.councils:
        base = [await wall(router, 0, councils) for _ in range(args.repeat)]
        for rounds in args.rounds:
            refine = [await wall(router, rounds, councils) for _ in range(args.repeat)]
            calls = rounds * args.latency  # each round: one parallel call per member
            # The fastest of the repeats: on a shared machine the others measure its neighbours.
            overhead = min(w for w, _ in refine) - min(w for w, _ in base) - calls
            cpu = (statistics.median(c for _, c in refine) - statistics.median(c for _, c in base)) / councils
            print(
                f"{councils:4d} council(s), {rounds} round(s), {args.words}-word answers: standard "
                f"{min(w for w, _ in base):.3f} s, refine {min(w for w, _ in refine):.3f} s; rounds' calls "
                f"{calls:.3f} s; wall overhead {1000 * overhead / rounds:+.1f} ms per round = "
                f"{100 * overhead / calls:+.2f}% of the round's calls' time; engine CPU "
                f"{1000 * cpu / rounds:.1f} ms per round and council = {100 * cpu / calls:.2f}%"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--latency", type=float, default=0.5, help="seconds per stage-1, revision or review call")
    parser.add_argument("--chunk", type=float, default=0.01, help="seconds between the chairman's chunks")
    parser.add_argument("--words", type=int, default=300, help="words per answer")
    parser.add_argument("--councils", type=int, nargs="+", default=[1, 50])
    parser.add_argument("--rounds", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--repeat", type=int, default=5)
    asyncio.run(measure(parser.parse_args()))


if __name__ == "__main__":
    main()
