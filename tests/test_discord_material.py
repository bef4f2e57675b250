"""Discord: message attachments, the /council attachment and search options (issue 13), against the fake Discord."""

from __future__ import annotations

from tests.attachment_files import PNG_1PX, make_pdf
from tests.search_fakes import FakeHit, FakeSearxng
from tests.test_discord_adapter import answer_messages, council_option, env, ephemeral_replies, wait_finished  # noqa: F401


async def test_mention_with_pdf_attachment_is_read_from_the_cdn(env, llm):  # noqa: F811
    fake = env.fake
    pdf = fake.attachment("spec.pdf", make_pdf(["The port is 8443."]), "application/pdf")
    junk = fake.attachment("blob.bin", b"\x00\x01\x02\x03" * 10, "application/octet-stream")
    await fake.push_message(f"<@{fake.bot_id}> Which port?", attachments=[pdf, junk])
    await wait_finished(fake)
    assert fake.cdn_downloads and not any("Authorization" in h for h in fake.cdn_downloads)
    prompt = llm.requests_for("alpha", stage=1)[0].user
    assert "File name: spec.pdf" in prompt and "The port is 8443." in prompt
    dms = [m for m in fake.messages.values() if "blob.bin" in (m.get("content") or "")]
    assert dms, "the refused file is named privately"
    [answer] = answer_messages(fake)
    fields = {f["name"]: f["value"] for e in answer["embeds"] for f in e.get("fields", [])}
    assert "spec.pdf (application/pdf" in fields["Files read"]


async def test_slash_council_attachment_and_search_options(env, llm):  # noqa: F811
    fake = env.fake
    llm.image_models = {"alpha"}
    hits = [FakeHit("Port list", "https://example.org/ports", "8443 is for HTTPS alternates.")]
    async with FakeSearxng(hits=hits) as searx:
        env.service.settings.search.backend = "searxng"
        env.service.settings.search.searxng_url = searx.base_url
        image = fake.attachment("diagram.png", PNG_1PX, "image/png")
        options = [
            *council_option("What does the diagram show?"),
            {"name": "attachment", "type": 11, "value": image["id"]},
            {"name": "search", "type": 5, "value": True},
        ]
        await fake.push_command("council", options, attachments=[image])
        await wait_finished(fake)
        assert len(searx.requests) == 1
    assert llm.requests_for("alpha", stage=1)[0].images and not llm.requests_for("beta", stage=1)[0].images
    [answer] = answer_messages(fake)
    fields = {f["name"]: f["value"] for e in answer["embeds"] for f in e.get("fields", [])}
    assert "[1] [Port list](https://example.org/ports)" in fields["Sources"]
