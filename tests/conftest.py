"""Shared fixtures: a scripted LLM server and a real CouncilService on a temporary database."""

from __future__ import annotations

import os

import pytest

from core.service import CouncilService
from core.settings import Settings
from tests import figures
from tests.llm_server import ScriptedLLMServer, council_member
from tests.optional import REQUIRE_ALL
from tests.pg_server import PostgresServer, missing_reason

# Tests never read a developer's .env or inherit their keys.
for _name in list(os.environ):
    if _name.startswith(
        (
            "LLM_",
            "OPENROUTER_",
            "COUNCIL_",
            "SLACK_",
            "DISCORD_",
            "RATE_LIMIT_",
            "DATABASE_URL",
            "LOCAL_",
            "MODEL_PRICES",
            "SEARXNG_URL",
            "BRAVE_API_KEY",
            "TAVILY_API_KEY",
        )
    ):
        del os.environ[_name]

MEMBERS = ["alpha", "beta", "gamma"]


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups (`--dist loadgroup`)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """llama.cpp tests use every core for seconds at a time; under xdist they run one after the
    other in a single worker instead of competing with each other.

    Tests marked `slow` (ten seconds or more) come first: xdist hands tests out in this order,
    so a long one started last would keep the whole run waiting for it alone."""
    for item in items:
        if item.get_closest_marker("llama") is not None:
            item.add_marker(pytest.mark.xdist_group("llama"))
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)  # stable: otherwise as collected


def pytest_configure(config: pytest.Config) -> None:
    figures.configure(config)


def make_settings(server: ScriptedLLMServer, tmp_path, **overrides) -> Settings:
    values = dict(
        LLM_BASE_URL=server.base_url,
        LLM_API_KEY="test-key-not-secret",
        COUNCIL_MODELS=",".join(MEMBERS),
        COUNCIL_CHAIRMAN="alpha",
        COUNCIL_TIMEOUT_S=10,
        COUNCIL_GRACE_S=2,
        LLM_MAX_RETRIES=1,
        LLM_RETRY_BASE_S=0.01,
        DATABASE_URL=f"sqlite:///{tmp_path}/council.db",
    )
    values.update(overrides)
    return Settings(_env_file=None, **values)


@pytest.fixture
async def llm():
    async with ScriptedLLMServer() as server:
        for name in MEMBERS:
            server.script(
                name, council_member(f"{name} says: the answer is 42.", synthesis=f"Final answer by {name}: 42.")
            )
        yield server


BACKENDS = ["sqlite", "postgresql"]


@pytest.fixture(scope="session")
def pg_server():
    """One real PostgreSQL server for the session (see tests/pg_server.py); skipped where there is
    none, a failure when REQUIRE_ALL_TEST_STACKS=1. Under xdist each worker is a session and starts
    its own (about 4 s, overlapping the other workers' tests; databases are named by process id)."""
    reason = missing_reason()
    if reason is not None:
        if REQUIRE_ALL:
            pytest.fail(f"REQUIRE_ALL_TEST_STACKS=1 but {reason}")
        pytest.skip(reason)
    server = PostgresServer().start()
    yield server
    server.stop()


def backend_url(request: pytest.FixtureRequest, tmp_path) -> str:
    """A fresh empty database of the backend named by `request.param`."""
    if request.param == "postgresql":
        return request.getfixturevalue("pg_server").new_database()
    return f"sqlite:///{tmp_path}/council.db"


@pytest.fixture
def database_url(tmp_path) -> str:
    """SQLite by default; test modules that cover both backends override this fixture with
    `@pytest.fixture(params=BACKENDS)` returning `backend_url(request, tmp_path)`."""
    return f"sqlite:///{tmp_path}/council.db"


@pytest.fixture
async def service(llm, tmp_path, database_url):
    svc = await CouncilService.open(make_settings(llm, tmp_path, DATABASE_URL=database_url))
    yield svc
    await svc.aclose()
