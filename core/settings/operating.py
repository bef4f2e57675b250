"""Operating the processes (logs, metrics, traces), and the OpenAI-compatible API and MCP server (bot/api)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, SecretStr, field_validator, model_validator

from core.settings.group import CsvList, SettingsGroup, lower_name, split_csv


class TelemetrySettings(SettingsGroup):
    # None (unset or blank): INFO for the long-running processes, WARNING for the terminal's own
    # commands, which show the council themselves (bot/cli.py).
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"] | None = Field(
        None,
        alias="LOG_LEVEL",
        description="DEBUG, INFO, WARNING, ERROR or CRITICAL; empty: INFO for long-running processes, WARNING "
        "for the terminal's commands.",
    )
    log_format: Literal["text", "json"] = Field(
        "text",
        alias="LOG_FORMAT",
        description="text, or json: one JSON object per line (time, level, logger, message, council id, ...).",
    )
    metrics_port: int | None = Field(
        None,
        alias="COUNCIL_METRICS_PORT",
        ge=0,
        le=65535,
        description="/metrics, /health and /ready on this port for processes that serve no HTTP (worker, Socket "
        "Mode, Discord gateway); empty: none.",
    )
    trace_content: bool = Field(
        False,
        alias="COUNCIL_TRACE_CONTENT",
        description="Questions and answers in trace spans; off: ids, models, tokens and timings only.",
    )

    _lower = field_validator("log_format", mode="before")(lower_name)

    @field_validator("log_level", mode="before")
    @classmethod
    def _upper_level(cls, value: Any) -> Any:
        return (value.strip().upper() or None) if isinstance(value, str) else value


class ServingSettings(SettingsGroup):
    """What every serving command (slack, discord, serve, worker, api, web) does at start and stop."""

    shutdown_grace_s: float = Field(
        6.0,
        alias="COUNCIL_SHUTDOWN_GRACE_S",
        gt=0,
        le=600,
        description="On SIGTERM, how long councils that cannot be handed over (the API's, the browser app's) may "
        "take to finish; durable councils are handed over at once. Keep it under the stop timeout "
        "(Docker: 10 s; Kubernetes: terminationGracePeriodSeconds).",
    )
    http_host: str = Field(
        "0.0.0.0",
        alias="COUNCIL_HTTP_HOST",
        description="The address the Slack HTTP receiver and the metrics server (/metrics, /health, /ready) listen "
        "on; 127.0.0.1 keeps them on loopback behind a proxy.",
    )
    strict_startup: bool = Field(
        False,
        alias="COUNCIL_STRICT_STARTUP",
        description="Refuse to start when a model of the line-up is unknown or its endpoint unreachable (as "
        "`--strict`); off: a warning line each.",
    )


class ApiSettings(SettingsGroup):
    keys: SecretStr | None = Field(
        None,
        alias="COUNCIL_API_KEYS",
        description="`name:key,name2:key2`; each name is the user its councils are stored, limited and budgeted under.",
    )
    host: str = Field("127.0.0.1", alias="COUNCIL_API_HOST", description="The address the API listens on.")
    port: int = Field(8000, alias="COUNCIL_API_PORT", ge=0, le=65535, description="The port the API listens on.")
    allowed_hosts: CsvList = Field(
        default_factory=list,
        alias="COUNCIL_API_ALLOWED_HOSTS",
        description="Host names the API answers to (against DNS rebinding); empty: the loopback names on "
        "loopback, any name elsewhere.",
    )
    cors_origins: CsvList = Field(
        default_factory=list,
        alias="COUNCIL_API_CORS_ORIGINS",
        description="Browser origins allowed to call the API; a request from any other Origin is refused.",
    )
    trusted_keys: CsvList = Field(
        default_factory=list,
        alias="COUNCIL_API_TRUSTED_KEYS",
        description="Names from COUNCIL_API_KEYS of trusted front ends (Open WebUI) that may name their end user.",
    )
    answer_link: bool = Field(
        False,
        alias="COUNCIL_API_LINK",
        description="The API's answer ends with a one-line Markdown link to the council's page (for front ends "
        "that drop the response's metadata); needs COUNCIL_PUBLIC_URL.",
    )
    task_model: str | None = Field(
        None,
        alias="COUNCIL_API_TASK_MODEL",
        description="The model that answers chat front ends' background tasks alone; empty: the member with the "
        "lowest stored latency.",
    )

    _split = field_validator("allowed_hosts", "cors_origins", "trusted_keys", mode="before")(split_csv)


class WebSettings(SettingsGroup):
    """The browser app (bot/web, docs/web.md)."""

    enabled: bool = Field(
        False, alias="COUNCIL_WEB", description="`council api` also serves the browser app on its own port."
    )
    host: str = Field("127.0.0.1", alias="COUNCIL_WEB_HOST", description="The address `council web` listens on.")
    port: int = Field(8080, alias="COUNCIL_WEB_PORT", ge=0, le=65535, description="The port `council web` listens on.")
    session_secret: SecretStr | None = Field(
        None,
        alias="COUNCIL_WEB_SECRET",
        description="Signs the browser's session cookie and the share links; empty: a random key per process "
        "(sign-ins end at restart). Rotating it ends every session and revokes every share link.",
    )
    session_hours: float = Field(
        12.0,
        alias="COUNCIL_WEB_SESSION_HOURS",
        gt=0,
        description="A browser sign-in ends after this many hours unused; each use renews it (at most 7 days in all).",
    )
    admin_check_minutes: float = Field(
        10.0,
        alias="COUNCIL_WEB_ADMIN_CHECK_MINUTES",
        gt=0,
        description="How often a signed-in admin's rights are asked of Slack again (a demoted admin's session ends).",
    )
    share_links: bool = Field(
        False,
        alias="COUNCIL_SHARE_LINKS",
        description="Every council link the bot hands out opens that one council read-only for whoever holds it "
        "(a signed token; needs COUNCIL_WEB_SECRET).",
    )

    @model_validator(mode="after")
    def _share_links_need_a_secret(self) -> WebSettings:
        if self.share_links and self.session_secret is None:
            raise ValueError("COUNCIL_SHARE_LINKS=on needs COUNCIL_WEB_SECRET, the key that signs the links")
        return self

    def share_secret(self) -> str | None:
        """The key of share links; None while they are off."""
        return self.session_secret.get_secret_value() if self.share_links and self.session_secret else None
