"""The chat platforms (Slack, Discord), and the tenants (workspaces and servers) of a shared deployment."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, SecretStr, ValidationInfo, field_validator
from pydantic_settings import NoDecode

from core.settings.group import SettingsGroup


class SlackSettings(SettingsGroup):
    bot_token: SecretStr | None = Field(
        None, alias="SLACK_BOT_TOKEN", description="The Slack app's bot token (xoxb-...)."
    )
    app_token: SecretStr | None = Field(
        None,
        alias="SLACK_APP_TOKEN",
        description="The app-level token (xapp-...) for Socket Mode; empty for the HTTP Events API.",
    )
    signing_secret: SecretStr | None = Field(
        None, alias="SLACK_SIGNING_SECRET", description="Verifies the signature of HTTP Events API requests."
    )
    api_url: str | None = Field(
        None, alias="SLACK_API_URL", description="Override of the Web API base URL (proxies, tests)."
    )
    streaming: Literal["auto", "off"] = Field(
        "auto",
        alias="SLACK_STREAMING",
        description="auto: progress through chat.startStream where the workspace allows it, else edits of one "
        "message; off: always edits.",
    )
    suggested_prompts: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        alias="SLACK_SUGGESTED_PROMPTS",
        description='Suggested prompts of the app\'s Messages tab, separated by `;`, each "Title | message" or '
        "just the message (empty: the built-in ones).",
    )
    # OAuth distribution: with both set (and SLACK_SIGNING_SECRET), Slack runs bolt's OAuth flow and
    # every team is answered with its own installation's token (SLACK_BOT_TOKEN must then be unset).
    client_id: str | None = Field(
        None, alias="SLACK_CLIENT_ID", description="OAuth distribution: the Slack app's client id."
    )
    client_secret: SecretStr | None = Field(
        None, alias="SLACK_CLIENT_SECRET", description="OAuth distribution: the Slack app's client secret."
    )

    @field_validator("suggested_prompts", mode="before")
    @classmethod
    def _split_prompts(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [part.strip() for part in value.split(";") if part.strip()]
        return value

    @property
    def oauth(self) -> bool:
        """Slack runs as a distributed app (bolt's OAuth flow) rather than on one bot token."""
        return bool(self.client_id and self.client_secret)


class TenantSettings(SettingsGroup):
    public_url: str | None = Field(
        None,
        alias="COUNCIL_PUBLIC_URL",
        description="The public https base of this deployment: the OAuth redirect URL is <it>/slack/oauth_redirect, "
        "and results in Slack, Discord, the terminal, the API and MCP link to the council's page at <it>/c/<id>.",
    )
    secret_key: SecretStr | None = Field(
        None,
        alias="COUNCIL_SECRET_KEY",
        description="Fernet keys, comma-separated, newest first, that encrypt stored tokens and tenants' "
        "provider keys.",
    )
    require_key: bool = Field(
        False,
        alias="COUNCIL_REQUIRE_TENANT_KEY",
        description="Councils of a workspace or server that has not set its own provider key are refused.",
    )
    purge_on_uninstall: bool = Field(
        False,
        alias="COUNCIL_PURGE_ON_UNINSTALL",
        description="Uninstalling the app also deletes the workspace's councils, keys and settings.",
    )
    daily_budget_usd: float | None = Field(
        None,
        alias="COUNCIL_TENANT_DAILY_BUDGET_USD",
        ge=0,
        description="Daily spend (USD) of one workspace or server, all channels together (`council budget` sets "
        "one per tenant).",
    )


class DiscordSettings(SettingsGroup):
    token: SecretStr | None = Field(None, alias="DISCORD_TOKEN", description="The Discord bot's token.")
    guild_id: int | None = Field(
        None,
        alias="DISCORD_GUILD_ID",
        description="Slash commands are synced to this guild at once (global sync can take up to an hour).",
    )
    api_url: str | None = Field(None, alias="DISCORD_API_URL", description="Override of the REST API base URL (tests).")
    client_id: str | None = Field(
        None, alias="DISCORD_CLIENT_ID", description="Sign in with Discord (the browser app): the application's id."
    )
    client_secret: SecretStr | None = Field(
        None, alias="DISCORD_CLIENT_SECRET", description="Sign in with Discord: the application's OAuth2 secret."
    )
    shard_count: int | Literal["auto"] | None = Field(
        None,
        alias="DISCORD_SHARD_COUNT",
        description="Gateway shards: a number, or auto for Discord's recommendation (empty: one connection).",
    )
    shard_ids: Annotated[list[int], NoDecode] | None = Field(
        None,
        alias="DISCORD_SHARD_IDS",
        description='The shards this process runs, e.g. "0-3" or "4,5" (needs DISCORD_SHARD_COUNT as a number); '
        "empty: all of them.",
    )

    @field_validator("shard_count", mode="before")
    @classmethod
    def _shard_count(cls, value: Any) -> Any:
        if isinstance(value, str) and value.strip().isdigit():
            value = int(value.strip())
        if isinstance(value, int) and value < 1:
            raise ValueError("must be at least 1 (or auto)")
        return value

    @field_validator("shard_ids", mode="before")
    @classmethod
    def _shard_ids(cls, value: Any) -> Any:
        if not isinstance(value, str):
            return value
        ids: list[int] = []
        for part in (p.strip() for p in value.split(",") if p.strip()):
            first, _, last = part.partition("-")
            if not first.isdigit() or (last and not last.isdigit()):
                raise ValueError('give shard ids like "0-3" or "0,2,4"')
            ids.extend(range(int(first), int(last or first) + 1))
        return ids or None

    @field_validator("shard_ids")
    @classmethod
    def _shard_ids_fit(cls, value: list[int] | None, info: ValidationInfo) -> list[int] | None:
        if value is None:
            return None
        count = info.data.get("shard_count")
        if not isinstance(count, int):
            raise ValueError("needs DISCORD_SHARD_COUNT set to a number (every process must agree on it)")
        if any(shard >= count for shard in value):
            raise ValueError(f"shard ids run from 0 to {count - 1} (DISCORD_SHARD_COUNT={count})")
        return sorted(set(value))
