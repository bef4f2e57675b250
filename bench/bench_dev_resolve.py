"""Benchmark of the dependency resolution of `make install-dev`, without and with
constraints-dev.txt: pip resolves the project with every extra the Makefile installs
(`pip install --dry-run --report`, nothing installed) into a throwaway venv, alternating the two
cases, and says for each run the wall and CPU time (user + system of pip and what it starts: the
maturin metadata build), how many times pip said it was backtracking ("pip is looking at
multiple versions of X"), how many boto3 releases it fetched, and whether both resolved the same
packages. CPU time is the figure to compare on a shared machine: wall time grows with the load.

Runs against whatever pip's cache holds: run once first (untimed) to compare warm caches, or pass
--no-cache for a cold one each time (every file fetched again).

    python bench/bench_dev_resolve.py                 # 3 runs of each, venv in a temporary directory
    python bench/bench_dev_resolve.py --runs 5 --venv /tmp/resolve-venv --no-cache
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXTRAS = "dev,local,charts,api,postgres,otel,eval,docs"  # the Makefile's $(STAMPS)/dev
BACKTRACK = re.compile(r"pip is (?:still )?looking at multiple versions of (\S+)")


def resolve(python: Path, constrained: bool, no_cache: bool, report: Path) -> dict:
    args = [str(python), "-m", "pip", "install", "--dry-run", "--report", str(report), "-v"]
    args += ["--no-cache-dir"] if no_cache else []
    args += ["-c", str(ROOT / "constraints-dev.txt")] if constrained else []
    before, started = os.times(), time.perf_counter()
    done = subprocess.run([*args, "-e", f".[{EXTRAS}]"], cwd=ROOT, capture_output=True, text=True)
    wall, after = time.perf_counter() - started, os.times()
    if done.returncode != 0:
        sys.exit(f"pip failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    log = done.stdout + done.stderr
    installed = {
        i["metadata"]["name"].lower(): i["metadata"]["version"] for i in json.loads(report.read_text())["install"]
    }
    return {
        "wall": wall,
        "cpu": (after.children_user - before.children_user) + (after.children_system - before.children_system),
        "backtracked": sorted(set(BACKTRACK.findall(log))),
        "boto3": len(set(re.findall(r"boto3-(\d[\w.]*)-py3-none-any\.whl", log))),
        "installed": installed,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--venv", type=Path, help="the throwaway venv (created when missing)")
    parser.add_argument("--no-cache", action="store_true", help="pip --no-cache-dir: a cold cache each run")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        venv = args.venv or Path(tmp) / "venv"
        python = venv / "bin" / "python"
        if not python.exists():
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
            subprocess.run([str(python), "-m", "pip", "install", "-q", "--upgrade", "pip"], check=True)
        results: dict[bool, list[dict]] = {False: [], True: []}
        for run in range(args.runs):
            for constrained in (False, True):
                r = resolve(python, constrained, args.no_cache, Path(tmp) / "report.json")
                results[constrained].append(r)
                name = "with constraints" if constrained else "without"
                print(
                    f"run {run + 1} {name:16} wall {r['wall']:5.1f} s  cpu {r['cpu']:5.1f} s  "
                    f"boto3 releases fetched {r['boto3']:2}  backtracked on: {', '.join(r['backtracked']) or '-'}",
                    flush=True,
                )
    same = all(r["installed"] == results[False][0]["installed"] for rs in results.values() for r in rs)
    print(f"same {len(results[False][0]['installed'])} packages resolved in every run: {same}")
    for key in ("wall", "cpu"):
        without = statistics.median(r[key] for r in results[False])
        with_ = statistics.median(r[key] for r in results[True])
        print(f"median {key}: without {without:.1f} s, with {with_:.1f} s (ratio {with_ / without:.2f})")


if __name__ == "__main__":
    main()
