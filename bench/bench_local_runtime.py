"""Benchmark: the cost per call of running a local model in its own runtime process.

  in-process  the runtime's own generator (local_generate.LocalGenerator) called in this
              process from a worker thread, as the local provider did before it moved the
              model out of process
  runtime     LocalProvider: the same generator in a child process (core.providers.local_worker),
              the request and each piece of the answer as a JSON line over a pipe

Both load the model once before timing, answer the same short question with the same sampling
(a fixed seed, so the same tokens), with the same thread count. Reported per model: the median
wall time of a call over --repeat calls of each kind, the difference, and its ratio to the
in-process time; the same for the fastest call of each kind (on a shared machine the least
disturbed one, so the fairer comparison when others keep the cores busy); also the one-off
start of a runtime (process + imports + load) against an in-process load. And, robust to a
busy machine, the out-of-process overhead itself: a runtime call's wall time here minus the
time the runtime spent on it (it reports that with its answer), as a share of the in-process
call's time.

The kinds run in alternating blocks of --block calls, not call by call: the two sets of
llama.cpp threads (this process's and the runtime's) spin-wait for work after a call, and
interleaving single calls made each kind run beside the other's spinning threads (on 2 cores
that cost some calls 40 times their time, which is not what either kind costs).

    python bench/bench_local_runtime.py
    python bench/bench_local_runtime.py --models smollm2 gemma3-270m --repeat 15 --max-tokens 32
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from core.models import ChatMessage  # noqa: E402
from core.providers import local_models  # noqa: E402
from core.providers.base import CallOptions  # noqa: E402
from core.providers.local import LocalProvider  # noqa: E402
from core.providers.local_generate import LocalGenerator, ModelInstance, sampling_for  # noqa: E402
from core.settings import Settings  # noqa: E402

QUESTION = [
    ChatMessage(role="system", content="Answer in two sentences."),
    ChatMessage(role="user", content="Why is the sky blue?"),
]


class InProcess:
    """The generator in this process, run from a worker thread like the old provider did."""

    def __init__(self, settings: Settings, name: str):
        self.settings = settings
        self.resolved = local_models.resolve(name, settings)
        self.instance = ModelInstance(path=self.resolved.path, chat_format=self.resolved.chat_format)
        self.generator = LocalGenerator(settings.local.n_ctx, settings.local.n_threads or 1)

    def load(self) -> None:
        self.generator.load(self.instance)

    async def call(self, options: CallOptions) -> int:
        sampling = sampling_for(self.resolved.preset, options, self.settings)
        pieces: list[str] = []
        loop = asyncio.get_running_loop()

        def emit(kind: str, value: str) -> None:  # the old provider handed each piece to the loop
            loop.call_soon_threadsafe(pieces.append, value)

        _text, usage, _finish = await asyncio.to_thread(
            self.generator.generate,
            self.instance,
            self.resolved,
            QUESTION,
            sampling,
            threading.Event(),
            emit,
        )
        return usage.completion_tokens


async def _runtime_call(provider: LocalProvider, name: str, options: CallOptions) -> int:
    completion = await provider.complete(name, QUESTION, options)
    return completion.usage.completion_tokens


async def bench_model(name: str, settings: Settings, repeat: int, block: int, max_tokens: int) -> dict[str, float]:
    options = CallOptions(max_tokens=max_tokens, timeout_s=600)
    inproc = InProcess(settings, name)
    start = time.perf_counter()
    await asyncio.to_thread(inproc.load)
    load_in = time.perf_counter() - start
    provider = LocalProvider(settings)
    try:
        start = time.perf_counter()
        await _runtime_call(provider, name, dataclasses.replace(options, max_tokens=1))
        start_runtime = time.perf_counter() - start
        times: dict[str, list[float]] = {"in": [], "rt": []}
        tokens: dict[str, set[int]] = {"in": set(), "rt": set()}
        overhead: list[float] = []
        await inproc.call(options)  # warm both once
        await _runtime_call(provider, name, options)
        while len(times["rt"]) < repeat:
            for kind in ("in", "rt"):
                await asyncio.sleep(0.5)  # the other kind's threads stop spinning
                for _ in range(block):
                    start = time.perf_counter()
                    count = await (inproc.call(options) if kind == "in" else _runtime_call(provider, name, options))
                    wall = time.perf_counter() - start
                    times[kind].append(wall)
                    tokens[kind].add(count)
                    if kind == "rt":
                        (runtime,) = provider._runtimes.values()
                        overhead.append(wall - (runtime.last_call_s or wall))
    finally:
        await provider.aclose()
    median_in, median_rt = statistics.median(times["in"]), statistics.median(times["rt"])
    fastest_in, fastest_rt = min(times["in"]), min(times["rt"])
    return {
        "in": median_in,
        "rt": median_rt,
        "diff": median_rt - median_in,
        "ratio": (median_rt - median_in) / median_in,
        "min_in": fastest_in,
        "min_rt": fastest_rt,
        "min_ratio": (fastest_rt - fastest_in) / fastest_in,
        "overhead": statistics.median(overhead),
        "overhead_ratio": statistics.median(overhead) / median_in,
        "tokens_in": max(tokens["in"]),
        "tokens_rt": max(tokens["rt"]),
        "load_in": load_in,
        "start_rt": start_runtime,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", nargs="+", default=["smollm2", "gemma3-270m"])
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--block", type=int, default=5)
    parser.add_argument("--max-tokens", type=int, default=48)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    settings = Settings(
        _env_file=None, LOCAL_N_CTX=4096, LOCAL_N_THREADS=args.threads, LOCAL_MAX_TOKENS=args.max_tokens
    )
    print(f"{args.repeat} calls per kind, blocks of {args.block}, max {args.max_tokens} tokens, {args.threads} threads")
    print(f"{'model':<14} {'in-process':>11} {'runtime':>9} {'cost':>9} {'cost %':>7}  fastest (cost)  tokens  start")
    for name in args.models:
        r = asyncio.run(bench_model(name, settings, args.repeat, args.block, args.max_tokens))
        print(
            f"{name:<14} {r['in'] * 1000:9.0f}ms {r['rt'] * 1000:7.0f}ms {r['diff'] * 1000:+7.1f}ms"
            f" {r['ratio'] * 100:+6.1f}%  {r['min_in'] * 1000:.0f}/{r['min_rt'] * 1000:.0f}ms"
            f" ({r['min_ratio'] * 100:+.1f}%)"
            f"  {int(r['tokens_in']):>3}/{int(r['tokens_rt']):<3}"
            f"  load {r['load_in']:.2f}s in-process, runtime start+load {r['start_rt']:.2f}s"
        )
        print(
            f"{'':<14} out-of-process overhead (wall - time in the runtime): {r['overhead'] * 1000:.1f} ms a call,"
            f" {r['overhead_ratio'] * 100:.2f}% of the in-process call"
        )


if __name__ == "__main__":
    main()
