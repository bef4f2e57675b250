"""Downloading attached files from the platform's own file hosts, and nowhere else.

The adapter builds one `AttachmentFetcher` per platform with the hosts that serve its files
(`SLACK_FILE_HOSTS` / `DISCORD_FILE_HOSTS`, plus the host of `SLACK_API_URL` / `DISCORD_API_URL`
when set, see `allowed_file_hosts`) and the bot token that the host wants (Slack: the bot token as
a Bearer header; Discord's CDN URLs are signed and need none). Every download:

- goes only to an allowed host over http(s); a redirect is followed only to another allowed host;
- has one deadline for the whole transfer (`timeout_s`), so a slow drip cannot hold a council;
- is refused before reading when Content-Length exceeds the cap, and aborted while streaming
  as soon as the bytes received exceed it (Content-Length may lie or be absent);
- fails with `AttachmentRefused` whose reason names neither the URL nor the token.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from pathlib import PurePosixPath
from types import TracebackType
from urllib.parse import urljoin, urlsplit

import httpx
from pydantic import SecretStr

from core.reading.attachments.errors import AttachmentRefused
from core.reading.attachments.limits import format_bytes

log = logging.getLogger(__name__)

SLACK_FILE_HOSTS = ("files.slack.com",)
DISCORD_FILE_HOSTS = ("cdn.discordapp.com", "media.discordapp.net")

_REDIRECTS = {301, 302, 303, 307, 308}
_NOT_FROM_PLATFORM = "is not stored on the platform's file servers, so it was not downloaded"


def allowed_file_hosts(platform_hosts: Iterable[str], api_url: str | None = None) -> frozenset[str]:
    """The hosts files may come from: the platform's file hosts plus the host of its API URL override."""
    hosts = {host.lower() for host in platform_hosts}
    if api_url:
        api_host = urlsplit(api_url).hostname
        if api_host:
            hosts.add(api_host.lower())
    return frozenset(hosts)


class AttachmentFetcher:
    """Streams files from allowed hosts with a byte cap and a deadline. Use as `async with` or call `aclose()`."""

    def __init__(
        self,
        *,
        allowed_hosts: Iterable[str],
        bearer_token: SecretStr | None = None,
        timeout_s: float = 30.0,
        max_redirects: int = 3,
        client: httpx.AsyncClient | None = None,
    ):
        self.allowed_hosts = frozenset(host.lower() for host in allowed_hosts)
        self._token = bearer_token
        self.timeout_s = timeout_s
        self.max_redirects = max_redirects
        self._owns_client = client is None
        self._client = client or httpx.AsyncClient(timeout=httpx.Timeout(timeout_s), follow_redirects=False)

    async def __aenter__(self) -> AttachmentFetcher:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        if self._owns_client:
            await self._client.aclose()

    def is_allowed(self, url: str) -> bool:
        parts = urlsplit(url)
        return parts.scheme in ("http", "https") and (parts.hostname or "").lower() in self.allowed_hosts

    async def fetch(self, url: str, *, name: str, max_bytes: int) -> bytes:
        """The file's bytes, or `AttachmentRefused` (host not allowed, too large, too slow, HTTP error)."""
        if not self.is_allowed(url):
            raise AttachmentRefused(name, _NOT_FROM_PLATFORM)
        try:
            async with asyncio.timeout(self.timeout_s):
                return await self._follow(url, name=name, max_bytes=max_bytes)
        except TimeoutError as exc:
            raise AttachmentRefused(name, f"could not be downloaded within {self.timeout_s:g} s") from exc
        except httpx.TimeoutException as exc:
            raise AttachmentRefused(name, f"could not be downloaded within {self.timeout_s:g} s") from exc
        except httpx.HTTPError as exc:
            log.info("download of %r failed: %s", name, type(exc).__name__)
            raise AttachmentRefused(name, "could not be downloaded (connection to the file server failed)") from exc

    async def _follow(self, url: str, *, name: str, max_bytes: int) -> bytes:
        for _ in range(self.max_redirects + 1):
            async with self._client.stream("GET", url, headers=self._headers(), follow_redirects=False) as response:
                if response.status_code in _REDIRECTS and "location" in response.headers:
                    url = urljoin(url, response.headers["location"])
                    if not self.is_allowed(url):
                        raise AttachmentRefused(name, "was redirected away from the platform's file servers")
                    continue
                _check_response(response, name=name, max_bytes=max_bytes)
                return await _read_capped(response, name=name, max_bytes=max_bytes)
        raise AttachmentRefused(name, "could not be downloaded (too many redirects)")

    def _headers(self) -> dict[str, str]:
        if self._token is None:
            return {}
        return {"Authorization": f"Bearer {self._token.get_secret_value()}"}


def _check_response(response: httpx.Response, *, name: str, max_bytes: int) -> None:
    status = response.status_code
    if status in (401, 403):
        raise AttachmentRefused(name, f"could not be downloaded (HTTP {status}: the bot has no access to it)")
    if status == 404:
        raise AttachmentRefused(name, "could not be downloaded (HTTP 404: it no longer exists)")
    if not 200 <= status < 300:
        raise AttachmentRefused(name, f"could not be downloaded (HTTP {status})")
    # Slack answers a request without the files:read scope with its sign-in page and status 200.
    content_type = response.headers.get("content-type", "").split(";")[0].strip().lower()
    if content_type == "text/html" and PurePosixPath(name.lower()).suffix not in (".html", ".htm"):
        raise AttachmentRefused(
            name, "could not be downloaded (the file server sent a web page instead; is the bot allowed to read files?)"
        )
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > max_bytes:
        raise AttachmentRefused(name, f"is larger than the {format_bytes(max_bytes)} limit per file")


async def _read_capped(response: httpx.Response, *, name: str, max_bytes: int) -> bytes:
    received = bytearray()
    async for chunk in response.aiter_bytes():
        received.extend(chunk)
        if len(received) > max_bytes:
            # Leaving the `stream` context closes the connection: the rest is never read.
            raise AttachmentRefused(name, f"is larger than the {format_bytes(max_bytes)} limit per file")
    return bytes(received)
