"""The commands of docs/getting-started.md stay runnable as written.

Every fenced shell block of the page is extracted and each command run offline: `make` targets as
a dry run (`make -n`: the real ones build for minutes), `cp` in a temporary folder holding the
repository's files, and `council` commands for real against the scripted OpenAI-compatible server.
The `dotenv` blocks are filled into a copy of `.env.example` as the page says, and must load.
A command of a kind not listed here fails the test, so a new one gets a rule."""

import asyncio
import re
import shlex
import shutil
import subprocess
import sys
from asyncio.subprocess import PIPE
from pathlib import Path

import pytest

from core.settings import Settings
from tests.test_cli import cli_env

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "getting-started.md"


def _blocks(*languages: str) -> list[str]:
    pattern = r"^```(?:" + "|".join(languages) + r")\n(.*?)^```"
    return re.findall(pattern, PAGE.read_text(), flags=re.MULTILINE | re.DOTALL)


def _commands() -> list[list[str]]:
    lines = [line for block in _blocks("bash", "sh", "shell") for line in block.splitlines()]
    return [words for words in (shlex.split(line, comments=True) for line in lines) if words]


def _of(program: str) -> list[list[str]]:
    return [words for words in _commands() if words[0] == program]


def test_the_page_gives_the_two_set_up_commands_and_only_commands_this_test_knows():
    assert ["make", "demo"] in _commands() and ["make", "test"] in _commands()
    assert sorted({words[0] for words in _commands()} - {"make", "cp", "council"}) == []


@pytest.mark.parametrize("words", _of("make"), ids=" ".join)
def test_make_targets_exist(words):
    # A dry run into this test's Python: nothing is built, installed or created.
    done = subprocess.run(
        ["make", "-n", *words[1:], f"PYTHON={sys.executable}"], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr


def test_env_example_filled_in_as_the_page_says_loads(tmp_path):
    shutil.copy(ROOT / ".env.example", tmp_path / ".env.example")
    for words in _of("cp"):
        subprocess.run(words, cwd=tmp_path, check=True, timeout=10)
    for block in _blocks("dotenv"):
        env = tmp_path / ".env"
        filled = dict(line.split("=", 1) for line in block.splitlines() if "=" in line)
        lines = env.read_text().splitlines()
        names = [line.split("=", 1)[0] for line in lines]
        assert sorted(set(filled) - set(names)) == [], "the page fills in lines that .env.example lacks"
        env.write_text("\n".join(f"{n}={filled[n]}" if n in filled else line for n, line in zip(names, lines)) + "\n")
        assert Settings(_env_file=env).default_members == filled["COUNCIL_MODELS"].split(",")
        shutil.copy(tmp_path / ".env.example", env)


async def test_council_commands_run_as_written(llm, tmp_path):
    assert _of("council"), "the page asks nothing of council"
    env = cli_env(llm, tmp_path)
    for words in _of("council"):
        # The scripted server answers in this event loop: the command runs beside it, not blocking it.
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "bot.cli", *words[1:], cwd=tmp_path, env=env, stdout=PIPE, stderr=PIPE
        )
        _, stderr = await asyncio.wait_for(process.communicate(), 60)
        assert process.returncode == 0, f"{shlex.join(words)}: {stderr.decode()}"
