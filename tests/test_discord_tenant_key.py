"""`/council-admin key` on Discord: a modal, checked by one models-list call, private outcome, the
key never shown back, then the server's councils on its own key."""

# ruff: noqa: F811  (fixtures imported from other test modules are named as parameters)
from __future__ import annotations

import pytest
from cryptography.fernet import Fernet

from core.models import Origin, Platform
from tests.discord_fake import BASIC_PERMISSIONS, MANAGE_GUILD
from tests.test_discord_adapter import env, ephemeral_replies, subcommand  # noqa: F401 (fixture)
from tests.test_tenant_keys import TENANT_KEY, tenant_llm  # noqa: F401 (fixture)

SETTINGS = {"COUNCIL_SECRET_KEY": Fernet.generate_key().decode()}


async def submit_key(fake, values: dict[str, str], *, user_id: int, permissions: int) -> str:
    """Open the modal with the command (a modal is submitted once), submit it, read the private reply."""
    before = len(fake.modals)
    await fake.push_command("council-admin", subcommand("key"), permissions=permissions, user_id=user_id)
    await fake.wait_for(lambda: len(fake.modals) > before, 10)
    modal = fake.modals[-1]
    assert modal["title"] == "Provider key for this server" and "key" in str(modal["components"])
    submit = await fake.push_modal_submit(modal, values, user_id=user_id, permissions=permissions)
    await fake.wait_for(lambda: [m for m in ephemeral_replies(fake, submit.token) if m.get("content")], 10)
    [reply] = [m for m in ephemeral_replies(fake, submit.token) if m.get("content")]
    assert reply["flags"] & 64  # never a visible message
    return reply["content"]


@pytest.mark.parametrize("env", [SETTINGS], indirect=True)
async def test_key_modal_checks_and_saves_privately(env, tenant_llm):
    fake, service = env.fake, env.service
    origin = Origin(platform=Platform.DISCORD, workspace_id=str(fake.guild_id))
    wrong = {"key": "sk-wrong-000000000", "base_url": tenant_llm.base_url}
    right = {"key": TENANT_KEY, "base_url": tenant_llm.base_url}

    reply = await submit_key(fake, wrong, user_id=777, permissions=MANAGE_GUILD)
    assert "Incorrect API key provided" in reply and "not saved" in reply
    reply = await submit_key(fake, right, user_id=778, permissions=BASIC_PERMISSIONS)
    assert "Manage Server" in reply and await service.tenants.key_info(origin) is None

    reply = await submit_key(fake, right, user_id=777, permissions=MANAGE_GUILD)
    assert "…WXYZ checked and saved" in reply and TENANT_KEY not in reply
    assert (await service.tenants.key_info(origin)).key_tail == "WXYZ"
