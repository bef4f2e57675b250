"""core/tenants on both backends: installations and states, keys, budgets, spend, purge and the
secret's rotation, on SQLite and on a real PostgreSQL server."""

from __future__ import annotations

import time

import pytest
from cryptography.fernet import Fernet

from bot.slack.installations import SlackInstallationStore, SlackStateStore
from core.models import Actor, Origin, Platform
from core.service import CouncilService
from tests.conftest import BACKENDS, backend_url, make_settings
from tests.test_tenant_keys import TENANT_KEY, tenant_llm  # noqa: F401 (fixture)

KEY = Fernet.generate_key().decode()


@pytest.fixture(params=BACKENDS)
def database_url(request, tmp_path) -> str:
    return backend_url(request, tmp_path)


@pytest.fixture
async def service(llm, tmp_path, database_url):
    svc = await CouncilService.open(make_settings(llm, tmp_path, DATABASE_URL=database_url, COUNCIL_SECRET_KEY=KEY))
    yield svc
    await svc.aclose()


async def test_installations_states_and_purge(service, tenant_llm):  # noqa: F811
    from slack_sdk.oauth.installation_store.models.installation import Installation

    store, states = SlackInstallationStore(service), SlackStateStore(service)
    state = await states.async_issue()
    assert await states.async_consume(state) and not await states.async_consume(state)

    for team, user in (("T2", "U1"), ("T2", "U2"), ("T3", "U1")):
        await store.async_save(
            Installation(
                app_id="A1",
                team_id=team,
                user_id=user,
                bot_token=f"xoxb-{team}-{user}-secret",
                bot_id="B1",
                bot_user_id="UB",
                bot_scopes="chat:write",
                installed_at=time.time(),
            )
        )
    bot = await store.async_find_bot(enterprise_id=None, team_id="T2")
    assert bot is not None and bot.bot_token == "xoxb-T2-U2-secret"  # the latest install's bot
    found = await store.async_find_installation(enterprise_id=None, team_id="T2", user_id="U1")
    assert found is not None and found.user_id == "U1" and found.bot_token == "xoxb-T2-U2-secret"

    origin = Origin(platform=Platform.SLACK, workspace_id="T2", channel_id="C2", user_id="U1")
    admin = Actor(user_id="UA", is_platform_admin=True)
    await service.tenants.keys.save(admin, origin, TENANT_KEY, base_url=tenant_llm.base_url)
    await service.tenants.budgets.set("slack:T2", 3.5)
    await service.ask("What is six times seven?", origin)
    assert (await service.tenants.budgets.spend("slack:T2")).daily_budget_usd == 3.5
    assert sum(d.councils for d in await service.tenants.budgets.usage("slack:T2")) == 1
    assert await service.tenants.rotate_secret() == 6  # one key, two bots (T2, T3), three installations

    counts = await service.tenants.purge("slack:T2", "cli")
    assert (counts.councils, counts.keys, counts.installations) == (1, 1, 2)
    assert await store.async_find_bot(enterprise_id=None, team_id="T2") is None
    assert await store.async_find_bot(enterprise_id=None, team_id="T3") is not None  # another tenant's stays
    assert await service.tenants.keys.info(origin) is None
    assert not await service.queries.history(scope="all", limit=5)


async def test_migrate_db_copies_tenants_encrypted(llm, tmp_path, tenant_llm):  # noqa: F811
    from core.service import migrate_database

    source = f"sqlite:///{tmp_path}/source.db"
    origin = Origin(platform=Platform.SLACK, workspace_id="T2", channel_id="C2", user_id="U1")
    settings = make_settings(llm, tmp_path, DATABASE_URL=source, COUNCIL_SECRET_KEY=KEY)
    async with await CouncilService.open(settings) as service:
        await service.tenants.keys.save(
            Actor(user_id="UA", is_platform_admin=True), origin, TENANT_KEY, base_url=tenant_llm.base_url
        )
        await service.tenants.budgets.set("slack:T2", 2.0)
    report = await migrate_database(source, f"sqlite:///{tmp_path}/target.db")
    assert report.copied["tenant_keys"] == 1 and report.copied["tenant_budgets"] == 1
    target = make_settings(llm, tmp_path, DATABASE_URL=f"sqlite:///{tmp_path}/target.db", COUNCIL_SECRET_KEY=KEY)
    async with await CouncilService.open(target) as service:
        assert (await service.tenants.keys.info(origin)).key_tail == "WXYZ"
        await service.ask("Copied?", origin)
    assert TENANT_KEY.encode() not in (tmp_path / "target.db").read_bytes()
