"""Slack: files shared with a question and web search (issue 13), against the fake Slack."""

from __future__ import annotations

import json

import pytest

from tests.attachment_files import make_pdf
from tests.search_fakes import FakeHit, FakeSearxng
from tests.test_slack_adapter import TOKEN, all_text, env, ephemeral_texts, results  # noqa: F401 (env: fixture)

HITS = [
    FakeHit("Release notes", "https://example.org/notes", "The tool was released on 2 November."),
    FakeHit("Changelog", "https://example.org/changelog", "Version 2 adds caching."),
]


async def test_mention_with_a_pdf_reads_it_with_the_bot_token(env, llm):  # noqa: F811
    fake = env.fake
    pdf = fake.share_file("plan.pdf", make_pdf(["The budget is 4,200 euros."]), "application/pdf", "pdf")
    secret = fake.share_file("locked.pdf", make_pdf(["hidden"], user_password="pw"), "application/pdf", "pdf")
    event = env.mention("<@UBOT> what is the budget?")
    await env.event({**event, "files": [pdf, secret]})
    await fake.wait_for(lambda: results(fake))
    await env.settle()
    assert fake.file_downloads and all(h.get("Authorization") == f"Bearer {TOKEN}" for h in fake.file_downloads)
    prompt = llm.requests_for("alpha", stage=1)[0].user
    assert "File name: plan.pdf" in prompt and "The budget is 4,200 euros." in prompt and "hidden" not in prompt
    # the refusal is private, names the file and says why; the council ran on the readable one
    notes = [t for t in ephemeral_texts(fake) if "locked.pdf" in t]
    assert notes and "password" in notes[0].lower()
    [answer] = results(fake)
    assert "Read: plan.pdf (application/pdf" in all_text(answer)
    assert "locked.pdf" not in all_text(answer)
    # the stage buttons show what the council read, from the stored council
    council_id = answer.args["blocks"][0]["block_id"].split("-")[2]
    await env.action("council_stage_answers", council_id, thread_ts=answer.args["thread_ts"])
    await fake.wait_for(lambda: fake.views)
    assert "Read: plan.pdf (application/pdf" in json.dumps(fake.views[0]["blocks"])


async def test_file_outside_slack_hosts_is_refused(env, llm):  # noqa: F811
    fake = env.fake
    foreign = {
        "id": "F9",
        "name": "x.txt",
        "mimetype": "text/plain",
        "size": 3,
        "url_private": "https://evil.example/x",
    }
    await env.event({**env.mention("<@UBOT> read this"), "files": [foreign]})
    await fake.wait_for(lambda: results(fake))
    await env.settle()
    assert not fake.file_downloads
    assert any("x.txt" in t for t in ephemeral_texts(fake))


@pytest.fixture
async def searx():
    async with FakeSearxng(hits=HITS) as server:
        yield server


async def test_search_keyword_cites_sources_as_links(env, llm, searx):  # noqa: F811
    env.service.settings.search.backend = "searxng"
    env.service.settings.search.searxng_url = searx.base_url
    fake = env.fake
    await env.event(env.mention("<@UBOT> search: when was the tool released?"))
    await fake.wait_for(lambda: results(fake))
    await env.settle()
    assert searx.requests[0].query["q"] == "when was the tool released?"
    assert "<<<SOURCE 1 " in llm.requests_for("alpha", stage=3)[0].user
    rendered = json.dumps(results(fake)[0].args["blocks"])
    assert "<https://example.org/notes|[1] Release notes>" in rendered
    assert "<https://example.org/changelog|[2] Changelog>" in rendered


async def test_admin_search_switch_is_gated_and_shown(env):  # noqa: F811
    from core.models import Origin, Platform

    fake, service = env.fake, env.service
    origin = Origin(platform=Platform.SLACK, workspace_id="T1", channel_id="C1")
    await env.command("search on", user="U2", command="/council-admin")
    await env.settle()
    assert any("Only admins" in t for t in ephemeral_texts(fake))
    assert (await service.channels.channel_settings(origin)).search is None
    await env.command("search on", user="UADMIN", command="/council-admin")
    await env.settle()
    assert (await service.channels.channel_settings(origin)).search is True
    assert any("Web search on" in t for t in ephemeral_texts(fake))
    await env.command("search maybe", user="UADMIN", command="/council-admin")
    await env.settle()
    assert any("search on` or `/council-admin search off" in t for t in ephemeral_texts(fake))
