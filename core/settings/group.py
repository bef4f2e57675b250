"""The base of every settings group: each group reads its own variables from the environment and `.env`."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict


def split_csv(value: Any) -> Any:
    """`a, b,,c` -> ["a", "b", "c"]; lists pass through."""
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    return value


def lower_name(value: Any) -> Any:
    return value.strip().lower() if isinstance(value, str) else value


CsvList = Annotated[list[str], NoDecode]


class SettingsGroup(BaseSettings):
    """Settings of one concern. Every field's alias is its environment variable; `Settings` (core/settings)
    routes flat `NAME=value` keywords to the group that owns NAME."""

    # An empty value (as in a copy of .env.example) means "not set": the default applies.
    model_config = SettingsConfigDict(
        env_file=".env", env_file_encoding="utf-8", extra="ignore", populate_by_name=True, env_ignore_empty=True
    )

    @model_validator(mode="before")
    @classmethod
    def _blank_is_unset(cls, data: Any) -> Any:
        # env_ignore_empty covers the environment and .env; this covers keywords (`DISCORD_TOKEN=""`).
        if isinstance(data, dict):
            return {key: value for key, value in data.items() if not (isinstance(value, str) and not value.strip())}
        return data
