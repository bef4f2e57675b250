"""The browser app over HTTP (bot/web): a real service, uvicorn on loopback, httpx as the client.

History (search, filters, keyset pages), a council's page (final answer first, ballots extracted
and de-anonymised, aggregate, timeline, exports), JSON twins, model text made inert, the strict
CSP, who sees what (operator, bearer keys, Sign in with Slack against the fake Slack), CSRF, and
a council asked from the form followed live over Server-Sent Events."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from html import unescape as html_unescape

import httpx
import pytest

from core.models import Origin, Platform
from core.service import CouncilService
from tests.conftest import BACKENDS, MEMBERS, backend_url, make_settings
from tests.discord_fake import FakeDiscord
from tests.factories import make_result
from tests.llm_server import council_member
from tests.slack_fake import FakeSlack
from tests.web_app import serve_web

JSON = {"Accept": "application/json"}
HOSTILE = """Here is my answer.

<script>fetch('http://127.0.0.1:9/steal')</script>
<img src="http://127.0.0.1:9/x.png" onerror="alert(1)">
[click me](javascript:alert(document.cookie))
![tracker](http://127.0.0.1:9/pixel.png?seen=yes)
<iframe src="http://127.0.0.1:9/frame"></iframe>
<div style="background: url(http://127.0.0.1:9/bg.png)">styled</div>
[a fine link](https://example.com/docs)
"""


def council(
    council_id: str,
    *,
    platform: Platform = Platform.SLACK,
    workspace: str | None = "T1",
    channel: str = "C1",
    user: str = "U1",
    question: str = "What is the capital of France?",
    answer: str | None = None,
    minutes_ago: float = 0,
):
    created = datetime.now(UTC) - timedelta(minutes=minutes_ago)
    result = make_result(council_id=council_id, created_at=created)
    origin = Origin(platform=platform, workspace_id=workspace, channel_id=channel, user_id=user, user_name=user)
    request = result.request.model_copy(update={"origin": origin, "question": question})
    update: dict = {"request": request}
    if answer is not None:
        update["synthesis"] = result.synthesis.model_copy(update={"text": answer})
    return result.model_copy(update=update)


@pytest.fixture(params=BACKENDS)
def database_url(request, tmp_path) -> str:
    return backend_url(request, tmp_path)


@pytest.fixture
async def web(service):
    async with serve_web(service) as url, httpx.AsyncClient(base_url=url, timeout=20) as client:
        yield client


async def test_history_lists_newest_first_in_keyset_pages_with_a_json_twin(service, web):
    for i in range(30):
        await service.storage.save_result(council(f"{i:016x}", question=f"Question number {i}", minutes_ago=60 - i))
    first = (await web.get("/", headers=JSON)).json()
    assert [c["question"] for c in first["councils"][:2]] == ["Question number 29", "Question number 28"]
    assert len(first["councils"]) == 25 and first["next"]
    second = (await web.get("/", params={"after": first["next"]}, headers=JSON)).json()
    assert [c["question"] for c in second["councils"]] == [f"Question number {i}" for i in range(4, -1, -1)]
    assert second["next"] is None
    page = await web.get("/")
    assert page.headers["content-type"].startswith("text/html")
    assert "Question number 29" in page.text and 'rel="next"' in page.text
    assert first["councils"][0]["calls"] == 4 + 4 + 1  # answers, reviews and the synthesis stored


async def test_search_finds_questions_and_answers_with_the_databases_full_text_index(service, web):
    await service.storage.save_result(council("a" * 16, question="How do volcanoes erupt?", answer="Magma rises."))
    await service.storage.save_result(council("b" * 16, question="Best sourdough?", answer="Long fermentation wins."))
    found = lambda r: [c["council_id"] for c in r.json()["councils"]]  # noqa: E731
    assert found(await web.get("/", params={"q": "volcano"}, headers=JSON)) == ["a" * 16]  # stemmed
    assert found(await web.get("/", params={"q": "fermentation"}, headers=JSON)) == ["b" * 16]  # the answer's text
    assert found(await web.get("/", params={"q": 'sourdough" OR "volcanoes'}, headers=JSON)) == []  # words, not syntax
    assert found(await web.get("/", params={"q": "magma", "status": "failed"}, headers=JSON)) == []
    assert found(await web.get("/", params={"model": "m-a"}, headers=JSON)) == ["b" * 16, "a" * 16]
    bad = await web.get("/", params={"status": "bogus"})
    assert bad.status_code == 400 and "Unknown filter value" in bad.text


async def test_search_pages_through_every_match_once_and_forgets_pruned_councils(service, web):
    for i in range(30):
        await service.storage.save_result(council(f"{i:016x}", question=f"Zebra question {i}", minutes_ago=60 - i))
    await service.storage.save_result(council(f"{5:016x}", question="Zebra question 5", minutes_ago=55))  # again
    first = (await web.get("/", params={"q": "zebras"}, headers=JSON)).json()
    second = (await web.get("/", params={"q": "zebras", "after": first["next"]}, headers=JSON)).json()
    shown = [c["question"] for c in first["councils"] + second["councils"]]
    assert shown == [f"Zebra question {i}" for i in range(29, -1, -1)] and second["next"] is None
    assert 'href="/?q=zebras&amp;after=' in (await web.get("/", params={"q": "zebras"})).text
    await service.queries.prune(timedelta(minutes=45))
    left = (await web.get("/", params={"q": "zebra"}, headers=JSON)).json()["councils"]
    assert [c["question"] for c in left] == [f"Zebra question {i}" for i in range(29, 15, -1)]


async def test_a_council_page_puts_the_final_answer_first_and_shows_every_stage(service, web):
    await service.storage.save_result(council("c0ffee0000000001"))
    page = await web.get("/c/c0ffee00", follow_redirects=True)  # a unique start of the id
    assert page.status_code == 200 and str(page.url).endswith("/c/c0ffee0000000001")
    html = page.text
    assert html.index("Final answer") < html.index("Stage 1") < html.index("Stage 2") < html.index("Aggregate")
    assert "The chairman (m-a) failed: timeout; m-b synthesized this answer instead." in html
    assert "Extracted ballot:</strong> 1. m-b 2. m-c" in html  # de-anonymised, as the parser read it
    assert "Extracted ballot:</strong> none (none)" in html  # the review nothing could be read from
    assert "W=0.75 (strong)" in html and "<svg" in html  # the agreement meter and the timeline
    assert 'data-tab-label="m-a"' in html and "Failed: the API key was rejected (401)" in html
    markdown = await web.get("/c/c0ffee0000000001/export.md")
    assert markdown.headers["content-type"].startswith("text/markdown") and "Paris." in markdown.text
    exported = (await web.get("/c/c0ffee0000000001/export.json")).json()
    assert exported["stage3"] and exported["metadata"]
    twin = (await web.get("/c/c0ffee0000000001", headers=JSON)).json()
    assert twin["council"]["synthesis"]["text"] == "Paris." and len(twin["timeline"]) == 9
    assert (await web.get("/c/ffffffff")).status_code == 404


async def test_model_text_renders_inert_under_a_strict_csp(service, web):
    await service.storage.save_result(council("dead000000000001", answer=HOSTILE))
    page = await web.get("/c/dead000000000001")
    csp = page.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "img-src 'self' data:" in csp and "connect-src 'self'" in csp
    answer = page.text[page.text.index("Final answer") : page.text.index("Stage 1")]
    assert "<script" not in answer and "<iframe" not in answer and "<img" not in answer
    assert not re.search(r"<[^>]+\son\w+=", answer) and 'href="javascript:' not in answer
    assert not re.search(r"<[^>]+\sstyle=", answer)
    assert '<a class="image-link" href="http://127.0.0.1:9/pixel.png?seen=yes"' in answer
    assert 'href="https://example.com/docs" rel="nofollow noopener noreferrer"' in answer
    assert re.findall(r"<script[^>]*>", page.text) == [
        re.search(r'<script src="/static/app.js\?v=\w+" defer>', page.text)[0]
    ]


async def test_pages_and_assets_are_small_and_the_leaderboard_and_eval_pages_answer(service, web):
    await service.storage.save_result(council("c0ffee0000000001"))
    board = await web.get("/leaderboard", headers=JSON)
    assert board.status_code == 200 and {row["model"] for row in board.json()["rows"]} >= {"m-a", "m-b"}
    pairs = board.json()["head_to_head"]  # three ballots: m-b > m-c, m-a > m-c, m-a > m-b
    wins = {(a, b): pairs["wins"][i][j] for i, a in enumerate(pairs["models"]) for j, b in enumerate(pairs["models"])}
    assert pairs["models"] == ["m-a", "m-b", "m-c"] and wins["m-a", "m-b"] == 1 and wins["m-b", "m-a"] == 0
    page = (await web.get("/leaderboard")).text
    assert "95% interval" in page and "Head to head" in page
    # three self-excluding reviewers share no pair of answers: named, with no figure
    assert pairs["agreement"]["reviewers"] == ["m-a", "m-b", "m-c"] and pairs["agreement"]["agreement"][0][1] is None
    assert "Agreement between members' ballots" in page and "agreement, not accuracy" in page
    assert (await web.get("/eval", headers=JSON)).json() == {"runs": []}
    css, js = await web.get("/static/app.css"), await web.get("/static/app.js")
    assert css.status_code == js.status_code == 200 and len(css.content) + len(js.content) < 30_000


# --------------------------------------------------------------------------- who sees what


@pytest.fixture
async def keyed(llm, tmp_path):
    settings = make_settings(llm, tmp_path, COUNCIL_API_KEYS="alice:sk-alice,bob:sk-bob")
    async with await CouncilService.open(settings) as service:
        await service.storage.save_result(
            council("a11ce00000000001", platform=Platform.API, workspace=None, channel="alice", user="alice")
        )
        await service.storage.save_result(
            council("b0b0000000000001", platform=Platform.API, workspace=None, channel="bob", user="bob")
        )
        await service.storage.save_result(council("51ac000000000001"))
        for council_id, key in (
            ("beef000000000001", "carol"),
            ("beef000000000002", "carol"),
            ("a11c000000000009", "bob"),
        ):
            await service.storage.save_result(
                council(council_id, platform=Platform.API, workspace=None, channel=key, user=key)
            )
        async with serve_web(service) as url, httpx.AsyncClient(base_url=url, timeout=20) as client:
            yield client


async def test_with_keys_a_key_sees_only_its_own_councils_and_nobody_else_sees_any(keyed):
    assert (await keyed.get("/", headers=JSON)).status_code == 401
    page = await keyed.get("/")
    assert page.status_code == 303 and page.headers["location"] == "/signin"
    alice = {"Authorization": "Bearer sk-alice", **JSON}
    listed = (await keyed.get("/", headers=alice)).json()["councils"]
    assert [c["council_id"] for c in listed] == ["a11ce00000000001"]
    assert (await keyed.get("/c/b0b0000000000001", headers=alice)).status_code == 404
    assert (await keyed.get("/c/51ac000000000001", headers=alice)).status_code == 404
    assert (await keyed.get("/c/b0b0000000000001/export.md", headers=alice)).status_code == 404
    wrong = await keyed.get("/", headers={"Authorization": "Bearer sk-wrong", **JSON})
    assert wrong.status_code == 401 and "sk-wrong" not in wrong.text


async def test_a_start_of_an_id_is_resolved_only_among_the_councils_the_viewer_may_see(keyed):
    """Another key's councils can neither be reached by a start of their id nor make one ambiguous:
    every answer about them is the same 404 as for an id that is nobody's."""
    bob = {"Authorization": "Bearer sk-bob", **JSON}
    alice = {"Authorization": "Bearer sk-alice", **JSON}
    nobody = await keyed.get("/c/dead", headers=bob)
    assert nobody.status_code == 404
    for wanted in ("beef", "beef0000", "beef000000000001"):  # two councils of another key start with beef
        for path in (f"/c/{wanted}", f"/c/{wanted}/export.md", f"/c/{wanted}/events"):
            refused = await keyed.get(path, headers=bob)
            assert refused.status_code == 404, path
            assert refused.json() == {"error": nobody.json()["error"].replace("dead", wanted)}, path
    mine = await keyed.get("/c/a11c", headers=alice, follow_redirects=True)  # bob's a11c… does not count
    assert mine.status_code == 200 and mine.json()["council"]["council_id"] == "a11ce00000000001"


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
async def slack_web(llm, tmp_path, slack):
    settings = make_settings(
        llm, tmp_path, SLACK_API_URL=slack.api_url, SLACK_CLIENT_ID="web-client", SLACK_CLIENT_SECRET="web-secret",
        SLACK_BOT_TOKEN="xoxb-test",
    )  # fmt: skip
    async with await CouncilService.open(settings) as service:
        await service.storage.save_result(council("0a1c000000000001", user="U1", question="Ada's own question"))
        await service.storage.save_result(council("0b0b000000000001", user="U2", channel="C2", question="Bob's"))
        await service.storage.save_result(council("07e2000000000001", workspace="T2", user="U1", question="Elsewhere"))
        async with serve_web(service) as url:
            yield url


@asynccontextmanager
async def sign_in(url: str) -> AsyncIterator[httpx.AsyncClient]:
    """Sign in with Slack as the fake's `oidc_person`: our page, Slack's authorize page, our callback."""
    async with httpx.AsyncClient(base_url=url, timeout=20, follow_redirects=True) as client:
        landed = await client.get("/signin/slack")
        assert landed.status_code == 200 and str(landed.url) == url + "/", landed.text
        yield client


async def test_sign_in_with_slack_shows_only_what_chat_would_show_and_another_workspace_is_404(slack_web, slack):
    async with httpx.AsyncClient(base_url=slack_web) as anonymous:
        assert (await anonymous.get("/")).headers["location"] == "/signin"
    async with sign_in(slack_web) as ada:
        cookie = next(c for c in ada.cookies.jar if c.name == "council_session")
        assert cookie.has_nonstandard_attr("httponly") and cookie.get_nonstandard_attr("samesite") == "lax"
        listed = (await ada.get("/", headers=JSON)).json()["councils"]
        assert [c["question"] for c in listed] == ["Ada's own question"]
        assert (await ada.get("/c/0b0b000000000001")).status_code == 404  # another channel, another asker
        assert (await ada.get("/c/07e2000000000001")).status_code == 404  # another workspace: not found
    slack.oidc_person = ("U9", "T1")  # a workspace admin sees the workspace's councils, still not T2's
    async with sign_in(slack_web) as admin:
        listed = (await admin.get("/", headers=JSON)).json()["councils"]
        assert sorted(c["question"] for c in listed) == ["Ada's own question", "Bob's"]
        assert (await admin.get("/c/07e2000000000001")).status_code == 404
    token_calls = slack.calls_to("openid.connect.token")
    assert token_calls and all(call.response["ok"] for call in token_calls)


async def test_a_forged_sign_in_callback_signs_nobody_in(slack_web):
    async with httpx.AsyncClient(base_url=slack_web) as client:
        page = await client.get("/signin/slack/callback", params={"code": "oidc-code-1", "state": "guess"})
        assert page.status_code == 400 and "expired or was not started here" in page.text
        assert (await client.get("/", headers=JSON)).status_code == 401


# --------------------------------------------------------------------------- asking and following live


def csrf_of(html: str) -> str:
    return re.search(r'name="csrf_token" value="([^"]+)"', html)[1]


async def test_asking_needs_the_forms_token_then_answers_303_to_the_live_page(service, web):
    refused = await web.post("/ask", data={"question": "Is 2+2 four?"})
    assert refused.status_code == 403 and "another site" in refused.text
    token = csrf_of((await web.get("/ask")).text)
    cross = await web.post("/ask", data={"question": "x", "csrf_token": token}, headers={"Origin": "https://evil.test"})
    assert cross.status_code == 403
    asked = await web.post("/ask", data={"question": "Is 2+2 four?", "csrf_token": token, "mode": "standard"})
    assert asked.status_code == 303
    council_id = asked.headers["location"].removeprefix("/c/")
    events = await follow(web, council_id)
    kinds = [event["kind"] for _, event in events]
    assert kinds[0] == "started" and kinds[-1] == "finished" and kinds.count("member_finished") == 3
    review = next(event for _, event in events if event["kind"] == "review_finished")
    assert "Extracted ballot:</strong> 1." in review["html"]
    resumed = await follow(web, council_id, last_id=events[-3][0])  # the run has finished: the end
    assert resumed[-1][1]["kind"] == "finished" and all(i > events[-3][0] for i, _ in resumed)
    stored = (await web.get(f"/c/{council_id}", headers=JSON)).json()
    assert stored["council"]["request"]["origin"]["channel_id"] == "web"


async def test_members_outside_the_channels_line_up_are_refused(service, web):
    token = csrf_of((await web.get("/ask")).text)
    data = {"question": "Hi?", "csrf_token": token, "members": ["alpha", "evil/model"]}
    page = await web.post("/ask", data=data)
    assert page.status_code == 200 and "Not a model of this council: evil/model." in page.text


async def test_a_dropped_event_stream_resumes_after_the_last_event_it_got(service, web, llm):
    for name in MEMBERS:
        llm.script(name, council_member(f"{name} answers.", synthesis="Final.", latency_s=0.4))
    token = csrf_of((await web.get("/ask")).text)
    asked = await web.post("/ask", data={"question": "Slowly, please?", "csrf_token": token})
    council_id = asked.headers["location"].removeprefix("/c/")
    first = await follow(web, council_id, stop_after=2)  # the connection drops after two events
    rest = await follow(web, council_id, last_id=first[-1][0])
    numbers = [i for i, _ in first + rest]
    assert numbers == list(range(1, len(numbers) + 1))  # nothing lost, nothing twice
    kinds = [event["kind"] for _, event in first + rest]
    assert kinds[0] == "started" and kinds.count("member_finished") == 3 and kinds[-1] == "finished"


async def follow(
    web: httpx.AsyncClient, council_id: str, last_id: int | None = None, stop_after: int | None = None
) -> list[tuple[int, dict]]:
    headers = {"Last-Event-ID": str(last_id)} if last_id is not None else {}
    events: list[tuple[int, dict]] = []
    async with web.stream("GET", f"/c/{council_id}/events", headers=headers) as stream:
        if stream.status_code == 204:
            return events
        assert stream.headers["content-type"].startswith("text/event-stream")
        event_id = 0
        async for line in stream.aiter_lines():
            if line.startswith("id: "):
                event_id = int(line[4:])
            elif line.startswith("data: "):
                events.append((event_id, json.loads(line[6:])))
                if events[-1][1]["kind"] == "finished" or len(events) == stop_after:
                    break
    return events


@pytest.fixture
async def discord():
    fake = FakeDiscord()
    fake.register_app("discord-client", "discord-secret")
    await fake.start()
    yield fake
    await fake.close()


@pytest.fixture
async def discord_web(llm, tmp_path, discord):
    settings = make_settings(
        llm, tmp_path, DISCORD_API_URL=discord.api_url, DISCORD_CLIENT_ID="discord-client",
        DISCORD_CLIENT_SECRET="discord-secret",
    )  # fmt: skip
    guild, user = str(discord.guild_id), discord.oauth_person["id"]
    async with await CouncilService.open(settings) as service:
        for council_id, where, asker, question in (
            ("d1", (guild, "C1"), user, "Mine, in the server"),
            ("d2", (guild, "C2"), "someone-else", "Someone else's, in the server"),
            ("d3", ("other-guild", "C1"), user, "Mine, in another server"),
        ):
            stored = council(
                council_id.ljust(16, "0"), platform=Platform.DISCORD, workspace=where[0], channel=where[1], user=asker,
                question=question,
            )  # fmt: skip
            await service.storage.save_result(stored)
        async with serve_web(service) as url:
            yield url


async def listed(client: httpx.AsyncClient) -> list[str]:
    return sorted(c["question"] for c in (await client.get("/", headers=JSON)).json()["councils"])


async def test_sign_in_with_discord_one_server_at_a_time_by_the_same_rule(discord_web, discord):
    async with httpx.AsyncClient(base_url=discord_web, follow_redirects=True, timeout=20) as member:
        landed = await member.get("/signin/discord")  # one server: signed in to it at once
        assert str(landed.url) == discord_web + "/", landed.text
        assert await listed(member) == ["Mine, in the server"]
        assert (await member.get("/c/d200000000000000")).status_code == 404
        assert (await member.get("/c/d300000000000000")).status_code == 404  # another server: not found
    manage_server = str(0x20)
    discord.oauth_person["guilds"] = [
        {"id": "other-guild", "name": "Other", "owner": False, "permissions": "0"},
        {"id": str(discord.guild_id), "name": "Test server", "owner": False, "permissions": manage_server},
    ]
    async with httpx.AsyncClient(base_url=discord_web, follow_redirects=True, timeout=20) as admin:
        chooser = await admin.get("/signin/discord")  # two servers: the person chooses
        assert "Which server" in chooser.text and "Other" in chooser.text
        chosen = await admin.post(
            "/signin/discord/guild", data={"guild": str(discord.guild_id), "csrf_token": csrf_of(chooser.text)}
        )
        assert str(chosen.url) == discord_web + "/"
        assert await listed(admin) == ["Mine, in the server", "Someone else's, in the server"]  # Manage Server
        forged = await admin.post("/signin/discord/guild", data={"guild": "not-mine", "csrf_token": "x"})
        assert forged.status_code == 400


async def test_a_file_sent_with_the_question_is_read_for_the_council(service, web, llm):
    token = csrf_of((await web.get("/ask")).text)
    files = {"files": ("notes.txt", b"The launch code word is HEDGEHOG.", "text/plain")}
    asked = await web.post("/ask", data={"question": "What is the code word?", "csrf_token": token}, files=files)
    assert asked.status_code == 303, asked.text
    council_id = asked.headers["location"].removeprefix("/c/")
    await follow(web, council_id)
    stored = (await web.get(f"/c/{council_id}", headers=JSON)).json()["council"]
    assert [a["name"] for a in stored["request"]["attachments"]] == ["notes.txt"]
    assert any("HEDGEHOG" in str(r.messages) for r in llm.requests_for("alpha"))
    assert "Files: notes.txt" in (await web.get(f"/c/{council_id}")).text


async def test_stored_eval_runs_show_with_their_accuracy_against_cost_to_the_operator(service, web):
    from core.models.eval import ConfigReport, EvalPlan, EvalReport

    plan = EvalPlan(members=MEMBERS, chairman="alpha", scorer="exact")
    run_id = await service.storage.evals.create("fp", "bundled", 10, ["standard", "member:alpha"], plan)

    def config(name: str, accuracy: float, cost: float) -> ConfigReport:
        return ConfigReport(
            name=name, accuracy=accuracy, ci_low=accuracy - 0.1, ci_high=accuracy + 0.1, mean_calls=3, tokens=900,
            cost_usd=cost, latency_p50_s=1.0, latency_p95_s=2.0, p_value=None, escalated=None,
        )  # fmt: skip

    report = EvalReport(
        run=run_id, dataset="bundled", configs=[config("standard", 0.8, 0.01), config("alpha", 0.6, 0.002)]
    )
    await service.storage.evals.finish(run_id, report.model_dump_json())
    runs = (await web.get("/eval", headers=JSON)).json()["runs"]
    assert [c["name"] for c in runs[0]["report"]["configs"]] == ["standard", "alpha"]
    page = (await web.get("/eval")).text
    assert "<title>Accuracy against cost per question</title>" in page and "80%" in page


async def test_an_eval_run_s_effective_votes_and_consensus_bands_show_on_the_eval_page(service, web):
    from core.eval.report import build
    from core.models.eval import EvalPlan, EvalSample

    plan = EvalPlan(members=MEMBERS, chairman="alpha", scorer="exact")
    names = ["member:alpha", "member:beta", "member:gamma", "standard"]
    run_id = await service.storage.evals.create("fp2", "bundled", 8, names, plan)
    a = [True, True, False, False, True, False, True, True]
    c = [True, False, True, False, True, False, False, True]
    samples = [
        EvalSample(config=name, item_id=f"i{i}", position=i, answer="", correct=v[i], calls=1)
        for name, v in (("member:alpha", a), ("member:beta", a), ("member:gamma", c))
        for i in range(8)
    ] + [
        EvalSample(
            config="standard", item_id=f"i{i}", position=i, answer="", correct=i > 1, calls=7, consensus=10.0 * i
        )
        for i in range(8)
    ]
    report = build(run_id, "bundled", names, samples, 8)
    await service.storage.evals.finish(run_id, report.model_dump_json())
    data = (await web.get("/eval", headers=JSON)).json()["runs"][0]["report"]
    assert data["effective_votes"]["n_eff"] == pytest.approx(report.effective_votes.n_eff)
    page = (await web.get("/eval")).text
    assert "Effective independent votes: 1.49 of 3 members (mean error correlation +0.51 over 8 items)" in page
    assert "Most redundant seat: member:alpha" in page and "+1.00" in page
    assert "standard: accuracy by consensus" in page and "rubric consensus" in page


async def test_in_oauth_distribution_a_workspace_admin_is_known_by_the_workspaces_own_bot(llm, tmp_path, slack):
    import time

    from cryptography.fernet import Fernet

    settings = make_settings(
        llm,
        tmp_path,
        SLACK_API_URL=slack.api_url,
        SLACK_CLIENT_ID="web-client",
        SLACK_CLIENT_SECRET="web-secret",
        COUNCIL_SECRET_KEY=Fernet.generate_key().decode(),
    )  # fmt: skip  (no SLACK_BOT_TOKEN: each workspace's bot token is stored at its install)
    async with await CouncilService.open(settings) as service:
        await service.tenants.installations.save_bot("", "T1", time.time(), {"bot_token": "xoxb-test"})
        await service.storage.save_result(council("0a1c000000000001", user="U1", question="Ada's"))
        await service.storage.save_result(council("0b0b000000000001", user="U2", channel="C2", question="Bob's"))
        slack.oidc_person = ("U9", "T1")
        async with serve_web(service) as url, sign_in(url) as admin:
            assert sorted(c["question"] for c in (await admin.get("/", headers=JSON)).json()["councils"]) == [
                "Ada's",
                "Bob's",
            ]
    assert [call.args.get("user") for call in slack.calls_to("users.info")] == ["U9"]


async def test_a_council_page_shows_the_rubric_consensus_scores_and_composition(service, web):
    """The rubric figures stand beside Kendall's W on the page as in chat, the JSON twin carries them."""
    result = council("c0ffee0000000002")
    aggregate = result.aggregate.model_copy(
        update={"consensus": 72.0, "scores": {"m-b": {"accuracy": 8.0, "insight": 7.5}}}
    )
    composition = {"m-b": 0.5, "sources": 0.1, "chairman": 0.4}
    await service.storage.save_result(result.model_copy(update={"aggregate": aggregate, "composition": composition}))
    html = (await web.get("/c/c0ffee0000000002")).text
    assert "consensus 72/100 (moderate)" in html
    assert "m-b: accuracy 8.0 · insight 7.5" in html
    assert "Composition" in html and "m-b 50%" in html and "chairman&#39;s own 40%" in html
    twin = (await web.get("/c/c0ffee0000000002", headers=JSON)).json()
    assert twin["council"]["aggregate"]["consensus"] == 72.0 and twin["council"]["composition"]["m-b"] == 0.5


async def test_a_key_a_model_quotes_is_masked_in_the_live_event_stream_and_the_stored_views(llm, tmp_path):
    """Both the events' text and their `html`, and every stored view of the same council."""
    from tests.test_text_and_redaction import QUOTED_KEY, quoting_council

    quoting_council(llm)
    async with await CouncilService.open(make_settings(llm, tmp_path, LLM_API_KEY=QUOTED_KEY)) as service:
        async with serve_web(service) as url, httpx.AsyncClient(base_url=url, timeout=30) as web:
            token = csrf_of((await web.get("/ask")).text)
            asked = await web.post("/ask", data={"question": "What is your key?", "csrf_token": token})
            council_id = asked.headers["location"].removeprefix("/c/")
            raw = ""
            async with web.stream("GET", f"/c/{council_id}/events") as stream:
                async for line in stream.aiter_lines():
                    raw += line + "\n"
                    if '"kind": "finished"' in line:
                        break
            events = [json.loads(line[6:]) for line in raw.splitlines() if line.startswith("data: ")]
            with_text = [e for e in events if e["kind"] in ("member_finished", "review_finished", "chairman_finished")]
            kinds = [e["kind"] for e in with_text]  # a review the ranking no longer needs may end after the synthesis
            assert kinds.count("member_finished") == 2 and "review_finished" in kinds and "chairman_finished" in kinds
            assert all("[redacted]" in e["html"] for e in with_text)
            assert any(e["kind"] == "chairman_token" for e in events) and "[redacted]" in raw
            assert QUOTED_KEY not in raw
            views = [
                await web.get(f"/c/{council_id}"),
                await web.get(f"/c/{council_id}", headers=JSON),
                await web.get(f"/c/{council_id}/export.md"),
                await web.get(f"/c/{council_id}/export.json"),
                await web.get("/", headers=JSON),
            ]
            assert all(v.status_code == 200 and QUOTED_KEY not in v.text for v in views)
            assert "[redacted]" in views[0].text


async def test_a_long_answer_is_rendered_whole_with_its_code_block_intact(service, web, monkeypatch):
    """The answer the chat apps cut (tests/long_answer.py) is on the council's page whole: every
    block rendered (the table a table, the code one highlighted block with all its lines), no cut
    note, and the copy button's source is the whole Markdown. The render budget is raised here: it
    is for hostile text, and a busy test machine would otherwise show this one as plain text."""
    from bot.web.render import RENDERER
    from tests.long_answer import CODE_AT, LONG_ANSWER

    monkeypatch.setattr(RENDERER, "timeout_s", 60.0)
    await service.storage.save_result(council("10a9000000000001", answer=LONG_ANSWER))
    html = (await web.get("/c/10a9000000000001")).text
    source = re.search(r'<textarea id="answer-source"[^>]*>(.*?)</textarea>', html, re.S)
    assert source and html_unescape(source[1]).strip() == LONG_ANSWER.strip()  # what "Copy" copies
    page = html.replace(source[0], "")
    code = LONG_ANSWER[CODE_AT : LONG_ANSWER.index("```", CODE_AT + 3)].split("\n", 1)[1]
    blocks = [re.sub(r"<[^>]+>", "", b) for b in re.findall(r"<pre[^>]*><code[^>]*>(.*?)</code></pre>", page, re.S)]
    assert [html_unescape(b) for b in blocks if "observe_" in b] == [code]  # one block, every line
    assert "<table>" in page and "```" not in page and "cut here" not in page
    assert page.count("<h2>Part ") == LONG_ANSWER.count("\n## Part ") and "The end of the answer." in page
