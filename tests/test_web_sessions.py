"""Browser sign-ins with a record on the server (core/channels/sessions.py, bot/web/auth.py): the
old cookie is worth nothing after signing out, after `council web --revoke`, once expired, or once
Slack says an admin is one no more; a deep link survives the sign-in (same-site paths only); Slack
unreachable at sign-in is a page that says so; an over-long question is not echoed back whole."""

from __future__ import annotations

import asyncio
import logging
import os
import re
import sys
import time
from pathlib import Path

import httpx
import pytest

from core.service import CouncilService
from tests.conftest import make_settings
from tests.loopback_app import free_port
from tests.slack_fake import FakeSlack
from tests.test_web import JSON, council, csrf_of, sign_in
from tests.web_app import serve_web

ROOT = Path(__file__).resolve().parent.parent
HTML = {"Accept": "text/html"}


@pytest.fixture
async def slack():
    fake = FakeSlack()
    fake.register_app("web-client", "web-secret")
    fake.add_user("U1", "Ada")
    fake.add_user("U9", "Root", admin=True)
    await fake.start()
    yield fake
    await fake.close()


@pytest.fixture
async def signed(llm, tmp_path, slack):
    settings = make_settings(
        llm, tmp_path, SLACK_API_URL=slack.api_url, SLACK_CLIENT_ID="web-client", SLACK_CLIENT_SECRET="web-secret",
        SLACK_BOT_TOKEN="xoxb-test",
    )  # fmt: skip
    async with await CouncilService.open(settings) as service:
        await service.storage.save_result(council("0a1c000000000001", user="U1", question="Ada's own question"))
        await service.storage.save_result(council("0b0b000000000001", user="U2", channel="C2", question="Bob's"))
        async with serve_web(service) as url:
            yield service, url


def session_cookie(client: httpx.AsyncClient) -> str:
    return next(c.value for c in client.cookies.jar if c.name == "council_session")


async def replayed(url: str, cookie: str) -> httpx.Response:
    async with httpx.AsyncClient(base_url=url, cookies={"council_session": cookie}) as client:
        return await client.get("/", headers=JSON)


async def test_signing_out_ends_the_session_for_a_replayed_cookie_too(signed):
    _service, url = signed
    async with sign_in(url) as ada:
        cookie = session_cookie(ada)
        assert (await replayed(url, cookie)).status_code == 200
        token = csrf_of((await ada.get("/ask")).text)
        out = await ada.post("/signout", data={"csrf_token": token}, follow_redirects=False)
        assert out.status_code == 303
    again = await replayed(url, cookie)
    assert again.status_code == 401 and "Ada's own question" not in again.text


async def test_a_session_ends_when_unused_and_is_renewed_when_used(signed):
    service, url = signed
    async with sign_in(url) as ada:
        cookie = session_cookie(ada)
    lifetime = service.settings.web.session_hours * 3600
    rows = await service.storage.db.fetchall("SELECT token_hash, expires_at FROM web_sessions")
    assert len(rows) == 1 and rows[0]["expires_at"] == pytest.approx(time.time() + lifetime, abs=30)
    soon = time.time() + 120  # nearly over: a use renews it for the whole lifetime again
    await service.storage.db.execute("UPDATE web_sessions SET expires_at = ?", (soon,))
    assert (await replayed(url, cookie)).status_code == 200
    renewed = (await service.storage.db.fetchall("SELECT expires_at FROM web_sessions"))[0]["expires_at"]
    assert renewed == pytest.approx(time.time() + lifetime, abs=30)
    await service.storage.db.execute("UPDATE web_sessions SET expires_at = ?", (time.time() - 1,))
    assert (await replayed(url, cookie)).status_code == 401  # unused past its lifetime: over
    assert lifetime < 14 * 24 * 3600


async def test_an_admin_demoted_in_slack_loses_the_session_at_the_next_check(signed, slack):
    service, url = signed
    slack.oidc_person = ("U9", "T1")
    async with sign_in(url) as root:
        cookie = session_cookie(root)
    listed = (await replayed(url, cookie)).json()["councils"]
    assert sorted(c["question"] for c in listed) == ["Ada's own question", "Bob's"]  # an admin: all of T1
    slack.users["U9"]["is_admin"] = False  # demoted in Slack
    assert (await replayed(url, cookie)).status_code == 200  # until the check is due, the flag holds
    due = time.time() - service.settings.web.admin_check_minutes * 60 - 1
    await service.storage.db.execute("UPDATE web_sessions SET admin_checked_at = ?", (due,))
    assert (await replayed(url, cookie)).status_code == 401  # asked again: no longer an admin, session over
    assert [call.args.get("user") for call in slack.calls_to("users.info")] == ["U9", "U9"]


async def test_council_web_revoke_ends_a_users_sessions_from_the_command_line(signed, slack, tmp_path):
    service, url = signed
    async with sign_in(url) as ada:
        cookie = session_cookie(ada)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LLM_", "COUNCIL_", "DATABASE_URL"))}
    env.update(DATABASE_URL=service.settings.storage.database_url, PYTHONPATH=str(ROOT), COUNCIL_MODELS="alpha")
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot.cli", "web", "--revoke", "U1", env=env, cwd=tmp_path,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 0, err.decode()
    assert "Ended 1 browser sign-in (U1's)." in out.decode()
    assert (await replayed(url, cookie)).status_code == 401


async def test_a_deep_link_survives_the_sign_in_and_only_to_a_path_of_this_site(signed):
    _service, url = signed
    async with httpx.AsyncClient(base_url=url, timeout=20, follow_redirects=True) as ada:
        first = await ada.get("/c/0a1c000000000001", headers=HTML)
        assert str(first.url) == url + "/signin"
        landed = await ada.get("/signin/slack")
        assert str(landed.url) == url + "/c/0a1c000000000001" and "Ada&#39;s own question" in landed.text
    # Paths a browser would take to another site: whatever is asked, the sign-in lands on this one.
    for hostile in ("//evil.test/c/x", "/\\evil.test", "/%0d%0aSet-Cookie:x=1", "/c/0a1c000000000001?x=//evil.test"):
        async with httpx.AsyncClient(timeout=20) as ada:
            await loopback_only(ada, url + hostile)  # absolute: the request stays on loopback
            landed = await loopback_only(ada, url + "/signin/slack")
            assert landed.url.host == "127.0.0.1" and landed.url.port == httpx.URL(url).port, hostile
            assert landed.url.path in ("/", "/c/0a1c000000000001"), hostile
    for hostile_next in ("//evil.test/", "https://evil.test/", "/\\evil.test/"):
        from bot.web.auth import next_path

        assert next_path(hostile_next) is None


async def loopback_only(client: httpx.AsyncClient, url: str) -> httpx.Response:
    """GET `url` following redirects by hand, failing at once on one that leaves loopback (so that
    a bug never sends a test's request to another host)."""
    for _ in range(10):
        response = await client.get(url, headers=HTML)
        if not response.is_redirect:
            return response
        url = str(response.url.join(response.headers["location"]))
        assert httpx.URL(url).host == "127.0.0.1", f"redirected off loopback: {url}"
    raise AssertionError("too many redirects")


async def test_slack_unreachable_at_sign_in_is_a_page_that_says_so_and_one_log_line(llm, tmp_path, caplog):
    settings = make_settings(
        llm, tmp_path, SLACK_API_URL=f"http://127.0.0.1:{free_port()}/api/", SLACK_CLIENT_ID="web-client",
        SLACK_CLIENT_SECRET="web-secret",
    )  # fmt: skip
    async with await CouncilService.open(settings) as service, serve_web(service) as url:
        async with httpx.AsyncClient(base_url=url, timeout=20) as client:
            started = await client.get("/signin/slack")  # Slack's authorize page would be on the closed port
            state = re.search(r"state=([^&]+)", started.headers["location"])[1]
            with caplog.at_level(logging.WARNING):
                page = await client.get("/signin/slack/callback", params={"code": "oidc-code-1", "state": state})
    assert page.status_code == 502 and "Slack could not be reached" in page.text
    assert "Internal Server Error" not in page.text
    lines = [r for r in caplog.records if "could not be reached" in r.getMessage()]
    assert len(lines) == 1 and lines[0].exc_info is None and not lines[0].exc_text
    assert not [r for r in caplog.records if r.exc_info]


async def test_a_question_over_the_limit_is_refused_without_echoing_it_back_whole(service, llm, tmp_path):
    async with serve_web(service) as url, httpx.AsyncClient(base_url=url, timeout=60) as web:
        token = csrf_of((await web.get("/ask")).text)
        limit = service.settings.limits.max_question_chars
        huge = "why " * (limit // 2) + "END-OF-HUGE"
        page = await web.post("/ask", data={"question": huge, "csrf_token": token})
    assert page.status_code == 200 and "END-OF-HUGE" not in page.text
    assert len(page.text) < limit + 20_000
    assert f'maxlength="{limit}"' in page.text
