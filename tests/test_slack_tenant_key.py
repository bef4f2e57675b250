"""The workspace's own provider key from Slack's Home tab, end to end: the real Bolt app over HTTP,
the fake Slack, a scripted endpoint that checks keys; COUNCIL_REQUIRE_TENANT_KEY tells the asker how
to add one, privately, in the thread."""

# ruff: noqa: F811  (fixtures imported from other test modules are named as parameters)
from __future__ import annotations

import json

import pytest
from cryptography.fernet import Fernet

from tests.test_slack_adapter import env, ephemeral_texts, results  # noqa: F401 (fixture)
from tests.test_slack_agent import submit_view
from tests.test_tenant_keys import TENANT_KEY, tenant_llm  # noqa: F401 (fixture)

SETTINGS = {"COUNCIL_SECRET_KEY": Fernet.generate_key().decode(), "COUNCIL_REQUIRE_TENANT_KEY": "true"}


def key_values(key: str, base_url: str) -> dict:
    return {
        "key": {"key": {"type": "plain_text_input", "value": key}},
        "base_url": {"base_url": {"type": "plain_text_input", "value": base_url}},
        "members": {"members": {"type": "plain_text_input", "value": None}},
        "chairman": {"chairman": {"type": "plain_text_input", "value": None}},
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
