"""The base of every settings group: each group reads its own variables from the environment and `.env`."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Annotated, Any

from pydantic import model_validator
from pydantic_settings import (
    BaseSettings,
    DotEnvSettingsSource,
    NoDecode,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)


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

    # An empty value (as in a copy of .env.example) means "not set": the default applies. The variables
    # of .env that are no field of this group are ignored (extra="ignore"): "only_existing" spares
    # pydantic-settings matching each of them against every field, which a copy of .env.example made
    # cost ~15 ms a group.
    model_config = SettingsConfigDict(
        env_file=".env",
        env_file_encoding="utf-8",
        extra="ignore",
        populate_by_name=True,
        env_ignore_empty=True,
        dotenv_filtering="only_existing",
    )

    @model_validator(mode="before")
    @classmethod
    def _blank_is_unset(cls, data: Any) -> Any:
        # env_ignore_empty covers the environment and .env; this covers keywords (`DISCORD_TOKEN=""`).
        if isinstance(data, dict):
            return {key: value for key, value in data.items() if not (isinstance(value, str) and not value.strip())}
        return data

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """pydantic-settings' sources in its order; .env as `env_file_read_once` read it, while it lasts."""
        read = _ENV_FILE_READ.get()
        if read is not None:
            dotenv_settings = _ReadDotEnv(settings_cls, read)
        return init_settings, env_settings, dotenv_settings, file_secret_settings


# The variables of the .env file that the groups of one `Settings` are being read from (env_file_read_once).
_ENV_FILE_READ: ContextVar[Mapping[str, str | None] | None] = ContextVar("council_env_file_read", default=None)


@contextmanager
def env_file_read_once(env_file: Any) -> Iterator[None]:
    """While it lasts, a group built with `_env_file=None` takes the variables of `env_file` (a path,
    None, or pydantic-settings' sentinel for ".env") as read here once: each group would parse the
    file again (python-dotenv: ~6 ms for a copy of .env.example, times fifteen groups)."""
    token = _ENV_FILE_READ.set(DotEnvSettingsSource(SettingsGroup, env_file=env_file).env_vars)
    try:
        yield
    finally:
        _ENV_FILE_READ.reset(token)


class _ReadDotEnv(DotEnvSettingsSource):
    """pydantic-settings' .env source over variables already read, with its own matching of them to fields."""

    def __init__(self, settings_cls: type[BaseSettings], read: Mapping[str, str | None]) -> None:
        self._read = read
        super().__init__(settings_cls, env_file=None)

    def _load_env_vars(self) -> Mapping[str, str | None]:
        return self._read
