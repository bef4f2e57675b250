"""The one council runner (bot/following.py) on both platforms, started from stored data alone:
a serialised Destination, a council id and a surface built from settings (no Socket Mode, no
Discord gateway), as a worker process other than the one that received the question would."""

from __future__ import annotations

import asyncio
import json

import discord
import pytest
from discord.gateway import DiscordWebSocket

from bot.discord.surface import discord_surface
from bot.following import Destination, resume
from bot.slack.surface import slack_surface
from core.errors import NotFound
from core.models import Origin, Platform
from core.service import CouncilService
from tests.conftest import make_settings
from tests.discord_fake import FakeDiscord
from tests.llm_server import ByStage, Reply, council_member
from tests.slack_fake import FakeSlack

TOKEN = "xoxb-following"
LONG_ANSWER = "\n\n".join(f"Part {i}. " + "A sentence of the long answer. " * 30 for i in range(25))


def stored_destination(destination: Destination) -> Destination:
    """What a queue would keep and a worker read back."""
    return Destination.model_validate(json.loads(destination.model_dump_json()))


async def slack_env(llm, tmp_path):
    fake = await FakeSlack(token=TOKEN, streaming=False).start()
    settings = make_settings(llm, tmp_path, SLACK_BOT_TOKEN=TOKEN, SLACK_API_URL=fake.api_url)
    return fake, settings, await CouncilService.open(settings)


def slack_origin(thread_ts: str) -> Origin:
    return Origin(platform=Platform.SLACK, workspace_id="T1", channel_id="C1", thread_id=thread_ts, user_id="U1")


def test_destination_round_trips_and_names_the_status_channel():
    destination = Destination(platform=Platform.DISCORD, channel_id="20", status_id="30", status_channel_id="10")
    assert stored_destination(destination) == destination
    assert destination.status_channel == "10"
    assert Destination(platform=Platform.SLACK, channel_id="C1", thread_id="1.1").status_channel == "C1"


async def test_slack_worker_follows_a_running_council_into_its_thread(llm, tmp_path):
    fake, settings, service = await slack_env(llm, tmp_path)
    try:
        thread_ts = fake.add_message("C1", "what is the answer?")
        run = await service.start_council("What is the answer?", slack_origin(thread_ts))
        destination = stored_destination(Destination(platform=Platform.SLACK, channel_id="C1", thread_id=thread_ts))
        seen: list[Destination] = []

        async def remember(where: Destination) -> None:
            seen.append(where)

        surface = slack_surface(settings, interval=0.2)
        result = await asyncio.wait_for(resume(service, surface, destination, run.council_id, on_status=remember), 60)

        thread = fake.thread("C1", thread_ts)
        status, answer = thread[1], thread[2]
        assert status["blocks"][0]["block_id"] == f"council-s-{run.council_id}"
        assert "Done" in status["text"] and not any(b["type"] == "actions" for b in status["blocks"])
        assert answer["blocks"][0]["block_id"].startswith(f"council-a-{run.council_id}")
        assert "Final answer by alpha: 42." in json.dumps(answer["blocks"])
        assert result.synthesis is not None and seen == [destination.with_status(status["ts"])]
    finally:
        await service.aclose()
        await fake.close()


@pytest.mark.parametrize("platform", ["slack", "discord"])
async def test_a_long_stored_answer_is_cut_and_its_file_attached_the_same_on_both(llm, tmp_path, platform):
    llm.script("alpha", ByStage(Reply("alpha answer"), council_member("x").stage2, Reply(LONG_ANSWER)))
    if platform == "slack":
        fake, settings, service = await slack_env(llm, tmp_path)
        thread_ts = fake.add_message("C1", "a long one, please")
        result = await service.ask("A long one, please", slack_origin(thread_ts))
        surface = slack_surface(settings)
        destination = Destination(platform=Platform.SLACK, channel_id="C1", thread_id=thread_ts)
    else:
        fake = await FakeDiscord().start()
        settings = make_settings(llm, tmp_path, DISCORD_TOKEN="fake-bot-token", DISCORD_API_URL=fake.api_url)
        service = await CouncilService.open(settings)
        origin = Origin(platform=Platform.DISCORD, workspace_id=str(fake.guild_id), channel_id=str(fake.channel_id))
        result = await service.ask("A long one, please", origin)
        surface = await discord_surface(settings)  # REST only: no gateway connection
        destination = Destination(platform=Platform.DISCORD, channel_id=str(fake.channel_id))
    try:
        await asyncio.wait_for(resume(service, surface, stored_destination(destination), result.council_id), 30)
        if platform == "slack":
            [upload] = fake.uploads.values()
            name, content = upload["filename"], upload["content"]
            shown = json.dumps([m.get("blocks") for m in fake.thread("C1", thread_ts)])
        else:
            files = [f for c in fake.calls if c.method == "POST" for f in c.files]
            [(_, name, raw)] = files
            content = raw.decode()
            shown = json.dumps([m["embeds"] for m in fake.channel_messages(fake.channel_id)])
        assert name == f"council-{result.council_id}.md" and "Part 24." in content
        assert "Part 24." not in shown and "attached" in shown  # the message shows the start and says so
    finally:
        if platform == "discord":
            await surface.aclose()  # type: ignore[union-attr]
        await service.aclose()
        await fake.close()


async def test_resume_of_an_unknown_council_is_not_found(llm, tmp_path):
    fake, settings, service = await slack_env(llm, tmp_path)
    try:
        destination = Destination(platform=Platform.SLACK, channel_id="C1", thread_id=fake.add_message("C1", "q"))
        with pytest.raises(NotFound):
            await resume(service, slack_surface(settings), destination, "0123456789abcdef")
        assert not fake.calls_to("chat.postMessage")
    finally:
        await service.aclose()
        await fake.close()


async def test_discord_api_base_is_per_client(llm, tmp_path):
    """DISCORD_API_URL moves one client's REST calls, not discord.py's process-wide defaults."""
    base, gateway = discord.http.Route.BASE, DiscordWebSocket.DEFAULT_GATEWAY
    fake = await FakeDiscord().start()
    settings = make_settings(llm, tmp_path, DISCORD_TOKEN="fake-bot-token", DISCORD_API_URL=fake.api_url)
    surface = await discord_surface(settings)
    try:
        assert (discord.http.Route.BASE, DiscordWebSocket.DEFAULT_GATEWAY) == (base, gateway)
        destination = Destination(platform=Platform.DISCORD, channel_id=str(fake.channel_id))
        message_id = await surface.post(destination, {"content": "hello @everyone"})
        [stored] = fake.channel_messages(fake.channel_id)
        assert stored["id"] == message_id and stored["content"] == "hello @everyone"
        [sent] = [c for c in fake.calls if c.method == "POST" and c.path.endswith("/messages")]
        assert sent.json["allowed_mentions"]["parse"] == []  # model text never pings
    finally:
        await surface.aclose()
        await fake.close()


@pytest.mark.parametrize("streaming", [False, True])
async def test_slack_status_answer_and_streamed_messages_are_mapped_to_their_council(llm, tmp_path, streaming):
    fake = await FakeSlack(token=TOKEN, streaming=streaming).start()
    settings = make_settings(llm, tmp_path, SLACK_BOT_TOKEN=TOKEN, SLACK_API_URL=fake.api_url)
    service = await CouncilService.open(settings)
    try:
        thread_ts = fake.add_message("C1", "what is the answer?")
        run = await service.start_council("What is the answer?", slack_origin(thread_ts))
        destination = Destination(platform=Platform.SLACK, channel_id="C1", thread_id=thread_ts)
        await asyncio.wait_for(resume(service, slack_surface(settings, interval=0.2), destination, run.council_id), 60)
        ours = [m["ts"] for m in fake.thread("C1", thread_ts)[1:]]
        refs = await service.messages.lookup(Platform.SLACK, "C1", ours)
        assert {ref.council_id for ref in refs.values()} == {run.council_id}
        if streaming:  # the control message is deleted; the streamed message holds the answer
            [streamed] = ours
            assert {mid: ref.role for mid, ref in refs.items()} == {streamed: "answer"}
        else:
            status, answer = ours
            assert {mid: ref.role for mid, ref in refs.items()} == {status: "progress", answer: "answer"}
    finally:
        await service.aclose()
        await fake.close()


async def test_discord_status_and_every_answer_message_are_mapped(llm, tmp_path):
    llm.script("alpha", ByStage(Reply("alpha answer"), council_member("x").stage2, Reply(LONG_ANSWER)))
    fake = await FakeDiscord().start()
    settings = make_settings(llm, tmp_path, DISCORD_TOKEN="fake-bot-token", DISCORD_API_URL=fake.api_url)
    service = await CouncilService.open(settings)
    surface = await discord_surface(settings)
    try:
        origin = Origin(platform=Platform.DISCORD, workspace_id=str(fake.guild_id), channel_id=str(fake.channel_id))
        run = await service.start_council("A long one, please", origin)
        destination = Destination(platform=Platform.DISCORD, channel_id=str(fake.channel_id))
        await asyncio.wait_for(resume(service, surface, destination, run.council_id), 60)
        status, *answers = [m["id"] for m in fake.channel_messages(fake.channel_id) if not m.get("attachments")]
        assert answers
        refs = await service.messages.lookup(Platform.DISCORD, str(fake.channel_id), [status, *answers])
        assert {ref.council_id for ref in refs.values()} == {run.council_id}
        assert {mid: ref.role for mid, ref in refs.items()} == {status: "progress"} | dict.fromkeys(answers, "answer")
    finally:
        await surface.aclose()
        await service.aclose()
        await fake.close()


async def test_a_message_map_that_cannot_be_written_never_stops_the_answer(llm, tmp_path, monkeypatch):
    fake, settings, service = await slack_env(llm, tmp_path)
    try:

        async def broken(*args: object) -> None:
            raise RuntimeError("database is gone")

        monkeypatch.setattr(service.storage.messages, "record", broken)
        thread_ts = fake.add_message("C1", "what is the answer?")
        result = await service.ask("What is the answer?", slack_origin(thread_ts))
        destination = Destination(platform=Platform.SLACK, channel_id="C1", thread_id=thread_ts)
        await asyncio.wait_for(resume(service, slack_surface(settings), destination, result.council_id), 30)
        assert "Final answer by alpha: 42." in json.dumps(fake.thread("C1", thread_ts))
    finally:
        await service.aclose()
        await fake.close()
