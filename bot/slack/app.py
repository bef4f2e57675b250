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

Entry points: `build_slack_bot(service, settings)` (the Bolt app is its `.app`) and
`run_slack(service, settings, http=, port=)`
(Socket Mode when SLACK_APP_TOKEN is set, else the HTTP Events API at /slack/events).
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

from aiohttp import web
from slack_bolt.adapter.aiohttp import to_aiohttp_response, to_bolt_request
from slack_bolt.async_app import AsyncApp
from slack_bolt.response import BoltResponse
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.conversation import append_turn
from bot.councils import HISTORY_SCOPES, OwnMessage, control_reply, own_turn
from bot.following import deliver, deliver_durable, running_worker
from bot.render_text import ZWSP
from bot.slack import render
from bot.slack.admin import OPERATIONS as ADMIN_OPERATIONS
from bot.slack.admin import handle_admin, parse_admin
from bot.slack.agent import SlackAgent
from bot.slack.feedback import SlackFeedback
from bot.slack.files import incoming_files
from bot.slack.home import SlackHome
from bot.slack.stream import EDIT_INTERVAL_S
from bot.slack.surface import SlackSurface, api_base_url, build_client
from bot.throttle import SLACK_PACE, ChannelPacer, Pace, Priority
from core.errors import CouncilError, PermissionDenied
from core.material import files_notice
from core.models import Actor, ConversationTurn, Destination, Origin, Platform, new_council_id
from core.modes import split_mode_keyword
from core.research import split_search_keyword
from core.settings import Settings

if TYPE_CHECKING:
    from core.service import CouncilRun, CouncilService

log = logging.getLogger(__name__)
T = TypeVar("T")

__all__ = ["SlackCouncilBot", "api_base_url", "build_slack_bot", "build_web_app", "run_slack"]

EVENTS_PATH = "/slack/events"
ADMIN_CACHE_S = 60.0
HISTORY_PAGES = 5  # conversations.replies pages read for a thread follow-up (200 messages each)

_ACK = BoltResponse(status=200, body="")  # an event taken and dropped on purpose

CANNOT_POST = {
    "not_in_channel": "I'm not in this channel. Invite me with `/invite @{bot}` and ask again.",
    "channel_not_found": "I can't post in this conversation. Ask in a channel I'm in, or send me a direct message.",
    "is_archived": "This channel is archived.",
    "restricted_action": "I'm not allowed to post in this channel.",
}


# --------------------------------------------------------------------------- helpers


def slack_unescape(text: str) -> str:
    """Slack message/command text as the person typed it: entities decoded, links bare."""
    text = re.sub(r"<((?:https?|mailto):[^|>]+)(?:\|[^>]*)?>", r"\1", text or "")
    text = re.sub(r"<#[A-Z0-9]+\|([^>]+)>", r"#\1", text)
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def strip_mention(text: str, bot_user_id: str | None) -> str:
    if bot_user_id:
        text = re.sub(rf"<@{re.escape(bot_user_id)}(?:\|[^>]*)?>", " ", text)
    return text.strip()


def _error_code(exc: SlackApiError) -> str:
    return str(exc.response.get("error", "")) if exc.response is not None else ""


Command = tuple[str, str]  # (kind, argument text)

_HISTORY_ARGS = re.compile(r"(?:(channel|workspace|mine)\s*)?(\d{1,3})?", re.IGNORECASE)
_LEADERBOARD_ARGS = re.compile(r"(channel|workspace|all)?", re.IGNORECASE)
_EXPORT_ARGS = re.compile(r"([0-9a-f]{6,32})(?:\s+(json|markdown|md))?", re.IGNORECASE)


def parse_command(text: str) -> Command:
    """A `/council` subcommand, or ("ask", question). A question that merely starts with a
    subcommand word ("history of Rome?") stays a question: subcommands have strict arguments."""
    text = (text or "").strip()
    first, _, rest = text.partition(" ")
    word, rest = first.lower(), rest.strip()
    if not text or (word in ("help", "?") and not rest):
        return ("help", "")
    if word == "history" and _HISTORY_ARGS.fullmatch(rest):
        return ("history", rest)
    if word == "leaderboard" and _LEADERBOARD_ARGS.fullmatch(rest):
        return ("leaderboard", rest)
    if word == "export" and _EXPORT_ARGS.fullmatch(rest):
        return ("export", rest)
    if word == "admin" and (not rest or rest.split()[0].lower() in (*ADMIN_OPERATIONS, "help")):
        return ("admin", rest)
    return ("ask", text)


# --------------------------------------------------------------------------- the bot


class SlackCouncilBot:
    """Holds the Bolt app, its listeners and the background tasks they start."""

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
        # What a council shows in its thread (bot/following.py). "auto": stream progress with
        # chat.startStream where Slack allows it, else chat.update; "off": always chat.update
        # (SLACK_STREAMING; tests pass `streaming`). One pacer per bot: every council in a
        # channel shares its pace.
        self.surface = SlackSurface(
            client,
            pacer=ChannelPacer(pace),
            interval=status_interval,
            streaming=streaming or settings.slack_streaming,
        )
        self.pacer = self.surface.pacer
        secret = settings.slack_signing_secret.get_secret_value() if settings.slack_signing_secret else ""
        # Durable councils are shown and answered by whichever process runs them (core/durable).
        service.register_deliverer(Platform.SLACK, self.deliver)
        self.app = AsyncApp(
            client=client,
            signing_secret=secret,
            process_before_response=False,
            name="llm-council",
        )
        self.tasks: set[asyncio.Task[Any]] = set()
        self._admins: dict[str, tuple[float, bool]] = {}
        self._register()
        # Slack's agent experience, the Home tab and readers' feedback live in their own modules.
        self.agent = SlackAgent(self)
        self.home = SlackHome(self)
        SlackFeedback(self).register()
        self.home.register()
        self.agent.register(on_home_tab=self.home.on_opened)

    # ----------------------------------------------------------------- plumbing

    def spawn(self, coro: Awaitable[Any], name: str) -> asyncio.Task[Any]:
        async def guarded() -> Any:
            try:
                return await coro
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("Slack task %s failed", name)

        task = asyncio.create_task(guarded(), name=f"slack-{name}")
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return task

    async def drain(self, within_s: float | None = None) -> None:
        """Wait for the background work started so far (tests, shutdown), at most `within_s`."""
        deadline = None if within_s is None else time.monotonic() + within_s
        while self.tasks:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                break
            await asyncio.wait(list(self.tasks), timeout=left)

    async def aclose(self, grace_s: float = 5.0) -> None:
        await self.drain(grace_s)
        for task in list(self.tasks):
            task.cancel()
        if self.tasks:
            await asyncio.gather(*self.tasks, return_exceptions=True)

    async def ephemeral(
        self,
        channel: str | None,
        user: str,
        text: str,
        *,
        thread_ts: str | None = None,
        respond: Callable[..., Awaitable[Any]] | None = None,
        blocks: list[dict[str, Any]] | None = None,
        prefer_respond: bool = False,
    ) -> None:
        """Only `user` sees it: chat.postEphemeral, or the interaction's response_url when that
        is preferred (slash commands work in channels the bot is not in) or the first fails."""
        payload: dict[str, Any] = {"text": text}
        if blocks:
            payload["blocks"] = blocks

        async def by_response_url() -> bool:
            if respond is None:
                return False
            try:
                await respond(response_type="ephemeral", replace_original=False, **payload)
                return True
            except Exception as exc:
                log.warning("could not respond ephemerally: %s", exc)
                return False

        if prefer_respond and await by_response_url():
            return
        if channel:
            try:
                await self.client.chat_postEphemeral(channel=channel, user=user, thread_ts=thread_ts, **payload)
                return
            except SlackApiError as exc:
                log.info("chat.postEphemeral failed (%s)", _error_code(exc))
        if not prefer_respond:
            await by_response_url()

    async def actor(self, user_id: str, *, fresh: bool = False) -> Actor:
        """Workspace admins and owners (users.info) are platform admins; cached for a minute."""
        cached = self._admins.get(user_id)
        if cached and not fresh and time.monotonic() - cached[0] < ADMIN_CACHE_S:
            return Actor(user_id=user_id, is_platform_admin=cached[1])
        is_admin = False
        try:
            info = await self.client.users_info(user=user_id)
            user = info.get("user") or {}
            is_admin = bool(user.get("is_admin") or user.get("is_owner") or user.get("is_primary_owner"))
        except SlackApiError as exc:
            log.warning("users.info failed for %s: %s", user_id, _error_code(exc))
        self._admins[user_id] = (time.monotonic(), is_admin)
        return Actor(user_id=user_id, is_platform_admin=is_admin)

    @staticmethod
    def origin(
        team_id: str | None,
        channel: str | None,
        user: str | None,
        *,
        thread_ts: str | None = None,
        user_name: str | None = None,
    ) -> Origin:
        return Origin(
            platform=Platform.SLACK,
            workspace_id=team_id,
            channel_id=channel,
            thread_id=thread_ts,
            user_id=user,
            user_name=user_name,
        )

    # Listener middleware (Bolt runs it before the listener; not calling `next` acknowledges the
    # event and drops it): which deliveries become councils is decided once, here.

    @staticmethod
    async def _questions_in_dms(event: dict[str, Any], next: Callable[[], Awaitable[Any]]) -> Any:
        """Of the `message` events, only new messages in a DM (edits, joins and the like are not)."""
        if event.get("channel_type") != "im" or event.get("subtype") not in (None, "thread_broadcast", "file_share"):
            return _ACK
        return await next()

    @staticmethod
    async def _not_from_bots(event: dict[str, Any], context: Any, next: Callable[[], Awaitable[Any]]) -> Any:
        """Our own messages and other bots' are never questions."""
        if event.get("bot_id") or event.get("user") in (None, context.bot_user_id):
            return _ACK
        return await next()

    async def _first_delivery(
        self, body: dict[str, Any], event: dict[str, Any], request: Any, next: Callable[[], Awaitable[Any]]
    ) -> Any:
        """Slack's retries of an event we already took (X-Slack-Retry-Num) and the second delivery
        of one message (app_mention and message.im of the same message) stop here."""
        headers = getattr(request, "headers", None) or {}
        retry = headers.get("x-slack-retry-num")
        event_id = body.get("event_id")
        if event_id:
            if not await self.service.claim_event("slack", str(event_id)):
                log.info("ignoring a repeated delivery of event %s (retry %s)", event_id, retry)
                return _ACK
        elif retry:
            return _ACK
        if not await self.service.claim_event("slack", f"message:{event.get('channel')}:{event.get('ts')}"):
            return _ACK
        return await next()

    # ----------------------------------------------------------------- listeners

    def _register(self) -> None:
        app = self.app

        @app.command("/council")
        async def council_command(ack, command, respond, context):
            kind, argument = parse_command(command.get("text", ""))
            if kind == "help":
                await ack(text=render.help_text(f"<@{context.bot_user_id}>" if context.bot_user_id else "@council"))
                return
            self.spawn(self.handle_command(kind, argument, command, respond, context), f"command-{kind}")
            await ack()

        @app.command("/council-admin")
        async def council_admin_command(ack, command, respond, context):
            self.spawn(self.handle_command("admin", command.get("text", ""), command, respond, context), "admin")
            await ack()

        @app.event("app_mention", middleware=[self._not_from_bots, self._first_delivery])
        async def app_mention(event, context):
            self.spawn(self.handle_message(event, context), "mention")

        @app.event("message", middleware=[self._questions_in_dms, self._not_from_bots, self._first_delivery])
        async def message(event, context):
            self.spawn(self.handle_message(event, context), "dm")

        @app.action(re.compile(r"^council_(stop|synthesize)$"))
        async def control(ack, body, action):
            self.spawn(self.handle_control(body, action), "control")
            await ack()

        @app.action(re.compile(r"^council_stage_(answers|reviews|ranking)$"))
        async def stage(ack, body, action, respond):
            self.spawn(self.handle_stage(body, action, respond), "stage")
            await ack()

        @app.view(re.compile(r"^council_stage_view_"))
        async def stage_view(ack):
            await ack()

        @app.error
        async def on_error(error, body):
            log.error("Slack listener error: %s", error, exc_info=error)

    # ----------------------------------------------------------------- slash commands

    async def handle_command(
        self, kind: str, argument: str, command: dict[str, Any], respond: Callable[..., Awaitable[Any]], context: Any
    ) -> None:
        user, channel = command["user_id"], command.get("channel_id")
        trigger = command.get("trigger_id")
        if trigger and not await self.service.claim_event("slack", f"command:{trigger}"):
            return
        origin = self.origin(
            command.get("team_id") or context.team_id, channel, user, user_name=command.get("user_name")
        )

        async def tell(text: str, blocks: list[dict[str, Any]] | None = None) -> None:
            await self.ephemeral(channel, user, text, respond=respond, blocks=blocks, prefer_respond=True)

        try:
            if kind == "ask":
                await self.council_from_command(argument, origin, respond, context)
            elif kind == "history":
                match = _HISTORY_ARGS.fullmatch(argument)
                scope_word = (match.group(1) or "channel").lower() if match else "channel"
                limit = int(match.group(2)) if match and match.group(2) else 10
                summaries = await self.service.history(origin, HISTORY_SCOPES[scope_word], min(limit, 50))
                message = render.history_message(summaries, scope_word)
                await tell(message["text"], message["blocks"])
            elif kind == "leaderboard":
                board = await self.service.leaderboard(origin, HISTORY_SCOPES[(argument or "workspace").lower()])
                message = render.leaderboard_message(board)
                await tell(message["text"], message["blocks"])
            elif kind == "export":
                await self.export(argument, origin, tell)
            elif kind == "admin":
                op = parse_admin(argument)
                actor = await self.actor(user) if op.op != "show" else Actor(user_id=user)
                message = await handle_admin(self.service, actor, origin, op)
                await tell(message["text"], message["blocks"])
        except CouncilError as exc:
            await tell(exc.user_message)
        except Exception as exc:
            log.exception("/council %s failed", kind)
            await tell(f"Something went wrong: {type(exc).__name__}. The logs have the details.")

    async def export(self, argument: str, origin: Origin, tell: Callable[..., Awaitable[None]]) -> None:
        match = _EXPORT_ARGS.fullmatch(argument)
        assert match is not None
        council_id, fmt = match.group(1).lower(), (match.group(2) or "markdown").lower()
        fmt = "json" if fmt == "json" else "markdown"
        text = await self.as_viewer(
            origin,
            lambda admin: self.service.export(council_id, fmt, viewer=origin, admin=admin),  # type: ignore[arg-type]
        )
        channel = origin.channel_id
        if not channel or not channel.startswith("D"):
            opened = await self.client.conversations_open(users=origin.user_id)
            channel = opened["channel"]["id"]
        ext = "json" if fmt == "json" else "md"
        await self.client.files_upload_v2(
            channel=channel,
            content=text,
            filename=f"council-{council_id}.{ext}",
            title=f"Council {council_id}",
            initial_comment=f"Export of council `{council_id}`",
        )
        if channel != origin.channel_id:
            await tell(f"I sent `council-{council_id}.{ext}` to you in a direct message.")

    async def as_viewer(self, viewer: Origin, read: Callable[[bool], Awaitable[T]]) -> T:
        """`read(admin)` of a stored council, as the service lets `viewer` see it (users.info is
        asked only when the viewer alone may not)."""
        return await self.service.as_viewer(read, lambda: self.actor(viewer.user_id or ""))

    async def council_from_command(
        self, question: str, origin: Origin, respond: Callable[..., Awaitable[Any]], context: Any
    ) -> None:
        """Post the question in the channel, then start the council in its thread: a channel the
        bot cannot post in costs no rate-limit hit and leaves no council behind."""
        user, channel = origin.user_id or "", origin.channel_id or ""
        question, mode = split_mode_keyword(slack_unescape(question))
        question, searched = split_search_keyword(question)
        asked = await self.service.check_admission(question, origin)  # refusals -> caller
        council_id = new_council_id()
        question_message = render.question_message(asked, user, council_id)
        try:
            posted = await deliver(
                self.surface,
                channel,
                Priority.START,
                lambda: self.client.chat_postMessage(
                    channel=channel, unfurl_links=False, unfurl_media=False, **question_message
                ),
            )
        except SlackApiError as exc:
            code = _error_code(exc)
            bot = f"<@{context.bot_user_id}>" if context.bot_user_id else "the bot"
            message = CANNOT_POST.get(code, f"I could not post in this channel ({code or 'error'}).")
            await self.ephemeral(
                channel,
                user,
                message.replace("@{bot}", bot).replace("{bot}", bot),
                respond=respond,
                prefer_respond=True,
            )
            return
        thread_ts = posted["ts"]
        origin = origin.model_copy(update={"thread_id": thread_ts})  # stored with the result
        try:
            await self.service.submit_council(
                asked,
                origin,
                destination=self.destination(channel, thread_ts),
                council_id=council_id,
                search=True if searched else None,
                mode=mode,
            )
        except CouncilError:  # refused in the moment since the check (a burst): take the question back
            await self._delete_quietly(channel, thread_ts)
            raise

    async def _delete_quietly(self, channel: str, ts: str) -> None:
        try:
            await self.client.chat_delete(channel=channel, ts=ts)
        except Exception as exc:
            log.info("could not delete the question of a refused council: %s", exc)

    def stream_now(self) -> bool:
        return self.surface.stream_now()

    @staticmethod
    def destination(channel: str, thread_ts: str) -> Destination:
        return Destination(platform=Platform.SLACK, channel_id=channel, thread_id=thread_ts)

    async def deliver(self, run: CouncilRun, destination: Destination, resumed: bool) -> None:
        """A durable council, wherever it was accepted, in its thread (the service's deliverer
        for Slack; bot/following.py)."""
        self.agent.follow(run, destination.channel_id, destination.thread_id or "")  # a DM's title and status line
        await deliver_durable(self.service, self.surface, run, destination, resumed)

    # ----------------------------------------------------------------- mentions and DMs

    async def handle_message(self, event: dict[str, Any], context: Any) -> None:
        channel, user, ts = event["channel"], event["user"], event["ts"]
        thread_ts = event.get("thread_ts")
        question = slack_unescape(strip_mention(event.get("text", ""), context.bot_user_id))
        if event.get("channel_type") == "im" and question.lower() in ("help", "?"):
            await self.client.chat_postMessage(channel=channel, text=render.help_text(f"<@{context.bot_user_id}>"))
            return
        history: list[ConversationTurn] = []
        if thread_ts and thread_ts != ts:
            history = await self.thread_history(channel, thread_ts, ts, context)
        origin = self.origin(event.get("team") or context.team_id, channel, user, thread_ts=thread_ts or ts)
        question, mode = split_mode_keyword(question)
        question, searched = split_search_keyword(question)
        batch = await self.service.read_files(incoming_files(event), Platform.SLACK)
        if batch.user_notices():
            await self.ephemeral(channel, user, files_notice(batch.user_notices()), thread_ts=thread_ts)
        try:
            await self.service.submit_council(
                question,
                origin,
                history,
                destination=self.destination(channel, thread_ts or ts),
                attachments=batch.attachments,
                search=True if searched else None,
                mode=mode,
            )
        except CouncilError as exc:
            await self.ephemeral(channel, user, exc.user_message, thread_ts=thread_ts)

    async def thread_history(
        self, channel: str, thread_ts: str, before_ts: str, context: Any
    ) -> list[ConversationTurn]:
        """The thread's earlier messages as conversation turns: our answers as the assistant."""
        messages: list[dict[str, Any]] = []
        cursor = None
        try:
            for _ in range(HISTORY_PAGES):
                page = await self.client.conversations_replies(
                    channel=channel, ts=thread_ts, limit=200, **({"cursor": cursor} if cursor else {})
                )
                messages += page.get("messages") or []
                cursor = (page.get("response_metadata") or {}).get("next_cursor")
                if not cursor or not page.get("has_more", True):
                    break
        except SlackApiError as exc:
            log.warning("conversations.replies failed: %s", _error_code(exc))
            return []
        turns: list[ConversationTurn] = []
        seen: set[str] = set()
        for message in sorted({m["ts"]: m for m in messages}.values(), key=lambda m: float(m["ts"])):
            if float(message["ts"]) >= float(before_ts):
                break
            append_turn(turns, await self.turn_of(message, context, seen))
        return turns

    async def turn_of(self, message: dict[str, Any], context: Any, seen: set[str]) -> ConversationTurn | None:
        own = message.get("user") == context.bot_user_id or (
            context.bot_id is not None and message.get("bot_id") == context.bot_id
        )
        if own:
            ref = render.council_ref(message)
            if ref is None:
                return None  # help, uploads and other notes
            kind, council_id = ref
            if kind == "s":
                return None
            if kind == "q":  # the question's text is the stored (or running) council's
                return await own_turn(self.service, OwnMessage("question", council_id, None), seen)
            shown = "\n".join(
                b["text"]["text"]
                for b in message.get("blocks") or []
                if b.get("type") == "section" and isinstance(b.get("text"), dict)
            )
            answer = OwnMessage("answer", council_id, slack_unescape(shown.replace(ZWSP, "")))
            return await own_turn(self.service, answer, seen)
        if message.get("bot_id") or message.get("subtype") not in (None, "thread_broadcast", "file_share"):
            return None
        text = slack_unescape(strip_mention(message.get("text", ""), context.bot_user_id))
        return ConversationTurn(role="user", content=text, author=message.get("user")) if text else None

    # ----------------------------------------------------------------- buttons

    async def handle_control(self, body: dict[str, Any], action: dict[str, Any]) -> None:
        user = body["user"]["id"]
        council_id = action.get("value", "")
        synthesize = action.get("action_id") == render.ACTION_SYNTHESIZE
        channel = (body.get("channel") or {}).get("id") or (body.get("container") or {}).get("channel_id")
        thread_ts = (body.get("container") or {}).get("thread_ts") or (body.get("message") or {}).get("thread_ts")
        try:
            try:
                stopped = await self.service.stop(council_id, Actor(user_id=user), synthesize=synthesize)
            except PermissionDenied:  # not the asker: maybe a workspace admin
                stopped = await self.service.stop(council_id, await self.actor(user, fresh=True), synthesize=synthesize)
        except CouncilError as exc:
            await self.ephemeral(channel, user, exc.user_message, thread_ts=thread_ts)
            return
        await self.ephemeral(channel, user, control_reply(stopped, synthesize=synthesize), thread_ts=thread_ts)

    async def handle_stage(
        self, body: dict[str, Any], action: dict[str, Any], respond: Callable[..., Awaitable[Any]] | None = None
    ) -> None:
        """Open a stage of a stored council in a modal (trigger ids expire after 3 s: no detours)."""
        user = body["user"]["id"]
        channel = (body.get("channel") or {}).get("id")
        thread_ts = (body.get("container") or {}).get("thread_ts")
        stage = action["action_id"][len(render.ACTION_STAGE_PREFIX) :]
        team = (body.get("team") or {}).get("id") or (body.get("user") or {}).get("team_id")
        try:
            viewer = self.origin(team, channel, user)
            result = await self.as_viewer(viewer, lambda admin: self.service.result_for(action["value"], viewer, admin))
            await self.client.views_open(trigger_id=body["trigger_id"], view=render.stage_modal(result, stage))  # type: ignore[arg-type]
        except CouncilError as exc:
            await self.ephemeral(channel, user, exc.user_message, thread_ts=thread_ts, respond=respond)
        except SlackApiError as exc:
            log.warning("views.open failed: %s", _error_code(exc))
            await self.ephemeral(
                channel,
                user,
                f"Could not open the details ({_error_code(exc)}). Try again.",
                thread_ts=thread_ts,
                respond=respond,
            )


# --------------------------------------------------------------------------- entry points


def build_slack_bot(service: CouncilService, settings: Settings, **options: Any) -> SlackCouncilBot:
    return SlackCouncilBot(service, settings, build_client(settings), **options)


def build_web_app(app: AsyncApp, path: str = EVENTS_PATH) -> web.Application:
    """An aiohttp application serving the Events API (events, commands, interactivity) at `path`."""

    async def events(request: web.Request) -> web.Response:
        bolt_response = await app.async_dispatch(await to_bolt_request(request))
        return await to_aiohttp_response(bolt_response)

    async def health(request: web.Request) -> web.Response:
        return web.Response(text="ok")

    web_app = web.Application()
    web_app.router.add_post(path, events)
    web_app.router.add_get("/health", health)
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
    if settings.slack_bot_token is None:
        raise RuntimeError("SLACK_BOT_TOKEN is not set (see the Slack section of the README).")
    bot = build_slack_bot(service, settings)
    await service.start_lease()  # councils a dead process left running are marked now, not at the first question
    async with running_worker(service, worker):
        await _serve(bot, settings, http=http, port=port, host=host)


async def _serve(bot: SlackCouncilBot, settings: Settings, *, http: bool, port: int, host: str) -> None:
    if settings.slack_app_token is not None and not http:
        from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler

        handler = AsyncSocketModeHandler(bot.app, settings.slack_app_token.get_secret_value())
        log.info("Slack: connecting in Socket Mode")
        try:
            await handler.start_async()
        finally:
            await handler.close_async()
            await bot.aclose()
        return
    if settings.slack_signing_secret is None:
        raise RuntimeError(
            "SLACK_SIGNING_SECRET is not set: the HTTP Events API needs it to verify requests "
            "(or set SLACK_APP_TOKEN to use Socket Mode)."
        )
    runner = web.AppRunner(build_web_app(bot.app), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    await site.start()
    log.info("Slack: serving the Events API at http://%s:%d%s", host, port, EVENTS_PATH)
    try:
        await asyncio.Event().wait()
    finally:
        await bot.aclose()
        await runner.cleanup()
