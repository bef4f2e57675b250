"""Who is reading: the Viewer of a request (core.models.browse). What a viewer may see is the
service's rule (Permissions.visibility / may_view); here is only who they are.

- A script: `Authorization: Bearer <key>` with a key of COUNCIL_API_KEYS, as the API takes it;
  it sees what that key sees through the API (its own councils).
- A person: signed in with Slack or Discord (bot/web/signin.py), then known by a signed,
  HttpOnly, SameSite=Lax session cookie (Starlette's SessionMiddleware, itsdangerous).
- The operator: on loopback, with no keys and no sign-in configured, every request is the
  operator's, who sees every council (as `council history` does).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from starlette.requests import Request

from bot.api.keys import LOOPBACK_HOSTS, ApiKeys, origin_for
from core.errors import ConfigurationError
from core.models import Platform
from core.models.browse import Viewer
from core.settings import Settings

SESSION_USER = "who"  # the signed-in person, in the session cookie


@dataclass(frozen=True)
class WebAuth:
    keys: ApiKeys
    slack: bool  # Sign in with Slack is configured (SLACK_CLIENT_ID / SLACK_CLIENT_SECRET)
    discord: bool  # Sign in with Discord (DISCORD_CLIENT_ID / DISCORD_CLIENT_SECRET)
    open: bool  # every request is the operator's

    @classmethod
    def from_settings(cls, settings: Settings, host: str) -> WebAuth:
        keys = ApiKeys.parse(settings.api.keys, settings.api.trusted_keys)
        slack = bool(settings.slack.client_id and settings.slack.client_secret)
        discord = bool(settings.discord.client_id and settings.discord.client_secret)
        closed = keys.enabled or slack or discord
        if not closed and host not in LOOPBACK_HOSTS:
            raise ConfigurationError(
                f"Refusing to serve the browser app on {host} to anyone: set COUNCIL_API_KEYS, Sign in with "
                "Slack (SLACK_CLIENT_ID/SECRET) or Discord (DISCORD_CLIENT_ID/SECRET), or bind to 127.0.0.1."
            )
        return cls(keys, slack, discord, open=not closed)

    @property
    def can_sign_in(self) -> bool:
        return self.slack or self.discord

    def viewer(self, request: Request) -> Viewer | None:
        """The request's viewer; None: nobody we know (sign in, or send a key)."""
        authorization = request.headers.get("authorization")
        if authorization is not None and self.keys.enabled:
            name = self.keys.name_for(authorization)
            return Viewer(origin=origin_for(name), name=name) if name is not None else None
        person = request.session.get(SESSION_USER)
        if isinstance(person, dict):
            return _person(person)
        return Viewer.operator() if self.open else None


def remember(request: Request, viewer: Viewer) -> None:
    """Sign `viewer` in for this browser (a fresh session: nothing of before sign-in carries over)."""
    origin = viewer.origin
    assert origin is not None and origin.workspace_id and origin.user_id
    request.session.clear()
    request.session[SESSION_USER] = {
        "platform": origin.platform.value,
        "workspace": origin.workspace_id,
        "user": origin.user_id,
        "name": viewer.name,
        "admin": viewer.is_platform_admin,
    }


def _person(stored: dict[str, Any]) -> Viewer | None:
    try:
        return Viewer.signed_in(
            Platform(stored["platform"]),
            str(stored["workspace"]),
            str(stored["user"]),
            str(stored.get("name") or stored["user"]),
            admin=bool(stored.get("admin")),
        )
    except (KeyError, ValueError):
        return None
