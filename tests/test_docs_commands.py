"""Every `council` command the documentation shows in a shell block exists, with the options it is
shown with: each page's ```bash blocks are read, and each subcommand's `--help` must list them.
(tests/test_getting_started.py runs the getting-started page's commands for real.)"""

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [*sorted((ROOT / "docs").rglob("*.md")), ROOT / "README.md"]
BLOCK = re.compile(r"^```(?:bash|sh|shell)\n(.*?)^```", re.MULTILINE | re.DOTALL)
OPTION = re.compile(r"(?<![\w-])--[a-z][a-z-]*")


def _shown() -> dict[str, set[str]]:
    """Subcommand -> the options the pages show it with."""
    shown: dict[str, set[str]] = {}
    for page in PAGES:
        for block in BLOCK.findall(page.read_text()):
            for line in block.splitlines():
                command = re.split(r"\s#", line, maxsplit=1)[0]
                for segment in re.split(r"\|\s*(?=council\s)", command):
                    words = segment.split()
                    if len(words) >= 2 and words[0] == "council" and not words[1].startswith("-"):
                        shown.setdefault(words[1], set()).update(OPTION.findall(segment))
    return shown


def _help(*args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "bot.cli", *args, "--help"], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.slow  # one `--help` per subcommand: about 20 interpreter start-ups
def test_the_docs_show_commands_and_options_that_exist():
    shown = _shown()
    assert {"ask", "slack", "worker", "api"} <= set(shown), "the pages' shell blocks were not read"
    choices = re.search(r"\{([a-z,-]+)\}", _help()).group(1).split(",")  # type: ignore[union-attr]
    assert sorted(set(shown) - set(choices)) == []
    unknown = [
        f"council {command} {option}"
        for command, options in sorted(shown.items())
        for option in sorted(options - set(OPTION.findall(_help(command))))
    ]
    assert unknown == []
