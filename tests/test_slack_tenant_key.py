"""The workspace's own provider key from Slack's Home tab, end to end: the real Bolt app over HTTP,
the fake Slack, a scripted endpoint that checks keys; COUNCIL_REQUIRE_TENANT_KEY tells the asker how
to add one, privately, in the thread."""

# ruff: noqa: F811  (fixtures imported from other test modules are named as parameters)
from __future__ import annotations

import json

import pytest
from cryptography.fernet import Fernet

from core.models import Platform
from tests.conftest import MEMBERS
from tests.llm_server import council_member
from tests.test_slack_adapter import env, ephemeral_texts, results  # noqa: F401 (fixture)
from tests.test_slack_agent import submit_view
from tests.test_tenant_keys import TENANT_KEY, tenant_llm  # noqa: F401 (fixture)

SETTINGS = {"COUNCIL_SECRET_KEY": Fernet.generate_key().decode(), "COUNCIL_REQUIRE_TENANT_KEY": "true"}


def key_values(key: str, base_url: str, members: str | None = None, chairman: str | None = None) -> dict:
    return {
        "key": {"key": {"type": "plain_text_input", "value": key}},
        "base_url": {"base_url": {"type": "plain_text_input", "value": base_url}},
        "members": {"members": {"type": "plain_text_input", "value": members}},
        "chairman": {"chairman": {"type": "plain_text_input", "value": chairman}},
    }


@pytest.mark.parametrize("env", [SETTINGS], indirect=True)
async def test_home_tab_key_form_checks_saves_and_uses_the_key(env, tenant_llm, llm):
    fake = env.fake
    await env.event(env.mention("<@UBOT> What is six times seven?"))
    await env.settle()
    assert not results(fake) and not llm.requests
    assert any("Home tab" in text for text in ephemeral_texts(fake))  # to the asker only

    await env.event({"type": "app_home_opened", "user": "UADMIN", "channel": "D2", "tab": "home", "view": {}})
    await env.settle()
    assert "Provider key: none" in json.dumps(fake.home_views["UADMIN"])
    await env.event({"type": "app_home_opened", "user": "U1", "channel": "D1", "tab": "home", "view": {}})
    await env.settle()
    assert "council_home_key" not in json.dumps(fake.home_views["U1"])  # not an admin: no form
    await env.action("council_home_key", "open", user="UADMIN")
    await env.settle()
    [form] = [v for v in fake.views if v.get("callback_id") == "council_home_key_view"]

    await submit_view(env, form, key_values("sk-wrong-0000000000", tenant_llm.base_url), user="UADMIN")
    await env.settle()
    home = json.dumps(fake.home_views["UADMIN"], ensure_ascii=False)
    assert "Incorrect API key provided" in home and "not saved" in home

    await submit_view(env, form, key_values(TENANT_KEY, tenant_llm.base_url), user="UADMIN")
    await env.settle()
    home = json.dumps(fake.home_views["UADMIN"], ensure_ascii=False)
    assert "…WXYZ checked and saved" in home and TENANT_KEY not in home

    await env.event(env.mention("<@UBOT> What is six times seven?"))
    await fake.wait_for(lambda: results(fake), timeout=30)
    assert tenant_llm.requests and not llm.requests
    assert {r.headers["Authorization"] for r in tenant_llm.requests} == {f"Bearer {TENANT_KEY}"}
    assert all(TENANT_KEY not in json.dumps(c.args) for c in fake.calls)  # never shown back in Slack


# A line-up with a fallback seat on a model only the tenant's endpoint has (the leaderboard shows
# a seat line for a seat with fallbacks), three seats so that the reviews rank two answers each.
LINEUP, CHAIRMAN = ["beta|delta", "gamma", "alpha"], "gamma"


@pytest.mark.parametrize("env", [{"COUNCIL_SECRET_KEY": SETTINGS["COUNCIL_SECRET_KEY"]}], indirect=True)
async def test_admin_views_show_the_workspaces_own_lineup(env, tenant_llm, llm):
    """With its own key and line-up, the workspace's Home tab ("Default:" and a channel with limits
    only), `/council-admin show` and the leaderboard's seats show the line-up its councils use."""
    fake, service = env.fake, env.service
    tenant_llm.script("delta", council_member("delta (tenant) says 42.", synthesis="Tenant answer by delta."))
    await env.action("council_home_key", "open", user="UADMIN")
    await env.settle()
    [form] = [v for v in fake.views if v.get("callback_id") == "council_home_key_view"]
    values = key_values(TENANT_KEY, tenant_llm.base_url, ", ".join(LINEUP), CHAIRMAN)
    await submit_view(env, form, values, user="UADMIN")
    await env.settle()
    assert "checked and saved" in json.dumps(fake.home_views["UADMIN"], ensure_ascii=False)

    await env.event(env.mention("<@UBOT> What is six times seven?"))
    await fake.wait_for(lambda: results(fake), timeout=30)
    await env.settle()
    [council] = await service.queries.history(scope="all", limit=5)
    ran = (await service.queries.get_result(council.council_id)).request.config
    assert (ran.members, ran.chairman) == (LINEUP, CHAIRMAN) and tenant_llm.requests and not llm.requests

    await env.command("limits user=5", user="UADMIN", channel="C2", command="/council-admin")  # limits only
    await env.command("show", command="/council-admin")
    await env.command("leaderboard")
    await env.settle()
    texts = ephemeral_texts(fake)
    assert any(f"*Members:* {', '.join(LINEUP)}" in t and f"*Chairman:* {CHAIRMAN}" in t for t in texts), texts
    assert any("Seat beta|delta:" in t for t in texts), texts  # the tenant's seat, with its models' figures

    await env.event({"type": "app_home_opened", "user": "U1", "channel": "D1", "tab": "home", "view": {}})
    await env.settle()
    home = json.dumps(fake.home_views["U1"], ensure_ascii=False)
    shown = f"members {', '.join(LINEUP)} · chairman {CHAIRMAN}"
    assert f"Default: {shown}" in home and f"<#C2>: {shown} · 5/h per user" in home, home
    assert "Seat beta|delta:" in home
    # Another workspace, without a key of its own, is shown the operator's line-up.
    other = await service.workspace.default_config(Platform.SLACK, "T9")
    assert (other.members, other.chairman) == (MEMBERS, "alpha")
