"""`council doctor` checks each configured endpoint's key with one authenticated request, against
the scripted server (which refuses a wrong key as OpenAI and OpenRouter do); the key is never shown."""

# ruff: noqa: F811  (fixtures imported from other test modules are named as parameters)
from __future__ import annotations

import httpx
from cryptography.fernet import Fernet

from core.providers.base import AuthError, KeyProof
from core.providers.router import ProviderRouter
from core.settings import Settings
from tests.conftest import MEMBERS
from tests.llm_server import Fail, ScriptedLLMServer, council_member
from tests.test_cli import council
from tests.test_slack_oauth import deployment, fake  # noqa: F401 (fixtures)

FAKE = "sk-or-fake-1234567890"
REAL = "sk-or-real-0987654321"


def _server(**kwargs) -> ScriptedLLMServer:
    return ScriptedLLMServer({name: council_member(name) for name in MEMBERS}, **kwargs)


def _openrouter_env(server: ScriptedLLMServer, key: str) -> dict[str, str]:
    # OpenRouter is the endpoint when LLM_BASE_URL is blank; its base URL points at the fake.
    return {
        "LLM_BASE_URL": "",
        "LLM_API_KEY": "",
        "OPENROUTER_API_KEY": key,
        "OPENROUTER_BASE_URL": server.base_url,
        "COUNCIL_MODELS": "alpha,beta",
    }


async def test_a_fake_openrouter_key_is_reported_as_rejected_without_showing_it(tmp_path):
    # OpenRouter's model list needs no key, so listing models cannot tell a fake key: GET /key can.
    async with _server(api_keys={REAL}, models_public=True) as server:
        code, out, err = await council(tmp_path, server, "doctor", extra_env=_openrouter_env(server, FAKE))
    assert code == 1, out + err
    line = next(line for line in out.splitlines() if "api key" in line)
    assert line.startswith("✗") and "openrouter" in line and "rejected" in line and "401" in line, line
    assert server.key_checks == 1
    assert FAKE not in out + err and "1234567890" not in out + err


async def test_a_good_openrouter_key_is_accepted(tmp_path):
    async with _server(api_keys={REAL}, models_public=True) as server:
        code, out, err = await council(tmp_path, server, "doctor", extra_env=_openrouter_env(server, REAL))
    assert code == 0, out + err
    assert "✓ api key       openrouter accepted the key" in out
    assert server.key_checks == 1 and REAL not in out + err


async def test_the_llm_base_url_key_is_checked_against_its_model_list(tmp_path):
    async with _server(api_keys={REAL}) as server:
        code, out, _ = await council(tmp_path, server, "doctor", extra_env={"LLM_API_KEY": FAKE})
        assert code == 1 and "✗ api key       LLM_BASE_URL endpoint: auth 401" in out, out
        assert "Incorrect API key provided" in out and FAKE not in out
        code, out, _ = await council(tmp_path, server, "doctor", extra_env={"LLM_API_KEY": REAL})
        assert code == 0 and "✓ api key       LLM_BASE_URL endpoint accepted the key" in out, out


async def test_a_model_list_that_answers_without_the_key_does_not_vouch_for_it(tmp_path):
    """Ollama, many proxies and OpenRouter addressed by its URL list their models to anyone: a fake
    key must be caught by the one-token call, which the endpoint refuses with 401."""
    async with _server(api_keys={REAL}, models_public=True) as server:
        code, out, err = await council(tmp_path, server, "doctor", extra_env={"LLM_API_KEY": FAKE})
    line = next(line for line in out.splitlines() if "api key" in line)
    assert code == 1 and line.startswith("✗ api key       LLM_BASE_URL endpoint: auth 401"), out
    assert FAKE not in out + err and "1234567890" not in out + err


async def test_a_key_behind_a_public_model_list_is_proven_by_one_token_of_the_cheapest_model(tmp_path):
    env = {"LLM_API_KEY": REAL, "MODEL_PRICES": '{"alpha": [3, 15], "beta": [0.1, 0.4]}'}
    async with _server(api_keys={REAL}, models_public=True) as server:
        code, out, err = await council(tmp_path, server, "doctor", extra_env=env)
    assert code == 0, out + err
    assert "✓ api key       LLM_BASE_URL endpoint accepted the key (a one-token call to beta)" in out
    [probe] = server.requests
    assert probe.model == "beta" and probe.body["max_tokens"] == 1 and not probe.stream
    assert REAL not in out + err


async def test_a_key_that_nothing_could_prove_is_said_to_be_unverified(tmp_path):
    # The model list answers without a key and the call fails for another reason (a 400 here):
    # the doctor says plainly that the key was not verified, as a warning.
    async with _server(api_keys={REAL}, models_public=True) as server:
        for name in MEMBERS:
            server.script(name, Fail(400, "max_tokens is too small", "invalid_request_error"))
        code, out, _ = await council(tmp_path, server, "doctor", extra_env={"LLM_API_KEY": REAL})
    line = next(line for line in out.splitlines() if "api key" in line)
    assert code == 0 and line.startswith("! api key       LLM_BASE_URL endpoint: could not verify the key"), out
    assert "answers without a key too" in line and "max_tokens is too small" in line, line


async def test_an_endpoint_with_a_guarded_model_list_is_not_sent_a_completion(tmp_path):
    async with _server(api_keys={REAL}) as server:
        code, out, _ = await council(tmp_path, server, "doctor", extra_env={"LLM_API_KEY": REAL})
    assert code == 0 and "accepted the key (its model list, which refuses requests without a key)" in out, out
    assert not server.requests


async def test_openrouter_addressed_by_its_url_has_its_key_checked_as_openrouter():
    """LLM_BASE_URL on openrouter.ai: GET /key, as with OPENROUTER_API_KEY. The host is reached
    through an HTTP proxy, the scripted server, which answers for it."""
    async with _server(api_keys={REAL}, models_public=True) as server:
        settings = Settings(_env_file=None, LLM_BASE_URL="http://openrouter.ai/v1", LLM_API_KEY=FAKE)
        async with httpx.AsyncClient(proxy=f"http://127.0.0.1:{server.port}") as http:
            [(name, outcome)] = await ProviderRouter(settings, http).check_keys()
        assert name == "LLM_BASE_URL endpoint" and isinstance(outcome, AuthError), outcome
        assert server.key_checks == 1 and not server.requests
        settings = Settings(_env_file=None, LLM_BASE_URL="http://openrouter.ai/v1", LLM_API_KEY=REAL)
        async with httpx.AsyncClient(proxy=f"http://127.0.0.1:{server.port}") as http:
            [(_, outcome)] = await ProviderRouter(settings, http).check_keys()
        assert outcome == KeyProof(True, "GET /key") and not server.requests


async def test_an_endpoint_that_wants_a_key_and_has_none_says_which_setting(tmp_path):
    async with _server(api_keys={REAL}) as server:
        code, out, _ = await council(tmp_path, server, "doctor", extra_env={"LLM_API_KEY": ""})
    assert code == 1 and "(set LLM_API_KEY)" in out, out


async def test_each_configured_endpoint_is_checked(tmp_path):
    async with _server(api_keys={REAL}) as local, _server(api_keys={REAL}, models_public=True) as openrouter:
        env = {"LLM_API_KEY": REAL, "OPENROUTER_API_KEY": FAKE, "OPENROUTER_BASE_URL": openrouter.base_url}
        code, out, _ = await council(tmp_path, local, "doctor", extra_env=env)
    keys = [line for line in out.splitlines() if "api key" in line]
    assert code == 1 and len(keys) == 2, out
    assert keys[0].startswith("✓") and "LLM_BASE_URL endpoint" in keys[0]
    assert keys[1].startswith("✗") and "openrouter" in keys[1] and openrouter.key_checks == 1


async def test_doctor_reports_oauth_distribution_without_showing_a_secret(deployment, fake, llm, tmp_path):
    """OAuth mode: a workspace and an organisation installed through the flow on the fake Slack,
    then `council doctor` on that database: the install page, the secret key, the installations;
    then the same with the problems it must flag (no signing secret, a key that is not the one the
    tokens were sealed with, a malformed key). No secret is ever printed."""
    fake.add_team(None, "Org", enterprise_id="E1", org_install=True)
    for team in ("T2", "E1"):
        status, page = await deployment.install(team)
        assert status == 200, page
    s = deployment.settings
    secret_key = s.tenants.secret_key.get_secret_value()
    env = {
        "DATABASE_URL": s.storage.database_url,
        "SLACK_CLIENT_ID": s.slack.client_id,
        "SLACK_CLIENT_SECRET": s.slack.client_secret.get_secret_value(),
        "SLACK_SIGNING_SECRET": s.slack.signing_secret.get_secret_value(),
        "COUNCIL_PUBLIC_URL": s.tenants.public_url,
        "COUNCIL_SECRET_KEY": secret_key,
        "LLM_API_KEY": "test-key-not-secret",
    }
    secrets = [secret_key, env["SLACK_CLIENT_SECRET"], env["SLACK_SIGNING_SECRET"], *fake.tokens_of("T2")]

    def lines(out: str) -> dict[str, str]:
        return {line[2:15].strip(): line for line in out.splitlines() if line[:1] in "✓!✗"}

    code, out, err = await council(tmp_path, llm, "doctor", extra_env=env)
    shown = lines(out)
    assert code == 0, out + err
    assert shown["slack"].startswith("✓") and "OAuth distribution" in shown["slack"]
    url = s.tenants.public_url
    assert shown["install page"] == f"✓ install page  {url}/slack/install (redirect URL {url}/slack/oauth_redirect)"
    assert shown["secret key"].startswith("✓") and "set and valid" in shown["secret key"]
    assert shown["installations"] == (
        "✓ installations 2 stored: 1 workspace(s), 1 organisation-wide (Enterprise Grid)"
    ), out
    assert not any(secret in out + err for secret in secrets)

    other_key = Fernet.generate_key().decode()
    code, out, err = await council(
        tmp_path, llm, "doctor", extra_env={**env, "SLACK_SIGNING_SECRET": "", "COUNCIL_SECRET_KEY": other_key}
    )
    shown = lines(out)
    assert code == 1, out + err
    assert shown["slack"].startswith("✗") and "SLACK_SIGNING_SECRET is not set" in shown["slack"]
    assert shown["secret key"].startswith("✗") and "cannot decrypt a stored secret" in shown["secret key"]
    assert shown["installations"].startswith("✓")  # counted without opening anything
    assert not any(secret in out + err for secret in [*secrets, other_key])

    for malformed in ("", "not-a-fernet-key"):
        code, out, err = await council(tmp_path, llm, "doctor", extra_env={**env, "COUNCIL_SECRET_KEY": malformed})
        shown = lines(out)
        assert code == 1 and "Traceback" not in err, out + err
        assert shown["secret key"].startswith("✗") and "COUNCIL_SECRET_KEY" in shown["secret key"]
        assert "not-a-fernet-key" not in out + err

    # The bot itself refuses to start on a malformed key, in one line, before serving anything.
    code, out, err = await council(
        tmp_path, llm, "slack", "--port", "1", extra_env={**env, "COUNCIL_SECRET_KEY": "not-a-fernet-key"}
    )
    assert code == 2 and "COUNCIL_SECRET_KEY" in err and "Traceback" not in err, out + err
