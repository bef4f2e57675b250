"""User errors and unreachable services give one clear line and the right exit code, as subprocesses.

Exit code 2 is a configuration or input error, 1 a failure at run time; `-v` adds the traceback.
"""

from __future__ import annotations

import asyncio
import json
import os
import pty
import socket
import subprocess
import sys

import pytest

from tests.llm_server import Fail
from tests.loopback_app import free_port
from tests.test_cli import ROOT, cli_env, council

LEAKED_KEY = "sk-proxy-echoes-0123456789"


def _one_clear_line(err: str, *needles: str) -> None:
    assert "Traceback" not in err, err
    lines = [line for line in err.splitlines() if line.startswith("council: ")]
    assert len(lines) == 1, err
    for needle in needles:
        assert needle in lines[0], err


@pytest.mark.parametrize(
    ("args", "env", "code", "needles"),
    [
        (["slack"], {}, 2, ["SLACK_BOT_TOKEN is not set"]),
        (["slack"], {"SLACK_BOT_TOKEN": "xoxb-1-2-3"}, 2, ["SLACK_SIGNING_SECRET is not set", "SLACK_APP_TOKEN"]),
        (["slack", "--http"], {"SLACK_BOT_TOKEN": "xoxb-1-2-3", "SLACK_APP_TOKEN": "xapp-1"}, 2, ["SIGNING_SECRET"]),
        (["discord"], {"DISCORD_TOKEN": ""}, 2, ["DISCORD_TOKEN is not set"]),
        (["serve"], {}, 2, ["Nothing to serve"]),
        (
            ["slack", "--http", "--no-worker"],
            {"SLACK_BOT_TOKEN": "xoxb-1", "SLACK_SIGNING_SECRET": "s"},
            2,
            ["PostgreSQL"],
        ),
        (["worker"], {}, 2, ["council worker needs PostgreSQL"]),
        (["history"], {"DATABASE_URL": "sqlite:////proc/x.db"}, 2, ["DATABASE_URL", "/proc/x.db", "writable"]),
        (["history"], {"DATABASE_URL": "mysql://user:hunter2@db/council"}, 2, ["DATABASE_URL", "'mysql'"]),
        (["ask", "Q?"], {"COUNCIL_TIMEOUT_S": "soon"}, 2, ["COUNCIL_TIMEOUT_S", "'soon'"]),
        (["history"], {"MODEL_PRICES": "{not json"}, 2, ["MODEL_PRICES"]),
        (["history"], {"LOG_LEVEL": "loud"}, 2, ["LOG_LEVEL"]),
    ],
)
async def test_configuration_errors_are_one_line_with_exit_2(tmp_path, llm, args, env, code, needles):
    returncode, out, err = await council(tmp_path, llm, *args, extra_env=env)
    assert returncode == code, err
    _one_clear_line(err, *needles)
    assert "hunter2" not in out + err


async def test_unreachable_discord_is_one_line_with_exit_1(tmp_path, llm):
    api = f"http://127.0.0.1:{free_port()}/api"
    env = {"DISCORD_TOKEN": "a-token-for-nowhere", "DISCORD_API_URL": api}
    returncode, out, err = await council(tmp_path, llm, "discord", extra_env=env)
    assert returncode == 1, err
    _one_clear_line(err, "Cannot reach Discord", api, "DISCORD_API_URL")
    assert "a-token-for-nowhere" not in out + err


async def test_verbose_adds_the_traceback(tmp_path, llm):
    returncode, _, err = await council(tmp_path, llm, "-v", "history", extra_env={"DATABASE_URL": "sqlite:////proc/x"})
    assert returncode == 2 and "Traceback" in err and "council: DATABASE_URL" in err


async def test_export_to_a_missing_folder_names_the_path(tmp_path, llm):
    code, out, _ = await council(tmp_path, llm, "ask", "--json", "Q?")
    council_id = json.loads(out)["id"]
    code, _, err = await council(tmp_path, llm, "export", council_id, "-o", "missing-dir/x.md")
    assert code == 2
    _one_clear_line(err, "missing-dir/x.md", "folder exists")


async def test_history_is_kept_in_the_user_data_dir_whatever_the_working_directory(tmp_path, llm):
    data_home = tmp_path / "xdg"
    env = {"DATABASE_URL": "", "XDG_DATA_HOME": str(data_home)}
    code, out, err = await council(tmp_path, llm, "ask", "--json", "Q?", extra_env=env)
    assert code == 0, err
    council_id = json.loads(out)["id"]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bot.cli",
        "history",
        cwd=elsewhere,
        env={**os.environ, **env, "PYTHONPATH": str(ROOT)},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await process.communicate()
    assert process.returncode == 0 and council_id in out.decode(), err
    database = data_home / "llm-council" / "council.db"
    assert database.exists() and not (tmp_path / "data").exists() and not (elsewhere / "data").exists()
    code, out, _ = await council(tmp_path, llm, "doctor", extra_env=env)
    assert str(database) in out
    code, out, _ = await council(tmp_path, llm, "--help", extra_env=env)
    assert code == 0 and str(database) in out


async def test_log_level_is_read_for_every_command(tmp_path, llm):
    code, _, err = await council(tmp_path, llm, "history", extra_env={"LOG_LEVEL": "DEBUG"})
    assert code == 0 and " DEBUG " in err  # asyncio's selector line, at least
    code, _, err = await council(tmp_path, llm, "history", extra_env={"LOG_LEVEL": "WARNING"})
    assert code == 0 and " DEBUG " not in err


async def test_serve_shows_its_own_info_lines(tmp_path, llm):
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LLM_", "COUNCIL_", "DATABASE_URL"))}
    env.update(
        PYTHONPATH=str(ROOT),
        DATABASE_URL=f"sqlite:///{tmp_path}/serve.db",
        SLACK_BOT_TOKEN="xoxb-serve-test",
        SLACK_SIGNING_SECRET="signing-secret-for-test",
        SLACK_API_URL=f"http://127.0.0.1:{free_port()}/api/",
    )
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot.cli", "serve", "--port", str(port), cwd=tmp_path, env=env,
        stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    try:
        line = await asyncio.wait_for(process.stderr.readline(), 30)  # type: ignore[union-attr]
        while line and b"Events API" not in line:
            line = await asyncio.wait_for(process.stderr.readline(), 30)  # type: ignore[union-attr]
        assert f"serving the Events API at http://0.0.0.0:{port}".encode() in line
    finally:
        process.terminate()
        await process.wait()


async def test_a_key_quoted_back_in_an_error_body_never_reaches_output_or_the_database(tmp_path, llm):
    llm.script("leaky", Fail(401, f"Incorrect API key provided: {LEAKED_KEY}. Get one at example.com"))
    env = {"LLM_API_KEY": LEAKED_KEY, "COUNCIL_MODELS": "alpha,beta,leaky", "LOG_LEVEL": "DEBUG"}
    for args in (["-v", "ask", "Q?"], ["ask", "--json", "Q?"], ["doctor"]):
        _, out, err = await council(tmp_path, llm, *args, extra_env=env)
        assert LEAKED_KEY not in out + err
    assert "[redacted]" in out + err or "leaky" in out
    files = list(tmp_path.glob("cli.db*"))
    assert files and all(LEAKED_KEY.encode() not in path.read_bytes() for path in files)


async def test_final_answer_is_shown_once_when_stdout_and_stderr_are_one_terminal(tmp_path, llm):
    """Streamed live on stderr, then not repeated on stdout: both are the same screen."""
    primary, secondary = pty.openpty()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LLM_", "COUNCIL_", "DATABASE_URL"))}
    env.update(
        PYTHONPATH=str(ROOT),
        LLM_BASE_URL=llm.base_url,
        LLM_API_KEY="k",
        COUNCIL_MODELS="alpha,beta,gamma",
        COUNCIL_CHAIRMAN="beta",
        DATABASE_URL=f"sqlite:///{tmp_path}/tty.db",
    )
    process = subprocess.Popen(  # noqa: ASYNC220 - a pty needs plain file descriptors; it is read in a thread
        [sys.executable, "-m", "bot.cli", "ask", "Why?"], stdout=secondary, stderr=secondary, env=env, cwd=tmp_path
    )
    os.close(secondary)

    def read_screen() -> str:
        chunks = []
        while True:
            try:
                chunk = os.read(primary, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks).decode()

    try:
        screen = await asyncio.wait_for(asyncio.to_thread(read_screen), 60)
    finally:
        os.close(primary)
    assert await asyncio.to_thread(process.wait, 30) == 0
    assert screen.count("Final answer by beta: 42.") == 1, screen
    assert "Final answer by the chairman, beta: shown above" in screen


async def test_final_answer_still_reaches_a_pipe(tmp_path, llm):
    code, out, err = await council(tmp_path, llm, "ask", "Why?")
    assert code == 0, err
    assert "Final answer by beta: 42." in out and "shown above" not in out


async def test_a_busy_port_names_the_option(tmp_path, llm):
    with socket.socket() as busy:
        busy.bind(("0.0.0.0", 0))
        busy.listen()
        port = busy.getsockname()[1]
        env = {"SLACK_BOT_TOKEN": "xoxb-port-test", "SLACK_SIGNING_SECRET": "signing-secret-for-test"}
        code, _, err = await council(tmp_path, llm, "slack", "--http", "--port", str(port), extra_env=env)
    assert code == 2, err
    _one_clear_line(err, "cannot listen", "--port")


def test_help_does_not_import_the_service():
    """`council --help` must stay cheap: the service and its HTTP stack load only for a command."""
    probe = (
        "import sys\n"
        "from bot import cli\n"
        "cli.build_parser().format_help()\n"
        "heavy = [m for m in sys.modules if m.split('.')[0] in ('pydantic', 'httpx', 'aiohttp', 'aiosqlite')"
        " or m in ('core.service', 'core.models', 'bot.commands')]\n"
        "print(heavy)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}
    )
    assert out.returncode == 0 and out.stdout.strip() == "[]", out.stdout + out.stderr


async def test_a_reader_that_stops_reading_is_no_error(tmp_path, llm):
    """`council history | head -1`: the pipe closes before the listing is written. No "unexpected
    error" line, no traceback: exit 1 quietly, as Python advises for a broken pipe."""
    assert (await council(tmp_path, llm, "ask", "--json", "What is six times seven?"))[0] == 0
    read_end, write_end = os.pipe()
    os.close(read_end)  # every write now fails with EPIPE
    try:
        done = await asyncio.to_thread(
            subprocess.run,
            [sys.executable, "-m", "bot.cli", "history"],
            stdout=write_end,
            stderr=subprocess.PIPE,
            env=cli_env(llm, tmp_path),
            cwd=tmp_path,
            timeout=60,
        )
    finally:
        os.close(write_end)
    assert done.returncode == 1
    assert done.stderr.decode() == ""
