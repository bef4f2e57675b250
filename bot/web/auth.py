"""Who is reading: the Viewer of a request (core.models.browse). What a viewer may see is the
service's rule (Permissions.visibility / may_view); here is only who they are.

- A script: `Authorization: Bearer <key>` with a key of COUNCIL_API_KEYS, as the API takes it;
  it sees what that key sees through the API (its own councils).
- A person: signed in with Slack or Discord (bot/web/signin.py), then known by a signed,
  HttpOnly, SameSite=Lax session cookie (Starlette's SessionMiddleware, itsdangerous) that holds
  only a random token: the session's record is the service's (`service.sessions`), which ends it
  at sign-out, after COUNCIL_WEB_SESSION_HOURS unused, at an admin's demotion or on
  `council web --revoke`, and asks the platform again whether an admin still is one.
- The operator: on loopback, with no keys and no sign-in configured, every request is the
  operator's, who sees every council (as `council history` does).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from starlette.requests import Request

from bot.api.keys import LOOPBACK_HOSTS, ApiKeys, origin_for
from core.errors import ConfigurationError
from core.models.browse import Viewer
from core.settings import Settings

if TYPE_CHECKING:
    from core.service import WebSessions

SESSION_TOKEN = "sid"  # the signed-in person's session token, in the session cookie
_VIEWER = "viewer"  # request.state: who the request is, resolved once (`identify`)


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

    async def identify(self, request: Request, sessions: WebSessions) -> None:
        """Who the request is, found once (a session is read from the database) for `viewer`."""
        setattr(request.state, _VIEWER, await self._find(request, sessions))

    async def _find(self, request: Request, sessions: WebSessions) -> Viewer | None:
        authorization = request.headers.get("authorization")
        if authorization is not None and self.keys.enabled:
            name = self.keys.name_for(authorization)
            return Viewer(origin=origin_for(name), name=name) if name is not None else None
        token = request.session.get(SESSION_TOKEN)
        if isinstance(token, str):
            person = await sessions.viewer(token)
            if person is not None:
                return person
            request.session.pop(SESSION_TOKEN, None)  # ended: the browser forgets it too
        return Viewer.operator() if self.open else None

    def viewer(self, request: Request) -> Viewer | None:
        """The request's viewer (`identify`); None: nobody we know (sign in, or send a key)."""
        return getattr(request.state, _VIEWER, None)


def signed_in(request: Request) -> bool:
    return SESSION_TOKEN in request.session


async def remember(request: Request, viewer: Viewer, sessions: WebSessions) -> None:
    """Sign `viewer` in for this browser (a fresh session: nothing of before sign-in carries over)."""
    token = await sessions.open(viewer)
    keep = {key: request.session[key] for key in KEPT_THROUGH_SIGN_IN if key in request.session}
    request.session.clear()
    request.session.update(keep)
    request.session[SESSION_TOKEN] = token
    setattr(request.state, _VIEWER, viewer)


async def forget(request: Request, sessions: WebSessions) -> None:
    """Signed out: the session is revoked on the server, and the cookie emptied."""
    token = request.session.get(SESSION_TOKEN)
    if isinstance(token, str):
        await sessions.close(token)
    request.session.clear()


NEXT = "next"  # where to go once signed in: the page that asked for a sign-in (`next_path`)
KEPT_THROUGH_SIGN_IN = (NEXT,)


def next_path(raw: object) -> str | None:
    """A path of this site to return to after signing in, or None: only a local absolute path
    (`/c/…`), never `//host`, `/\\host` or a scheme, which a browser would take to another site."""
    if not isinstance(raw, str) or not raw.startswith("/") or len(raw) > 2000:
        return None
    if raw.startswith(("//", "/signin")) or any(ch == "\\" or ord(ch) < 32 for ch in raw):
        return None
    return raw


def after_sign_in(request: Request) -> str:
    """Where the person goes once signed in (and forgets it)."""
    return next_path(request.session.pop(NEXT, None)) or "/"
