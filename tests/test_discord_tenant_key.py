"""`/council-admin key` on Discord: a modal, checked by one models-list call, private outcome, the
key never shown back, then the server's councils on its own key."""

# ruff: noqa: F811  (fixtures imported from other test modules are named as parameters)
from __future__ import annotations

import pytest
from cryptography.fernet import Fernet

from core.models import Origin, Platform
from tests.conftest import MEMBERS
from tests.discord_fake import BASIC_PERMISSIONS, MANAGE_GUILD
from tests.llm_server import council_member
from tests.test_discord_adapter import (  # noqa: F401 (fixture)
    council_option,
    env,
    ephemeral_replies,
    subcommand,
    wait_finished,
)
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
    assert "Manage Server" in reply and await service.tenants.keys.info(origin) is None

    reply = await submit_key(fake, right, user_id=777, permissions=MANAGE_GUILD)
    assert "…WXYZ checked and saved" in reply and TENANT_KEY not in reply
    assert (await service.tenants.keys.info(origin)).key_tail == "WXYZ"


async def reply_of(fake, command: str, options: list[dict], **kwargs) -> dict:
    """The private reply (with its embed) to one slash command."""
    pushed = await fake.push_command(command, options, **kwargs)
    await fake.wait_for(lambda: [m for m in ephemeral_replies(fake, pushed.token) if m.get("embeds")], 15)
    return next(m for m in ephemeral_replies(fake, pushed.token) if m.get("embeds"))


@pytest.mark.parametrize("env", [SETTINGS], indirect=True)
async def test_admin_show_and_leaderboard_show_the_servers_own_lineup(env, tenant_llm, llm):
    """A server with its own key and line-up: `/council-admin show` and the leaderboard's seats
    show the line-up its councils run on, not the operator's."""
    fake, service = env.fake, env.service
    lineup, chairman = ["beta|delta", "gamma", "alpha"], "gamma"  # a fallback seat on the tenant's model
    tenant_llm.script("delta", council_member("delta (tenant) says 42.", synthesis="Tenant answer by delta."))
    values = {"key": TENANT_KEY, "base_url": tenant_llm.base_url, "members": " ".join(lineup), "chairman": chairman}
    assert "checked and saved" in await submit_key(fake, values, user_id=777, permissions=MANAGE_GUILD)

    await fake.push_command("council", council_option("What is six times seven?"))
    await wait_finished(fake)
    [council] = await service.queries.history(scope="all", limit=5)
    ran = (await service.queries.get_result(council.council_id)).request.config
    assert (ran.members, ran.chairman) == (lineup, chairman) and tenant_llm.requests and not llm.requests

    shown = (await reply_of(fake, "council-admin", subcommand("show")))["embeds"][0]
    fields = {f["name"]: f["value"] for f in shown["fields"]}
    assert (fields["Members"].split("\n"), fields["Chairman"]) == (lineup, chairman)
    board = await reply_of(fake, "council-leaderboard", [{"name": "scope", "type": 3, "value": "all"}])
    assert "Seat beta|delta:" in board["embeds"][0]["description"]
    # Another server, without a key of its own, is shown the operator's line-up.
    other = await service.channels.effective_config(Origin(platform=Platform.DISCORD, workspace_id="42"))
    assert (other.members, other.chairman) == (MEMBERS, "alpha")
