"""How to run `council` again from this shell, for the hints the commands print ("Details: ...").

`council` is on the PATH only when its environment is active: after `make demo` it sits in
.venv/bin, and a bare "council show ID" would answer "command not found" (or run another
install's `council`). So the hint names this Python's own `council` script, as briefly as it
works from the current directory."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path


def council_command() -> str:
    script = Path(sys.executable).parent / "council"
    if not script.is_file():
        # Run from the source tree without an install: the module is what works here.
        return f"{_short(Path(sys.executable))} -m bot.cli"
    on_path = shutil.which("council")
    if on_path and _same(on_path, script):
        return "council"
    return _short(script)


def _same(one: str | Path, other: str | Path) -> bool:
    try:
        return os.path.samefile(one, other)
    except OSError:
        return False


def _short(path: Path) -> str:
    """`path` relative to the current directory when it lies below it, else absolute."""
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)
