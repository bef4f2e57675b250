"""DISCORD_API_URL (a proxy, the tests' fake Discord) for one client, not the whole process.

discord.py builds every REST URL from the class attribute `Route.BASE` and opens the gateway at
`DiscordWebSocket.DEFAULT_GATEWAY`; changing those would move every client in the process. The
library's own seams are used instead:
- REST and the gateway socket go through the client's `HTTPClient` (`Client.http`, handed to the
  connection state in `Client._get_state`): a subclass rebases each route's URL and opens the
  gateway the API announced (`GET /gateway/bot`) in place of Discord's.
- Interaction responses and follow-ups go through a webhook adapter that discord.py takes from a
  context variable (`discord.webhook.async_.async_context`): set at login, it holds for the task
  that runs the client and every task it starts (the event handlers), and nowhere else.
"""

from __future__ import annotations

from typing import Any

import aiohttp
import discord
import yarl
from discord.gateway import DiscordWebSocket
from discord.http import HTTPClient, Route
from discord.webhook.async_ import AsyncWebhookAdapter, async_context


def rebase(url: str, api_base: str) -> str:
    """A URL discord.py built from `Route.BASE`, at `api_base` instead."""
    return api_base + url[len(Route.BASE) :] if url.startswith(Route.BASE) else url


class ApiBaseHTTPClient(HTTPClient):
    """One client's REST calls at `api_base`; its gateway socket at `gateway` once known."""

    def __init__(self, api_base: str, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.api_base = api_base.rstrip("/")
        self.gateway: yarl.URL | None = None

    @classmethod
    def replacing(cls, http: HTTPClient, api_base: str) -> ApiBaseHTTPClient:
        """The same client settings (proxy, clock, trace, rate-limit timeout) at another base."""
        return cls(
            api_base,
            http.loop,
            http.connector or None,
            proxy=http.proxy,
            proxy_auth=http.proxy_auth,
            unsync_clock=not http.use_clock,
            http_trace=http.http_trace,
            max_ratelimit_timeout=http.max_ratelimit_timeout,
        )

    async def request(self, route: Route, **kwargs: Any) -> Any:
        route.url = rebase(route.url, self.api_base)
        return await super().request(route, **kwargs)

    async def ws_connect(self, url: str, *, compress: int = 0) -> aiohttp.ClientWebSocketResponse:
        if self.gateway is not None and url.startswith(str(DiscordWebSocket.DEFAULT_GATEWAY)):
            url = str(self.gateway.with_query(yarl.URL(url).query))
        return await super().ws_connect(url, compress=compress)


class ApiBaseWebhookAdapter(AsyncWebhookAdapter):
    """Interaction responses and follow-ups at `api_base`."""

    def __init__(self, api_base: str) -> None:
        super().__init__()
        self.api_base = api_base.rstrip("/")

    async def request(self, route: Route, session: aiohttp.ClientSession, **kwargs: Any) -> Any:  # type: ignore[override]
        route.url = rebase(route.url, self.api_base)
        return await super().request(route, session, **kwargs)


class ApiBaseClient(discord.Client):
    """A discord.py client talking to `api_base` (None: Discord itself)."""

    def __init__(self, api_base: str | None, **options: Any) -> None:
        self._api_base = api_base  # read by _get_state, which Client.__init__ calls
        super().__init__(**options)

    def _get_state(self, **options: Any) -> Any:
        if self._api_base:
            self.http = ApiBaseHTTPClient.replacing(self.http, self._api_base)
        return super()._get_state(**options)

    async def login(self, token: str) -> None:
        if self._api_base:
            async_context.set(ApiBaseWebhookAdapter(self._api_base))
        await super().login(token)

    async def connect(self, *, reconnect: bool = True) -> None:
        if isinstance(self.http, ApiBaseHTTPClient) and self.http.gateway is None:
            _, url, _ = await self.http.get_bot_gateway()  # the gateway that API announces, not Discord's
            self.http.gateway = yarl.URL(url)
        await super().connect(reconnect=reconnect)
