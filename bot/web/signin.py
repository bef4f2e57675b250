"""Sign in with Slack (OpenID Connect, through slack_sdk) and with Discord (OAuth2: identify, guilds).

Both are the authorization-code flow: a random `state` kept in the session ties the callback to
the browser that started it. The person's workspace (Slack team, Discord server) and user id are
all that is kept (bot/web/auth.py); no token is stored, shown or logged. Slack's endpoints are on
SLACK_API_URL's host when it is set (a proxy, the tests' fake Slack), Discord's on DISCORD_API_URL's.
"""

from __future__ import annotations

import base64
import json
import logging
import secrets
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode, urlsplit, urlunsplit

import aiohttp
import httpx
from slack_sdk.errors import SlackApiError
from slack_sdk.oauth import OpenIDConnectAuthorizeUrlGenerator
from slack_sdk.web.async_client import AsyncWebClient
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from bot.web.auth import remember
from core.errors import CouncilError
from core.models import Platform
from core.models.browse import Viewer, WebSession
from core.settings import Settings

if TYPE_CHECKING:
    from core.service import WebSessions

log = logging.getLogger(__name__)

SLACK_SCOPES = ["openid", "profile"]
DISCORD_SCOPES = "identify guilds"
DISCORD_API = "https://discord.com/api/v10"
MANAGE_GUILD = 0x20  # Discord's Manage Server permission bit: the server's admins
_STATE = "signin_state"
_NONCE = "signin_nonce"
_GUILDS = "signin_guilds"  # a Discord person in several servers chooses one


# A workspace's stored bot token (Slack OAuth distribution), to ask Slack whether someone is an admin.
TeamToken = Callable[[str], Awaitable[str | None]]


class SignInFailed(CouncilError):
    """The platform refused or the callback was not ours: one line for the person."""

    status = 400


class PlatformUnreachable(SignInFailed):
    """The platform did not answer (down, or SLACK_API_URL/DISCORD_API_URL wrong): a page that
    says so, and one log line without a traceback (nothing in our code failed)."""

    status = 502

    def __init__(self, platform: str, exc: BaseException):
        super().__init__(f"{platform} could not be reached, so you could not be signed in: try again in a moment.")
        log.warning("sign-in with %s failed: %s could not be reached (%s)", platform, platform, _why(exc))


def _why(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


# What a client raises when the other end is not there (aiohttp under slack_sdk, httpx for Discord).
_UNREACHABLE: tuple[type[BaseException], ...] = (aiohttp.ClientError, httpx.TransportError, OSError, TimeoutError)


def redirect_uri(settings: Settings, request: Request, platform: str) -> str:
    base = settings.tenants.public_url.rstrip("/") if settings.tenants.public_url else str(request.base_url).rstrip("/")
    return f"{base}/signin/{platform}/callback"


def _start(request: Request) -> str:
    state = secrets.token_urlsafe(24)
    request.session[_STATE] = state
    return state


def _check_state(request: Request) -> None:
    expected = request.session.pop(_STATE, None)
    offered = request.query_params.get("state")
    if request.query_params.get("error"):
        raise SignInFailed(f"Sign-in was cancelled ({request.query_params['error'][:80]}).")
    if not expected or not offered or not secrets.compare_digest(str(expected), offered):
        raise SignInFailed("This sign-in link expired or was not started here: sign in again.")


# ----------------------------------------------------------------------------- Slack


def _slack_host(settings: Settings) -> str:
    if not settings.slack.api_url:
        return "https://slack.com"
    parts = urlsplit(settings.slack.api_url)
    return urlunsplit((parts.scheme, parts.netloc, "", "", ""))


def _slack_client(settings: Settings) -> AsyncWebClient:
    base = (settings.slack.api_url or "https://slack.com/api").rstrip("/") + "/"
    return AsyncWebClient(base_url=base)


def slack_start(settings: Settings, request: Request) -> Response:
    nonce = secrets.token_urlsafe(16)
    request.session[_NONCE] = nonce
    generator = OpenIDConnectAuthorizeUrlGenerator(
        client_id=settings.slack.client_id or "",
        scopes=SLACK_SCOPES,
        redirect_uri=redirect_uri(settings, request, "slack"),
        authorization_url=_slack_host(settings) + "/openid/connect/authorize",
    )
    return RedirectResponse(generator.generate(state=_start(request), nonce=nonce), status_code=302)


async def slack_finish(
    settings: Settings, request: Request, sessions: WebSessions, team_token: TeamToken | None = None
) -> Viewer:
    _check_state(request)
    nonce = request.session.pop(_NONCE, None)
    client = _slack_client(settings)
    secret = settings.slack.client_secret.get_secret_value() if settings.slack.client_secret else ""
    try:
        token = await client.openid_connect_token(
            client_id=settings.slack.client_id or "",
            client_secret=secret,
            code=request.query_params.get("code", ""),
            redirect_uri=redirect_uri(settings, request, "slack"),
        )
        # The ID token came straight from Slack over the back channel (OIDC core 3.1.3.7: TLS stands
        # for the signature here); its nonce ties it to this browser's sign-in.
        if _claims(str(token.get("id_token") or "")).get("nonce") != nonce:
            raise SignInFailed("Slack's answer was not for this sign-in: sign in again.")
        info = await client.openid_connect_userInfo(token=str(token["access_token"]))
    except SlackApiError as exc:
        raise SignInFailed(f"Slack refused the sign-in ({exc.response.get('error', 'error')}).") from None
    except _UNREACHABLE as exc:
        raise PlatformUnreachable("Slack", exc) from None
    team, user = info.get("https://slack.com/team_id"), info.get("https://slack.com/user_id")
    if not team or not user:
        raise SignInFailed("Slack did not say which workspace you signed in to.")
    name = str(info.get("name") or user)
    bot_token = settings.slack.bot_token.get_secret_value() if settings.slack.bot_token else None
    if bot_token is None and team_token is not None:  # OAuth distribution: the workspace's own bot
        bot_token = await team_token(str(team))
    admin = await _slack_admin(settings, bot_token, str(user))
    viewer = Viewer.signed_in(Platform.SLACK, str(team), str(user), name, admin=admin)
    await remember(request, viewer, sessions)
    return viewer


async def _slack_admin(settings: Settings, bot_token: str | None, user: str) -> bool:
    """Workspace admins and owners see their workspace's councils (as in chat): asked with the
    bot's token when there is one (otherwise COUNCIL_ADMIN_USERS alone names admins)."""
    if bot_token is None:
        return False
    client = _slack_client(settings)
    try:
        info = await client.users_info(token=bot_token, user=user)
    except SlackApiError:
        return False
    except _UNREACHABLE as exc:
        raise PlatformUnreachable("Slack", exc) from None
    person = info.get("user") or {}
    return bool(person.get("is_admin") or person.get("is_owner"))


async def slack_still_admin(settings: Settings, session: WebSession, team_token: TeamToken) -> bool | None:
    """Slack's answer, now, to whether a signed-in admin still is one (None: nobody can ask)."""
    bot_token = settings.slack.bot_token.get_secret_value() if settings.slack.bot_token else None
    if bot_token is None:
        bot_token = await team_token(session.workspace_id)
    if bot_token is None:
        return None
    try:
        return await _slack_admin(settings, bot_token, session.user_id)
    except PlatformUnreachable:
        return None


def _claims(jwt: str) -> dict[str, Any]:
    try:
        payload = jwt.split(".")[1]
        return dict(json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4))))
    except (IndexError, ValueError, TypeError):
        return {}


# ----------------------------------------------------------------------------- Discord


def _discord_api(settings: Settings) -> str:
    return (settings.discord.api_url or DISCORD_API).rstrip("/")


def discord_start(settings: Settings, request: Request) -> Response:
    parts = urlsplit(_discord_api(settings))
    query = urlencode(
        {
            "client_id": settings.discord.client_id or "",
            "redirect_uri": redirect_uri(settings, request, "discord"),
            "response_type": "code",
            "scope": DISCORD_SCOPES,
            "state": _start(request),
            "prompt": "none",
        }
    )
    return RedirectResponse(f"{parts.scheme}://{parts.netloc}/oauth2/authorize?{query}", status_code=302)


async def discord_finish(settings: Settings, request: Request) -> list[dict[str, Any]]:
    """The person's servers (id, name, admin); one is signed in to at once (`discord_choose`)."""
    _check_state(request)
    api = _discord_api(settings)
    secret = settings.discord.client_secret.get_secret_value() if settings.discord.client_secret else ""
    try:
        token, me, guilds = await _discord_identity(settings, request, api, secret)
    except _UNREACHABLE as exc:
        raise PlatformUnreachable("Discord", exc) from None
    if me is None or guilds is None:
        raise SignInFailed(f"Discord refused the sign-in (HTTP {token.status_code}).")
    if me.status_code != 200 or guilds.status_code != 200:
        raise SignInFailed("Discord did not say who you are.")
    user = me.json()
    request.session[_GUILDS] = {
        "user": str(user["id"]),
        "name": str(user.get("global_name") or user.get("username") or user["id"]),
        "guilds": [
            {"id": str(g["id"]), "name": str(g.get("name", g["id"]))[:100], "admin": _manages(g)} for g in guilds.json()
        ],
    }
    return list(request.session[_GUILDS]["guilds"])


async def _discord_identity(
    settings: Settings, request: Request, api: str, secret: str
) -> tuple[httpx.Response, httpx.Response | None, httpx.Response | None]:
    """The token exchange, then who the person is and their servers (None, None: refused)."""
    async with httpx.AsyncClient(timeout=15) as http:
        token = await http.post(
            f"{api}/oauth2/token",
            data={
                "grant_type": "authorization_code",
                "code": request.query_params.get("code", ""),
                "redirect_uri": redirect_uri(settings, request, "discord"),
            },
            auth=(settings.discord.client_id or "", secret),
        )
        if token.status_code != 200:
            return token, None, None
        bearer = {"Authorization": f"Bearer {token.json().get('access_token', '')}"}
        return (
            token,
            await http.get(f"{api}/users/@me", headers=bearer),
            await http.get(f"{api}/users/@me/guilds", headers=bearer),
        )


def _manages(guild: dict[str, Any]) -> bool:
    try:
        return bool(guild.get("owner")) or bool(int(guild.get("permissions", 0)) & MANAGE_GUILD)
    except (TypeError, ValueError):
        return False


def discord_guilds(request: Request) -> list[dict[str, Any]]:
    pending = request.session.get(_GUILDS)
    return list(pending["guilds"]) if isinstance(pending, dict) else []


async def discord_choose(request: Request, guild_id: str, sessions: WebSessions) -> Viewer:
    pending = request.session.get(_GUILDS)
    if not isinstance(pending, dict):
        raise SignInFailed("Sign in with Discord again.")
    guild = next((g for g in pending["guilds"] if g["id"] == guild_id), None)
    if guild is None:
        raise SignInFailed("You are not a member of that server.")
    viewer = Viewer.signed_in(Platform.DISCORD, guild["id"], pending["user"], pending["name"], admin=guild["admin"])
    await remember(request, viewer, sessions)
    return viewer
