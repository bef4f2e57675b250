"""`council doctor` checks each configured endpoint's key with one authenticated request, against
the scripted server (which refuses a wrong key as OpenAI and OpenRouter do); the key is never shown."""

from __future__ import annotations

from tests.conftest import MEMBERS
from tests.llm_server import ScriptedLLMServer, council_member
from tests.test_cli import council

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
