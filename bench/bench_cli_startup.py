"""Benchmark of the `council` command's start-up: `--help`, and the first progress line of `ask`.

Each figure is a fresh interpreter (`python -m bot.cli ...`), measured N times; the median and
the minimum of wall time and of the child's CPU time (user + system) are printed. CPU time is the
figure to compare on a shared machine: wall time grows with everyone else's load. `ask` runs
against the scripted LLM server of the tests (loopback, no model latency) with a fresh SQLite file
per run, and the clock stops at the first line the command writes to stderr (the first progress
line), where the command is killed.

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


def _cpu_of(process: subprocess.Popen) -> float:
    """User + system CPU seconds of a child: unlike wall time, barely moved by other load on the machine."""
    _, _, usage = os.wait4(process.pid, 0)
    process.returncode = 0
    return usage.ru_utime + usage.ru_stime


def time_command(argv: list[str], runs: int) -> tuple[list[float], list[float]]:
    wall, cpu = [], []
    for _ in range(runs):
        start = time.perf_counter()
        process = subprocess.Popen([sys.executable, *argv], env=_env({}), stdout=subprocess.DEVNULL)
        cpu.append(_cpu_of(process))
        wall.append(time.perf_counter() - start)
    return wall, cpu


def time_first_progress_line(runs: int, base_url: str) -> tuple[list[float], list[float]]:
    """Wall and CPU time until the first stderr line; the command is killed there."""
    times, cpu = [], []
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
            process.kill()
            cpu.append(_cpu_of(process))
            assert line.strip(), "the command wrote no progress line"
    return times, cpu


def _report(name: str, measured: tuple[list[float], list[float]]) -> None:
    wall, cpu = (sorted(t * 1000 for t in series) for series in measured)
    print(
        f"{name:<26} wall median {statistics.median(wall):5.0f} ms (min {wall[0]:4.0f})   "
        f"cpu median {statistics.median(cpu):5.0f} ms (min {cpu[0]:4.0f})   n={len(wall)}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    # The floor: an interpreter that imports nothing of ours (site-packages' .pth files included).
    _report("python -c pass", time_command(["-c", "pass"], args.runs))
    _report("council --help", time_command(["-m", "bot.cli", "--help"], args.runs))
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
