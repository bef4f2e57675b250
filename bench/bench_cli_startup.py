"""Benchmark of the `council` command's start-up: `--help`, and the first progress line of `ask`.

Each figure is the wall time of a fresh interpreter (`python -m bot.cli ...`), measured N times;
the median and the minimum are printed. `ask` runs against the scripted LLM server of the tests
(loopback, no model latency) with a fresh SQLite file per run, and the clock stops at the first
line the command writes to stderr (the first progress line).

    python bench/bench_cli_startup.py            # 15 runs of each
    python bench/bench_cli_startup.py --runs 30

For the per-module view: python -X importtime -m bot.cli --help 2>&1 | sort -t'|' -k2 -n | tail
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.llm_server import ScriptedLLMServer, council_member  # noqa: E402


def _env(extra: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LLM_", "COUNCIL_", "OPENROUTER_", "DATABASE_URL"))}
    env["PYTHONPATH"] = str(ROOT)
    env.update(extra)
    return env


def time_help(runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "bot.cli", "--help"], env=_env({}), capture_output=True, check=True)
        times.append(time.perf_counter() - start)
    return times


def time_first_progress_line(runs: int, base_url: str) -> list[float]:
    times = []
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as tmp:
            env = _env(
                {
                    "LLM_BASE_URL": base_url,
                    "LLM_API_KEY": "bench-key",
                    "COUNCIL_MODELS": "alpha,beta,gamma",
                    "COUNCIL_CHAIRMAN": "beta",
                    "DATABASE_URL": f"sqlite:///{tmp}/bench.db",
                }
            )
            start = time.perf_counter()
            process = subprocess.Popen(
                [sys.executable, "-m", "bot.cli", "ask", "Why is the sky blue?"],
                env=env,
                cwd=tmp,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
            )
            assert process.stderr is not None
            line = process.stderr.readline()
            times.append(time.perf_counter() - start)
            process.stderr.read()
            process.wait()
            assert line.strip(), "the command wrote no progress line"
    return times


def _report(name: str, times: list[float]) -> None:
    ms = sorted(t * 1000 for t in times)
    print(
        f"{name:<28} median {statistics.median(ms):6.0f} ms   min {ms[0]:6.0f} ms   max {ms[-1]:6.0f} ms   n={len(ms)}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    _report("council --help", time_help(args.runs))
    server = ScriptedLLMServer({name: council_member(f"{name}: 42.") for name in ("alpha", "beta", "gamma")})
    ready = threading.Event()
    base_url: list[str] = []

    def serve() -> None:
        import asyncio

        async def run() -> None:
            async with server:
                base_url.append(server.base_url)
                ready.set()
                await asyncio.Event().wait()

        asyncio.run(run())

    threading.Thread(target=serve, daemon=True).start()
    ready.wait(10)
    _report("council ask: first line", time_first_progress_line(args.runs, base_url[0]))


if __name__ == "__main__":
    main()
