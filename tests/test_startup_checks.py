"""Configuration that fails loudly at start, through the real `council` command: a DATABASE_URL with
a typo is one line and an exit (never a SQLite file named after the typo, and `council doctor` says
the same), a busy metrics port is one line and an exit before the database is even tried, a line-up
its endpoint does not know is a warning line per model (or, with --strict, a refusal), and
COUNCIL_HTTP_HOST / --host choose the address the Slack receiver and the metrics server listen on."""

from __future__ import annotations

import asyncio
import socket
import sys
import time

import aiohttp
import pytest

from core.database_url import parse_database_url
from tests.council_process import CouncilProcess
from tests.loopback_app import free_port
from tests.test_cli import ROOT, cli_env

TYPOS = {
    "postgres//council@host/council": "lacks the ':' after 'postgres'",
    "sqlite:/relative.db": "lacks the '//' after 'sqlite:'",
    "postgresql://council@db.example:notaport/council": "the port 'notaport'",
    "postgresql://council:s3cret@db.example:5432": "names no database",
    "sqlite://relative.db": "it needs three",
    "mysql://council@host/council": "must be sqlite:///path",
}


async def run(env: dict[str, str], *args: str, cwd, timeout: float = 60) -> tuple[int, str, str, float]:
    started = time.monotonic()
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot.cli", *args, cwd=cwd, env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(process.communicate(), timeout)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode(), time.monotonic() - started


def lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


@pytest.mark.parametrize("url", list(TYPOS))
def test_a_database_url_with_a_typo_is_refused_naming_the_setting_and_the_fault(url):
    with pytest.raises(ValueError) as refused:
        parse_database_url(url)
    message = str(refused.value)
    assert message.startswith("DATABASE_URL") and TYPOS[url] in message and "\n" not in message
    assert "s3cret" not in message


@pytest.mark.parametrize(
    "url,where",
    [
        ("sqlite:///data/council.db", "data/council.db"),
        ("sqlite:////var/lib/council.db", "/var/lib/council.db"),
        ("data/council.db", "data/council.db"),
        (":memory:", ":memory:"),
        ("postgresql://council@db:5432/council", "postgresql://council@db:5432/council"),
        ("postgres://council@db/council", "postgresql://council@db/council"),
        ("postgresql:///council?host=/run/postgresql", "postgresql:///council?host=/run/postgresql"),
    ],
)
def test_the_documented_forms_still_parse(url, where):
    assert parse_database_url(url).location == where


@pytest.mark.parametrize("command", [["doctor"], ["slack", "--http"], ["history"]])
@pytest.mark.parametrize(
    "url", ["postgres//council@host/council", "sqlite:/relative.db", "postgresql://c@h:notaport/db"]
)
async def test_every_command_exits_with_one_line_and_creates_no_file(llm, tmp_path, url, command):
    env = cli_env(llm, tmp_path, DATABASE_URL=url, SLACK_BOT_TOKEN="xoxb-test", SLACK_SIGNING_SECRET="s")
    code, out, err, took = await run(env, *command, cwd=tmp_path)
    assert code != 0 and not out.strip()
    [line] = lines(err)
    assert line.startswith("council: DATABASE_URL"), line
    assert list(tmp_path.iterdir()) == []  # no ./postgres/council@host/council, no ./sqlite:/relative.db
    assert took < 15  # no retrying of a malformed port


async def test_a_busy_metrics_port_exits_at_once_even_with_postgresql_unreachable(llm, tmp_path):
    """What used to stay up 40 s: the worker opened the (unreachable) database first, and the
    busy port's error did not cancel the queue still trying to connect."""
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    port = taken.getsockname()[1]
    env = cli_env(
        llm,
        tmp_path,
        DATABASE_URL=f"postgresql://council@127.0.0.1:{free_port()}/council",
        SLACK_BOT_TOKEN="xoxb-test",
        COUNCIL_HTTP_HOST="127.0.0.1",
    )
    try:
        code, _, err, took = await run(env, "worker", "--metrics-port", str(port), cwd=tmp_path)
    finally:
        taken.close()
    [line] = lines(err)
    assert code != 0 and f"Cannot serve metrics on port {port}" in line, err
    assert took < 10, took


@pytest.mark.parametrize("command", [["history"], ["slack", "--http", "--port", "0"], ["worker"]])
async def test_an_unreachable_postgresql_is_one_line_naming_the_cause_within_seconds(llm, tmp_path, command):
    """A reading command and serving ones: one line with libpq's reason, not a retrying pool's
    15 s open timeout and "PoolTimeout"; the password never in it."""
    url = f"postgresql://council:s3cret@127.0.0.1:{free_port()}/council"
    env = cli_env(llm, tmp_path, DATABASE_URL=url, SLACK_BOT_TOKEN="xoxb-test", SLACK_SIGNING_SECRET="secret")
    code, _, err, took = await run(env, *command, cwd=tmp_path)
    [line] = lines(err)
    print(f"\n[unreachable postgresql] `council {command[0]}`: one line in {took:.2f} s: {line}")
    assert code != 0 and line.startswith("council: DATABASE_URL: cannot connect to postgresql://council:***@127.0.0.1")
    assert "(Connection refused)" in line and "s3cret" not in line
    assert took < 10, took


def api_env(llm, tmp_path, **extra: str) -> dict[str, str]:
    return cli_env(llm, tmp_path, COUNCIL_API_KEYS="tester:sk-test-key-0123456789", LOG_LEVEL="WARNING", **extra)


async def until_serving(process: CouncilProcess, port: int) -> None:
    await process.until(lambda: f":{port}" in process.log.read_text(), 60)


async def test_a_line_up_the_endpoint_does_not_know_is_a_warning_line_per_model(llm, tmp_path):
    port = free_port()
    env = api_env(llm, tmp_path, COUNCIL_MODELS="alpha,no-such-model,beta,also-unknown")
    api = await CouncilProcess(["api", "--port", str(port)], env, tmp_path / "api.log").start()
    try:
        await until_serving(api, port)  # the check does not hold the start up: its lines follow
        await api.until(lambda: api.log.read_text().count("is unknown to its endpoint") == 2, 30)
        log = api.log.read_text()
        assert "model 'no-such-model' is unknown" in log and "model 'also-unknown' is unknown" in log
        assert "model 'alpha'" not in log
    finally:
        await api.stop()


@pytest.mark.parametrize("strict", [["--strict"], []])
async def test_strict_refuses_to_start_with_an_unknown_model(llm, tmp_path, strict):
    env = api_env(llm, tmp_path, COUNCIL_MODELS="alpha,no-such-model")
    if not strict:
        env["COUNCIL_STRICT_STARTUP"] = "true"
    code, _, err, _ = await run(env, "api", "--port", str(free_port()), *strict, cwd=tmp_path)
    [line] = lines(err)
    assert code != 0 and "no-such-model" in line and "--strict" in line, err


async def test_an_unreachable_endpoint_is_a_warning_line(llm, tmp_path):
    port = free_port()
    env = api_env(llm, tmp_path, LLM_BASE_URL=f"http://127.0.0.1:{free_port()}/v1")
    api = await CouncilProcess(["api", "--port", str(port)], env, tmp_path / "api.log").start()
    try:
        await until_serving(api, port)
        await api.until(lambda: "does not answer" in api.log.read_text(), 30)
        assert "check LLM_BASE_URL" in api.log.read_text()
    finally:
        await api.stop()


async def test_the_slack_receiver_and_the_metrics_server_listen_on_council_http_host(llm, tmp_path):
    events, metrics = free_port(), free_port()
    env = cli_env(
        llm,
        tmp_path,
        SLACK_BOT_TOKEN="xoxb-test",
        SLACK_SIGNING_SECRET="secret",
        SLACK_API_URL=f"http://127.0.0.1:{free_port()}/api/",
        COUNCIL_HTTP_HOST="127.0.0.2",
    )
    args = ["slack", "--http", "--port", str(events), "--metrics-port", str(metrics)]
    bot = await CouncilProcess(args, env, tmp_path / "bot.log", cwd=ROOT).start()
    try:
        async with aiohttp.ClientSession() as session:
            for port in (events, metrics):
                await _healthy(session, bot, f"http://127.0.0.2:{port}/health")
                with pytest.raises(aiohttp.ClientConnectionError):
                    await session.get(f"http://127.0.0.1:{port}/health")
    finally:
        await bot.stop()


async def _healthy(session: aiohttp.ClientSession, process: CouncilProcess, url: str) -> None:
    deadline = time.monotonic() + 60
    while True:
        try:
            async with session.get(url) as response:
                if response.status == 200:
                    return
        except aiohttp.ClientConnectionError:
            pass
        assert process.process is not None and process.process.returncode is None, process.log.read_text()[-2000:]
        assert time.monotonic() < deadline, url
        await asyncio.sleep(0.1)
