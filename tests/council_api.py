"""`council api` / `council mcp` run as real subprocesses of this checkout, against a scripted LLM server."""

from __future__ import annotations

import asyncio
import os
import re
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import openai
import pytest
import pytest_asyncio

from tests.conftest import MEMBERS
from tests.llm_server import ScriptedLLMServer, council_member

ROOT = Path(__file__).resolve().parent.parent
API_KEY = "sk-council-test-alice"
OTHER_KEY = "sk-council-test-bob"
AUTH = {"Authorization": f"Bearer {API_KEY}"}
SENTINEL = [{"role": "user", "content": "Sentinel question: what is two plus two?"}]


def script_healthy(llm: ScriptedLLMServer, synthesis: str | None = None, **timing: float) -> None:
    for name in MEMBERS:
        llm.script(
            name, council_member(f"{name} says: 42.", synthesis=synthesis or f"Final answer by {name}: 42.", **timing)
        )


def council_env(llm: ScriptedLLMServer, tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("LLM_", "COUNCIL_", "OPENROUTER_", "DATABASE_URL", "RATE_LIMIT_"))
    }
    env.update(
        LLM_BASE_URL=llm.base_url,
        LLM_API_KEY="api-test-upstream-key",
        LLM_MAX_RETRIES="0",
        COUNCIL_MODELS=",".join(MEMBERS),
        COUNCIL_CHAIRMAN="alpha",
        COUNCIL_TIMEOUT_S="20",
        COUNCIL_GRACE_S="2",
        COUNCIL_API_KEYS=f"alice:{API_KEY},bob:{OTHER_KEY}",
        DATABASE_URL=f"sqlite:///{tmp_path}/api.db",
        PYTHONPATH=str(ROOT),
    )
    env.update(extra)
    return env


@dataclass
class RunningApi:
    process: asyncio.subprocess.Process
    base_url: str  # http://127.0.0.1:PORT/v1
    database: Path
    log: list[str] = field(default_factory=list)  # the server's stderr lines so far

    @property
    def root(self) -> str:
        return self.base_url.removesuffix("/v1")


@asynccontextmanager
async def council_api(
    llm: ScriptedLLMServer, tmp_path: Path, *args: str, command: str = "api", **extra_env: str
) -> AsyncIterator[RunningApi]:
    """`council api` (or `council serve`, which serves the API when keys are set) on a free port."""
    env = council_env(llm, tmp_path, COUNCIL_API_PORT="0", **extra_env)
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot.cli", command, *args,
        cwd=tmp_path, env=env, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert process.stderr is not None
    drain: asyncio.Task[None] | None = None
    try:
        line = (await asyncio.wait_for(process.stderr.readline(), 30)).decode()
        match = re.search(r"(http://\S+/v1)", line)
        assert match, f"no address from `council api`: {line!r} {(await process.stderr.read()).decode()!r}"
        running = RunningApi(process, match.group(1), tmp_path / "api.db")
        # Keep draining stderr (the server must never block on a full pipe), line by line for the tests.
        drain = asyncio.create_task(_collect(process.stderr, running.log))
        yield running
    finally:
        if process.returncode is None:
            process.terminate()
            await asyncio.wait_for(process.wait(), 10)
        if drain is not None:
            drain.cancel()


async def _collect(stream: asyncio.StreamReader, lines: list[str]) -> None:
    while line := await stream.readline():
        lines.append(line.decode(errors="replace").rstrip("\n"))


async def requests_before_a_later_council(api: RunningApi, llm: ScriptedLLMServer) -> list:
    """Runs a whole council on a sentinel question, started after everything the test did: once
    it has answered, a model call that anything earlier still had to make would have been made.
    Returns the recorded model requests that are not the sentinel's."""
    script_healthy(llm)
    async with httpx.AsyncClient(timeout=60) as http:
        response = await http.post(
            f"{api.base_url}/chat/completions", headers=AUTH, json={"model": "llm-council", "messages": SENTINEL}
        )
    assert response.status_code == 200, response.text
    return [r for r in llm.requests if "Sentinel question" not in r.user]


# The fixtures of the modules that share one `council api` per module (test_api, test_api_protocol):
# imported there by name, so that each module starts its own.


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def llm_for_api() -> AsyncIterator[ScriptedLLMServer]:
    async with ScriptedLLMServer() as server:
        yield server


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def api(llm_for_api: ScriptedLLMServer, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[RunningApi]:
    # One server and one asker for the whole module: run serially, a module asks more councils
    # than the default hourly limit of 20 (the limits have servers of their own).
    limits = {"RATE_LIMIT_USER_PER_HOUR": "1000", "RATE_LIMIT_CHANNEL_PER_HOUR": "1000"}
    async with council_api(llm_for_api, tmp_path_factory.mktemp("api"), **limits) as running:
        yield running


@pytest.fixture(autouse=True)
def healthy(llm_for_api: ScriptedLLMServer) -> None:
    llm_for_api.requests.clear()
    script_healthy(llm_for_api)


@pytest.fixture
def client(api: RunningApi) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=api.base_url, api_key=API_KEY, max_retries=0)
