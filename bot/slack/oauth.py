"""Slack OAuth distribution: any workspace installs the app and is answered with its own token.

On when SLACK_CLIENT_ID and SLACK_CLIENT_SECRET are set (`settings.slack.oauth`). Bolt's OAuth flow
serves `/slack/install` ("Add to Slack") and `/slack/oauth_redirect`; its installation and state
stores are the council database's (core/tenants, through `service.tenants`), so replicas on one
PostgreSQL database share them. Bolt authorises every event, command and action per team (token
rotation included: a token close to expiry is refreshed through oauth.v2.access before use) and
puts that team's bot token on the request's context.

Our collaborators (questions, surface, Home tab...) hold one Web API client. `TeamClient` is that
client: its token is the one of the team being served, which `serve_team` sets from bolt's context
before any listener runs (background tasks spawned from a listener inherit it, being asyncio tasks
created in that context). A durable council delivered by a worker gets its team's token from the
installation store (`for_council`).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from slack_bolt.async_app import AsyncApp
from slack_bolt.oauth.async_oauth_settings import AsyncOAuthSettings
from slack_sdk.oauth.token_rotation.async_rotator import AsyncTokenRotator
from slack_sdk.web.async_client import AsyncWebClient

from bot.slack.installations import SlackInstallationStore, SlackStateStore
from core.errors import ConfigurationError
from core.models import Destination
from core.settings import SLACK_INSTALL_PATH, SLACK_REDIRECT_PATH, Settings

if TYPE_CHECKING:
    from core.service import CouncilRun, CouncilService

log = logging.getLogger(__name__)

AUTHORIZE_URL = "https://slack.com/oauth/v2/authorize"

# The bot scopes an install asks for: the manifest's (a test keeps the two the same).
BOT_SCOPES = (
    "app_mentions:read",
    "chat:write",
    "chat:write.public",
    "commands",
    "channels:history",
    "groups:history",
    "im:history",
    "mpim:history",
    "im:write",
    "files:write",
    "files:read",
    "users:read",
    "assistant:write",
)

_team_token: ContextVar[str | None] = ContextVar("slack_team_token", default=None)


class TeamClient(AsyncWebClient):
    """A Web API client whose token is the team's being served (OAuth mode), else its own."""

    _own_token: str | None = None

    @property  # type: ignore[override]
    def token(self) -> str | None:
        return _team_token.get() or self._own_token

    @token.setter
    def token(self, value: str | None) -> None:
        self._own_token = value


def use_token(token: str | None) -> None:
    """Serve the current task (and the tasks it starts) with this team's token."""
    _team_token.set(token)


def check_oauth_settings(settings: Settings) -> None:
    """The one-line configuration errors of OAuth mode."""
    if settings.slack.bot_token is not None:
        raise ConfigurationError(
            "SLACK_BOT_TOKEN and SLACK_CLIENT_ID/SLACK_CLIENT_SECRET are both set: unset SLACK_BOT_TOKEN "
            "to distribute the app (each workspace's token comes from its installation), or the client "
            "id and secret to serve one workspace."
        )
    missing = settings.slack_oauth_missing
    if missing:
        raise ConfigurationError(
            f"Slack OAuth distribution (SLACK_CLIENT_ID) also needs {', '.join(missing)} (README: Distribution)."
        )


def authorize_url(settings: Settings) -> str:
    """Slack's authorize page, on the host of SLACK_API_URL when it is set (a proxy, the tests' fake)."""
    if not settings.slack.api_url:
        return AUTHORIZE_URL
    parts = urlsplit(settings.slack.api_url)
    return urlunsplit((parts.scheme, parts.netloc, "/oauth/v2/authorize", "", ""))


def oauth_settings(service: CouncilService, settings: Settings) -> AsyncOAuthSettings:
    redirect_uri = settings.slack_oauth_url(SLACK_REDIRECT_PATH)
    assert settings.slack.client_id and settings.slack.client_secret and redirect_uri
    return AsyncOAuthSettings(
        client_id=settings.slack.client_id,
        client_secret=settings.slack.client_secret.get_secret_value(),
        scopes=list(BOT_SCOPES),
        user_scopes=[],
        redirect_uri=redirect_uri,
        install_path=SLACK_INSTALL_PATH,
        redirect_uri_path=SLACK_REDIRECT_PATH,
        authorization_url=authorize_url(settings),
        installation_store=SlackInstallationStore(service),
        state_store=SlackStateStore(service),
        logger=log,
    )


def oauth_app(service: CouncilService, settings: Settings, client: AsyncWebClient) -> AsyncApp:
    """The Bolt app of OAuth mode. The installation store is given to the app itself too, so that
    bolt's authorisation (and its token rotation) calls Slack through `client`, i.e. SLACK_API_URL;
    the OAuth flow's own calls (oauth.v2.access, auth.test) use `client` as well."""
    check_oauth_settings(settings)
    assert settings.slack.signing_secret is not None
    oauth = oauth_settings(service, settings)
    app = AsyncApp(
        client=client,
        signing_secret=settings.slack.signing_secret.get_secret_value(),
        oauth_settings=oauth,
        installation_store=oauth.installation_store,
        process_before_response=False,
        name="llm-council",
    )

    @app.middleware
    async def serve_team(context: Any, next: Callable[[], Awaitable[Any]]) -> Any:
        use_token(context.get("bot_token"))
        return await next()

    tokens_revoked = app.default_tokens_revoked_event_listener()
    app_uninstalled = app.default_app_uninstalled_event_listener()

    @app.event("tokens_revoked")
    async def on_tokens_revoked(event: dict[str, Any], context: Any) -> None:
        await tokens_revoked(event=event, context=context)
        log.info("Slack: tokens revoked in %s; deleted", context.team_id or context.enterprise_id)

    @app.event("app_uninstalled")
    async def on_app_uninstalled(context: Any) -> None:
        await app_uninstalled(context=context)  # the tokens go at once
        purged = await service.tenants.uninstalled(context.enterprise_id, context.team_id)
        log.info(
            "Slack: uninstalled from %s; tokens deleted%s",
            context.team_id or context.enterprise_id,
            f", {purged.councils} councils purged" if purged else "",
        )

    return app


def for_council(
    service: CouncilService,
    deliver: Callable[[CouncilRun, Destination, bool], Awaitable[None]],
    client: AsyncWebClient | None = None,
) -> Callable[[CouncilRun, Destination, bool], Awaitable[None]]:
    """A deliverer that posts with the token of the installation serving the council's team (a
    worker has no request to take it from): the workspace's own, or its organisation's org-wide
    install (Enterprise Grid ids kept with the destination); a rotating token near expiry is
    refreshed through `client` (SLACK_API_URL) first."""
    s = service.settings
    rotator = (
        AsyncTokenRotator(
            client_id=s.slack.client_id, client_secret=s.slack.client_secret.get_secret_value(), client=client
        )
        if s.slack.client_id and s.slack.client_secret
        else None
    )
    store = SlackInstallationStore(service)

    async def deliver_as_team(run: CouncilRun, destination: Destination, resumed: bool) -> None:
        team = run.request.origin.workspace_id
        if _team_token.get() is None and team:
            bot = await store.find_serving_bot(
                enterprise_id=destination.enterprise_id,
                team_id=team,
                is_enterprise_install=destination.is_enterprise_install,
            )
            if bot is None:
                log.warning("Slack: no installation serves team %s; council %s is not shown", team, run.council_id)
                return
            if bot.bot_refresh_token is not None and rotator is not None:
                # Token rotation: refreshed here as bolt would for an event (two hours before expiry).
                refreshed = await rotator.perform_bot_token_rotation(bot=bot, minutes_before_expiration=120)
                if refreshed is not None:
                    await store.async_save_bot(refreshed)
                    bot = refreshed
            use_token(bot.bot_token)
        await deliver(run, destination, resumed)

    return deliver_as_team
