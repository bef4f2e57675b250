"""Where the bot keeps its files by default. Light on purpose: `council --help` imports it."""

from __future__ import annotations

from pathlib import Path

APP_NAME = "llm-council"


def default_database_path() -> Path:
    """The SQLite file in the user's data directory ($XDG_DATA_HOME/llm-council on Linux)."""
    from platformdirs import user_data_path

    return user_data_path(APP_NAME, appauthor=False) / "council.db"


def default_database_url() -> str:
    return f"sqlite:///{default_database_path()}"
