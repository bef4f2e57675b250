"""Slack's surface for the council runner (bot/following.py): Web API writes, the Block Kit
drawing, and the streamed message where Slack streams.

Built from settings alone (`slack_surface`): a Web API client with the bot token, no Socket
Mode or Events API, so any process can follow a council into its thread.

Streaming (`streaming="auto"`): a council's progress is one `chat.startStream` message
(bot/slack/stream.py). Where Slack refuses it (`unknown_method`, `feature_not_enabled`,
`not_allowed_token_type`, any error), the status message is edited with `chat.update` instead;
a refusal that will not change soon stops the next councils from asking for a while.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_async_handlers import (
    AsyncConnectionErrorRetryHandler,
    AsyncRateLimitErrorRetryHandler,
)
from slack_sdk.web.async_client import AsyncWebClient

from bot.councils import HANDED_OVER_TEXT, AnswerFile
from bot.links import renderer
from bot.slack import render
from bot.slack.errors import error_code, refusal, retry_after_of
from bot.slack.stream import EDIT_INTERVAL_S, STREAM_UNSUPPORTED, ProgressStream
from bot.surface import Renderer
from bot.throttle import SLACK_PACE, ChannelPacer
from core.models import CouncilRequest, Destination, Platform
from core.settings import Settings

log = logging.getLogger(__name__)

DEFAULT_API_URL = "https://slack.com/api/"
RATE_LIMIT_RETRIES = 3
STREAMING_MODES = ("auto", "off")
STREAM_RETRY_S = 600.0  # after chat.startStream said `unknown_method` & co., try again this much later

# Channel writes: their 429s go back to the channel's pacer (bot.throttle), which stops every
# council's writes to that channel and retries, instead of each call sleeping and retrying alone.
PACED_METHODS = frozenset(
    {"chat.postMessage", "chat.update", "chat.delete", "chat.startStream", "chat.appendStream", "chat.stopStream"}
)


def api_base_url(settings: Settings) -> str:
    """SLACK_API_URL (e.g. a proxy or a test server) normalised to end in exactly one slash."""
    return (settings.slack.api_url or DEFAULT_API_URL).rstrip("/") + "/"


class UnpacedRateLimitRetryHandler(AsyncRateLimitErrorRetryHandler):
    """The Web API client's own 429 retries, for every method except the paced channel writes."""

    async def _can_retry_async(self, *, state, request, response=None, error=None) -> bool:  # type: ignore[no-untyped-def]
        if request.url.rstrip("/").rsplit("/", 1)[-1] in PACED_METHODS:
            return False
        return await super()._can_retry_async(state=state, request=request, response=response, error=error)


def build_client(settings: Settings) -> AsyncWebClient:
    """The bot's Web API client: SLACK_BOT_TOKEN's, or in OAuth mode the token of the team being
    served (bot/slack/oauth.py)."""
    from bot.slack.oauth import TeamClient

    token = settings.slack.bot_token.get_secret_value() if settings.slack.bot_token else None
    return TeamClient(
        token=token,
        base_url=api_base_url(settings),
        retry_handlers=[
            AsyncConnectionErrorRetryHandler(),
            UnpacedRateLimitRetryHandler(max_retry_count=RATE_LIMIT_RETRIES),
        ],
    )


class SlackSurface:
    """Slack's writes for the runner; `streaming` "auto" opens a streamed message where Slack allows."""

    platform = Platform.SLACK

    def __init__(
        self,
        client: AsyncWebClient,
        *,
        pacer: ChannelPacer | None = None,
        interval: float = EDIT_INTERVAL_S,
        streaming: str = "off",
        settings: Settings | None = None,
    ):
        mode = streaming.strip().lower()
        if mode not in STREAMING_MODES:
            raise ValueError(f"Slack streaming must be one of {', '.join(STREAMING_MODES)}, not {mode!r}")
        self.client = client
        self.pacer = pacer or ChannelPacer(SLACK_PACE)  # shared by every council in a channel
        self.interval = interval
        self.streaming = mode
        self.render: Renderer = renderer(render, settings)  # with links to the browser app when configured
        self.settings = settings
        self._stream_refused_until = 0.0  # Slack said this app/workspace cannot stream: not before then

    def retry_after(self, exc: Exception) -> float | None:
        return retry_after_of(exc) if isinstance(exc, SlackApiError) else None

    async def post(self, destination: Destination, message: render.Message) -> str:
        posted = await self.client.chat_postMessage(
            channel=destination.channel_id,
            thread_ts=destination.thread_id,
            unfurl_links=False,
            unfurl_media=False,
            **message,
        )
        return str(posted["ts"])

    async def edit(self, channel_id: str, message_id: str, message: render.Message) -> None:
        await self.client.chat_update(channel=channel_id, ts=message_id, **message)

    async def delete(self, channel_id: str, message_id: str) -> None:
        await self.client.chat_delete(channel=channel_id, ts=message_id)

    async def attach(self, destination: Destination, file: AnswerFile, caption: str) -> None:
        await self.client.files_upload_v2(
            channel=destination.channel_id,
            thread_ts=destination.thread_id,
            filename=file.filename,
            title=file.title,
            content=file.content,
            initial_comment=caption,
        )

    # ----------------------------------------------------------------- streaming

    def stream_now(self) -> bool:
        return self.streaming == "auto" and time.monotonic() >= self._stream_refused_until

    def stream_refused(self, code: str) -> None:
        """A refusal that will not change soon (no such method, feature, token type) stops the
        next councils from asking again for a while; anything else only affects that council."""
        if code in STREAM_UNSUPPORTED:
            self._stream_refused_until = time.monotonic() + STREAM_RETRY_S

    async def end_live(self, channel_id: str, message_id: str) -> bool:
        """End a streamed message an earlier process left open (it stopped mid-council), saying the
        council goes on below; False when it is no stream or already ended (nothing to do)."""
        try:
            await self.client.chat_stopStream(
                channel=channel_id, ts=message_id, markdown_text=f"\n\n_{HANDED_OVER_TEXT}_"
            )
        except SlackApiError:  # a posted message (the resumed note) or a stream already stopped
            return False
        return True

    async def open_live(self, destination: Destination, request: CouncilRequest) -> ProgressStream | None:
        """Start the streamed message, or None: then this council uses the status message."""
        if not self.stream_now() or destination.thread_id is None:
            return None
        origin = request.origin
        stream = ProgressStream(
            self.client,
            destination.channel_id,
            destination.thread_id,
            team_id=origin.workspace_id,
            user_id=origin.user_id,
            interval=self.interval,
            pacer=self.pacer,
            link=self.settings.council_url(request.council_id) if self.settings is not None else None,
        )
        cid = request.council_id
        try:
            await stream.start()
            return stream
        except SlackApiError as exc:
            code = error_code(exc)
            log.info("chat.startStream refused (%s): council %s shows progress with chat.update", refusal(exc), cid)
            self.stream_refused(code)
        except Exception as exc:
            log.warning("chat.startStream failed (%s): council %s shows progress with chat.update", exc, cid)
        return None


def slack_surface(settings: Settings, *, pacer: ChannelPacer | None = None, **options: Any) -> SlackSurface:
    """Slack's surface from settings (SLACK_BOT_TOKEN, SLACK_API_URL, SLACK_STREAMING) alone."""
    options.setdefault("streaming", settings.slack.streaming)
    return SlackSurface(build_client(settings), pacer=pacer, settings=settings, **options)
