"""A fake Slack Web API on loopback (aiohttp), for the Slack adapter's tests.

Implements the methods the app calls — auth.test, openid.connect.token and openid.connect.userInfo
(Sign in with Slack: `oidc_person` is who signs in at `/openid/connect/authorize`), oauth.v2.access
(an install's code, and token rotation's `grant_type=refresh_token`), oauth.v2.exchange, chat.postMessage, chat.update,
chat.postEphemeral, chat.delete, chat.startStream / appendStream / stopStream (streamed
messages: tasks, plan titles, markdown text, final blocks; `streaming = False` answers
`unknown_method` like a Slack without them), conversations.replies, conversations.open,
users.info, views.open, views.publish, assistant.threads.setStatus / setTitle /
setSuggestedPrompts (Slack's agent APIs), files.getUploadURLExternal (+ the upload URL) and
files.completeUploadExternal — plus response_url endpoints. Every call is recorded (method, merged
arguments, headers, time).
Responses look like Slack's (ts values, `ok`, `error` codes), and Slack's Block Kit limits are
enforced the way Slack does (the whole call fails with `invalid_blocks`), so a test that posts
an oversized message fails like production would. Rate limits can be scripted per method
(HTTP 429, `Retry-After`, `{"ok": false, "error": "ratelimited"}`), and `channel_limit` enforces
Slack's per-channel message limit (about one message per second per channel, short bursts
tolerated; beyond it HTTP 429 with Retry-After, as Slack documents) on every message write.
`outage(method, kind)` answers HTTP 503 the way Slack's edge does while Slack is down: plain text,
an HTML page, an HTML page labelled application/json, or an empty body (OUTAGE_BODIES).

    fake = await FakeSlack().start()
    Settings(SLACK_API_URL=fake.api_url, SLACK_BOT_TOKEN="xoxb-test", ...)

OAuth distribution: `register_app(client_id, secret)`, then a browser's visit to Slack's authorize
page (`GET /oauth/v2/authorize?client_id&scope&redirect_uri&state&team=T2`, served at the fake's
root like slack.com's) installs the app into that team and redirects to `redirect_uri?code&state`,
as Slack does once the installer clicks Allow. Every team has its own bot token (`tokens`: token ->
team) and a call is answered for the team its token belongs to. With `rotation` on, tokens expire
after `token_lifetime_s` and come with a refresh token (Slack's token rotation).
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import itertools
import json
import math
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from tests.loopback_app import serve_on_loopback

MESSAGE_BLOCKS = 50
MODAL_BLOCKS = 100
SECTION_TEXT = 3000
TEXT_MAX = 40000
MODAL_TITLE = 24
STREAM_TEXT = 12000  # markdown_text per call
TASK_FIELD = 256  # task_update details / output
TASK_STATUSES = ("pending", "in_progress", "complete", "error")
# The message writes that count against a channel's limit.
CHANNEL_WRITES = frozenset(
    {"chat.postMessage", "chat.update", "chat.delete", "chat.startStream", "chat.appendStream", "chat.stopStream"}
)


@dataclass
class ChannelLimit:
    """A token bucket per channel: `per_s` writes a second sustained, `burst` back to back."""

    per_s: float = 1.0
    burst: int = 3
    _buckets: dict[str, tuple[float, float]] = field(default_factory=dict)  # channel -> (tokens, at)

    def take(self, channel: str, now: float) -> float:
        """0 when the write may go (and it is counted), else the seconds until it may."""
        tokens, at = self._buckets.get(channel, (float(self.burst), now))
        tokens = min(float(self.burst), tokens + (now - at) * self.per_s)
        if tokens < 1.0:
            self._buckets[channel] = (tokens, now)
            return (1.0 - tokens) / self.per_s
        self._buckets[channel] = (tokens - 1.0, now)
        return 0.0


# What Slack's edge answers during an outage, instead of the Web API's JSON: `outage(method, kind)`.
OUTAGE_PAGE = (
    "<html><head><title>503 Service Unavailable</title></head><body><h1>Service Unavailable</h1></body></html>"
)
OUTAGE_BODIES: dict[str, tuple[str, str | None]] = {  # kind -> (body, Content-Type)
    "text/plain": ("upstream connect error or disconnect/reset before headers", "text/plain"),
    "text/html": (OUTAGE_PAGE, "text/html"),
    "html-as-json": (OUTAGE_PAGE, "application/json"),  # a proxy's page mislabelled as JSON
    "empty": ("", None),
}


@dataclass
class ApiCall:
    method: str
    args: dict[str, Any]
    headers: dict[str, str]
    at: float
    status: int = 200
    response: dict[str, Any] = field(default_factory=dict)
    team: str | None = None  # whose token made the call (OAuth distribution: one token per team)

    @property
    def ok(self) -> bool:
        return bool(self.response.get("ok"))


def sign(secret: str, body: str, timestamp: int | None = None) -> dict[str, str]:
    """Slack's v0 request signature headers for `body`."""
    ts = str(int(time.time()) if timestamp is None else timestamp)
    digest = hmac.new(secret.encode(), f"v0:{ts}:{body}".encode(), hashlib.sha256).hexdigest()
    return {"X-Slack-Request-Timestamp": ts, "X-Slack-Signature": f"v0={digest}"}


def _decoded(value: Any) -> Any:
    """Form-encoded JSON arguments (blocks, view, files) as Python values."""
    if isinstance(value, str) and value[:1] in ("[", "{"):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def block_problems(blocks: Any, limit: int) -> list[str]:
    """What Slack would reject in a blocks array (empty when valid)."""
    if blocks is None:
        return []
    if not isinstance(blocks, list):
        return ["blocks must be an array"]
    problems = []
    if len(blocks) > limit:
        problems.append(f"more than {limit} blocks ({len(blocks)})")
    ids = [b.get("block_id") for b in blocks if b.get("block_id")]
    if len(ids) != len(set(ids)):
        problems.append("duplicate block_id")
    for i, block in enumerate(blocks):
        kind = block.get("type")
        if len(block.get("block_id") or "") > 255:
            problems.append(f"block {i}: block_id too long")
        if kind == "section":
            text = (block.get("text") or {}).get("text", "")
            if not text and not block.get("fields"):
                problems.append(f"block {i}: empty section")
            if len(text) > SECTION_TEXT:
                problems.append(f"block {i}: section text {len(text)} > {SECTION_TEXT}")
        elif kind == "context":
            elements = block.get("elements") or []
            if not 1 <= len(elements) <= 10:
                problems.append(f"block {i}: context needs 1 to 10 elements")
            for e in elements:
                if len(e.get("text", "")) > SECTION_TEXT:
                    problems.append(f"block {i}: context text too long")
        elif kind == "actions":
            elements = block.get("elements") or []
            if not 1 <= len(elements) <= 25:
                problems.append(f"block {i}: actions needs 1 to 25 elements")
            for e in elements:
                if len((e.get("text") or {}).get("text", "")) > 75:
                    problems.append(f"block {i}: button text too long")
                if len(e.get("value", "")) > 2000 or len(e.get("action_id", "")) > 255:
                    problems.append(f"block {i}: button value or action_id too long")
        elif kind == "context_actions":
            elements = block.get("elements") or []
            if not 1 <= len(elements) <= 5:
                problems.append(f"block {i}: context_actions needs 1 to 5 elements")
            for e in elements:
                if e.get("type") not in ("feedback_buttons", "icon_button"):
                    problems.append(f"block {i}: context_actions cannot hold {e.get('type')!r}")
                for side in ("positive_button", "negative_button") if e.get("type") == "feedback_buttons" else ():
                    button = e.get(side) or {}
                    if (button.get("text") or {}).get("type") != "plain_text" or not button.get("value"):
                        problems.append(f"block {i}: feedback_buttons {side} needs plain_text text and a value")
                    elif len(button["text"].get("text", "")) > 75 or len(button["value"]) > 2000:
                        problems.append(f"block {i}: feedback_buttons {side} text or value too long")
        elif kind == "input":
            if not (block.get("label") or {}).get("text") or not isinstance(block.get("element"), dict):
                problems.append(f"block {i}: input needs a label and an element")
        elif kind == "header":
            if len((block.get("text") or {}).get("text", "")) > 150:
                problems.append(f"block {i}: header too long")
        elif kind not in ("divider", "image", "rich_text", "markdown"):
            problems.append(f"block {i}: unknown type {kind!r}")
    return problems


@dataclass
class TeamInstall:
    """A workspace the app is installed in (or the organisation of an org-wide install)."""

    team_id: str | None
    name: str
    bot_user_id: str
    bot_id: str
    enterprise_id: str | None = None
    org_install: bool = False


class FakeSlack:
    def __init__(
        self,
        *,
        team_id: str = "T1",
        bot_user_id: str = "UBOT",
        bot_id: str = "BBOT",
        token: str = "xoxb-test",
        host: str = "127.0.0.1",
        streaming: bool = True,
        channel_limit: ChannelLimit | None = None,
    ):
        self.channel_limit = channel_limit
        self.streaming = streaming  # False: chat.*Stream answer unknown_method
        self.team_id = team_id
        self.bot_user_id = bot_user_id
        self.bot_id = bot_id
        self.token = token
        self.host = host
        self.port = 0
        self.calls: list[ApiCall] = []
        self.messages: dict[str, list[dict[str, Any]]] = {}  # channel -> messages (top-level and replies)
        self.ephemerals: list[dict[str, Any]] = []
        self.views: list[dict[str, Any]] = []
        self.home_views: dict[str, dict[str, Any]] = {}  # user -> the Home tab published for them
        self.thread_status: list[dict[str, Any]] = []  # assistant.threads.setStatus calls, in order
        self.thread_titles: dict[tuple[str, str], str] = {}  # (channel, thread_ts) -> title
        self.suggested_prompts: list[dict[str, Any]] = []
        self.uploads: dict[str, dict[str, Any]] = {}  # file id -> {"filename", "content", "channel", ...}
        self.responses: list[dict[str, Any]] = []  # posts to response_url
        self.users: dict[str, dict[str, Any]] = {}
        self.no_access: set[str] = set()  # channels where posting fails with channel_not_found
        self._ratelimits: dict[str, list[int]] = {}
        self._failures: dict[str, list[str]] = {}
        self._outages: dict[str, list[str]] = {}
        self._clock = itertools.count(1)
        # OAuth distribution: the app's credentials, the installs, and which token is whose.
        self.apps: dict[str, str] = {}  # client_id -> client_secret
        self.installs: dict[str, TeamInstall] = {
            team_id: TeamInstall(team_id=team_id, name="Test", bot_user_id=bot_user_id, bot_id=bot_id)
        }
        self.tokens: dict[str, str] = {token: team_id}  # bot token -> install key (team id, or enterprise id)
        self.expires: dict[str, float] = {}  # rotating tokens: token -> expiry (Unix seconds)
        self.refresh_tokens: dict[str, str] = {}  # refresh token -> install key
        self.rotation = False
        self.token_lifetime_s = 43200  # Slack's rotating tokens last 12 hours
        self._codes: dict[str, tuple[str, str, str]] = {}  # code -> (install key, client_id, redirect_uri)
        self._token_numbers = itertools.count(1)
        self._serving: str | None = None
        self._current_token = ""  # the token of the call being answered
        self._files = itertools.count(1)
        self._runner: web.AppRunner | None = None
        # Socket Mode: open WebSocket connections, and what the app sent back on them.
        self.sockets: list[web.WebSocketResponse] = []
        self.on_socket_closed: Callable[[], None] | None = None  # called as the app's connection ends
        self.socket_acks: list[dict[str, Any]] = []
        self._envelopes = itertools.count(1)
        # Files users shared: served at their url_private, only with the bot token (as Slack does).
        self.shared_files: dict[str, bytes] = {}
        self.file_downloads: list[dict[str, str]] = []  # headers of each download request
        # Sign in with Slack (OpenID Connect): who "clicks Allow" on the authorize page (user, team).
        self.oidc_person: tuple[str, str] = ("U1", team_id)
        self._oidc_codes: dict[str, tuple[str, str, str, str, str]] = {}  # code -> user, team, client, uri, nonce
        self.oidc_tokens: dict[str, tuple[str, str]] = {}  # access token -> (user, team)

    # ----------------------------------------------------------------- lifecycle

    async def start(self) -> FakeSlack:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_route("*", "/api/{method}", self._api)
        app.router.add_get("/oauth/v2/authorize", self._authorize)
        app.router.add_get("/openid/connect/authorize", self._oidc_authorize)
        app.router.add_post("/upload/{file_id}", self._upload)
        app.router.add_post("/respond/{name}", self._respond)
        app.router.add_get("/socket", self._socket)
        app.router.add_get("/files-pri/{key}/{name}", self._shared_file)
        self._runner, self.port = await serve_on_loopback(app, self.host)
        return self

    async def close(self) -> None:
        for ws in list(self.sockets):
            await ws.close()
        if self._runner is not None:
            await self._runner.cleanup()

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def api_url(self) -> str:
        return self.url + "/api"

    def response_url(self, name: str = "r") -> str:
        return f"{self.url}/respond/{name}"

    # ----------------------------------------------------------------- scripting

    def add_user(self, user_id: str, name: str | None = None, *, admin: bool = False, owner: bool = False) -> None:
        self.users[user_id] = {
            "id": user_id,
            "team_id": self.team_id,
            "name": name or user_id.lower(),
            "real_name": name or user_id,
            "is_admin": admin,
            "is_owner": owner,
            "is_primary_owner": False,
            "is_bot": False,
            "deleted": False,
        }

    def share_file(self, name: str, data: bytes, mimetype: str, filetype: str) -> dict[str, Any]:
        """A file as it appears in an event's `files`: its bytes are served at `url_private`."""
        file_id = f"F{next(self._files):07d}"
        key = f"{self.team_id}-{file_id}"
        self.shared_files[key] = data
        url = f"{self.url}/files-pri/{key}/{name}"
        return {
            "id": file_id,
            "name": name,
            "title": name,
            "mimetype": mimetype,
            "filetype": filetype,
            "size": len(data),
            "url_private": url,
            "url_private_download": url + "?download=1",
        }

    async def _shared_file(self, request: web.Request) -> web.Response:
        self.file_downloads.append(dict(request.headers))
        data = self.shared_files.get(request.match_info["key"])
        auth = request.headers.get("Authorization", "")
        if not auth.startswith("Bearer ") or self._team_of(auth[7:]) is None:
            # Slack answers a download without the token with its sign-in page, not the file.
            return web.Response(text="<html>sign in</html>", content_type="text/html")
        if data is None:
            return web.Response(status=404)
        return web.Response(body=data, content_type="application/octet-stream")

    def ratelimit(self, method: str, times: int = 1, retry_after: int = 1) -> None:
        """The next `times` calls of `method` get HTTP 429 with Retry-After."""
        self._ratelimits.setdefault(method, []).extend([retry_after] * times)

    def fail(self, method: str, error: str, times: int = 1) -> None:
        self._failures.setdefault(method, []).extend([error] * times)

    def outage(self, method: str, kind: str, times: int = 1) -> None:
        """The next `times` calls of `method` get HTTP 503 with a body that is not the Web API's JSON
        (`kind`, a key of OUTAGE_BODIES), as Slack's edge answers while Slack is down."""
        assert kind in OUTAGE_BODIES, kind
        self._outages.setdefault(method, []).extend([kind] * times)

    def next_ts(self) -> str:
        return f"{1700000000 + next(self._clock)}.{next(self._clock):06d}"

    def add_message(
        self,
        channel: str,
        text: str,
        *,
        user: str | None = "U1",
        thread_ts: str | None = None,
        bot: bool = False,
        blocks: list | None = None,
        ts: str | None = None,
        files: list[dict[str, Any]] | None = None,
    ) -> str:
        """A message as if someone posted it (for thread history); `files` from `share_file`."""
        ts = ts or self.next_ts()
        message: dict[str, Any] = {"type": "message", "ts": ts, "text": text, "team": self.team_id}
        if files:
            message["files"] = files
        if bot:
            message.update(user=self.bot_user_id, bot_id=self.bot_id, app_id="A1")
        elif user:
            message["user"] = user
        if thread_ts:
            message["thread_ts"] = thread_ts
        if blocks is not None:
            message["blocks"] = blocks
        self.messages.setdefault(channel, []).append(message)
        return ts

    # ----------------------------------------------------------------- inspection

    def calls_to(self, *methods: str) -> list[ApiCall]:
        return [c for c in self.calls if c.method in methods]

    def channel_writes(self, channel: str) -> list[ApiCall]:
        """Every message write to `channel` that reached the API (429s included), in order."""
        return [c for c in self.calls if c.method in CHANNEL_WRITES and c.args.get("channel") == channel]

    def peak_writes(self, channel: str, window_s: float = 1.0) -> int:
        """The most message writes to `channel` (429s included) within any `window_s` seconds."""
        times = [c.at for c in self.channel_writes(channel)]
        return max((sum(1 for t in times[i:] if t - start < window_s) for i, start in enumerate(times)), default=0)

    def find(self, channel: str, ts: str) -> dict[str, Any] | None:
        return next((m for m in self.messages.get(channel, []) if m["ts"] == ts), None)

    def thread(self, channel: str, thread_ts: str) -> list[dict[str, Any]]:
        found = [m for m in self.messages.get(channel, []) if m["ts"] == thread_ts or m.get("thread_ts") == thread_ts]
        return sorted(found, key=lambda m: float(m["ts"]))

    async def wait_for(self, predicate: Callable[[], Any], timeout: float = 30.0, interval: float = 0.02) -> Any:
        deadline = time.monotonic() + timeout
        while True:
            value = predicate()
            if value:
                return value
            if time.monotonic() > deadline:
                raise TimeoutError(f"condition not met within {timeout:.1f} s")
            await asyncio.sleep(interval)

    def stream(self, channel: str, ts: str) -> dict[str, Any] | None:
        """A streamed message: its `text` (all markdown appended), `chunks` (every chunk, in order),
        `tasks` (task id -> latest task_update), `title` (latest plan title), `streaming`."""
        message = self.find(channel, ts)
        return message if message is not None and "chunks" in message else None

    # ----------------------------------------------------------------- HTTP

    async def _arguments(self, request: web.Request) -> dict[str, Any]:
        args: dict[str, Any] = dict(request.query)
        if request.can_read_body:
            ctype = request.content_type
            if ctype == "application/json":
                body = await request.json()
                if isinstance(body, dict):
                    args.update(body)
            elif ctype in ("application/x-www-form-urlencoded", "multipart/form-data"):
                form = await request.post()
                args.update({k: v for k, v in form.items() if isinstance(v, str)})
        return {k: _decoded(v) for k, v in args.items()}

    async def _api(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        args = await self._arguments(request)
        call = ApiCall(method, args, dict(request.headers), time.monotonic())
        self.calls.append(call)
        outages = self._outages.get(method)
        if outages:  # the edge answers before the API sees the call: no token check
            body, content_type = OUTAGE_BODIES[outages.pop(0)]
            call.status = 503
            headers = {"Content-Type": content_type} if content_type else {}
            return web.Response(status=503, body=body.encode(), headers=headers)
        auth = request.headers.get("Authorization", "")
        if method in ("oauth.v2.access", "oauth.v2.exchange"):  # the app's credentials, not a token
            return self._reply(call, self._oauth(method, args, auth))
        if method == "openid.connect.token":
            return self._reply(call, self._oidc_token(args, auth))
        token = auth[7:] if auth.startswith("Bearer ") else args.get("token")
        if not token:
            return self._reply(call, {"ok": False, "error": "not_authed"})
        if method == "apps.connections.open":
            if not str(token).startswith("xapp-"):
                return self._reply(call, {"ok": False, "error": "not_allowed_token_type"})
        else:
            call.team = self._team_of(str(token))
            if call.team is None:
                expired = str(token) in self.expires
                return self._reply(call, {"ok": False, "error": "token_expired" if expired else "invalid_auth"})
        channel = args.get("channel")
        if self.channel_limit is not None and method in CHANNEL_WRITES and isinstance(channel, str):
            wait = self.channel_limit.take(channel, call.at)
            if wait > 0:
                call.status = 429
                return self._reply(
                    call,
                    {"ok": False, "error": "ratelimited"},
                    status=429,
                    headers={"Retry-After": str(max(1, math.ceil(wait)))},
                )
        pending = self._ratelimits.get(method)
        if pending:
            retry_after = pending.pop(0)
            call.status = 429
            return self._reply(
                call, {"ok": False, "error": "ratelimited"}, status=429, headers={"Retry-After": str(retry_after)}
            )
        failures = self._failures.get(method)
        if failures:
            return self._reply(call, {"ok": False, "error": failures.pop(0)})
        handler = getattr(self, "_m_" + method.replace(".", "_"), None)
        if handler is None:
            return self._reply(call, {"ok": False, "error": "unknown_method"})
        self._serving = call.team  # handlers run without awaiting: this is the caller's team throughout
        self._current_token = str(token)
        return self._reply(call, handler(args))

    def _reply(
        self, call: ApiCall, body: dict[str, Any], status: int = 200, headers: dict[str, str] | None = None
    ) -> web.Response:
        call.response = body
        return web.json_response(body, status=status, headers=headers)

    async def _upload(self, request: web.Request) -> web.Response:
        file_id = request.match_info["file_id"]
        data = await request.read()
        self.calls.append(
            ApiCall("upload", {"file_id": file_id, "bytes": len(data)}, dict(request.headers), time.monotonic())
        )
        if file_id not in self.uploads:
            return web.Response(status=404, text="unknown upload")
        self.uploads[file_id]["content"] = data.decode("utf-8", "replace")
        return web.Response(text=f"OK - {len(data)}")

    async def _respond(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.responses.append(body)
        self.calls.append(ApiCall("response_url", body, dict(request.headers), time.monotonic(), response={"ok": True}))
        return web.Response(text="ok")

    async def _socket(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse(autoping=True)
        await ws.prepare(request)
        self.sockets.append(ws)
        await ws.send_json(
            {
                "type": "hello",
                "num_connections": len(self.sockets),
                "connection_info": {"app_id": "A1"},
                "debug_info": {"host": "fake"},
            }
        )
        try:
            async for message in ws:
                if message.type.name == "TEXT":
                    self.socket_acks.append(json.loads(message.data))
        finally:
            if ws in self.sockets:
                self.sockets.remove(ws)
            if self.on_socket_closed is not None:
                self.on_socket_closed()
        return ws

    async def drop_sockets(self, *, warned: bool = False) -> None:
        """Every Socket Mode connection closed from Slack's side: abruptly (a network drop, a
        Slack restart), or `warned` first by the `disconnect` message Slack sends before it
        recycles a connection. The app is expected to open a new one (apps.connections.open)."""
        for ws in list(self.sockets):
            if warned:
                await ws.send_json(
                    {"type": "disconnect", "reason": "refresh_requested", "debug_info": {"host": "fake"}}
                )
            await ws.close(code=1006 if not warned else 1000)
            if ws in self.sockets:
                self.sockets.remove(ws)

    async def send_envelope(
        self, kind: str, payload: dict[str, Any], *, socket: int = -1, retry_attempt: int = 0
    ) -> str:
        """Deliver a Socket Mode envelope (events_api, slash_commands, interactive) to the app, on
        its newest connection or the one at index `socket` (Slack picks any of an app's up to 10);
        `retry_attempt` > 0: Slack's redelivery of an event whose envelope it did not see acked."""
        envelope_id = f"env-{next(self._envelopes)}"
        await self.sockets[socket].send_json(
            {
                "envelope_id": envelope_id,
                "type": kind,
                "payload": payload,
                "accepts_response_payload": kind != "events_api",
                "retry_attempt": retry_attempt,
                "retry_reason": "timeout" if retry_attempt else "",
            }
        )
        return envelope_id

    def socket_ack(self, envelope_id: str) -> dict[str, Any] | None:
        return next((a for a in self.socket_acks if a.get("envelope_id") == envelope_id), None)

    # ----------------------------------------------------------------- methods

    def _m_apps_connections_open(self, args):
        return {"ok": True, "url": f"ws://{self.host}:{self.port}/socket"}

    def _check_message(self, args: dict[str, Any]) -> str | None:
        text, blocks = args.get("text"), args.get("blocks")
        if not text and not blocks:
            return "no_text"
        if text and len(text) > TEXT_MAX:
            return "msg_too_long"
        if block_problems(blocks, MESSAGE_BLOCKS):
            return "invalid_blocks"
        return None

    def _m_auth_test(self, args):
        return {"ok": True, **self._auth_test_for(self._current_team)}

    def _auth_test_for(self, key: str) -> dict[str, Any]:
        install = self.installs[key]
        return {
            "url": "https://test.slack.com/",
            "team": install.name,
            "user": "council",
            "team_id": install.team_id,
            "user_id": install.bot_user_id,
            "bot_id": install.bot_id,
            "enterprise_id": install.enterprise_id,
            "is_enterprise_install": install.org_install,
        }

    # ----------------------------------------------------------------- OAuth distribution

    def register_app(self, client_id: str, client_secret: str) -> None:
        self.apps[client_id] = client_secret

    def add_team(
        self, team_id: str | None, name: str = "", *, enterprise_id: str | None = None, org_install: bool = False
    ) -> str:
        """A workspace (or with `org_install`, an organisation) the app can be installed in; its install key."""
        key = enterprise_id if org_install else team_id
        assert key is not None
        n = len(self.installs) + 1
        self.installs[key] = TeamInstall(
            team_id=None if org_install else team_id,
            name=name or key,
            bot_user_id=f"UBOT{n}",
            bot_id=f"BBOT{n}",
            enterprise_id=enterprise_id,
            org_install=org_install,
        )
        return key

    def tokens_of(self, key: str) -> list[str]:
        return [token for token, owner in self.tokens.items() if owner == key]

    def revoke(self, key: str) -> None:
        """The workspace uninstalled the app: its tokens stop working (Slack then sends app_uninstalled)."""
        for token in self.tokens_of(key):
            del self.tokens[token]
        self.refresh_tokens = {r: k for r, k in self.refresh_tokens.items() if k != key}

    def _team_of(self, token: str) -> str | None:
        key = self.tokens.get(token)
        if key is not None and token in self.expires and self.expires[token] < time.time():
            return None
        return key

    @property
    def _current_team(self) -> str:
        return self._serving or self.team_id

    async def _authorize(self, request: web.Request) -> web.Response:
        """Slack's authorize page once the installer clicked Allow: a code for the chosen team."""
        query = request.query
        self.calls.append(ApiCall("oauth/v2/authorize", dict(query), dict(request.headers), time.monotonic()))
        client_id, redirect_uri = query.get("client_id", ""), query.get("redirect_uri", "")
        key = query.get("team") or self.team_id
        if client_id not in self.apps or key not in self.installs or not redirect_uri:
            return web.Response(status=400, text="invalid_client_id or team")
        code = f"code-{next(self._token_numbers)}"
        self._codes[code] = (key, client_id, redirect_uri)
        target = redirect_uri + "?" + urllib.parse.urlencode({"code": code, "state": query.get("state", "")})
        raise web.HTTPFound(target)

    async def _oidc_authorize(self, request: web.Request) -> web.Response:
        """Sign in with Slack's authorize page once `oidc_person` allowed it: a code for them."""
        query = request.query
        self.calls.append(ApiCall("openid/connect/authorize", dict(query), dict(request.headers), time.monotonic()))
        client_id, redirect_uri = query.get("client_id", ""), query.get("redirect_uri", "")
        scopes = set(query.get("scope", "").replace(",", " ").split())  # Slack takes both separators
        if client_id not in self.apps or not redirect_uri or "openid" not in scopes:
            return web.Response(status=400, text="invalid_client_id, redirect_uri or scope")
        code = f"oidc-code-{next(self._token_numbers)}"
        user, team = self.oidc_person
        self._oidc_codes[code] = (user, team, client_id, redirect_uri, query.get("nonce", ""))
        target = redirect_uri + "?" + urllib.parse.urlencode({"code": code, "state": query.get("state", "")})
        raise web.HTTPFound(target)

    def _oidc_token(self, args: dict[str, Any], auth: str) -> dict[str, Any]:
        client_id = self._client_ok(args, auth)
        if client_id is None:
            return {"ok": False, "error": "invalid_client_id"}
        grant = self._oidc_codes.pop(str(args.get("code")), None)
        if grant is None or grant[2] != client_id:
            return {"ok": False, "error": "invalid_code"}
        user, team, _, redirect_uri, nonce = grant
        if args.get("redirect_uri") != redirect_uri:
            return {"ok": False, "error": "bad_redirect_uri"}
        token = f"xoxp-oidc-{user}-{next(self._token_numbers)}"
        self.tokens[token] = team  # a user token: answered for its team
        self.oidc_tokens[token] = (user, team)
        claims = {"iss": "https://slack.com", "sub": user, "aud": client_id, "nonce": nonce,
                  "https://slack.com/user_id": user, "https://slack.com/team_id": team}  # fmt: skip

        def part(value: dict[str, Any]) -> str:
            import base64

            return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")

        id_token = f"{part({'alg': 'RS256', 'typ': 'JWT'})}.{part(claims)}.signature"
        return {"ok": True, "access_token": token, "token_type": "Bearer", "id_token": id_token}

    def _m_openid_connect_userInfo(self, args):
        user, team = self.oidc_tokens.get(self._current_token, ("", ""))
        if not user:
            return {"ok": False, "error": "invalid_auth"}
        name = (self.users.get(user) or {}).get("real_name", user)
        return {"ok": True, "sub": user, "https://slack.com/user_id": user, "https://slack.com/team_id": team,
                "name": name, "https://slack.com/team_name": team}  # fmt: skip

    def _client_ok(self, args: dict[str, Any], auth: str) -> str | None:
        """The client id when its credentials are right (form fields or HTTP Basic, as Slack takes)."""
        client_id, secret = args.get("client_id"), args.get("client_secret")
        if auth.startswith("Basic "):
            import base64

            client_id, _, secret = base64.b64decode(auth[6:]).decode().partition(":")
        return client_id if client_id in self.apps and self.apps[client_id] == secret else None

    def _mint(self, key: str) -> dict[str, Any]:
        n = next(self._token_numbers)
        install = self.installs[key]
        prefix = "xoxe.xoxb" if self.rotation else "xoxb"
        token = f"{prefix}-{key}-{n}-{hashlib.sha256(f'{key}{n}'.encode()).hexdigest()[:24]}"
        self.tokens[token] = key
        minted: dict[str, Any] = {"access_token": token, "token_type": "bot", "scope": "commands,chat:write"}
        if self.rotation:
            refresh = f"xoxe-1-{key}-{n}"
            self.refresh_tokens[refresh] = key
            self.expires[token] = time.time() + self.token_lifetime_s
            minted.update(refresh_token=refresh, expires_in=self.token_lifetime_s)
        return {
            "ok": True,
            **minted,
            "bot_user_id": install.bot_user_id,
            "app_id": "A1",
            "team": None if install.org_install else {"id": install.team_id, "name": install.name},
            "enterprise": {"id": install.enterprise_id, "name": "Org"} if install.enterprise_id else None,
            "is_enterprise_install": install.org_install,
            "authed_user": {"id": "U1"},
        }

    def _oauth(self, method: str, args: dict[str, Any], auth: str) -> dict[str, Any]:
        client_id = self._client_ok(args, auth)
        if client_id is None:
            return {"ok": False, "error": "invalid_client_id"}
        if method == "oauth.v2.exchange":  # a long-lived token for a rotating one
            token = args.get("token") or (auth[7:] if auth.startswith("Bearer ") else "")
            key = self.tokens.get(str(token))
            if key is None:
                return {"ok": False, "error": "invalid_auth"}
            rotating, self.rotation = self.rotation, True
            try:
                return self._mint(key)
            finally:
                self.rotation = rotating
        if args.get("grant_type") == "refresh_token":
            key = self.refresh_tokens.pop(str(args.get("refresh_token")), None)
            return self._mint(key) if key is not None else {"ok": False, "error": "invalid_refresh_token"}
        grant = self._codes.pop(str(args.get("code")), None)
        if grant is None:
            return {"ok": False, "error": "invalid_code"}
        key, granted_to, redirect_uri = grant
        if granted_to != client_id:
            return {"ok": False, "error": "invalid_client_id"}
        if args.get("redirect_uri") and args["redirect_uri"] != redirect_uri:
            return {"ok": False, "error": "bad_redirect_uri"}
        return self._mint(key)

    def _m_chat_postMessage(self, args):
        channel = args.get("channel")
        if not channel:
            return {"ok": False, "error": "channel_not_found"}
        if channel in self.no_access:
            return {"ok": False, "error": "not_in_channel"}
        problem = self._check_message(args)
        if problem:
            return {
                "ok": False,
                "error": problem,
                "response_metadata": {"messages": block_problems(args.get("blocks"), MESSAGE_BLOCKS)},
            }
        thread_ts = args.get("thread_ts")
        if thread_ts and not self.find(channel, thread_ts):
            return {"ok": False, "error": "thread_not_found"}
        ts = self.add_message(
            channel, args.get("text") or "", user=None, thread_ts=thread_ts, bot=True, blocks=args.get("blocks")
        )
        message = self.find(channel, ts)
        return {"ok": True, "channel": channel, "ts": ts, "message": message}

    def _m_chat_update(self, args):
        channel, ts = args.get("channel"), args.get("ts")
        message = self.find(channel, ts) if channel and ts else None
        if message is None:
            return {"ok": False, "error": "message_not_found"}
        problem = self._check_message(args)
        if problem:
            return {"ok": False, "error": problem}
        message["text"] = args.get("text") or ""
        if "blocks" in args:
            message["blocks"] = args["blocks"]
        message["edited"] = {"user": self.bot_user_id, "ts": self.next_ts()}
        return {"ok": True, "channel": channel, "ts": ts, "text": message["text"], "message": message}

    # Streaming (https://docs.slack.dev/reference/methods/chat.startStream): a reply in a thread,
    # for a recipient (team and user required outside DMs), growing by chunks until stopped.

    @staticmethod
    def _chunk_problem(chunks: Any) -> str | None:
        if chunks is None:
            return None
        if not isinstance(chunks, list):
            return "invalid_chunks"
        for chunk in chunks:
            kind = chunk.get("type") if isinstance(chunk, dict) else None
            if kind == "markdown_text":
                if not isinstance(chunk.get("text"), str):
                    return "invalid_chunks"
                if len(chunk["text"]) > STREAM_TEXT:
                    return "msg_too_long"
            elif kind == "task_update":
                if not chunk.get("id") or not chunk.get("title") or chunk.get("status") not in TASK_STATUSES:
                    return "invalid_chunks"
                if any(len(chunk.get(k) or "") > TASK_FIELD for k in ("details", "output")):
                    return "invalid_chunks"
            elif kind == "plan_update":
                if not isinstance(chunk.get("title"), str):
                    return "invalid_chunks"
            elif kind == "blocks":
                if block_problems(chunk.get("blocks"), MESSAGE_BLOCKS):
                    return "invalid_blocks"
            else:
                return "invalid_chunks"
        return None

    @staticmethod
    def _add_chunks(message: dict[str, Any], args: dict[str, Any]) -> None:
        if args.get("markdown_text"):
            message["text"] += args["markdown_text"]
        for chunk in args.get("chunks") or []:
            message["chunks"].append(chunk)
            if chunk["type"] == "markdown_text":
                message["text"] += chunk["text"]
            elif chunk["type"] == "task_update":
                message["tasks"][chunk["id"]] = chunk
            elif chunk["type"] == "plan_update":
                message["title"] = chunk["title"]

    def _streaming_message(self, args: dict[str, Any]) -> tuple[dict[str, Any] | None, str | None]:
        if not self.streaming:
            return None, "unknown_method"
        channel, ts = args.get("channel"), args.get("ts")
        if not channel or not ts:
            return None, "invalid_arguments"
        message = self.find(channel, ts)
        if message is None or "chunks" not in message:
            return None, "message_not_found"
        if not message["streaming"]:
            return None, "message_not_in_streaming_state"
        if len(args.get("markdown_text") or "") > STREAM_TEXT:
            return None, "msg_too_long"
        return message, self._chunk_problem(args.get("chunks"))

    def _m_chat_startStream(self, args):
        if not self.streaming:
            return {"ok": False, "error": "unknown_method"}
        channel, thread_ts = args.get("channel"), args.get("thread_ts")
        if not channel:
            return {"ok": False, "error": "channel_not_found"}
        if channel in self.no_access:
            return {"ok": False, "error": "not_in_channel"}
        if not thread_ts:
            return {"ok": False, "error": "invalid_arguments"}
        if not self.find(channel, thread_ts):
            return {"ok": False, "error": "thread_not_found"}
        if not args.get("recipient_team_id"):
            return {"ok": False, "error": "missing_recipient_team_id"}
        if not args.get("recipient_user_id"):
            return {"ok": False, "error": "missing_recipient_user_id"}
        if args.get("task_display_mode") not in (None, "timeline", "plan"):
            return {"ok": False, "error": "invalid_arguments"}
        if len(args.get("markdown_text") or "") > STREAM_TEXT:
            return {"ok": False, "error": "msg_too_long"}
        problem = self._chunk_problem(args.get("chunks"))
        if problem:
            return {"ok": False, "error": problem}
        ts = self.add_message(channel, "", user=None, thread_ts=thread_ts, bot=True)
        message = self.find(channel, ts)
        assert message is not None
        message.update(
            streaming=True,
            chunks=[],
            tasks={},
            title=None,
            recipient=args.get("recipient_user_id"),
            task_display_mode=args.get("task_display_mode") or "timeline",
        )
        self._add_chunks(message, args)
        return {"ok": True, "channel": channel, "ts": ts}

    def _m_chat_appendStream(self, args):
        message, problem = self._streaming_message(args)
        if problem or message is None:
            return {"ok": False, "error": problem}
        if not args.get("markdown_text") and not args.get("chunks"):
            return {"ok": False, "error": "no_text"}
        self._add_chunks(message, args)
        return {"ok": True, "channel": args["channel"], "ts": args["ts"]}

    def _m_chat_stopStream(self, args):
        message, problem = self._streaming_message(args)
        if problem or message is None:
            return {"ok": False, "error": problem}
        blocks = args.get("blocks")
        if block_problems(blocks, MESSAGE_BLOCKS):
            return {
                "ok": False,
                "error": "invalid_blocks",
                "response_metadata": {"messages": block_problems(blocks, MESSAGE_BLOCKS)},
            }
        self._add_chunks(message, args)
        message["streaming"] = False
        # The finished message: the streamed text (Slack renders it as a markdown block), then ours.
        text_blocks = [{"type": "markdown", "block_id": "stream-" + message["ts"], "text": message["text"]}]
        message["blocks"] = (text_blocks if message["text"] else []) + list(blocks or [])
        return {"ok": True, "channel": args["channel"], "ts": args["ts"], "message": message}

    def _m_chat_postEphemeral(self, args):
        channel, user = args.get("channel"), args.get("user")
        if not channel or channel in self.no_access:
            return {"ok": False, "error": "channel_not_found"}
        if not user:
            return {"ok": False, "error": "user_not_in_channel"}
        problem = self._check_message(args)
        if problem:
            return {"ok": False, "error": problem}
        ts = self.next_ts()
        self.ephemerals.append({**args, "message_ts": ts})
        return {"ok": True, "message_ts": ts}

    def _m_chat_delete(self, args):
        channel, ts = args.get("channel"), args.get("ts")
        message = self.find(channel, ts) if channel and ts else None
        if message is None:
            return {"ok": False, "error": "message_not_found"}
        self.messages[channel].remove(message)
        return {"ok": True, "channel": channel, "ts": ts}

    def _m_conversations_replies(self, args):
        channel, ts = args.get("channel"), args.get("ts")
        if not channel or channel in self.no_access:
            return {"ok": False, "error": "channel_not_found"}
        root = self.find(channel, ts) if ts else None
        if root is None:
            return {"ok": False, "error": "thread_not_found"}
        thread_ts = root.get("thread_ts") or root["ts"]
        messages = [json.loads(json.dumps(m)) for m in self.thread(channel, thread_ts)]
        return {"ok": True, "messages": messages, "has_more": False, "response_metadata": {"next_cursor": ""}}

    def _m_conversations_open(self, args):
        users = str(args.get("users") or "")
        if not users:
            return {"ok": False, "error": "users_list_not_supplied"}
        return {"ok": True, "channel": {"id": "D" + users.split(",")[0]}}

    def _m_users_info(self, args):
        user = self.users.get(str(args.get("user")))
        if user is None:
            return {"ok": False, "error": "user_not_found"}
        return {"ok": True, "user": user}

    def _m_views_open(self, args):
        view, trigger = args.get("view"), args.get("trigger_id")
        if not trigger:
            return {"ok": False, "error": "invalid_arguments"}
        if not isinstance(view, dict) or view.get("type") != "modal":
            return {"ok": False, "error": "invalid_arguments"}
        title = (view.get("title") or {}).get("text", "")
        problems = block_problems(view.get("blocks"), MODAL_BLOCKS)
        if not title or len(title) > MODAL_TITLE or problems:
            return {"ok": False, "error": "invalid_arguments", "response_metadata": {"messages": problems or ["title"]}}
        view_id = f"V{len(self.views) + 1:08d}"
        self.views.append({**view, "id": view_id, "trigger_id": trigger})
        return {"ok": True, "view": {**view, "id": view_id}}

    # Slack's agent APIs (docs.slack.dev/reference/methods/assistant.threads.*), and views.publish.

    def _m_assistant_threads_setStatus(self, args):
        channel, thread_ts, status = args.get("channel_id"), args.get("thread_ts"), args.get("status")
        if not channel or not thread_ts or status is None:
            return {"ok": False, "error": "invalid_arguments"}
        loading = args.get("loading_messages")
        if loading is not None and (not isinstance(loading, list) or len(loading) > 10):
            return {"ok": False, "error": "invalid_arguments"}
        if channel in self.no_access:
            return {"ok": False, "error": "channel_not_found"}
        self.thread_status.append({"channel": channel, "thread_ts": thread_ts, "status": status, "loading": loading})
        return {"ok": True}

    def _m_assistant_threads_setTitle(self, args):
        channel, thread_ts, title = args.get("channel_id"), args.get("thread_ts"), args.get("title")
        if not channel or not thread_ts or not title:
            return {"ok": False, "error": "invalid_arguments"}
        self.thread_titles[(channel, thread_ts)] = title
        return {"ok": True}

    def _m_assistant_threads_setSuggestedPrompts(self, args):
        channel, prompts = args.get("channel_id"), args.get("prompts")
        if not channel or not isinstance(prompts, list) or not 1 <= len(prompts) <= 4:
            return {"ok": False, "error": "invalid_arguments"}
        for prompt in prompts:
            if not isinstance(prompt, dict) or not prompt.get("title") or not prompt.get("message"):
                return {"ok": False, "error": "invalid_arguments"}
        self.suggested_prompts.append(
            {"channel": channel, "thread_ts": args.get("thread_ts"), "title": args.get("title"), "prompts": prompts}
        )
        return {"ok": True}

    def _m_views_publish(self, args):
        user, view = args.get("user_id"), args.get("view")
        if not user or not isinstance(view, dict) or view.get("type") != "home":
            return {"ok": False, "error": "invalid_arguments"}
        problems = block_problems(view.get("blocks"), MODAL_BLOCKS)
        if problems:
            return {"ok": False, "error": "invalid_arguments", "response_metadata": {"messages": problems}}
        view_id = f"VH{len(self.home_views) + 1:07d}"
        self.home_views[str(user)] = {**view, "id": view_id}
        return {"ok": True, "view": {**view, "id": view_id}}

    def _m_files_getUploadURLExternal(self, args):
        filename, length = args.get("filename"), args.get("length")
        if not filename or length in (None, ""):
            return {"ok": False, "error": "invalid_arguments"}
        file_id = f"F{next(self._files):08d}"
        self.uploads[file_id] = {"filename": filename, "length": int(length), "content": None}
        return {"ok": True, "upload_url": f"{self.url}/upload/{file_id}", "file_id": file_id}

    def _m_files_completeUploadExternal(self, args):
        files = args.get("files")
        if not isinstance(files, list) or not files:
            return {"ok": False, "error": "invalid_arguments"}
        done = []
        for item in files:
            upload = self.uploads.get(item.get("id"))
            if upload is None or upload["content"] is None:
                return {"ok": False, "error": "file_not_found"}
            upload.update(
                title=item.get("title"),
                channel=args.get("channel_id"),
                thread_ts=args.get("thread_ts"),
                initial_comment=args.get("initial_comment"),
            )
            done.append({"id": item["id"], "name": upload["filename"], "title": item.get("title")})
            channel = args.get("channel_id")
            if channel:
                self.add_message(
                    channel, args.get("initial_comment") or "", user=None, bot=True, thread_ts=args.get("thread_ts")
                )
        return {"ok": True, "files": done}


def encode_form(fields: dict[str, Any]) -> str:
    return urllib.parse.urlencode({k: v for k, v in fields.items() if v is not None})
