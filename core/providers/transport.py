"""An httpx transport that sends requests through aiohttp.

httpx's own pool (httpcore) rescans every connection for every queued request whenever a
request starts or ends, so its CPU cost grows with the square of the calls in flight: at 50
concurrent councils (~200 open calls) it spent more CPU than the whole council took
(bench/bench_engine.py). The providers keep httpx's API (requests, streaming, errors); only the
wire goes through aiohttp's connector, whose pool does constant work per request. A process
that runs one council at a time (the terminal) keeps httpx's own pool: a dozen calls in flight
cost it nothing, and importing aiohttp would (core/providers/resolver.py decides).

Timeouts: httpx's connect/read/write/pool timeouts map to aiohttp's sock_connect/sock_read;
the callers' per-call deadlines are asyncio timeouts around the whole call, as before.
Decompression is left to httpx (aiohttp's is off) so a body is never decoded twice.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import aiohttp
import httpx

from core.providers.tls import trust_context

_CHUNK = 64 * 1024


class _ResponseStream(httpx.AsyncByteStream):
    def __init__(self, response: aiohttp.ClientResponse, request: httpx.Request):
        self._response = response
        self._request = request

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for chunk in self._response.content.iter_chunked(_CHUNK):
                yield chunk
        except (TimeoutError, aiohttp.ClientError) as exc:
            raise _translate(exc, self._request) from exc

    async def aclose(self) -> None:
        self._response.release()


def _translate(exc: BaseException, request: httpx.Request) -> httpx.TransportError:
    """aiohttp's errors as the httpx errors the providers already handle."""
    if isinstance(exc, aiohttp.ServerTimeoutError | asyncio.TimeoutError):
        if isinstance(exc, aiohttp.ConnectionTimeoutError):
            return httpx.ConnectTimeout(str(exc) or "connection timed out", request=request)
        return httpx.ReadTimeout(str(exc) or "read timed out", request=request)
    if isinstance(exc, aiohttp.ClientConnectorError):
        return httpx.ConnectError(str(exc), request=request)
    if isinstance(exc, aiohttp.ServerDisconnectedError | aiohttp.ClientPayloadError):
        return httpx.RemoteProtocolError(str(exc) or "server disconnected", request=request)
    return httpx.ReadError(str(exc) or type(exc).__name__, request=request)


class AiohttpTransport(httpx.AsyncBaseTransport):
    """`httpx.AsyncClient(transport=AiohttpTransport(max_connections=N))`."""

    def __init__(self, max_connections: int = 100, keepalive_s: float = 30.0):
        self._max_connections = max_connections
        self._keepalive_s = keepalive_s
        self._session: aiohttp.ClientSession | None = None

    def _get_session(self) -> aiohttp.ClientSession:
        # Created on first use: a ClientSession binds to the running event loop.
        if self._session is None or self._session.closed:
            # As httpx would: its trust store (core/providers/tls.py) and the HTTP(S)_PROXY /
            # NO_PROXY environment.
            tls = trust_context()
            connector = aiohttp.TCPConnector(limit=self._max_connections, keepalive_timeout=self._keepalive_s, ssl=tls)
            self._session = aiohttp.ClientSession(
                connector=connector,
                auto_decompress=False,
                trust_env=True,
                skip_auto_headers=("User-Agent", "Accept-Encoding"),
            )
        return self._session

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        timeouts = request.extensions.get("timeout", {})
        timeout = aiohttp.ClientTimeout(
            total=None, sock_connect=timeouts.get("connect"), sock_read=timeouts.get("read")
        )
        body = await request.aread()
        try:
            response = await self._get_session().request(
                request.method,
                str(request.url),
                headers=list(request.headers.multi_items()),
                data=body or None,
                allow_redirects=False,
                timeout=timeout,
                compress=None,
            )
        except (TimeoutError, aiohttp.ClientError) as exc:
            raise _translate(exc, request) from exc
        return httpx.Response(
            status_code=response.status,
            headers=[(k.decode("latin-1"), v.decode("latin-1")) for k, v in response.raw_headers],
            stream=_ResponseStream(response, request),
            request=request,
        )

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None
