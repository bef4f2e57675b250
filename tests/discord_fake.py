"""A local fake of Discord for adapter tests: REST (aiohttp) plus a gateway websocket.

It speaks enough of the real protocol for discord.py 2.x to log in, sync commands, connect
(HELLO / IDENTIFY / heartbeat ACK / READY / GUILD_CREATE), receive INTERACTION_CREATE and
MESSAGE_CREATE pushed by a test, and do everything the adapter does over REST. Every REST call
is recorded with its JSON payload (and uploaded files). Gateway frames are uncompressed JSON
text frames, which discord.py accepts even when it asked for zlib-stream.

`channel_limit=(5, 5.0)` enforces Discord's per-channel message limit (5 writes per 5 s per
channel: messages posted, edited, deleted, threads started from it): beyond it HTTP 429 with
`retry_after` in the body and Retry-After, as Discord answers. `channel_writes(id)` and
`peak_writes(id)` say what a channel received.

OAuth2 (Sign in with Discord): `register_app(client_id, secret)`; the authorize page at
`/oauth2/authorize` (the fake's root, as discord.com's) grants `oauth_person` (a user and their
servers) a code; `/api/v10/oauth2/token` trades it (HTTP Basic client credentials) for a bearer
token that `/users/@me` and `/users/@me/guilds` answer.
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import json
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from aiohttp import WSMsgType, web

from tests.loopback_app import serve_on_loopback

DISCORD_EPOCH_MS = 1420070400000
_counter = itertools.count(1)


@dataclass
class _Session:
    shard: tuple[int, int]
    ws: web.WebSocketResponse | None
    events: list[tuple[int, str, dict[str, Any]]] = field(default_factory=list)


def snowflake() -> int:
    ms = int(time.time() * 1000) - DISCORD_EPOCH_MS
    return (ms << 22) | (next(_counter) & 0x3FFFFF)


def now_iso() -> str:
    return datetime.now(UTC).isoformat()


ALL_PERMISSIONS = (1 << 50) - 1
MANAGE_GUILD = 1 << 5
BASIC_PERMISSIONS = (1 << 10) | (1 << 11) | (1 << 14) | (1 << 15) | (1 << 16) | (1 << 31) | (1 << 35) | (1 << 38)


@dataclass
class Call:
    method: str
    path: str  # without the /api/v10 prefix
    query: dict[str, str]
    json: Any
    files: list[tuple[str, str, bytes]]  # (field, filename, content)
    at: float
    status: int = 200


@dataclass
class Interaction:
    id: int
    token: str
    channel_id: int
    type: int
    pushed_at: float
    payload: dict[str, Any]
    original_id: int | None = None
    responded: bool = False
    responded_at: float | None = None
    followups: list[int] = field(default_factory=list)


class FakeDiscord:
    def __init__(self, channel_limit: tuple[int, float] | None = None) -> None:
        self.channel_limit = channel_limit  # (writes, per seconds) per channel, sliding window
        self._window: dict[int, list[float]] = {}
        self.app_id = snowflake()
        self.bot_id = self.app_id  # a bot user shares its application's id
        self.guild_id = snowflake()
        self.owner_id = snowflake()
        self.channel_id = snowflake()
        self.calls: list[Call] = []
        self.identifies: list[dict[str, Any]] = []
        self.channels: dict[int, dict[str, Any]] = {}
        self.messages: dict[int, dict[str, Any]] = {}
        self.interactions: dict[str, Interaction] = {}
        self.modals: list[dict[str, Any]] = []  # MODAL interaction responses (type 9), with the token answered
        self.global_commands: list[dict[str, Any]] = []
        self.guild_commands: dict[int, list[dict[str, Any]]] = {}
        self.heartbeats = 0
        self.gateway_close_codes: list[int | None] = []
        self.on_gateway_closed: Callable[[], None] | None = None  # called as a client's gateway connection ends
        # Files users attached, served like Discord's CDN (signed URLs: no token needed or sent).
        self.cdn_files: dict[str, bytes] = {}
        self.cdn_downloads: list[dict[str, str]] = []  # headers of each download
        self.ready = asyncio.Event()
        self.recommended_shards = 1  # what GET /gateway/bot advises
        # Each open gateway connection and the shard it identified as: (shard_id, num_shards).
        self._sockets: dict[web.WebSocketResponse, tuple[int, int]] = {}
        # Gateway sessions, as Discord keeps them for a RESUME: each one's shard, its connection
        # (None while disconnected) and the events dispatched to it, with their sequence numbers.
        self._sessions: dict[str, _Session] = {}
        self.resumes: list[dict[str, Any]] = []  # RESUME payloads received (op 6)
        self._seq = 0
        self._changed = asyncio.Condition()
        self._runner: web.AppRunner | None = None
        self.port = 0
        self.channels[self.channel_id] = {
            "id": str(self.channel_id),
            "type": 0,
            "guild_id": str(self.guild_id),
            "name": "general",
            "position": 0,
            "permission_overwrites": [],
            "nsfw": False,
            "parent_id": None,
            "topic": None,
            "last_message_id": None,
            "rate_limit_per_user": 0,
        }
        # OAuth2: the app's credentials, who signs in and their servers, the codes and tokens given.
        self.oauth_apps: dict[str, str] = {}
        self.oauth_person: dict[str, Any] = {
            "id": str(self.owner_id),
            "username": "ada",
            "guilds": [{"id": str(self.guild_id), "name": "Test server", "owner": False, "permissions": "0"}],
        }
        self._oauth_codes: dict[str, tuple[dict[str, Any], str, str]] = {}  # code -> person, client, redirect
        self.oauth_tokens: dict[str, dict[str, Any]] = {}
        self.other_channel_id = self.channel_id + 1  # a second text channel of the guild
        self.channels[self.other_channel_id] = {
            **self.channels[self.channel_id],
            "id": str(self.other_channel_id),
            "name": "random",
            "position": 1,
        }

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> FakeDiscord:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_get("/gateway", self._gateway)
        app.router.add_get("/oauth2/authorize", self._oauth_authorize)
        app.router.add_post("/api/v10/oauth2/token", self._oauth_token)
        app.router.add_route("*", "/api/v10/{tail:.*}", self._rest)
        app.router.add_get("/attachments/{channel}/{file}/{name}", self._cdn)
        self._runner, self.port = await serve_on_loopback(app)
        return self

    def register_app(self, client_id: str, client_secret: str) -> None:
        self.oauth_apps[client_id] = client_secret

    async def _oauth_authorize(self, request: web.Request) -> web.Response:
        query = request.query
        self.calls.append(Call("GET", "/oauth2/authorize", dict(query), None, [], time.monotonic()))
        client, redirect = query.get("client_id", ""), query.get("redirect_uri", "")
        if (
            client not in self.oauth_apps
            or not redirect
            or set(query.get("scope", "").split()) != {"identify", "guilds"}
        ):
            return web.Response(status=400, text="invalid client, redirect_uri or scope")
        code = f"discord-code-{snowflake()}"
        self._oauth_codes[code] = (dict(self.oauth_person), client, redirect)
        raise web.HTTPFound(redirect + "?" + urllib.parse.urlencode({"code": code, "state": query.get("state", "")}))

    async def _oauth_token(self, request: web.Request) -> web.Response:
        form = await request.post()
        self.calls.append(Call("POST", "/oauth2/token", {}, dict(form), [], time.monotonic()))
        client, _, secret = base64.b64decode(request.headers.get("Authorization", "Basic ")[6:]).decode().partition(":")
        grant = self._oauth_codes.pop(str(form.get("code")), None)
        if (
            self.oauth_apps.get(client) != secret
            or grant is None
            or grant[1] != client
            or grant[2] != form.get("redirect_uri")
        ):
            return web.json_response({"error": "invalid_grant"}, status=400)
        token = f"discord-user-token-{snowflake()}"
        self.oauth_tokens[token] = grant[0]
        return web.json_response({"access_token": token, "token_type": "Bearer", "scope": "identify guilds"})

    def _oauth_bearer(self, request: web.Request) -> dict[str, Any] | None:
        return self.oauth_tokens.get(request.headers.get("Authorization", "").removeprefix("Bearer "))

    def _oauth_answer(self, path: str, person: dict[str, Any]) -> web.Response:
        """A signed-in person's own calls (their bearer token, not the bot's)."""
        if path == "/users/@me":
            return web.json_response(
                {"id": person["id"], "username": person["username"], "global_name": person["username"]}
            )
        if path == "/users/@me/guilds":
            return web.json_response(person["guilds"])
        return web.json_response({"message": "401: Unauthorized", "code": 0}, status=401)

    async def close(self) -> None:
        for ws in list(self._sockets):
            await ws.close()
        if self._runner:
            await self._runner.cleanup()

    @property
    def api_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/api/v10"

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/gateway"

    # ------------------------------------------------------------------ payload builders

    def user(self, user_id: int, name: str = "alice", bot: bool = False) -> dict[str, Any]:
        return {
            "id": str(user_id),
            "username": name,
            "discriminator": "0",
            "global_name": name.title(),
            "avatar": None,
            "bot": bot,
            "public_flags": 0,
        }

    def bot_user(self) -> dict[str, Any]:
        return self.user(self.bot_id, "councilbot", bot=True) | {"verified": True, "mfa_enabled": False, "flags": 0}

    def member(
        self, user_id: int, name: str = "alice", permissions: int = BASIC_PERMISSIONS, bot: bool = False
    ) -> dict[str, Any]:
        return {
            "user": self.user(user_id, name, bot),
            "roles": [],
            "joined_at": now_iso(),
            "deaf": False,
            "mute": False,
            "nick": None,
            "avatar": None,
            "flags": 0,
            "pending": False,
            "permissions": str(permissions),
        }

    def guild_payload(self) -> dict[str, Any]:
        return {
            "id": str(self.guild_id),
            "name": "Test Guild",
            "icon": None,
            "splash": None,
            "discovery_splash": None,
            "owner_id": str(self.owner_id),
            "afk_channel_id": None,
            "afk_timeout": 300,
            "verification_level": 0,
            "default_message_notifications": 0,
            "explicit_content_filter": 0,
            "roles": [
                {
                    "id": str(self.guild_id),
                    "name": "@everyone",
                    "permissions": str(BASIC_PERMISSIONS),
                    "position": 0,
                    "color": 0,
                    "hoist": False,
                    "managed": False,
                    "mentionable": False,
                    "flags": 0,
                }
            ],
            "emojis": [],
            "stickers": [],
            "features": [],
            "mfa_level": 0,
            "application_id": None,
            "system_channel_id": None,
            "system_channel_flags": 0,
            "rules_channel_id": None,
            "vanity_url_code": None,
            "description": None,
            "banner": None,
            "premium_tier": 0,
            "premium_subscription_count": 0,
            "preferred_locale": "en-US",
            "public_updates_channel_id": None,
            "nsfw_level": 0,
            "premium_progress_bar_enabled": False,
            "joined_at": now_iso(),
            "large": False,
            "unavailable": False,
            "member_count": 2,
            "voice_states": [],
            "presences": [],
            "members": [
                {k: v for k, v in self.member(self.bot_id, "councilbot", bot=True).items() if k != "permissions"}
            ],
            "channels": [c for c in self.channels.values() if c["type"] in (0, 2, 4, 5, 15)],
            "threads": [c for c in self.channels.values() if c["type"] in (10, 11, 12)],
            "stage_instances": [],
            "guild_scheduled_events": [],
            "soundboard_sounds": [],
        }

    def _message(
        self,
        channel_id: int,
        author: dict[str, Any],
        data: dict[str, Any],
        *,
        type: int = 0,
        flags: int = 0,
        extra: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        message = {
            "id": str(snowflake()),
            "channel_id": str(channel_id),
            "guild_id": str(self.guild_id),
            "author": author,
            "content": data.get("content") or "",
            "timestamp": now_iso(),
            "edited_timestamp": None,
            "tts": False,
            "mention_everyone": False,
            "mentions": [],
            "mention_roles": [],
            "attachments": [],
            "embeds": data.get("embeds") or [],
            "pinned": False,
            "type": type,
            "flags": flags | int(data.get("flags") or 0),
            "components": data.get("components") or [],
        }
        message.update(extra or {})
        return message

    # ------------------------------------------------------------------ test-facing API

    async def wait_ready(self, timeout: float = 10) -> None:
        await asyncio.wait_for(self.ready.wait(), timeout)

    async def wait_for(self, predicate: Callable[[], Any], timeout: float = 10) -> Any:
        """Wait until predicate() is truthy (re-checked whenever a call is recorded)."""

        async def loop() -> Any:
            async with self._changed:
                while True:
                    value = predicate()
                    if value:
                        return value
                    await self._changed.wait()

        return await asyncio.wait_for(loop(), timeout)

    def calls_to(self, method: str, prefix: str = "") -> list[Call]:
        return [c for c in self.calls if c.method == method and c.path.startswith(prefix)]

    def channel_writes(self, channel_id: int) -> list[Call]:
        """Message writes (POST/PATCH/DELETE under /channels/{id}/messages) to a channel, 429s included."""
        prefix = f"/channels/{channel_id}/messages"
        return [c for c in self.calls if c.method in ("POST", "PATCH", "DELETE") and c.path.startswith(prefix)]

    def peak_writes(self, channel_id: int, window_s: float = 5.0) -> int:
        times = [c.at for c in self.channel_writes(channel_id)]
        return max((sum(1 for t in times[i:] if t - start < window_s) for i, start in enumerate(times)), default=0)

    def _over_limit(self, method: str, path: str, now: float) -> float:
        """0 when a write may go (it is counted), else the seconds until it may."""
        parts = path.strip("/").split("/")
        if self.channel_limit is None or method not in ("POST", "PATCH", "DELETE"):
            return 0.0
        if len(parts) < 3 or parts[0] != "channels" or parts[2] != "messages":
            return 0.0
        limit, per_s = self.channel_limit
        window = [t for t in self._window.get(int(parts[1]), []) if now - t < per_s]
        if len(window) >= limit:
            self._window[int(parts[1])] = window
            return window[0] + per_s - now
        self._window[int(parts[1])] = [*window, now]
        return 0.0

    def channel_messages(self, channel_id: int) -> list[dict[str, Any]]:
        return sorted(
            (m for m in self.messages.values() if int(m["channel_id"]) == channel_id and not m["flags"] & 64),
            key=lambda m: int(m["id"]),
        )

    def threads(self) -> list[dict[str, Any]]:
        return [c for c in self.channels.values() if c["type"] in (11, 12)]

    def attachment(self, name: str, data: bytes, content_type: str) -> dict[str, Any]:
        """An attachment object as messages and interactions carry it; its bytes are on the fake CDN."""
        file_id = snowflake()
        key = f"{self.channel_id}/{file_id}/{name}"
        self.cdn_files[key] = data
        url = f"http://127.0.0.1:{self.port}/attachments/{key}?ex=1&is=2&hm=signed"
        return {
            "id": str(file_id),
            "filename": name,
            "size": len(data),
            "url": url,
            "proxy_url": url,
            "content_type": content_type,
        }

    async def _cdn(self, request: web.Request) -> web.Response:
        self.cdn_downloads.append(dict(request.headers))
        info = request.match_info
        data = self.cdn_files.get(f"{info['channel']}/{info['file']}/{info['name']}")
        return web.Response(status=404) if data is None else web.Response(body=data)

    async def push_command(
        self,
        name: str,
        options: list[dict[str, Any]] | None = None,
        *,
        user_id: int | None = None,
        permissions: int = BASIC_PERMISSIONS,
        channel_id: int | None = None,
        attachments: list[dict[str, Any]] | None = None,
        roles: list[dict[str, Any]] | None = None,
    ) -> Interaction:
        """An application command (type 2) as INTERACTION_CREATE; `attachments` are the resolved
        objects of its attachment options (type 11, whose value is the attachment id), `roles` those
        of its role options (type 8, whose value is the role id)."""
        data = {
            "id": str(snowflake()),
            "name": name,
            "type": 1,
            "options": options or [],
            "guild_id": str(self.guild_id),
        }
        if attachments:
            data["resolved"] = {"attachments": {a["id"]: a for a in attachments}}
        if roles:
            data.setdefault("resolved", {})["roles"] = {r["id"]: r for r in roles}
        return await self._push_interaction(2, data, user_id=user_id, permissions=permissions, channel_id=channel_id)

    async def push_component(
        self,
        message_id: int,
        custom_id: str,
        *,
        user_id: int | None = None,
        permissions: int = BASIC_PERMISSIONS,
        channel_id: int | None = None,
    ) -> Interaction:
        """A button click (type 3) on a stored message (`channel_id`: as if clicked elsewhere, like
        a custom id replayed from another channel)."""
        message = self.messages[message_id]
        data = {"custom_id": custom_id, "component_type": 2}
        channel_id = channel_id or int(message["channel_id"])
        return await self._push_interaction(
            3, data, user_id=user_id, permissions=permissions, channel_id=channel_id, message=message
        )

    async def push_modal_submit(
        self,
        modal: dict[str, Any],
        values: dict[str, str],
        *,
        user_id: int | None = None,
        channel_id: int | None = None,
        permissions: int = BASIC_PERMISSIONS,
    ) -> Interaction:
        """A MODAL_SUBMIT (type 5) of a modal the app showed: action rows of text inputs (type 4)."""
        data = {
            "custom_id": modal["custom_id"],
            "components": [
                {"type": 1, "components": [{"type": 4, "custom_id": key, "value": value}]}
                for key, value in values.items()
            ],
        }
        return await self._push_interaction(5, data, user_id=user_id, permissions=permissions, channel_id=channel_id)

    async def _push_interaction(
        self,
        type: int,
        data: dict[str, Any],
        *,
        user_id: int | None,
        permissions: int,
        channel_id: int | None,
        message: dict[str, Any] | None = None,
    ) -> Interaction:
        user_id = user_id or 4242
        channel_id = channel_id or self.channel_id
        interaction_id = snowflake()
        token = f"tok-{interaction_id}"
        payload = {
            "id": str(interaction_id),
            "application_id": str(self.app_id),
            "type": type,
            "data": data,
            "guild_id": str(self.guild_id),
            "channel_id": str(channel_id),
            "channel": self.channels[channel_id],
            "member": self.member(user_id, permissions=permissions),
            "token": token,
            "version": 1,
            "app_permissions": str(BASIC_PERMISSIONS),
            "locale": "en-US",
            "guild_locale": "en-US",
            "entitlements": [],
            "authorizing_integration_owners": {"0": str(self.guild_id)},
            "context": 0,
            "attachment_size_limit": 10 * 1024 * 1024,
            "guild": {"id": str(self.guild_id), "locale": "en-US", "features": []},
        }
        if message is not None:
            payload["message"] = message
        record = Interaction(interaction_id, token, channel_id, type, time.monotonic(), payload)
        self.interactions[token] = record
        await self.dispatch("INTERACTION_CREATE", payload)
        return record

    async def push_message(
        self,
        content: str,
        *,
        user_id: int = 4242,
        name: str = "alice",
        channel_id: int | None = None,
        mention_bot: bool = True,
        bot: bool = False,
        reply_to: int | None = None,
        attachments: list[dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        """A user's message (MESSAGE_CREATE), stored in the channel like Discord would."""
        channel_id = channel_id or self.channel_id
        author = self.user(user_id, name, bot)
        extra: dict[str, Any] = {"member": {k: v for k, v in self.member(user_id, name).items() if k != "user"}}
        mentions = [self.user(self.bot_id, "councilbot", True)] if mention_bot else []
        type = 0
        if reply_to is not None:
            ref = self.messages[reply_to]
            type = 19
            extra["message_reference"] = {
                "message_id": ref["id"],
                "channel_id": ref["channel_id"],
                "guild_id": str(self.guild_id),
                "type": 0,
            }
            extra["referenced_message"] = ref
            if ref["author"]["id"] == str(self.bot_id) and not mention_bot:
                mentions = [ref["author"]]  # replies ping the author by default
        extra["mentions"] = mentions
        message = self._message(channel_id, author, {"content": content}, type=type, extra=extra)
        if attachments:
            message["attachments"] = attachments
        self.messages[int(message["id"])] = message
        await self.dispatch("MESSAGE_CREATE", message)
        return message

    # ------------------------------------------------------------------ gateway

    def shard_of(self, guild_id: int, num_shards: int) -> int:
        """Discord's routing: a guild's events go to shard (guild_id >> 22) % num_shards."""
        return (guild_id >> 22) % num_shards

    async def dispatch(self, event: str, data: dict[str, Any]) -> None:
        """To every session, except that a guild's events go only to the shard that guild is on;
        a session whose connection dropped keeps them for its RESUME, as Discord does."""
        guild = data.get("guild_id") or (data.get("id") if event == "GUILD_CREATE" else None)
        for session in list(self._sessions.values()):
            shard, count = session.shard
            if guild is None or self.shard_of(int(guild), count) == shard:
                self._seq += 1
                session.events.append((self._seq, event, data))
                if session.ws is not None and not session.ws.closed:
                    await self._frame(session.ws, self._seq, event, data)

    async def drop_gateway(self, code: int = 4000) -> None:
        """Every gateway connection closed from Discord's side with `code` (4000, unknown error:
        resumable); the sessions stay, so the bot may RESUME them and get what it missed."""
        for ws in list(self._sockets):
            await ws.close(code=code)

    async def _send(self, ws: web.WebSocketResponse, event: str, data: dict[str, Any]) -> None:
        self._seq += 1
        await self._frame(ws, self._seq, event, data)

    @staticmethod
    async def _frame(ws: web.WebSocketResponse, seq: int, event: str, data: dict[str, Any]) -> None:
        await ws.send_str(json.dumps({"op": 0, "t": event, "s": seq, "d": data}))

    async def _gateway(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        self.gateway_query = dict(request.query)
        await ws.send_str(json.dumps({"op": 10, "d": {"heartbeat_interval": 41250}, "s": None, "t": None}))
        async for msg in ws:
            if msg.type is not WSMsgType.TEXT:
                continue
            frame = json.loads(msg.data)
            op = frame.get("op")
            if op == 1:
                self.heartbeats += 1
                await ws.send_str(json.dumps({"op": 11, "d": None, "s": None, "t": None}))
            elif op == 2:
                self.identifies.append(frame["d"])
                shard, count = frame["d"].get("shard") or (0, 1)
                self._sockets = {w: v for w, v in self._sockets.items() if not w.closed}
                self._sockets[ws] = (shard, count)
                ours = self.shard_of(self.guild_id, count) == shard
                session = f"session-{snowflake()}"
                self._sessions[session] = _Session((shard, count), ws)
                ready = {
                    "v": 10,
                    "user": self.bot_user(),
                    "session_id": session,
                    "resume_gateway_url": self.ws_url,
                    "guilds": [{"id": str(self.guild_id), "unavailable": True}] if ours else [],
                    "private_channels": [],
                    "relationships": [],
                    "application": {"id": str(self.app_id), "flags": 1 << 19},
                    "shard": [shard, count],
                }
                await self._send(ws, "READY", ready)
                if ours:
                    await self._send(ws, "GUILD_CREATE", self.guild_payload())
                self.ready.set()
            elif op == 6:
                await self._resume(ws, frame["d"])
        self._sockets.pop(ws, None)
        for session in self._sessions.values():
            if session.ws is ws:
                session.ws = None
        self.gateway_close_codes.append(ws.close_code)  # 1000: the client closed it; 1006: it went away
        if self.on_gateway_closed is not None:
            self.on_gateway_closed()
        return ws

    async def _resume(self, ws: web.WebSocketResponse, resume: dict[str, Any]) -> None:
        """RESUME: the events the session missed after `seq`, then RESUMED; an unknown session
        is told to IDENTIFY again (op 9, not resumable)."""
        self.resumes.append(resume)
        session = self._sessions.get(resume.get("session_id", ""))
        if session is None:
            await ws.send_str(json.dumps({"op": 9, "d": False, "s": None, "t": None}))
            return
        session.ws = ws
        self._sockets[ws] = session.shard
        for seq, event, data in session.events:
            if seq > (resume.get("seq") or 0):
                await self._frame(ws, seq, event, data)
        await self._send(ws, "RESUMED", {})

    # ------------------------------------------------------------------ REST

    async def _rest(self, request: web.Request) -> web.StreamResponse:
        path = "/" + request.match_info["tail"]
        person = self._oauth_bearer(request)
        if person is not None:
            self.calls.append(Call(request.method, path, dict(request.query), None, [], time.monotonic()))
            return self._oauth_answer(path, person)
        payload: Any = None
        files: list[tuple[str, str, bytes]] = []
        if request.content_type == "application/json":
            payload = await request.json()
        elif request.content_type.startswith("multipart/"):
            reader = await request.multipart()
            async for part in reader:  # type: ignore[union-attr]
                body = await part.read()  # type: ignore[union-attr]
                if part.name == "payload_json":  # type: ignore[union-attr]
                    payload = json.loads(body)
                else:
                    files.append((part.name or "", part.filename or "", bytes(body)))  # type: ignore[union-attr]
        call = Call(request.method, path, dict(request.query), payload, files, time.monotonic())
        self.calls.append(call)
        wait = self._over_limit(request.method, path, call.at)
        if wait > 0:
            call.status = 429
            body = {"message": "You are being rate limited.", "retry_after": round(wait, 3), "global": False}
            # discord.py treats a 429 without Via as a Cloudflare ban; Discord's own carry it.
            headers = {"Retry-After": str(max(1, round(wait))), "Via": "1.1 google", "X-RateLimit-Scope": "shared"}
            return web.Response(
                body=json.dumps(body).encode(), status=429, content_type="application/json", headers=headers
            )
        try:
            status, body = await self._handle(request.method, path.rstrip("/") or "/", payload, files, request)
        except KeyError as exc:
            status, body = 404, {"message": f"Unknown {exc}", "code": 10003}
        call.status = status
        async with self._changed:
            self._changed.notify_all()
        if status == 204:
            return web.Response(status=204)
        # Discord sends exactly "application/json" (discord.py compares the header verbatim).
        return web.Response(body=json.dumps(body).encode(), status=status, content_type="application/json")

    async def _handle(self, method: str, path: str, payload: Any, files: list, request: web.Request) -> tuple[int, Any]:
        parts = path.strip("/").split("/")
        if path == "/gateway/bot":
            return 200, {
                "url": self.ws_url,
                "shards": self.recommended_shards,
                "session_start_limit": {"total": 1000, "remaining": 999, "reset_after": 0, "max_concurrency": 1},
            }
        if path == "/gateway":
            return 200, {"url": self.ws_url}
        if path == "/users/@me":
            return 200, self.bot_user()
        if path == "/users/@me/channels" and method == "POST":  # open a DM with a user
            recipient = int(payload["recipient_id"])
            dm_id = recipient + 7  # one stable DM channel per user
            self.channels.setdefault(
                dm_id,
                {"id": str(dm_id), "type": 1, "last_message_id": None, "recipients": [self.user(recipient, "user")]},
            )
            return 200, self.channels[dm_id]
        if path in ("/oauth2/applications/@me", "/applications/@me"):
            return 200, {
                "id": str(self.app_id),
                "name": "Council",
                "icon": None,
                "description": "",
                "rpc_origins": [],
                "bot_public": True,
                "bot_require_code_grant": False,
                "owner": self.user(self.owner_id, "owner"),
                "summary": "",
                "verify_key": "00",
                "team": None,
                "flags": 1 << 19,
                "bot": self.bot_user(),
            }
        if parts[0] == "applications" and parts[-1] == "commands":
            guild = int(parts[3]) if len(parts) == 5 and parts[2] == "guilds" else None
            if method == "PUT":
                commands = [self._command(c, guild) for c in payload]
                if guild:
                    self.guild_commands[guild] = commands
                else:
                    self.global_commands = commands
                return 200, commands
            return 200, self.guild_commands.get(guild, []) if guild else self.global_commands
        if parts[0] == "interactions":
            return self._callback(int(parts[1]), parts[2], payload, files)
        if parts[0] == "webhooks":
            return self._webhook(method, parts[2], parts[3:], payload, files)
        if parts[0] == "channels":
            return await self._channels(method, int(parts[1]), parts[2:], payload, files, request)
        return 404, {"message": "404: Not Found", "code": 0}

    def _command(self, data: dict[str, Any], guild: int | None) -> dict[str, Any]:
        command = {
            "id": str(snowflake()),
            "application_id": str(self.app_id),
            "version": str(snowflake()),
            "type": 1,
            "description": "",
            "options": [],
            "default_member_permissions": None,
            "dm_permission": True,
            "nsfw": False,
        } | data
        if guild:
            command["guild_id"] = str(guild)
        return command

    def _with_files(self, data: dict[str, Any], files: list) -> dict[str, Any]:
        if files:
            data = dict(data)
            data["attachments"] = [
                {
                    "id": str(snowflake()),
                    "filename": fn,
                    "size": len(content),
                    "url": f"http://127.0.0.1/{fn}",
                    "proxy_url": f"http://127.0.0.1/{fn}",
                    "content_type": "text/markdown",
                }
                for _, fn, content in files
            ]
        return data

    def _store(self, message: dict[str, Any], files: list) -> dict[str, Any]:
        if files:
            message["attachments"] = self._with_files({}, files)["attachments"]
        self.messages[int(message["id"])] = message
        return message

    def _callback(self, interaction_id: int, token: str, payload: dict[str, Any], files: list) -> tuple[int, Any]:
        record = self.interactions[token]
        if record.id != interaction_id:
            return 404, {"message": "Unknown interaction", "code": 10062}
        if record.responded:
            return 400, {"message": "Interaction has already been acknowledged.", "code": 40060}
        record.responded = True
        record.responded_at = time.monotonic()
        kind = payload["type"]
        data = payload.get("data") or {}
        message = None
        if kind in (4, 5):
            msg_type = 20 if record.type == 2 else 0
            extra = {
                "webhook_id": str(self.app_id),
                "application_id": str(self.app_id),
                "interaction_metadata": {
                    "id": str(record.id),
                    "type": record.type,
                    "user": record.payload["member"]["user"],
                    "authorizing_integration_owners": {},
                },
            }
            message = self._message(
                record.channel_id,
                self.bot_user(),
                data if kind == 4 else {},
                type=msg_type,
                flags=(128 if kind == 5 else 0) | int(data.get("flags") or 0),
                extra=extra,
            )
            self._store(message, files)
            record.original_id = int(message["id"])
        elif kind == 9:  # MODAL: Discord shows it to the user; a submit comes back as a type 5 interaction
            self.modals.append({**data, "token": token})
        elif kind == 7 and "message" in record.payload:
            message = self.messages[int(record.payload["message"]["id"])]
            message.update({k: v for k, v in data.items() if k in ("content", "embeds", "components")})
        response = {
            "interaction": {
                "id": str(record.id),
                "type": record.type,
                "response_message_id": message and message["id"],
                "response_message_loading": kind == 5,
                "response_message_ephemeral": bool(message and message["flags"] & 64),
            }
        }
        if message is not None:
            response["resource"] = {"type": kind, "message": message}
        return 200, response

    def _webhook(self, method: str, token: str, rest: list[str], payload: Any, files: list) -> tuple[int, Any]:
        record = self.interactions[token]
        if not rest:  # followup
            original = self.messages.get(record.original_id or 0)
            if original is not None and original["flags"] & 128 and not record.followups:
                # The first followup after a deferral replaces the "thinking…" message.
                original.update(self._edit_fields(payload))
                original["flags"] &= ~128
                record.followups.append(int(original["id"]))
                return 200, self._store(original, files)
            message = self._message(
                record.channel_id,
                self.bot_user(),
                payload or {},
                extra={"webhook_id": str(self.app_id), "application_id": str(self.app_id)},
            )
            record.followups.append(int(message["id"]))
            return 200, self._store(message, files)
        target = rest[1]
        message_id = record.original_id if target == "@original" else int(target)
        if message_id is None or message_id not in self.messages:
            return 404, {"message": "Unknown Message", "code": 10008}
        message = self.messages[message_id]
        if method == "DELETE":
            del self.messages[message_id]
            return 204, None
        if method == "PATCH":
            message.update(self._edit_fields(payload))
            message["flags"] &= ~128
            message["edited_timestamp"] = now_iso()
            self._store(message, files)
        return 200, message

    @staticmethod
    def _edit_fields(payload: Any) -> dict[str, Any]:
        return {
            k: v for k, v in (payload or {}).items() if k in ("content", "embeds", "components", "allowed_mentions")
        }

    async def _channels(
        self, method: str, channel_id: int, rest: list[str], payload: Any, files: list, request: web.Request
    ) -> tuple[int, Any]:
        channel = self.channels[channel_id]
        if not rest:
            return 200, channel
        if rest == ["messages"] and method == "POST":
            extra: dict[str, Any] = {}
            type = 0
            if payload.get("message_reference"):
                ref = self.messages[int(payload["message_reference"]["message_id"])]
                extra = {
                    "message_reference": payload["message_reference"] | {"channel_id": ref["channel_id"]},
                    "referenced_message": ref,
                }
                type = 19
            message = self._message(channel_id, self.bot_user(), payload, type=type, extra=extra)
            self._store(message, files)
            await self.dispatch("MESSAGE_CREATE", message)
            return 200, message
        if rest == ["messages"] and method == "GET":
            limit = int(request.query.get("limit", 50))
            found = [m for m in self.channel_messages(channel_id)]
            if "before" in request.query:
                found = [m for m in found if int(m["id"]) < int(request.query["before"])]
            if "after" in request.query:
                found = [m for m in found if int(m["id"]) > int(request.query["after"])]
                return 200, found[:limit][::-1]
            return 200, found[::-1][:limit]
        if len(rest) == 2 and rest[0] == "messages":
            message = self.messages[int(rest[1])]
            if int(message["channel_id"]) != channel_id:
                raise KeyError("message")
            if method == "PATCH":
                message.update(self._edit_fields(payload))
                message["edited_timestamp"] = now_iso()
                self._store(message, files)
            return 200, message
        if rest == ["threads"] or (len(rest) == 3 and rest[2] == "threads"):
            starter = self.messages[int(rest[1])] if len(rest) == 3 else None
            thread_id = int(starter["id"]) if starter else snowflake()  # Discord: thread id == message id
            thread = {
                "id": str(thread_id),
                "type": payload.get("type", 11),
                "guild_id": str(self.guild_id),
                "parent_id": str(channel_id),
                "owner_id": str(self.bot_id),
                "name": payload["name"],
                "last_message_id": None,
                "rate_limit_per_user": 0,
                "message_count": 0,
                "member_count": 1,
                "total_message_sent": 0,
                "flags": 0,
                "applied_tags": [],
                "thread_metadata": {
                    "archived": False,
                    "auto_archive_duration": payload.get("auto_archive_duration", 1440),
                    "archive_timestamp": now_iso(),
                    "locked": False,
                    "create_timestamp": now_iso(),
                },
            }
            self.channels[thread_id] = thread
            if starter is not None:
                starter["thread"] = thread
                marker = self._message(
                    thread_id,
                    starter["author"],
                    {},
                    type=21,
                    extra={
                        "message_reference": {
                            "message_id": starter["id"],
                            "channel_id": str(channel_id),
                            "guild_id": str(self.guild_id),
                        }
                    },
                )
                self.messages[int(marker["id"])] = marker
            await self.dispatch("THREAD_CREATE", thread | {"newly_created": True})
            return 201, thread
        if rest == ["typing"]:
            return 204, None
        return 404, {"message": "404: Not Found", "code": 0}
