"""`.env.example` is what a new user copies to `.env` (docs/getting-started.md): it must load as it ships.
It is generated from the Settings model with docs/settings.md (scripts/settings_reference.py;
tests/test_settings_reference.py checks both are up to date)."""

import re
from pathlib import Path

from core.settings import Settings

EXAMPLE = Path(__file__).resolve().parent.parent / ".env.example"


def test_a_copy_of_env_example_loads_with_the_defaults():
    settings = Settings(_env_file=EXAMPLE)
    assert settings.providers.model_prices == {}
    assert settings.local.n_threads is None and settings.limits.daily_budget_usd is None
    assert settings.council.timeout_s == 120 and settings.limits.max_question_chars == 4000
    assert settings.default_members == Settings(_env_file=None).default_members


def _fields():
    return [
        (group_name, name, field)
        for group_name, group in Settings.model_fields.items()
        for name, field in group.annotation.model_fields.items()
    ]


def test_every_setting_is_in_env_example_and_every_example_is_a_setting():
    listed = {line.split("=", 1)[0] for line in EXAMPLE.read_text().splitlines() if re.match(r"^[A-Z_]+=", line)}
    variables = {field.alias for _, _, field in _fields()}
    assert sorted(variables - listed) == [] and sorted(listed - variables) == []


def test_every_setting_says_what_it_does():
    # The settings reference (docs) is generated from these descriptions.
    assert [f"{group}.{name}" for group, name, field in _fields() if not (field.description or "").strip()] == []


def test_flat_keywords_reach_their_group_and_override_the_env_file(tmp_path):
    env = tmp_path / ".env"
    env.write_text("SLACK_BOT_TOKEN=xoxb-from-file\nCOUNCIL_TIMEOUT_S=30\nLOCAL_N_CTX=2048\n")
    settings = Settings(_env_file=env, COUNCIL_TIMEOUT_S="45", DISCORD_TOKEN="")
    assert settings.slack.bot_token is not None and settings.slack.bot_token.get_secret_value() == "xoxb-from-file"
    assert settings.council.timeout_s == 45 and settings.local.n_ctx == 2048 and settings.discord.token is None


def test_the_environment_beats_the_env_file_in_every_group(tmp_path, monkeypatch):
    """The file is read once for all groups (core/settings/group.py): each group still ranks the
    environment above it, and it above the defaults."""
    env = tmp_path / ".env"
    env.write_text("COUNCIL_CHAIRMAN=from-file\nCOUNCIL_TIMEOUT_S=30\nLOCAL_N_CTX=2048\nDISCORD_TOKEN=file-token\n")
    for name in ("COUNCIL_CHAIRMAN", "LOCAL_N_CTX"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("COUNCIL_TIMEOUT_S", "50")
    monkeypatch.setenv("DISCORD_TOKEN", "env-token")
    settings = Settings(_env_file=env)
    assert (settings.council.chairman, settings.council.timeout_s, settings.local.n_ctx) == ("from-file", 50, 2048)
    assert settings.discord.token is not None and settings.discord.token.get_secret_value() == "env-token"
    assert Settings(_env_file=None).council.chairman is None
