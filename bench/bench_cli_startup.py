"""Benchmark of the `council` command's start-up and of a whole `council ask` against the classic
llm-council algorithm (bench/classic_council.py): `--help`, `history`, the first progress line of
`ask`, and a whole `ask --json` process next to the classic script, both asking 4 members and a
chairman on the scripted LLM server at 0.5 s a call (median of alternating runs).

`history` runs twice: with no `.env`, and in a directory holding a copy of `.env.example` (as the
README has a user set up), whose variables every command reads.

Each figure is a fresh interpreter (`python -m bot.cli ...`), measured N times; the median and
the minimum of wall time and of the child's CPU time (user + system) are printed. CPU time is the
figure to compare on a shared machine: wall time grows with everyone else's load. `ask` runs
against the scripted LLM server of the tests (loopback, no model latency) on a database that exists
already (as on every run but a machine's first; the line "same, new database" shows the first,
which creates the schema), and the clock stops at the first line the command writes to stderr
(the first progress line), where the command is killed. Our modules run from cached bytecode, as
an installed package does (an untimed first run writes the caches), unless --no-bytecode.

    python bench/bench_cli_startup.py            # 15 runs of each, 5 whole councils of each
    python bench/bench_cli_startup.py --runs 30 --councils 9
    python bench/bench_cli_startup.py --no-bytecode   # as in a sandbox with PYTHONDONTWRITEBYTECODE=1

With --no-bytecode no cache is written, but what is there is read: after `make install` (which
compiles our modules) it measures the installed case too; remove core/ and bot/'s __pycache__
first to measure compiling from source.

For the per-module view: python -X importtime -m bot.cli --help 2>&1 | sort -t'|' -k2 -n | tail
"""

from __future__ import annotations

import argparse
import os
import shutil
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


def time_command(
    argv: list[str], runs: int, env: dict[str, str] | None = None, cwd: str | None = None
) -> tuple[list[float], list[float]]:
    wall, cpu = [], []
    for _ in range(runs):
        start = time.perf_counter()
        process = subprocess.Popen([sys.executable, *argv], env=_env(env or {}), stdout=subprocess.DEVNULL, cwd=cwd)
        cpu.append(_cpu_of(process))
        wall.append(time.perf_counter() - start)
    return wall, cpu


def _council_env(base_url: str, tmp: str, members: str = "alpha,beta,gamma", chairman: str = "beta") -> dict[str, str]:
    return _env(
        {
            "LLM_BASE_URL": base_url,
            "LLM_API_KEY": "bench-key",
            "COUNCIL_MODELS": members,
            "COUNCIL_CHAIRMAN": chairman,
            "DATABASE_URL": f"sqlite:///{tmp}/bench.db",
        }
    )


def time_whole_councils(councils: int, base_url: str) -> tuple[list[float], list[float]]:
    """Wall seconds of whole processes: `council ask --json` and the classic script, alternating.
    Our database exists already (an untimed council made it), as on every run but a machine's first."""
    ours, classic = [], []
    question = "Why is the sky blue?"
    with tempfile.TemporaryDirectory() as tmp:
        env = _council_env(base_url, tmp, members=",".join(FIVE[:4]), chairman=FIVE[4])
        ask = ["-m", "bot.cli", "ask", "--json", question]
        subprocess.run([sys.executable, *ask], env=env, cwd=tmp, check=True, capture_output=True)
        classic_argv = [
            str(ROOT / "bench" / "classic_council.py"),
            "--base-url",
            base_url,
            "--members",
            ",".join(FIVE[:4]),
            "--chairman",
            FIVE[4],
            question,
        ]
        for _ in range(councils):
            for argv, series in ((ask, ours), (classic_argv, classic)):
                start = time.perf_counter()
                subprocess.run([sys.executable, *argv], env=env, cwd=tmp, check=True, capture_output=True)
                series.append(time.perf_counter() - start)
    return ours, classic


def time_first_progress_line(runs: int, base_url: str, new_database: bool) -> tuple[list[float], list[float]]:
    """Wall and CPU time until the first stderr line; the command is killed there. With
    `new_database` each run starts on an empty directory (a machine's first council: the schema is
    created), else on the database the previous runs wrote."""
    times, cpu = [], []
    with tempfile.TemporaryDirectory() as kept:
        for _ in range(runs):
            with tempfile.TemporaryDirectory() as fresh:
                tmp = fresh if new_database else kept
                env = _council_env(base_url, tmp)
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


FIVE = ("alpha", "beta", "gamma", "delta", "epsilon")
CALL_S = 0.5  # each scripted model call takes this long, as in the measurement


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--councils", type=int, default=5)
    parser.add_argument("--no-bytecode", action="store_true", help="write no bytecode caches (existing ones are read)")
    args = parser.parse_args()
    if not args.no_bytecode:
        # An installed package runs from cached bytecode (pip compiles it; an editable install
        # writes it on first import). Some sandboxes set this for every process, which, where no
        # caches exist yet, would measure compiling ~150 modules from source on every run instead
        # (--no-bytecode keeps that setting).
        os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    bytecode = "no caches written" if args.no_bytecode else "cached bytecode, as installed"
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; our modules: {bytecode}")
    with tempfile.TemporaryDirectory() as tmp:  # untimed: writes the bytecode caches a user's install has
        subprocess.run(
            [sys.executable, "-m", "bot.cli", "history"],
            env=_env({"DATABASE_URL": f"sqlite:///{tmp}/w.db"}),
            check=True,
            capture_output=True,
        )
    # The floor: an interpreter that imports nothing of ours (site-packages' .pth files included).
    _report("python -c pass", time_command(["-c", "pass"], args.runs))
    _report("council --help", time_command(["-m", "bot.cli", "--help"], args.runs))
    with tempfile.TemporaryDirectory() as tmp:
        history = time_command(["-m", "bot.cli", "history"], args.runs, {"DATABASE_URL": f"sqlite:///{tmp}/h.db"})
        _report("council history", history)
        # As the README has a user set up: `cp .env.example .env`, read from the current directory.
        shutil.copy(ROOT / ".env.example", Path(tmp) / ".env")
        env_file = {"DATABASE_URL": f"sqlite:///{tmp}/h.db"}
        _report("  same, .env.example's copy", time_command(["-m", "bot.cli", "history"], args.runs, env_file, tmp))
    server = ScriptedLLMServer({name: council_member(f"{name}: 42.") for name in ("alpha", "beta", "gamma")})
    slow = ScriptedLLMServer({name: council_member(f"{name}: 42.", latency_s=CALL_S) for name in FIVE})
    ready = threading.Event()
    base_url: list[str] = []

    def serve() -> None:
        import asyncio

        async def run() -> None:
            async with server, slow:
                base_url.extend([server.base_url, slow.base_url])
                ready.set()
                await asyncio.Event().wait()

        asyncio.run(run())

    threading.Thread(target=serve, daemon=True).start()
    ready.wait(10)
    _report("council ask: first line", time_first_progress_line(args.runs, base_url[0], new_database=False))
    _report("  same, new database", time_first_progress_line(args.runs, base_url[0], new_database=True))
    ours, classic = (sorted(series) for series in time_whole_councils(args.councils, base_url[1]))
    ours_s, classic_s = statistics.median(ours), statistics.median(classic)
    print(
        f"whole ask --json           {ours_s:5.2f} s   classic script {classic_s:5.2f} s   "
        f"ratio {ours_s / classic_s:4.2f}x   (medians of {args.councils} alternating runs, {CALL_S} s a call)"
    )


if __name__ == "__main__":
    main()
