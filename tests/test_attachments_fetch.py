"""Downloading attachments: only from the platform's hosts, with the token, a deadline and a byte cap."""

from __future__ import annotations

import time

import pytest
from pydantic import SecretStr

from core.reading.attachments import (
    DISCORD_FILE_HOSTS,
    SLACK_FILE_HOSTS,
    AttachmentFetcher,
    AttachmentRefused,
    allowed_file_hosts,
)
from tests.file_host_fake import FileHostFake

TOKEN = "xoxb-test-token-never-shown"
LOOPBACK = ["127.0.0.1"]


async def refused(fetcher: AttachmentFetcher, url: str, *, max_bytes: int = 1024 * 1024) -> str:
    with pytest.raises(AttachmentRefused) as caught:
        await fetcher.fetch(url, name="report.pdf", max_bytes=max_bytes)
    message = str(caught.value)
    assert message.startswith("report.pdf: ") and "\n" not in message
    assert TOKEN not in message and "127.0.0.1" not in message and "localhost" not in message
    return caught.value.reason


def test_allowed_hosts_add_the_api_url_host():
    assert allowed_file_hosts(SLACK_FILE_HOSTS) == frozenset({"files.slack.com"})
    assert allowed_file_hosts(SLACK_FILE_HOSTS, "http://127.0.0.1:9000/api/") == {"files.slack.com", "127.0.0.1"}
    assert allowed_file_hosts(DISCORD_FILE_HOSTS, None) == {"cdn.discordapp.com", "media.discordapp.net"}


async def test_fetch_sends_the_bearer_token_to_the_allowed_host():
    async with FileHostFake(files={"a.txt": b"hello"}, token=TOKEN) as host:
        async with AttachmentFetcher(allowed_hosts=LOOPBACK, bearer_token=SecretStr(TOKEN)) as fetcher:
            assert await fetcher.fetch(host.url("/files/a.txt"), name="a.txt", max_bytes=100) == b"hello"
    assert host.seen_authorization == [f"Bearer {TOKEN}"]


async def test_without_a_token_no_authorization_header_is_sent():
    async with FileHostFake(files={"a.txt": b"hello"}) as host:
        async with AttachmentFetcher(allowed_hosts=LOOPBACK) as fetcher:
            await fetcher.fetch(host.url("/files/a.txt"), name="a.txt", max_bytes=100)
    assert host.seen_authorization == [None]


async def test_other_hosts_and_schemes_are_never_contacted():
    async with FileHostFake(files={"a.txt": b"hello"}) as host:
        async with AttachmentFetcher(allowed_hosts=LOOPBACK, bearer_token=SecretStr(TOKEN)) as fetcher:
            for url in (host.url("/files/a.txt", host="localhost"), "file:///etc/passwd", "ftp://127.0.0.1/x"):
                assert "not stored on the platform's file servers" in await refused(fetcher, url)
    assert host.seen_authorization == []


async def test_redirects_are_followed_only_within_allowed_hosts():
    async with FileHostFake(files={"a.txt": b"hello"}, token=TOKEN) as host:
        async with AttachmentFetcher(allowed_hosts=LOOPBACK, bearer_token=SecretStr(TOKEN)) as fetcher:
            same_host = host.url("/redirect/" + host.url("/files/a.txt"))
            assert await fetcher.fetch(same_host, name="a.txt", max_bytes=100) == b"hello"
            away = host.url("/redirect/" + host.url("/files/a.txt", host="localhost"))
            assert "redirected away" in await refused(fetcher, away)
            assert await refused(fetcher, host.url("/loop")) == "could not be downloaded (too many redirects)"
    # The token went to the allowed host once (the followed redirect) and never to localhost.
    assert host.seen_authorization == [f"Bearer {TOKEN}"]


async def test_content_length_over_the_cap_is_refused_before_reading():
    async with FileHostFake(files={"big.bin": b"x" * 5000}) as host:
        async with AttachmentFetcher(allowed_hosts=LOOPBACK) as fetcher:
            reason = await refused(fetcher, host.url("/files/big.bin"), max_bytes=4096)
    assert reason == "is larger than the 4 KB limit per file"


async def test_an_endless_body_is_aborted_at_the_cap():
    async with FileHostFake() as host:
        async with AttachmentFetcher(allowed_hosts=LOOPBACK, timeout_s=20) as fetcher:
            started = time.monotonic()
            reason = await refused(fetcher, host.url("/endless"), max_bytes=1024 * 1024)
    assert reason == "is larger than the 1 MB limit per file"
    assert time.monotonic() - started < 10


async def test_a_slow_drip_hits_the_deadline():
    async with FileHostFake() as host:
        async with AttachmentFetcher(allowed_hosts=LOOPBACK, timeout_s=0.5) as fetcher:
            started = time.monotonic()
            reason = await refused(fetcher, host.url("/slow"))
    assert reason == "could not be downloaded within 0.5 s"
    assert time.monotonic() - started < 3


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/files/missing.pdf", "could not be downloaded (HTTP 404: it no longer exists)"),
        ("/status/500", "could not be downloaded (HTTP 500)"),
        ("/login-page", "the file server sent a web page instead; is the bot allowed to read files?"),
    ],
)
async def test_http_failures_are_named(path, expected):
    async with FileHostFake() as host:
        async with AttachmentFetcher(allowed_hosts=LOOPBACK) as fetcher:
            assert expected in await refused(fetcher, host.url(path))


async def test_a_wrong_token_is_no_access():
    async with FileHostFake(files={"a.txt": b"x"}, token="the-right-one") as host:
        async with AttachmentFetcher(allowed_hosts=LOOPBACK, bearer_token=SecretStr(TOKEN)) as fetcher:
            reason = await refused(fetcher, host.url("/files/a.txt"))
    assert reason == "could not be downloaded (HTTP 403: the bot has no access to it)"


async def test_a_closed_server_is_a_connection_failure():
    async with FileHostFake() as host:
        url = host.url("/files/a.txt")
    async with AttachmentFetcher(allowed_hosts=LOOPBACK, timeout_s=5) as fetcher:
        assert await refused(fetcher, url) == "could not be downloaded (connection to the file server failed)"
