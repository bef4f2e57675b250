"""Slack OAuth distribution against the fake Slack: the install flow through bolt's OAuth flow and
our installation store, two workspaces each answered with its own token, token rotation, uninstall."""

from __future__ import annotations

import asyncio
import html
import json
import re
import time
from pathlib import Path

import aiohttp
import pytest
from cryptography.fernet import Fernet
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.slack.app import build_slack_bot, run_slack
from bot.slack.installations import SlackInstallationStore
from bot.slack.oauth import BOT_SCOPES
from core.errors import ConfigurationError
from core.service import CouncilService
from tests.conftest import make_settings
from tests.loopback_app import free_port
from tests.slack_fake import FakeSlack, encode_form, sign
from tests.test_slack_adapter import deliveries
from tests.test_slack_run import command_fields

SECRET = "oauth-signing-secret"
CLIENT_ID, CLIENT_SECRET = "111.222", "client-secret-value"
ROOT = str(Path(__file__).resolve().parent.parent)


@pytest.fixture
async def fake():
    f = await FakeSlack(token="xoxb-unused-operator-token").start()
    f.register_app(CLIENT_ID, CLIENT_SECRET)
    f.add_team("T2", "Second")
    yield f
    await f.close()


class Deployment:
    """`council slack` in OAuth mode on a loopback port, driven like Slack and a browser would."""

    def __init__(self, fake: FakeSlack, settings, service: CouncilService, port: int):
        self.fake, self.settings, self.service, self.port = fake, settings, service, port
        self.url = f"http://127.0.0.1:{port}"
        self.session = aiohttp.ClientSession()

    async def wait_up(self) -> None:
        for _ in range(200):
            try:
                async with self.session.get(self.url + "/health") as response:
                    if response.status == 200:
                        return
            except aiohttp.ClientConnectionError:
                await asyncio.sleep(0.05)
        raise AssertionError("the bot never listened")

    async def install(self, team: str) -> tuple[int, str]:
        """Add to Slack: the install page, Slack's authorize page (the fake grants it), the redirect."""
        async with self.session.get(f"{self.url}/slack/install?team={team}") as response:
            assert response.status == 200
            page = await response.text()
            cookie = response.cookies["slack-app-oauth-state"]
        link = html.unescape(re.search(r'href="([^"]*/oauth/v2/authorize[^"]*)"', page).group(1))
        assert link.startswith(self.fake.url)  # SLACK_API_URL's host serves the authorize page too
        async with self.session.get(link, allow_redirects=False) as response:
            assert response.status == 302, await response.text()
            redirect = response.headers["Location"]
        assert redirect.startswith(self.url + "/slack/oauth_redirect?")
        # A browser sends the state cookie back (it is Secure: over https; here by hand).
        headers = {"Cookie": f"slack-app-oauth-state={cookie.value}"}
        async with self.session.get(redirect, headers=headers, allow_redirects=False) as response:
            return response.status, await response.text()

    async def post(self, body: str, content_type: str) -> int:
        headers = {"Content-Type": content_type, **sign(SECRET, body)}
        async with self.session.post(self.url + "/slack/events", data=body, headers=headers) as response:
            return response.status

    async def command(self, team: str, channel: str, text: str) -> int:
        fields = command_fields(self.fake, text, team=team, channel=channel)
        return await self.post(encode_form(fields), "application/x-www-form-urlencoded")

    async def event(self, team: str, event: dict, event_id: str) -> int:
        body = {
            "token": "unused",
            "team_id": team,
            "api_app_id": "A1",
            "event": event,
            "type": "event_callback",
            "event_id": event_id,
            "event_time": int(time.time()),
        }
        return await self.post(json.dumps(body), "application/json")

    async def close(self) -> None:
        await self.session.close()


def oauth_env(fake: FakeSlack, port: int) -> dict[str, str]:
    """The settings of OAuth mode on the fake Slack, served on `port` (a new secret key each time)."""
    return {
        "SLACK_CLIENT_ID": CLIENT_ID,
        "SLACK_CLIENT_SECRET": CLIENT_SECRET,
        "SLACK_SIGNING_SECRET": SECRET,
        "SLACK_API_URL": fake.api_url,
        "COUNCIL_PUBLIC_URL": f"http://127.0.0.1:{port}",
        "COUNCIL_SECRET_KEY": Fernet.generate_key().decode(),
    }


def oauth_settings(llm, tmp_path, fake: FakeSlack, port: int, **extra):
    """OAuth mode on the fake Slack, served on `port`."""
    return make_settings(llm, tmp_path, **oauth_env(fake, port), SLACK_STREAMING="off", **extra)


@pytest.fixture
async def deployment(llm, tmp_path, fake, request):
    port = free_port()
    settings = oauth_settings(llm, tmp_path, fake, port, **getattr(request, "param", {}))
    service = await CouncilService.open(settings)
    task = asyncio.create_task(run_slack(service, settings, port=port, host="127.0.0.1"))
    d = Deployment(fake, settings, service, port)
    try:
        await d.wait_up()
        yield d
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await d.close()
        await service.aclose()


def answered(fake: FakeSlack, channel: str) -> list:
    return [
        c
        for c in fake.calls_to("chat.postMessage")
        if c.ok
        and c.args.get("channel") == channel
        and any(b.get("block_id", "").startswith("council-a-") for b in c.args.get("blocks") or [])
    ]


def database_bytes(tmp_path: Path) -> bytes:
    return b"".join(p.read_bytes() for p in tmp_path.glob("council.db*"))


async def test_install_flow_and_two_workspaces_answered_with_their_own_tokens(deployment, fake, tmp_path):
    for team in ("T1", "T2"):
        status, page = await deployment.install(team)
        assert status == 200 and "error" not in page.lower(), page
    access = [c for c in fake.calls_to("oauth.v2.access") if c.ok]
    assert len(access) == 2 and all(c.args["redirect_uri"].endswith("/slack/oauth_redirect") for c in access)
    authorize = fake.calls_to("oauth/v2/authorize")[0]
    assert set(authorize.args["scope"].split(",")) == set(BOT_SCOPES)

    store = SlackInstallationStore(deployment.service)
    bots = {team: await store.async_find_bot(enterprise_id=None, team_id=team) for team in ("T1", "T2")}
    assert bots["T1"].bot_token in fake.tokens_of("T1") and bots["T2"].bot_token in fake.tokens_of("T2")
    assert bots["T1"].bot_user_id != bots["T2"].bot_user_id

    assert await deployment.command("T1", "C1", "What is six times seven?") == 200
    assert await deployment.command("T2", "C2", "What is six times seven?") == 200
    await fake.wait_for(lambda: answered(fake, "C1") and answered(fake, "C2"), timeout=30)
    for team, channel in (("T1", "C1"), ("T2", "C2")):
        writes = [c for c in fake.calls if c.args.get("channel") == channel and c.method.startswith("chat.")]
        assert writes and {c.team for c in writes} == {team}, [(c.method, c.team) for c in writes]

    # Tokens are encrypted at rest: no token's bytes are in the database file.
    stored = database_bytes(tmp_path)
    for token in [*fake.tokens_of("T1"), *fake.tokens_of("T2")]:
        assert token.encode() not in stored


async def test_a_replayed_or_forged_redirect_installs_nothing(deployment, fake):
    async with deployment.session.get(deployment.url + "/slack/oauth_redirect?code=code-x&state=forged") as response:
        assert response.status == 400
    assert not fake.calls_to("oauth.v2.access")


async def test_rotated_token_is_refreshed_through_slack_api_url(deployment, fake):
    fake.rotation = True
    fake.token_lifetime_s = 60  # inside bolt's two hours: the next request refreshes it
    status, _ = await deployment.install("T2")
    assert status == 200
    [first] = fake.tokens_of("T2")
    assert await deployment.command("T2", "C2", "What is six times seven?") == 200
    await fake.wait_for(lambda: answered(fake, "C2"), timeout=30)
    refreshes = [c for c in fake.calls_to("oauth.v2.access") if c.args.get("grant_type") == "refresh_token"]
    assert refreshes and refreshes[0].ok  # on the fake: SLACK_API_URL, not slack.com
    store = SlackInstallationStore(deployment.service)
    bot = await store.async_find_bot(enterprise_id=None, team_id="T2")
    assert bot.bot_token != first and bot.bot_token in fake.tokens_of("T2")
    [answer] = answered(fake, "C2")
    assert answer.headers["Authorization"] == f"Bearer {bot.bot_token}"


async def test_uninstall_deletes_the_tokens_and_keeps_the_councils(deployment, fake):
    await deployment.install("T2")
    assert await deployment.command("T2", "C2", "What is six times seven?") == 200
    await fake.wait_for(lambda: answered(fake, "C2") and deliveries(fake, "C2") == 1, timeout=30)
    fake.revoke("T2")
    assert await deployment.event("T2", {"type": "app_uninstalled"}, "Ev-uninstall") == 200
    store = SlackInstallationStore(deployment.service)

    async def gone() -> bool:
        return await store.async_find_bot(enterprise_id=None, team_id="T2") is None

    for _ in range(100):
        if await gone():
            break
        await asyncio.sleep(0.05)
    assert await gone()
    assert await store.async_find_installation(enterprise_id=None, team_id="T2") is None
    assert len(await deployment.service.queries.history(scope="all", limit=10)) == 1  # councils stay


@pytest.mark.parametrize("deployment", [{"COUNCIL_PURGE_ON_UNINSTALL": "true"}], indirect=True)
async def test_purge_on_uninstall_deletes_the_councils_too(deployment, fake):
    await deployment.install("T2")
    assert await deployment.command("T2", "C2", "What is six times seven?") == 200
    await fake.wait_for(lambda: answered(fake, "C2") and deliveries(fake, "C2") == 1, timeout=30)
    assert await deployment.event("T2", {"type": "app_uninstalled"}, "Ev-uninstall-2") == 200
    for _ in range(100):
        if not await deployment.service.queries.history(scope="all", limit=10):
            break
        await asyncio.sleep(0.05)
    assert not await deployment.service.queries.history(scope="all", limit=10)
    audit = await deployment.service.storage.channels.audit_log("slack:T2")
    assert [entry.action for entry in audit] == ["purge"] and audit[0].detail["councils"] == 1


async def test_oauth_mode_refuses_a_bot_token_too(llm, tmp_path, fake):
    settings = make_settings(
        llm,
        tmp_path,
        SLACK_CLIENT_ID=CLIENT_ID,
        SLACK_CLIENT_SECRET=CLIENT_SECRET,
        SLACK_SIGNING_SECRET=SECRET,
        SLACK_BOT_TOKEN="xoxb-also-set",
        COUNCIL_PUBLIC_URL="https://council.example.com",
        COUNCIL_SECRET_KEY=Fernet.generate_key().decode(),
    )
    service = await CouncilService.open(settings)
    try:
        with pytest.raises(ConfigurationError, match="SLACK_BOT_TOKEN and SLACK_CLIENT_ID"):
            await run_slack(service, settings, port=free_port(), host="127.0.0.1")
    finally:
        await service.aclose()


def test_manifest_scopes_are_the_install_scopes():
    yaml = pytest.importorskip("yaml")
    manifest = yaml.safe_load((Path(__file__).parent.parent / "slack-manifest.yaml").read_text())
    assert set(manifest["oauth_config"]["scopes"]["bot"]) == set(BOT_SCOPES)


def org_command(fake: FakeSlack, team: str, channel: str) -> str:
    """/council from workspace `team` of organisation E1, where the app is installed org-wide."""
    fields = command_fields(fake, "What is six times seven?", team=team, channel=channel)
    return encode_form({**fields, "enterprise_id": "E1", "is_enterprise_install": "true"})


async def test_org_wide_install_authorises_each_workspace_of_the_organisation(deployment, fake):
    fake.add_team(None, "Org", enterprise_id="E1", org_install=True)
    status, page = await deployment.install("E1")
    assert status == 200, page
    [org_token] = fake.tokens_of("E1")
    assert await deployment.post(org_command(fake, "T7", "C7"), "application/x-www-form-urlencoded") == 200
    await fake.wait_for(lambda: answered(fake, "C7"), timeout=30)
    [answer] = answered(fake, "C7")
    assert answer.headers["Authorization"] == f"Bearer {org_token}"


async def test_org_wide_install_answers_from_a_separate_worker(llm, tmp_path, fake, pg_server):
    """PostgreSQL: `council slack` takes the command and queues the council (no worker of its own);
    another service, set up as `council worker` is, runs it and posts the answer with the org-wide
    install's token, found from the organisation kept with the job (the team has no install)."""
    port = free_port()
    settings = oauth_settings(
        llm, tmp_path, fake, port, DATABASE_URL=pg_server.new_database(), COUNCIL_QUEUE_HEARTBEAT_S="0.5"
    )
    intake, worker_side = await CouncilService.open(settings), await CouncilService.open(settings)
    serving = asyncio.create_task(run_slack(intake, settings, port=port, host="127.0.0.1", worker=False))
    worker_bot = build_slack_bot(worker_side, settings)  # as `council worker` does: Slack's deliverer
    working = asyncio.create_task(worker_side.durable.work())
    d = Deployment(fake, settings, intake, port)
    try:
        await d.wait_up()
        fake.add_team(None, "Org", enterprise_id="E1", org_install=True)
        status, page = await d.install("E1")
        assert status == 200, page
        [org_token] = fake.tokens_of("E1")
        for team, channel in (("T7", "C7"), ("T8", "C8")):  # two workspaces of the organisation
            assert await d.post(org_command(fake, team, channel), "application/x-www-form-urlencoded") == 200
        await fake.wait_for(lambda: answered(fake, "C7") and answered(fake, "C8"), timeout=30)
        for channel in ("C7", "C8"):
            [answer] = answered(fake, channel)
            assert answer.headers["Authorization"] == f"Bearer {org_token}"
        ran = [c.council_id for c in await intake.queries.history(scope="all", limit=10)]
        assert len(ran) == 2 and all(worker_side.runs.get(council) for council in ran)  # the worker ran both
        assert not any(intake.runs.get(council) for council in ran)
    finally:
        for task in (serving, working):
            task.cancel()
        await asyncio.gather(serving, working, return_exceptions=True)
        await worker_bot.aclose()
        await d.close()
        await intake.aclose()
        await worker_side.aclose()


async def test_fake_oauth_v2_exchange_has_slacks_shape(fake):
    client = AsyncWebClient(base_url=fake.api_url + "/")
    response = await client.oauth_v2_exchange(client_id=CLIENT_ID, client_secret=CLIENT_SECRET, token=fake.token)
    assert response["ok"] and response["token_type"] == "bot" and response["expires_in"] > 0
    assert response["access_token"].startswith("xoxe.xoxb-") and response["refresh_token"].startswith("xoxe-1-")
    assert response["team"]["id"] == "T1" and response["is_enterprise_install"] is False
    refreshed = await client.oauth_v2_access(
        client_id=CLIENT_ID,
        client_secret=CLIENT_SECRET,
        grant_type="refresh_token",
        refresh_token=response["refresh_token"],
    )
    assert refreshed["ok"] and refreshed["access_token"] != response["access_token"]
    with pytest.raises(SlackApiError) as refused:  # a refresh token is used once
        await client.oauth_v2_access(
            client_id=CLIENT_ID,
            client_secret=CLIENT_SECRET,
            grant_type="refresh_token",
            refresh_token=response["refresh_token"],
        )
    assert refused.value.response["error"] == "invalid_refresh_token"


async def test_council_slack_serves_the_install_page_in_oauth_mode(llm, tmp_path, fake):
    """The `council slack` command itself, as a subprocess: OAuth mode needs no SLACK_BOT_TOKEN."""
    import os
    import sys

    from tests.test_cli import council

    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LLM_", "COUNCIL_", "SLACK_", "DATABASE_URL"))}
    env.update(
        LLM_BASE_URL=llm.base_url,
        DATABASE_URL=f"sqlite:///{tmp_path}/cli.db",
        **oauth_env(fake, port),
        PYTHONPATH=ROOT,
    )
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bot.cli",
        "slack",
        "--port",
        str(port),
        env=env,
        cwd=tmp_path,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        async with aiohttp.ClientSession() as session:
            for _ in range(300):
                try:
                    async with session.get(f"http://127.0.0.1:{port}/slack/install") as response:
                        assert response.status == 200 and "oauth/v2/authorize" in await response.text()
                        break
                except aiohttp.ClientConnectionError:
                    await asyncio.sleep(0.1)
            else:
                raise AssertionError((await process.stderr.read(4000)).decode())
    finally:
        process.terminate()
        await process.wait()

    code, _, err = await council(
        tmp_path,
        llm,
        "slack",
        extra_env={**{k: env[k] for k in env if k.startswith(("SLACK_", "COUNCIL_"))}, "SLACK_BOT_TOKEN": "xoxb-also"},
    )
    assert code == 2 and "SLACK_BOT_TOKEN and SLACK_CLIENT_ID" in err and "Traceback" not in err
