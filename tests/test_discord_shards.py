"""Discord gateway shards: DISCORD_SHARD_COUNT / DISCORD_SHARD_IDS against the fake Discord, whose
gateway routes a guild's events to shard (guild_id >> 22) % num_shards as Discord does."""

from __future__ import annotations

import asyncio
import contextlib

import discord
import pytest
from discord.gateway import DiscordWebSocket

from bot.discord.client import ShardedCouncilBot, build_discord_client
from core.service import CouncilService
from tests.conftest import make_settings
from tests.discord_fake import FakeDiscord
from tests.test_discord_adapter import TOKEN, answer_messages, council_option, wait_finished


@contextlib.asynccontextmanager
async def fake_discord():
    base, gateway = discord.http.Route.BASE, DiscordWebSocket.DEFAULT_GATEWAY
    fake = await FakeDiscord().start()
    try:
        yield fake
    finally:
        await fake.close()
    assert (discord.http.Route.BASE, DiscordWebSocket.DEFAULT_GATEWAY) == (base, gateway)


@contextlib.asynccontextmanager
async def running_bots(llm, tmp_path, fake: FakeDiscord, *shard_env: dict[str, str]):
    """One bot process per entry of `shard_env` (services on one database), started; closed in
    reverse order (each client puts back the API base it found)."""
    bots: list[tuple[CouncilService, discord.Client, asyncio.Task]] = []
    try:
        for env in shard_env:
            settings = make_settings(llm, tmp_path, DISCORD_TOKEN=TOKEN, DISCORD_API_URL=fake.api_url, **env)
            service = await CouncilService.open(settings)
            client = build_discord_client(service, settings, guild_ready_timeout=0.2)
            task = asyncio.create_task(client.start(TOKEN))
            bots.append((service, client, task))
            await asyncio.wait_for(client.wait_until_ready(), 20)
        yield bots
    finally:
        for service, client, task in reversed(bots):
            await client.close()
            await asyncio.gather(task, return_exceptions=True)
            await service.aclose()


async def test_one_process_runs_every_shard_and_answers_once(llm, tmp_path):
    async with fake_discord() as fake, running_bots(llm, tmp_path, fake, {"DISCORD_SHARD_COUNT": "2"}) as bots:
        [(service, client, _)] = bots
        assert isinstance(client, ShardedCouncilBot)
        assert sorted(tuple(i["shard"]) for i in fake.identifies) == [(0, 2), (1, 2)]
        assert client.get_guild(fake.guild_id) is not None  # GUILD_CREATE arrived on its own shard
        await fake.push_command("council", council_option("What is 6 x 7?"))
        await wait_finished(fake)
        assert len(answer_messages(fake)) == 1
        assert len(await service.queries.history(None, "all")) == 1


async def test_each_process_runs_its_own_shard_range(llm, tmp_path):
    async with fake_discord() as fake:
        home = fake.shard_of(fake.guild_id, 2)  # the shard Discord routes the test guild to
        ranges = [{"DISCORD_SHARD_COUNT": "2", "DISCORD_SHARD_IDS": str(shard)} for shard in (0, 1)]
        async with running_bots(llm, tmp_path, fake, *ranges) as bots:
            assert [i["shard"] for i in fake.identifies] == [[0, 2], [1, 2]]  # one IDENTIFY per process
            await fake.push_command("council", council_option("Which process answers?"))
            await wait_finished(fake)
            assert len(answer_messages(fake)) == 1
            owners = [client.get_guild(fake.guild_id) is not None for _, client, _ in bots]
            assert owners == [shard == home for shard in (0, 1)]
            # Only the process holding the guild's shard ran the council (and so took a lease).
            assert [service.owner.active for service, _, _ in bots] == owners


@pytest.mark.slow
async def test_auto_takes_discords_recommended_shard_count(llm, tmp_path):
    recommended = 3
    async with fake_discord() as fake:
        fake.recommended_shards = recommended
        async with running_bots(llm, tmp_path, fake, {"DISCORD_SHARD_COUNT": "auto"}):
            assert fake.calls_to("GET", "/gateway/bot")
            assert sorted(i["shard"][0] for i in fake.identifies) == list(range(recommended))
            assert {i["shard"][1] for i in fake.identifies} == {recommended}
