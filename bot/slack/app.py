"""Slack adapter: slack-bolt `AsyncApp` wiring for the council.

`/council <question>` posts the question in the channel and runs the council in its thread;
`@bot <question>` runs it in the thread of that message (inside a thread, the earlier messages
are context); DMs work the same. Every listener acknowledges at once and does its work in a
background task. Progress is streamed into one message (chat.startStream: a task per member, the
reviews, the chairman, then the chairman's text) with a small Stop / Synthesize now message under
it; where Slack does not stream, one status message is edited instead (chat.update, throttled).
The answer comes with buttons that open each stage in a modal, loaded from the database (so they
work after a restart). Nothing about councils is decided here: the
service validates, rate-limits, checks permissions and stores.

This module is the composition root: `SlackCouncilBot` builds the collaborators and routes Bolt's
listeners to them — questions (bot/slack/questions.py), slash commands (slash.py), buttons
(buttons.py), who asks and private replies (people.py), thread history (history.py), which
deliveries count (middleware.py), background tasks (tasks.py), and the agent view, Home tab and
feedback (agent.py, home.py, feedback.py).

Entry points: `build_slack_bot(service, settings)` (the Bolt app is its `.app`) and
`run_slack(service, settings, http=, port=)`
(Socket Mode when SLACK_APP_TOKEN is set, else the HTTP Events API at /slack/events). With
SLACK_CLIENT_ID/SLACK_CLIENT_SECRET the app is distributed through bolt's OAuth flow (oauth.py).
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from aiohttp import web
from slack_bolt.adapter.aiohttp import to_aiohttp_response, to_bolt_request
from slack_bolt.async_app import AsyncApp
from slack_sdk.web.async_client import AsyncWebClient

from bot.following import running_worker
from bot.slack import render
from bot.slack.agent import SlackAgent
from bot.slack.buttons import SlackButtons
from bot.slack.feedback import SlackFeedback
from bot.slack.history import SlackThreadHistory
from bot.slack.home import SlackHome
from bot.slack.middleware import first_delivery, not_from_bots, questions_in_dms
from bot.slack.oauth import for_council, oauth_app
from bot.slack.people import SlackPeople, slack_origin
from bot.slack.pick import PickModal
from bot.slack.questions import SlackQuestions
from bot.slack.shortcut import MessageShortcut
from bot.slack.slash import SlashCommands, parse_command
from bot.slack.stream import EDIT_INTERVAL_S
from bot.slack.surface import SlackSurface, api_base_url, build_client
from bot.slack.tasks import BackgroundTasks
from bot.throttle import SLACK_PACE, ChannelPacer, Pace
from core.models import Platform
from core.service import continued
from core.settings import Settings

if TYPE_CHECKING:
    from core.service import CouncilService

log = logging.getLogger(__name__)

__all__ = ["SlackCouncilBot", "api_base_url", "build_slack_bot", "build_web_app", "run_slack"]

EVENTS_PATH = "/slack/events"


# --------------------------------------------------------------------------- the bot


class SlackCouncilBot:
    """Holds the Bolt app and the collaborators its listeners hand their work to."""

    origin = staticmethod(slack_origin)

    def __init__(
        self,
        service: CouncilService,
        settings: Settings,
        client: AsyncWebClient,
        *,
        status_interval: float = EDIT_INTERVAL_S,
        streaming: str | None = None,
        pace: Pace = SLACK_PACE,
    ):
        self.service = service
        self.settings = settings
        self.client = client
        self.surface = _surface(client, settings, status_interval, streaming, pace)
        self.pacer = self.surface.pacer
        # OAuth distribution (many workspaces, each with its token) or one workspace's bot token.
        self.app = oauth_app(service, settings, client) if settings.slack.oauth else _bolt_app(client, settings)
        self.background = BackgroundTasks()
        self.people = SlackPeople(service, client)
        # Slack's agent experience, the Home tab and readers' feedback live in their own modules.
        self.agent = SlackAgent(self.app, client, self.background, settings.slack.suggested_prompts)
        self.home = SlackHome(self.app, client, service, self.background, self.people)
        history = SlackThreadHistory(service, client)
        self.questions = SlackQuestions(service, client, self.surface, self.people, history, self.agent)
        self.commands = SlashCommands(service, client, self.people, self.questions)
        self.buttons = SlackButtons(service, client, self.people)
        # Durable councils are shown and answered by whichever process runs them (core/durable).
        deliver = self.questions.deliver
        service.register_deliverer(
            Platform.SLACK, for_council(service, deliver, client) if settings.slack.oauth else deliver
        )
        self._register()
        SlackFeedback(self.app, client, service, self.background, self.people).register()
        MessageShortcut(self.app, client, service, self.background, self.people).register()
        PickModal(self.app, client, service, self.background, self.people, self.questions).register()
        self.home.register()
        self.agent.register(on_home_tab=self.home.on_opened)

    # ----------------------------------------------------------------- background work

    @property
    def tasks(self) -> set[asyncio.Task[Any]]:
        return self.background.running

    def spawn(self, coro: Awaitable[Any], name: str) -> asyncio.Task[Any]:
        return self.background.spawn(coro, name)

    async def drain(self, within_s: float | None = None) -> None:
        """Wait for the background work started so far (tests, shutdown), at most `within_s`."""
        await self.background.drain(within_s)

    async def aclose(self, grace_s: float = 5.0) -> None:
        await self.background.aclose(grace_s)

    def stream_now(self) -> bool:
        return self.surface.stream_now()

    # ----------------------------------------------------------------- listeners

    def _register(self) -> None:
        self._register_commands()
        self._register_messages()
        self._register_buttons()

        @self.app.error
        async def on_error(error, body):
            log.error("Slack listener error: %s", error, exc_info=error)

    def _register_commands(self) -> None:
        app, commands = self.app, self.commands

        @app.command("/council")
        async def council_command(ack, command, respond, context):
            kind, argument = parse_command(command.get("text", ""))
            if kind == "help":
                await ack(text=render.help_text(f"<@{context.bot_user_id}>" if context.bot_user_id else "@council"))
                return
            self.spawn(commands.handle_command(kind, argument, command, respond, context), f"command-{kind}")
            await ack()

        @app.command("/council-admin")
        async def council_admin_command(ack, command, respond, context):
            self.spawn(commands.handle_command("admin", command.get("text", ""), command, respond, context), "admin")
            await ack()

    def _register_messages(self) -> None:
        app, questions = self.app, self.questions
        once = first_delivery(self.service)

        @app.event("app_mention", middleware=[not_from_bots, once])
        async def app_mention(event, context):
            self.spawn(questions.handle_message(event, context), "mention")

        @app.event("message", middleware=[questions_in_dms, not_from_bots, once])
        async def message(event, context):
            self.spawn(questions.handle_message(event, context), "dm")

    def _register_buttons(self) -> None:
        app, buttons = self.app, self.buttons

        @app.action(re.compile(r"^council_(stop|synthesize)$"))
        async def control(ack, body, action):
            self.spawn(buttons.handle_control(body, action), "control")
            await ack()

        @app.action(re.compile(r"^council_stage_(answers|reviews|ranking|differ)$"))
        async def stage(ack, body, action, respond):
            self.spawn(buttons.handle_stage(body, action, respond), "stage")
            await ack()

        @app.view(re.compile(r"^council_stage_view_"))
        async def stage_view(ack):
            await ack()


def _surface(
    client: AsyncWebClient, settings: Settings, interval: float, streaming: str | None, pace: Pace
) -> SlackSurface:
    """What a council shows in its thread (bot/following.py). "auto": stream progress with
    chat.startStream where Slack allows it, else chat.update; "off": always chat.update
    (SLACK_STREAMING; tests pass `streaming`). One pacer per bot: every council in a channel
    shares its pace."""
    return SlackSurface(
        client,
        pacer=ChannelPacer(pace),
        interval=interval,
        streaming=streaming or settings.slack.streaming,
        settings=settings,
    )


def _bolt_app(client: AsyncWebClient, settings: Settings) -> AsyncApp:
    secret = settings.slack.signing_secret.get_secret_value() if settings.slack.signing_secret else ""
    return AsyncApp(
        client=client,
        signing_secret=secret,
        process_before_response=False,
        name="llm-council",
    )


# --------------------------------------------------------------------------- entry points


def build_slack_bot(service: CouncilService, settings: Settings, **options: Any) -> SlackCouncilBot:
    return SlackCouncilBot(service, settings, build_client(settings), **options)


def build_web_app(app: AsyncApp, service: CouncilService, path: str = EVENTS_PATH) -> web.Application:
    """An aiohttp application serving the Events API (events, commands, interactivity) at `path`,
    /health, /ready and /metrics (core/durable/health.py), and in OAuth mode bolt's install page
    and redirect (/slack/install, /slack/oauth_redirect)."""

    async def events(request: web.Request) -> web.Response:
        if service.telemetry.stopping:  # Slack retries the event: on another replica, or on this one restarted
            return web.Response(status=503, text="stopping", headers={"Retry-After": "1"})
        with continued(request.headers):  # a proxy's traceparent: the councils it starts are in its trace
            bolt_response = await app.async_dispatch(await to_bolt_request(request))
        return await to_aiohttp_response(bolt_response)

    web_app = web.Application()
    web_app.router.add_post(path, events)
    service.telemetry.add_routes(web_app)
    flow = app.oauth_flow
    if flow is not None:

        async def install(request: web.Request) -> web.Response:
            return await to_aiohttp_response(await flow.handle_installation(await to_bolt_request(request)))

        async def redirect(request: web.Request) -> web.Response:
            return await to_aiohttp_response(await flow.handle_callback(await to_bolt_request(request)))

        web_app.router.add_get(flow.install_path, install)
        web_app.router.add_get(flow.redirect_uri_path, redirect)
    return web_app


async def run_slack(
    service: CouncilService,
    settings: Settings,
    *,
    http: bool = False,
    port: int = 3000,
    host: str = "0.0.0.0",
    worker: bool = True,
) -> None:
    """Run the Slack bot until cancelled: Socket Mode when SLACK_APP_TOKEN is set (and not `http`),
    otherwise the HTTP Events API on `host:port` at /slack/events (needs SLACK_SIGNING_SECRET).
    With `worker`, this process also runs councils (core/durable); without, workers elsewhere do."""
    if settings.slack.bot_token is None and not settings.slack.oauth:
        raise RuntimeError("SLACK_BOT_TOKEN is not set (see docs/slack.md).")
    bot = build_slack_bot(service, settings)
    http = http or settings.slack.oauth  # installs come through the OAuth redirect: HTTP only
    await service.start_lease()  # councils a dead process left running are marked now, not at the first question
    async with running_worker(service, worker):
        await _serve(bot, settings, http=http, port=port, host=host)


async def _serve(bot: SlackCouncilBot, settings: Settings, *, http: bool, port: int, host: str) -> None:
    if settings.slack.app_token is not None and not http:
        from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler

        handler = AsyncSocketModeHandler(bot.app, settings.slack.app_token.get_secret_value())
        # Asked to stop: the socket closes first (Slack sends the next events to another connection,
        # or again later), while the Web API client posts what the councils still have to say.
        bot.service.telemetry.on_stop(handler.client.close)
        log.info("Slack: connecting in Socket Mode")
        try:
            await handler.start_async()
        finally:
            await _close(bot, handler.close_async)
        return
    if settings.slack.signing_secret is None:
        raise RuntimeError(
            "SLACK_SIGNING_SECRET is not set: the HTTP Events API needs it to verify requests "
            "(or set SLACK_APP_TOKEN to use Socket Mode)."
        )
    runner = web.AppRunner(build_web_app(bot.app, bot.service), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    await site.start()
    log.info("Slack: serving the Events API at http://%s:%d%s", host, port, EVENTS_PATH)
    try:
        await asyncio.Event().wait()
    finally:
        await _close(bot, runner.cleanup)


async def _close(bot: SlackCouncilBot, close_connection: Callable[[], Awaitable[None]]) -> None:
    """Shut down in order: the councils (their deliveries post through this bot), then Slack's
    connection, then the bot's own tasks."""
    try:
        await bot.service.stop_councils()
    finally:
        await close_connection()
        await bot.aclose()
