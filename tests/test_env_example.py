"""`.env.example` is what a new user copies to `.env` (README): it must load as it ships."""

from pathlib import Path

from core.settings import Settings

EXAMPLE = Path(__file__).resolve().parent.parent / ".env.example"


def test_a_copy_of_env_example_loads_with_the_defaults():
    settings = Settings(_env_file=EXAMPLE)
    assert settings.model_prices == {}
    assert settings.local_n_threads is None and settings.daily_budget_usd is None
    assert settings.council_timeout_s == 120 and settings.max_question_chars == 4000
    assert settings.default_members == Settings(_env_file=None).default_members
