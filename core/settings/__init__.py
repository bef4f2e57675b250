"""Settings read from the environment and `.env` (pydantic-settings), in groups by concern.

Every setting has a safe default except secrets. Secrets are `SecretStr`, so they never
print in logs, reprs or errors. `.env.example` documents each one. Each group
(`settings.slack`, `settings.council`, ...) reads its own variables; every field's alias is its
environment variable, and `Settings(SLACK_BOT_TOKEN=..., COUNCIL_MODELS=...)` routes flat
keywords to the group that owns them.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, SecretStr, ValidationError
from pydantic_core import InitErrorDetails
from pydantic_settings import SettingsError
from pydantic_settings.sources import ENV_FILE_SENTINEL

from core.errors import ConfigurationError
from core.models.share_links import SHARE_PARAM, share_token
from core.settings.council import CouncilSettings, LimitSettings
from core.settings.group import SettingsGroup, env_file_read_once
from core.settings.operating import ApiSettings, ServingSettings, TelemetrySettings, WebSettings
from core.settings.platforms import DiscordSettings, SlackSettings, TenantSettings
from core.settings.providers import OPENROUTER_BASE_URL, LocalModelSettings, ProviderSettings
from core.settings.reading import AttachmentSettings, SearchSettings
from core.settings.storage import DurableSettings, StorageSettings

__all__ = [
    "LOCAL_DEFAULT_CHAIRMAN",
    "LOCAL_DEFAULT_MEMBERS",
    "OPENROUTER_BASE_URL",
    "REMOTE_DEFAULT_CHAIRMAN",
    "REMOTE_DEFAULT_MEMBERS",
    "SLACK_INSTALL_PATH",
    "SLACK_REDIRECT_PATH",
    "Settings",
    "describe_invalid",
    "load_settings",
]

# Used when no provider key is configured: tiny GGUF models that run in-process.
LOCAL_DEFAULT_MEMBERS = ["local:smollm2", "local:gemma3-270m", "local:smollm2-creative"]
# SmolLM2 is instruction-tuned; the bundled Gemma 3 270M is a base model that echoes its prompt.
LOCAL_DEFAULT_CHAIRMAN = "local:smollm2"

# Used when a key is configured but no members are named.
REMOTE_DEFAULT_MEMBERS = [
    "openai/gpt-5.1",
    "google/gemini-3-pro-preview",
    "anthropic/claude-sonnet-4.5",
    "x-ai/grok-4",
]
REMOTE_DEFAULT_CHAIRMAN = "google/gemini-3-pro-preview"

# Slack OAuth distribution's two pages, on COUNCIL_PUBLIC_URL: "Add to Slack", and the redirect URL
# that the Slack app's OAuth settings list.
SLACK_INSTALL_PATH = "/slack/install"
SLACK_REDIRECT_PATH = "/slack/oauth_redirect"


class Settings(BaseModel):
    """Every setting, by concern. `Settings()` reads the environment and `.env`; keywords named as the
    environment variables (`Settings(DATABASE_URL=...)`) override them, `_env_file` names another file."""

    providers: ProviderSettings
    local: LocalModelSettings
    council: CouncilSettings
    limits: LimitSettings
    storage: StorageSettings
    durable: DurableSettings
    slack: SlackSettings
    tenants: TenantSettings
    discord: DiscordSettings
    attachments: AttachmentSettings
    search: SearchSettings
    telemetry: TelemetrySettings
    serving: ServingSettings
    api: ApiSettings
    web: WebSettings

    def __init__(self, _env_file: Any = ENV_FILE_SENTINEL, **values: Any) -> None:
        super().__init__(**_read_groups(_env_file, values))

    # ----------------------------------------------------------------- derived, across groups

    @property
    def has_remote_provider(self) -> bool:
        return bool(self.providers.base_url or self.providers.openrouter_api_key)

    @property
    def default_members(self) -> list[str]:
        if self.council.seats:  # COUNCIL_SEATS_FILE's seats are the members
            return [spec.seat for spec in self.council.seats]
        if self.council.models:
            return list(self.council.models)
        return list(REMOTE_DEFAULT_MEMBERS if self.has_remote_provider else LOCAL_DEFAULT_MEMBERS)

    @property
    def default_chairman(self) -> str:
        if self.council.chairman:
            return self.council.chairman
        if self.council.seats:
            return self.council.seats[0].seat
        if self.council.models:
            return self.council.models[0]
        return REMOTE_DEFAULT_CHAIRMAN if self.has_remote_provider else LOCAL_DEFAULT_CHAIRMAN

    @property
    def uses_local_defaults(self) -> bool:
        return not self.council.models and not self.council.seats and not self.has_remote_provider

    @property
    def slack_oauth_missing(self) -> list[str]:
        """The settings OAuth distribution needs beside SLACK_CLIENT_ID/SECRET that are not set."""
        needed = (
            ("SLACK_SIGNING_SECRET", self.slack.signing_secret),
            ("COUNCIL_PUBLIC_URL", self.tenants.public_url),
            ("COUNCIL_SECRET_KEY", self.tenants.secret_key),
        )
        return [name for name, value in needed if not value]

    def slack_oauth_url(self, path: str) -> str | None:
        """SLACK_INSTALL_PATH or SLACK_REDIRECT_PATH on COUNCIL_PUBLIC_URL (None while it is unset)."""
        public_url = self.tenants.public_url
        return public_url.rstrip("/") + path if public_url else None

    def council_url(self, council_id: str) -> str | None:
        """The council's page in the browser app (bot/web) at COUNCIL_PUBLIC_URL; None while it is unset.
        With COUNCIL_SHARE_LINKS, the link carries the token that opens it (core/models/share_links.py)."""
        public_url = self.tenants.public_url
        if not public_url:
            return None
        url = f"{public_url.rstrip('/')}/c/{council_id}"
        secret = self.web.share_secret()
        return f"{url}?{SHARE_PARAM}={share_token(secret, council_id)}" if secret else url

    def secret_values(self) -> list[str]:
        """The value of every secret that is set (keys, tokens), for redaction."""
        groups = [getattr(self, name) for name in type(self).model_fields]
        values = [getattr(group, name) for group in groups for name in type(group).model_fields]
        return [value.get_secret_value() for value in values if isinstance(value, SecretStr)]


def _groups() -> dict[str, type[SettingsGroup]]:
    return {name: field.annotation for name, field in Settings.model_fields.items()}  # type: ignore[misc]


def _read_groups(env_file: Any, values: dict[str, Any]) -> dict[str, SettingsGroup]:
    """Each group read from the environment and `env_file`, with the keywords among `values` that name
    its variables; one ValidationError naming every bad variable of every group."""
    owner = {field.alias: name for name, group in _groups().items() for field in group.model_fields.values()}
    routed: dict[str, dict[str, Any]] = {}
    for key, value in values.items():
        if key in owner:  # other keys are ignored, as unknown variables in .env are
            routed.setdefault(owner[key], {})[key] = value
    groups: dict[str, SettingsGroup] = {}
    errors: list[InitErrorDetails] = []
    with env_file_read_once(env_file):
        for name, group in _groups().items():
            given = values.get(name)
            if isinstance(given, group):
                groups[name] = given
                continue
            try:
                groups[name] = group(_env_file=None, **routed.get(name, {}))  # .env as read once above
            except ValidationError as exc:
                errors.extend(
                    InitErrorDetails(type=e["type"], loc=e["loc"], input=e["input"], ctx=e.get("ctx", {}))
                    for e in exc.errors()
                )
    if errors:
        raise ValidationError.from_exception_data("Settings", errors)
    return groups


def _variable(field_name: str) -> str | None:
    """The environment variable of a group's field."""
    for group in _groups().values():
        if field_name in group.model_fields:
            return group.model_fields[field_name].alias
    return None


def load_settings(**overrides: Any) -> Settings:
    """Settings from the environment and `.env`, or ConfigurationError naming each bad variable."""
    try:
        return Settings(**overrides)
    except ValidationError as exc:
        raise ConfigurationError(describe_invalid(exc)) from None
    except SettingsError as exc:  # a value pydantic-settings could not even decode (e.g. bad JSON)
        field = re.search(r'field "(\w+)"', str(exc))
        name = (_variable(field.group(1)) if field else None) or "a setting"
        raise ConfigurationError(
            f"{name}: the value cannot be read ({exc.__cause__ or exc}). Fix it in the environment or .env."
        ) from None


def describe_invalid(exc: ValidationError) -> str:
    """One line naming each variable and what is wrong with it; secret values are never quoted."""
    secret_names = {
        field.alias
        for group in _groups().values()
        for field in group.model_fields.values()
        if "SecretStr" in str(field.annotation)
    }
    problems = []
    for error in exc.errors():
        name = str(error["loc"][0]) if error["loc"] else "settings"
        given = "" if name in secret_names else f" (got {error.get('input')!r})"
        reason = error["msg"].removeprefix("Value error, ")
        problems.append(f"{name}: {reason}{given}")
    return "; ".join(problems) + ". Fix it in the environment or .env (see .env.example)."
