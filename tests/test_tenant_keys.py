"""A tenant's own provider key: checked with one models-list call before it is saved, used for that
tenant's councils only, never stored, logged or exported in clear, and re-encrypted by rotation."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from cryptography.fernet import Fernet

from core.errors import BudgetExceeded, InputRejected, UnknownModels
from core.models import Actor, Origin, Platform
from core.service import CouncilService
from core.shared.redact import Redactor
from tests.conftest import MEMBERS, make_settings
from tests.llm_server import ScriptedLLMServer, council_member

TENANT_KEY = "sk-tenant-0123456789abcdef-WXYZ"
ADMIN = Actor(user_id="U-admin", is_platform_admin=True)
T2 = Origin(platform=Platform.SLACK, workspace_id="T2", channel_id="C2", user_id="U1")
T1 = Origin(platform=Platform.SLACK, workspace_id="T1", channel_id="C1", user_id="U1")


@pytest.fixture
async def tenant_llm():
    async with ScriptedLLMServer(api_keys={TENANT_KEY}) as server:
        for name in MEMBERS:
            server.script(name, council_member(f"{name} (tenant) says 42.", synthesis=f"Tenant answer by {name}."))
        yield server


def database_bytes(tmp_path: Path) -> bytes:
    return b"".join(p.read_bytes() for p in tmp_path.glob("council.db*"))


async def test_tenant_key_is_used_for_that_tenants_councils_only(llm, tenant_llm, tmp_path, caplog):
    caplog.set_level(logging.DEBUG)
    first_key = Fernet.generate_key().decode()
    settings = make_settings(llm, tmp_path, COUNCIL_SECRET_KEY=first_key)
    service = await CouncilService.open(settings)
    try:
        # A rejected key is not saved, and the admin reads the provider's reason.
        with pytest.raises(InputRejected, match="Incorrect API key provided"):
            await service.tenants.keys.save(ADMIN, T2, "sk-wrong-key-000000", base_url=tenant_llm.base_url)
        assert await service.tenants.keys.info(T2) is None
        with pytest.raises(Exception, match="Only admins"):
            await service.tenants.keys.save(Actor(user_id="U-someone"), T2, TENANT_KEY, base_url=tenant_llm.base_url)

        checks = tenant_llm.model_list_requests
        info = await service.tenants.keys.save(
            ADMIN, T2, TENANT_KEY, base_url=tenant_llm.base_url, members=["beta", "gamma"]
        )
        assert tenant_llm.model_list_requests == checks + 1  # one models-list call checked it
        assert info.key_tail == "WXYZ" and info.masked == "…WXYZ" and TENANT_KEY not in info.model_dump_json()

        tenant_result = await service.ask("What is six times seven?", T2)
        tenant_calls = list(tenant_llm.requests)
        operator_result = await service.ask("What is six times seven?", T1)
        assert tenant_llm.requests == tenant_calls  # nothing of T1's council went to the tenant's endpoint
        assert tenant_calls and {r.headers["Authorization"] for r in tenant_calls} == {f"Bearer {TENANT_KEY}"}
        assert {r.model for r in tenant_calls} == {"beta", "gamma"}  # the tenant's line-up
        assert tenant_result.request.config.members == ["beta", "gamma"]
        assert all(r.headers["Authorization"] != f"Bearer {TENANT_KEY}" for r in llm.requests)
        assert operator_result.request.config.members == MEMBERS
        assert all("(tenant)" not in (a.text or "") for a in operator_result.answers)

        # The key's bytes: not in the database file, the logs or an export.
        export = await service.queries.export(tenant_result.council_id, "json")
        await service.storage.close()
        assert TENANT_KEY.encode() not in database_bytes(tmp_path)
        assert TENANT_KEY not in export
        assert TENANT_KEY not in caplog.text
        assert Redactor([])(f"quoted back: {TENANT_KEY}") == "quoted back: [redacted]"  # the filter knows it
    finally:
        await service.aclose()

    # Rotation: a new key first, the old one after; everything is re-encrypted under the new one,
    # after which the new key alone reads it.
    second_key = Fernet.generate_key().decode()
    rotating = make_settings(llm, tmp_path, COUNCIL_SECRET_KEY=f"{second_key},{first_key}")
    service = await CouncilService.open(rotating)
    try:
        before = database_bytes(tmp_path)
        assert await service.tenants.rotate_secret() == 1
    finally:
        await service.aclose()
    assert database_bytes(tmp_path) != before
    service = await CouncilService.open(make_settings(llm, tmp_path, COUNCIL_SECRET_KEY=second_key))
    try:
        calls = len(tenant_llm.requests)
        await service.ask("Again?", T2)
        assert len(tenant_llm.requests) > calls
    finally:
        await service.aclose()


async def test_require_tenant_key_refuses_with_how_to_add_one(llm, tmp_path):
    settings = make_settings(
        llm, tmp_path, COUNCIL_REQUIRE_TENANT_KEY="true", COUNCIL_SECRET_KEY=Fernet.generate_key().decode()
    )
    async with await CouncilService.open(settings) as service:
        with pytest.raises(InputRejected, match="Home tab"):
            await service.ask("What is six times seven?", T2)
        assert not llm.requests
        await service.ask("From the terminal?")  # the CLI is the operator's: no tenant
        assert llm.requests


async def test_tenant_daily_budget_is_for_all_its_channels(llm, tmp_path):
    settings = make_settings(
        llm, tmp_path, MODEL_PRICES='{"alpha": [1000, 1000], "beta": [1000, 1000], "gamma": [1000, 1000]}'
    )
    async with await CouncilService.open(settings) as service:
        await service.tenants.budgets.set("slack:T2", 0.0001)
        await service.ask("What is six times seven?", T2)
        spend = await service.tenants.budgets.spend("slack:T2")
        assert spend.spent_today_usd > 0.0001
        other_channel = T2.model_copy(update={"channel_id": "C9"})
        with pytest.raises(BudgetExceeded, match="workspace's daily budget"):
            await service.ask("Again?", other_channel)
        await service.ask("Elsewhere?", T1)  # another workspace is not held back
        usage = await service.tenants.budgets.usage("slack:T2")
        assert sum(day.councils for day in usage) == 1


async def test_channel_models_are_checked_against_the_workspaces_own_endpoint(llm, tenant_llm, tmp_path):
    tenant_llm.script("house-model", council_member("House model says 42.", synthesis="House answer."))
    settings = make_settings(llm, tmp_path, COUNCIL_SECRET_KEY=Fernet.generate_key().decode())
    async with await CouncilService.open(settings) as service:
        # Before the workspace has a key of its own, its channels run on the operator's endpoint.
        with pytest.raises(UnknownModels, match="house-model"):
            await service.channels.set_members(ADMIN, T2, ["house-model", "beta"])
        await service.tenants.keys.save(ADMIN, T2, TENANT_KEY, base_url=tenant_llm.base_url)
        config = await service.channels.set_members(ADMIN, T2, ["house-model", "beta"])
        assert config.members == ["house-model", "beta"]
        assert (await service.channels.set_chairman(ADMIN, T2, "house-model")).chairman == "house-model"
        # Another workspace still has only the operator's models.
        with pytest.raises(UnknownModels, match="house-model"):
            await service.channels.set_chairman(ADMIN, T1, "house-model")
        result = await service.ask("What is six times seven?", T2)
        assert [a.model for a in result.answers] == ["house-model", "beta"]
        assert result.synthesis is not None and result.synthesis.text == "House answer."
