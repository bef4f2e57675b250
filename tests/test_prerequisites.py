"""scripts/prerequisites.sh, which `make demo` and `make test` run before their long build: each thing
that is missing is one line naming the fix, before a minute of building fails on it. Run with a PATH
of scripts standing in for cargo and the C compiler."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# What rustup's proxy answers when no toolchain is the default (rustup 1.27), on stderr, exit 1.
RUSTUP_NO_DEFAULT = (
    "error: rustup could not choose a version of cargo to run, because one wasn't specified explicitly, "
    "and no default is configured.\n"
    "help: run 'rustup default stable' to download the latest stable release of Rust and set it as your "
    "default toolchain.\n"
)


def _tool(bin_dir: Path, name: str, body: str) -> None:
    path = bin_dir / name
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)


def _run(bin_dir: Path) -> subprocess.CompletedProcess[str]:
    """The script with only `bin_dir` on the PATH (the Python given as PYTHON, no venv to create)."""
    head = shutil.which("head")
    assert head, "the script reads the first line of cargo's error with head"
    (bin_dir / "head").symlink_to(head)
    env = {"PATH": str(bin_dir), "PYTHON": sys.executable, "VENV": "", "HOME": os.environ.get("HOME", "/")}
    bash = shutil.which("bash") or "/bin/bash"
    return subprocess.run(
        [bash, str(ROOT / "scripts" / "prerequisites.sh")], env=env, capture_output=True, text=True, timeout=60
    )


def test_everything_there_says_nothing(tmp_path):
    _tool(tmp_path, "cargo", "echo 'cargo 1.83.0'")
    _tool(tmp_path, "cc", "exit 0")
    done = _run(tmp_path)
    assert (done.returncode, done.stderr, done.stdout) == (0, "", "")


def test_a_cargo_rustup_cannot_run_is_one_line_naming_rustup_default(tmp_path):
    _tool(tmp_path, "cargo", f"printf '%s' \"{RUSTUP_NO_DEFAULT}\" >&2\nexit 1")
    _tool(tmp_path, "cc", "exit 0")
    done = _run(tmp_path)
    lines = done.stderr.splitlines()
    assert done.returncode == 1 and len(lines) == 1, done.stderr
    assert lines[0].startswith("✗ cargo is installed but cannot run (error: rustup could not choose a version")
    assert lines[0].endswith("with rustup, run `rustup default stable`")


def test_no_c_compiler_is_one_line_naming_the_package(tmp_path):
    _tool(tmp_path, "cargo", "echo 'cargo 1.83.0'")
    done = _run(tmp_path)  # no cc, gcc or clang on this PATH, and CC unset
    lines = done.stderr.splitlines()
    assert done.returncode == 1 and len(lines) == 1, done.stderr
    assert lines[0].startswith("✗ no C compiler (cc, gcc or clang)")
    assert "apt install build-essential" in lines[0]
