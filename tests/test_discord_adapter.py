"""Discord adapter end to end: the real discord.py client against a fake Discord (REST +
gateway on loopback), scripted models over HTTP, and a real CouncilService on SQLite."""

from __future__ import annotations

import asyncio
import itertools
import json
import re
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import discord
import pytest
from discord.gateway import DiscordWebSocket

from bot.discord.client import CouncilBot, build_discord_client
from core.admission.limits import validate_question
from core.errors import InputRejected
from core.models import Actor, MemberFinished, Origin, Platform
from core.service import CouncilService
from tests.conftest import MEMBERS, make_settings
from tests.discord_fake import BASIC_PERMISSIONS, MANAGE_GUILD, FakeDiscord
from tests.figures import show
from tests.llm_server import ByStage, Reply, council_member
from tests.logged import errors_logged
from tests.long_answer import LONG_ANSWER, assert_cut_between_blocks

TOKEN = "fake-bot-token"
PING_TEXT = "@everyone <@123> look at this"


@dataclass
class Env:
    fake: FakeDiscord
    service: CouncilService
    client: CouncilBot
    task: asyncio.Task
    settings: Any

    async def restart(self, *, new_service: bool = True) -> None:
        """A new client (and service) on the same database, like a process restart."""
        await self.client.close()
        await asyncio.gather(self.task, return_exceptions=True)
        if new_service:
            await self.service.aclose()
            self.service = await CouncilService.open(self.settings)
        self.client = build_discord_client(self.service, self.settings, guild_ready_timeout=0.2)
        self.task = asyncio.create_task(self.client.start(TOKEN))
        await asyncio.wait_for(self.client.wait_until_ready(), 10)


@asynccontextmanager
async def discord_env(llm, tmp_path, **overrides: Any) -> AsyncIterator[Env]:
    """The Discord client over a real service against a fake Discord."""
    base, gateway = discord.http.Route.BASE, DiscordWebSocket.DEFAULT_GATEWAY  # put back by the client
    fake = await FakeDiscord().start()
    settings = make_settings(llm, tmp_path, DISCORD_TOKEN=TOKEN, DISCORD_API_URL=fake.api_url, **overrides)
    service = await CouncilService.open(settings)
    client = build_discord_client(service, settings, guild_ready_timeout=0.2)
    task = asyncio.create_task(client.start(TOKEN))
    await asyncio.wait_for(client.wait_until_ready(), 10)
    e = Env(fake, service, client, task, settings)
    try:
        yield e
    finally:
        await e.client.close()
        await asyncio.gather(e.task, return_exceptions=True)
        await e.service.aclose()
        await fake.close()
    assert (discord.http.Route.BASE, DiscordWebSocket.DEFAULT_GATEWAY) == (base, gateway)  # put back on close


@pytest.fixture
async def env(llm, tmp_path, request):
    async with discord_env(llm, tmp_path, **getattr(request, "param", {})) as e:
        yield e


# --------------------------------------------------------------------------- helpers


async def answered(service: CouncilService, council_id: str, members: set[str]) -> None:
    """Returns once each of `members` has answered in the running council."""
    run = service.runs.get(council_id)
    assert run is not None
    seen: set[str] = set()
    async for event in run.events():
        if isinstance(event, MemberFinished):
            seen.add(event.answer.model)
            if members <= seen:
                return
    raise AssertionError(f"the council ended with answers from {sorted(seen)} only")


def final_edits(fake: FakeDiscord) -> list:
    """The last edit of each status message removes its Stop/Synthesize buttons."""
    return [
        c
        for c in fake.calls
        if c.method == "PATCH" and c.path.startswith("/channels/") and c.json and c.json.get("components") == []
    ]


async def wait_finished(fake: FakeDiscord, count: int = 1, within_s: float = 30) -> None:
    await fake.wait_for(lambda: len(final_edits(fake)) >= count, within_s)


def carries_text(call) -> bool:
    return (
        call.method in ("POST", "PATCH")
        and isinstance(call.json, dict)
        and (
            call.json.get("content")
            or call.json.get("embeds")
            or (call.json.get("data") or {}).get("content")
            or (call.json.get("data") or {}).get("embeds")
        )
    )


def answer_messages(fake: FakeDiscord) -> list[dict]:
    return [
        m
        for m in fake.messages.values()
        if any((e.get("footer") or {}).get("text", "").startswith("Council ") for e in m["embeds"])
    ]


def council_option(question: str) -> list[dict]:
    return [{"name": "question", "type": 3, "value": question}]


def subcommand(name: str, **options: Any) -> list[dict]:
    types = {str: 3, int: 4, float: 10}
    return [
        {
            "name": name,
            "type": 1,
            "options": [{"name": k, "type": types[type(v)], "value": v} for k, v in options.items()],
        }
    ]


def ephemeral_replies(fake: FakeDiscord, token: str) -> list[dict]:
    """Followups (and the deferred original they replace) of one interaction."""
    record = fake.interactions[token]
    ids = [*([record.original_id] if record.original_id else []), *record.followups]
    return [fake.messages[i] for i in dict.fromkeys(ids) if i in fake.messages]


def check_embed_limits(message: dict) -> None:
    embeds = message["embeds"]
    assert len(embeds) <= 10
    total = 0
    for e in embeds:
        assert len(e.get("description") or "") <= 4096
        assert len(e.get("title") or "") <= 256
        assert len(e.get("fields") or []) <= 25
        for f in e.get("fields") or []:
            assert len(f["name"]) <= 256 and len(f["value"]) <= 1024
        total += (
            len(e.get("title") or "") + len(e.get("description") or "") + len((e.get("footer") or {}).get("text", ""))
        )
        total += sum(len(f["name"]) + len(f["value"]) for f in e.get("fields") or [])
    assert total <= 6000
    assert len(message.get("content") or "") <= 2000


# --------------------------------------------------------------------------- tests


async def test_startup_syncs_commands_and_identifies_with_message_content(env):
    fake = env.fake
    [identify] = fake.identifies
    assert identify["token"] == TOKEN
    assert identify["intents"] & (1 << 15), "message content intent"
    assert fake.calls_to("GET", "/gateway/bot"), "gateway URL comes from the API"
    names = {c["name"]: c for c in fake.global_commands}
    assert {
        "council",
        "council-admin",
        "council-help",
        "council-history",
        "council-leaderboard",
        "council-export",
    } <= set(names)
    admin = names["council-admin"]
    assert int(admin["default_member_permissions"]) == MANAGE_GUILD
    assert {o["name"] for o in admin["options"]} == {
        "show",
        "members",
        "chairman",
        "allow",  # the models a question may choose (issue 33)
        "limits",
        "search",
        "mode",
        "lens",  # a member's lens in this channel
        "unsure",  # who is mentioned when an answer is unsure
        "reset",
        "audit",
        "key",  # the server's own provider key, in a modal (tests/test_discord_tenant_key.py)
    }
    council = {o["name"]: o for o in names["council"]["options"]}
    assert council["attachment"]["type"] == 11 and council["search"]["type"] == 5  # both optional
    assert not council["attachment"].get("required") and not council["search"].get("required")
    assert [c["value"] for c in council["mode"]["choices"]] == [
        "standard",
        "quick",
        "auto",
        "refine",
        "self-moa",
        "best",
    ]
    assert not council["mode"].get("required")
    assert council["members"].get("autocomplete") and council["chairman"].get("autocomplete")
    assert not fake.guild_commands


def test_member_choices_complete_the_list_typed_so_far():
    """Discord's options have no multi-select: each choice of /council's `members` is the list typed so far plus one."""
    from bot.discord.commands import _member_choices

    allowed = ["alpha", "beta", "gamma"]
    assert [c.value for c in _member_choices(allowed, "")] == allowed
    assert [c.value for c in _member_choices(allowed, "alpha, ")] == ["alpha, beta", "alpha, gamma"]
    assert [c.value for c in _member_choices(allowed, "alpha, GA")] == ["alpha, gamma"]
    assert len(_member_choices([f"m{i}" for i in range(40)], "")) == 25  # Discord's limit


async def test_guild_sync_when_guild_id_is_set(env, llm, tmp_path):
    env.settings = make_settings(
        llm, tmp_path, DISCORD_TOKEN=TOKEN, DISCORD_API_URL=env.fake.api_url, DISCORD_GUILD_ID=str(env.fake.guild_id)
    )
    await env.restart()
    commands = env.fake.guild_commands[env.fake.guild_id]
    assert "council" in {c["name"] for c in commands}
    assert env.fake.calls_to("PUT", f"/applications/{env.fake.app_id}/guilds/{env.fake.guild_id}/commands")


async def test_slash_council_defers_threads_throttles_and_never_pings(env, llm):
    fake = env.fake
    for name in MEMBERS:
        llm.script(
            name,
            council_member(
                f"{PING_TEXT} from {name}", synthesis=PING_TEXT + " " + "word " * 40, latency_s=0.4, token_delay_s=0.05
            ),
        )
    before = len(fake.calls)
    interaction = await fake.push_command("council", council_option("What is 6 x 7? @here"))
    await fake.wait_for(lambda: interaction.responded_at, 3)
    deferral_s = interaction.responded_at - interaction.pushed_at
    print(f"\n[discord] time to deferral: {deferral_s * 1000:.1f} ms")
    assert deferral_s < 3
    [callback] = fake.calls_to("POST", f"/interactions/{interaction.id}/")
    assert callback.json["type"] == 5

    await wait_finished(fake)
    calls = fake.calls[before:]
    kinds: dict[str, int] = {}
    for c in calls:
        key = c.method + " /" + c.path.split("/")[1]
        kinds[key] = kinds.get(key, 0) + 1
    print(f"[discord] REST calls for one slash council: {len(calls)} {kinds}")

    # A thread from the status message (the interaction's original response).
    status_id = fake.interactions[interaction.token].original_id
    assert len(fake.calls_to("POST", f"/channels/{fake.channel_id}/messages/{status_id}/threads")) == 1
    thread_id = status_id
    assert fake.channels[thread_id]["type"] == 11

    # Status edits (webhook @original, then the channel endpoint) at least 1.5 s apart.
    edits = [
        c
        for c in calls
        if c.method == "PATCH"
        and (c.path.endswith("/messages/@original") or c.path == f"/channels/{fake.channel_id}/messages/{status_id}")
    ]
    assert len(edits) >= 3
    gaps = [b.at - a.at for a, b in itertools.pairwise(edits)]
    print(f"[discord] status edits: {len(edits)}, smallest gap {min(gaps):.2f} s")
    assert min(gaps) >= 1.45, gaps

    # The answer in the thread: embeds within limits, ranking and agreement fields, buttons.
    [answer] = answer_messages(fake)
    assert int(answer["channel_id"]) == thread_id
    check_embed_limits(answer)
    fields = {f["name"]: f["value"] for e in answer["embeds"] for f in e.get("fields") or []}
    assert "Aggregate ranking" in fields and "Agreement" in fields and "1." in fields["Aggregate ranking"]
    stage_row, feedback_row = answer["components"]
    custom_ids = [c["custom_id"] for c in stage_row["components"]]
    assert [i.split(":")[1] for i in custom_ids] == ["answers", "reviews", "ranking", "differ"]
    assert [c["custom_id"].split(":")[:2] for c in feedback_row["components"]] == [
        ["council_fb", "good"],
        ["council_fb", "bad"],
    ]

    # Nobody is ever pinged: mentions disabled on everything carrying text, and the text defused.
    texts = [c for c in calls if carries_text(c)]
    assert texts
    for call in texts:
        payload = call.json.get("data") if "data" in call.json else call.json
        assert payload.get("allowed_mentions") == {"parse": []}, (call.method, call.path)
        raw = json.dumps(payload, ensure_ascii=False)
        assert "@everyone" not in raw and "<@123>" not in raw and "@here" not in raw
    description = answer["embeds"][0]["description"]
    assert "@\u200beveryone" in description and "<\u200b@123>" in description


async def test_long_answer_is_split_and_attached(env, llm):
    fake = env.fake
    paragraph = "The council considered this at length and concludes something useful. " * 12
    long_text = "\n\n".join(f"Part {i}. {paragraph}" for i in range(25))  # ~21,000 characters
    llm.script("alpha", ByStage(Reply("alpha answer"), council_member("x").stage2, Reply(long_text)))
    await fake.push_command("council", council_option("Write me an essay"))
    await wait_finished(fake)
    messages = sorted(answer_messages(fake), key=lambda m: int(m["id"]))
    assert len(messages) >= 2
    for message in messages:
        check_embed_limits(message)
    files = [f for c in fake.calls if c.method == "POST" for f in c.files]
    assert any(name.endswith(".md") for _, name, _ in files)
    md = next(content for _, name, content in files if name.endswith(".md")).decode()
    assert "Part 24." in md
    assert messages[-1]["components"], "buttons under the last part"


async def test_a_long_answer_is_cut_between_blocks_and_attached(env, llm):
    """The answer with a code block across the limit (tests/long_answer.py): the embeds show the
    blocks before the code, every embed's code fences closed, the note outside any block."""
    fake = env.fake
    llm.script("alpha", ByStage(Reply("alpha answer"), council_member("x").stage2, Reply(LONG_ANSWER)))
    await fake.push_command("council", council_option("Write a long report"))
    await wait_finished(fake)
    messages = sorted(answer_messages(fake), key=lambda m: int(m["id"]))
    descriptions = [e.get("description") or "" for m in messages for e in m["embeds"]]
    for message in messages:
        check_embed_limits(message)
    assert all(d.count("```") % 2 == 0 for d in descriptions)
    shown = "\n\n".join(descriptions)
    assert_cut_between_blocks(shown)
    assert len(shown) > 10000
    files = [f for c in fake.calls if c.method == "POST" for f in c.files]
    md = next(content for _, name, content in files if name.endswith(".md")).decode()
    assert LONG_ANSWER.strip() in md


async def test_refusal_is_ephemeral(env):
    fake = env.fake
    interaction = await fake.push_command("council", council_option("   "))
    await fake.wait_for(lambda: fake.interactions[interaction.token].followups, 10)
    [followup_id] = fake.interactions[interaction.token].followups
    message = fake.messages[followup_id]
    with pytest.raises(InputRejected) as refused:
        validate_question("   ", env.settings.limits.max_question_chars)
    assert message["flags"] & 64 and message["content"] == refused.value.user_message
    assert fake.calls_to("DELETE", f"/webhooks/{fake.app_id}/{interaction.token}/messages/@original")
    assert not fake.threads()


async def test_stage_buttons_work_after_restart(env):
    fake = env.fake
    await fake.push_command("council", council_option("Persist me"))
    await wait_finished(fake)
    [answer] = answer_messages(fake)
    council_id = answer["components"][0]["components"][0]["custom_id"].split(":")[2]

    await env.restart()  # a new process: new client, new service, same database

    click = await fake.push_component(int(answer["id"]), f"council:answers:{council_id}")
    await fake.wait_for(
        lambda: (
            len(ephemeral_replies(fake, click.token)) >= 1
            and not ephemeral_replies(fake, click.token)[0]["flags"] & 128
        ),
        10,
    )
    replies = ephemeral_replies(fake, click.token)
    assert all(m["flags"] & 64 for m in replies)
    titles = " ".join(e.get("title", "") for m in replies for e in m["embeds"])
    assert all(name in titles for name in MEMBERS)
    assert "says: the answer is 42" in json.dumps([m["embeds"] for m in replies])

    for stage, expected in (("reviews", "Ballot"), ("ranking", "Aggregate ranking")):
        click = await fake.push_component(int(answer["id"]), f"council:{stage}:{council_id}")
        await fake.wait_for(
            lambda token=click.token: (
                ephemeral_replies(fake, token) and not ephemeral_replies(fake, token)[0]["flags"] & 128
            ),
            10,
        )
        assert expected in json.dumps(ephemeral_replies(fake, click.token))


@pytest.mark.parametrize("env", [{"COUNCIL_GRACE_S": 30}], indirect=True)
async def test_stop_and_synthesize_buttons(env, llm):
    fake = env.fake
    llm.script("gamma", council_member("slow gamma", latency_s=8))
    interaction = await fake.push_command("council", council_option("Who is slow?"), user_id=1001)
    status_id = await fake.wait_for(lambda: fake.interactions[interaction.token].original_id, 5)
    # The buttons appear with the first progress edit.
    await fake.wait_for(lambda: fake.messages[status_id]["components"], 5)
    council_id = fake.messages[status_id]["components"][0]["components"][0]["custom_id"].split(":")[2]
    await asyncio.wait_for(answered(env.service, council_id, {"alpha", "beta"}), 5)  # gamma is slow

    stranger = await fake.push_component(status_id, f"council:stop:{council_id}", user_id=2002)
    await fake.wait_for(lambda: ephemeral_replies(fake, stranger.token), 5)
    [refusal] = ephemeral_replies(fake, stranger.token)
    assert refusal["flags"] & 64 and "Only the person who asked" in refusal["content"]

    started = time.monotonic()
    asker = await fake.push_component(status_id, f"council:synth:{council_id}", user_id=1001)
    await fake.wait_for(lambda: ephemeral_replies(fake, asker.token), 5)
    await wait_finished(fake, within_s=6)
    assert time.monotonic() - started < 6, "synthesize-now did not wait for the slow member"
    result = await env.service.queries.get_result(council_id)
    assert result.synthesis is not None
    assert {a.model for a in result.answers if a.ok} >= {"alpha", "beta"}


async def test_admin_commands_need_manage_server(env):
    fake, service = env.fake, env.service
    origin = Origin(platform=Platform.DISCORD, workspace_id=str(fake.guild_id), channel_id=str(fake.channel_id))

    denied = await fake.push_command(
        "council-admin", subcommand("members", members="beta gamma"), permissions=BASIC_PERMISSIONS
    )
    await fake.wait_for(
        lambda: ephemeral_replies(fake, denied.token) and ephemeral_replies(fake, denied.token)[0]["content"], 10
    )
    [message] = ephemeral_replies(fake, denied.token)
    assert message["flags"] & 64 and "admin" in message["content"].lower()
    assert "Manage Server" in message["content"] and "Slack" not in message["content"]
    assert (await service.channels.channel_settings(origin)).members is None

    allowed = await fake.push_command(
        "council-admin",
        subcommand("members", members="beta, gamma"),
        permissions=BASIC_PERMISSIONS | MANAGE_GUILD,
        user_id=777,
    )
    await fake.wait_for(
        lambda: ephemeral_replies(fake, allowed.token) and ephemeral_replies(fake, allowed.token)[0]["content"], 10
    )
    assert "updated" in ephemeral_replies(fake, allowed.token)[0]["content"]
    assert (await service.channels.channel_settings(origin)).members == ["beta", "gamma"]
    [entry] = await service.channels.audit_log(Actor(user_id="777", is_platform_admin=True), origin)
    assert entry.action == "set_members" and entry.actor_id == "777"

    audit = await fake.push_command("council-admin", subcommand("audit"), permissions=MANAGE_GUILD, user_id=777)
    await fake.wait_for(
        lambda: ephemeral_replies(fake, audit.token) and ephemeral_replies(fake, audit.token)[0]["embeds"], 10
    )
    assert "set_members" in ephemeral_replies(fake, audit.token)[0]["embeds"][0]["description"]

    limits = await fake.push_command(
        "council-admin", subcommand("limits", user_per_hour=3), permissions=MANAGE_GUILD, user_id=777
    )
    await fake.wait_for(
        lambda: ephemeral_replies(fake, limits.token) and ephemeral_replies(fake, limits.token)[0]["content"], 10
    )
    assert (await service.channels.channel_settings(origin)).user_limit_per_hour == 3


@pytest.mark.slow
async def test_mention_starts_a_thread_and_follow_up_passes_history(env, llm):
    fake = env.fake
    question = await fake.push_message(f"<@{fake.bot_id}> What is the capital of France?")
    await wait_finished(fake)
    thread_id = int(question["id"])
    assert fake.calls_to("POST", f"/channels/{fake.channel_id}/messages/{question['id']}/threads")
    [answer] = answer_messages(fake)
    assert int(answer["channel_id"]) == thread_id

    llm.requests.clear()
    await fake.push_message(f"<@{fake.bot_id}> And of Italy?", channel_id=thread_id)
    await wait_finished(fake, 2)
    assert len(fake.threads()) == 1, "a follow-up stays in its thread"
    prompt = llm.requests_for("beta", stage=1)[0].messages
    roles = [m["role"] for m in prompt if m["role"] != "system"]
    contents = "\n".join(m["content"] for m in prompt)
    assert "What is the capital of France?" in contents
    assert "Final answer by alpha: 42." in contents  # the first answer, as assistant context
    assert roles[-1] == "user" and "And of Italy?" in prompt[-1]["content"]
    assert "assistant" in roles
    assert len(answer_messages(fake)) == 2

    # /council inside the thread answers there, with the whole thread as context.
    llm.requests.clear()
    await fake.push_command("council", council_option("And of Spain?"), channel_id=thread_id)
    await wait_finished(fake, 3)
    assert len(fake.threads()) == 1 and len(answer_messages(fake)) == 3
    assert all(int(m["channel_id"]) == thread_id for m in answer_messages(fake))
    contents = "\n".join(m["content"] for m in llm.requests_for("beta", stage=1)[0].messages)
    assert "What is the capital of France?" in contents and "And of Italy?" in contents
    assert contents.rstrip().endswith("And of Spain?") or "And of Spain?" in contents


async def test_follow_up_in_a_thread_started_by_slash_council(env, llm):
    """The thread's starter is the /council status message (a `chat_input_command` message that
    lives in the parent channel): a follow-up reads it as the first question of the thread."""
    fake = env.fake
    interaction = await fake.push_command("council", council_option("What is the capital of France?"))
    await wait_finished(fake)
    thread_id = fake.interactions[interaction.token].original_id
    assert fake.messages[thread_id]["type"] == 20  # discord.MessageType.chat_input_command
    assert fake.channels[thread_id]["type"] == 11

    llm.requests.clear()
    await fake.push_message(f"<@{fake.bot_id}> And of Italy?", channel_id=thread_id)
    await wait_finished(fake, 2)
    assert len(fake.threads()) == 1 and len(answer_messages(fake)) == 2
    prompt = llm.requests_for("beta", stage=1)[0].messages
    roles = [m["role"] for m in prompt if m["role"] != "system"]
    assert roles == ["user", "assistant", "user"]
    assert "What is the capital of France?" in prompt[-3]["content"]
    assert "\u200b" not in prompt[-3]["content"]
    assert "Final answer by alpha: 42." in prompt[-2]["content"]
    assert "And of Italy?" in prompt[-1]["content"]


async def test_reply_to_the_bot_and_other_bots(env, llm):
    fake = env.fake
    ignored = [
        await fake.push_message(f"<@{fake.bot_id}> I am a bot", bot=True, user_id=999),
        await fake.push_message("no mention here", mention_bot=False),
    ]

    # A later command: the two messages above, had they started anything, would have by its answer.
    await fake.push_command("council", council_option("First question"))
    await wait_finished(fake)
    [command_thread] = fake.threads()  # the command's own; a thread from a message has the message's id
    assert int(command_thread["id"]) not in {int(m["id"]) for m in ignored}
    assert all("First question" in r.user for r in llm.requests)
    status_id = next(iter(fake.interactions.values())).original_id
    llm.requests.clear()
    await fake.push_message("Why though?", reply_to=status_id, mention_bot=False)
    await wait_finished(fake, 2)
    assert len(answer_messages(fake)) == 2
    prompt = llm.requests_for("beta", stage=1)[0].messages
    assert [m["role"] for m in prompt if m["role"] != "system"][-3:] == ["user", "assistant", "user"]
    assert "First question" in prompt[-3]["content"] and "Why though?" in prompt[-1]["content"]


@pytest.mark.parametrize("env", [{"COUNCIL_ADMIN_USERS": "9003"}], indirect=True)
async def test_stage_buttons_show_a_council_only_where_the_service_lets_them(env):
    """Stage details go through the service's visibility rule, as exports do. A
    click from another channel by someone who did not ask is "not found"; the service's admins
    (Manage Server, or listed in COUNCIL_ADMIN_USERS, as for readers' votes) see it."""
    fake = env.fake
    await fake.push_command("council", council_option("Secret plans"))
    await wait_finished(fake)
    [answer] = answer_messages(fake)
    council_id = answer["components"][0]["components"][0]["custom_id"].split(":")[2]

    stranger = await fake.push_component(
        int(answer["id"]), f"council:answers:{council_id}", user_id=9001, channel_id=fake.other_channel_id
    )
    await fake.wait_for(lambda: "No council with id" in json.dumps(ephemeral_replies(fake, stranger.token)), 10)
    assert "says: the answer is 42" not in json.dumps(ephemeral_replies(fake, stranger.token))
    admin = await fake.push_component(
        int(answer["id"]),
        f"council:answers:{council_id}",
        user_id=9002,
        channel_id=fake.other_channel_id,
        permissions=BASIC_PERMISSIONS | MANAGE_GUILD,
    )
    await fake.wait_for(lambda: "says: the answer is 42" in json.dumps(ephemeral_replies(fake, admin.token)), 10)
    listed = await fake.push_component(
        int(answer["id"]), f"council:reviews:{council_id}", user_id=9003, channel_id=fake.other_channel_id
    )
    await fake.wait_for(lambda: "Review by" in json.dumps(ephemeral_replies(fake, listed.token)), 10)
    export = await fake.push_command(
        "council-export",
        [{"name": "id", "type": 3, "value": council_id}],
        user_id=9003,
        channel_id=fake.other_channel_id,
    )
    await fake.wait_for(
        lambda: [c for c in fake.calls if c.path.startswith(f"/webhooks/{fake.app_id}/{export.token}") and c.files], 10
    )


async def test_export_history_and_leaderboard(env):
    fake = env.fake
    await fake.push_command("council", council_option("Export me"))
    await wait_finished(fake)
    [answer] = answer_messages(fake)
    council_id = answer["components"][0]["components"][0]["custom_id"].split(":")[2]

    export = await fake.push_command("council-export", [{"name": "id", "type": 3, "value": council_id}])
    await fake.wait_for(
        lambda: [c for c in fake.calls if c.path.startswith(f"/webhooks/{fake.app_id}/{export.token}") and c.files], 10
    )
    [upload] = [c for c in fake.calls if c.path.startswith(f"/webhooks/{fake.app_id}/{export.token}") and c.files]
    ((_, name, content),) = upload.files
    assert name == f"council-{council_id}.md" and b"Export me" in content

    # Someone else, from another channel, gets "not found"; a member with Manage Server gets the file.
    stranger = await fake.push_command(
        "council-export",
        [{"name": "id", "type": 3, "value": council_id}],
        user_id=9001,
        channel_id=fake.other_channel_id,
    )
    await fake.wait_for(lambda: "No council with id" in json.dumps(ephemeral_replies(fake, stranger.token)), 10)
    assert not [c for c in fake.calls if c.path.startswith(f"/webhooks/{fake.app_id}/{stranger.token}") and c.files]
    admin = await fake.push_command(
        "council-export",
        [{"name": "id", "type": 3, "value": council_id}],
        user_id=9002,
        channel_id=fake.other_channel_id,
        permissions=BASIC_PERMISSIONS | MANAGE_GUILD,
    )
    await fake.wait_for(
        lambda: [c for c in fake.calls if c.path.startswith(f"/webhooks/{fake.app_id}/{admin.token}") and c.files], 10
    )

    history = await fake.push_command("council-history")
    await fake.wait_for(
        lambda: ephemeral_replies(fake, history.token) and ephemeral_replies(fake, history.token)[0]["embeds"], 10
    )
    assert council_id in ephemeral_replies(fake, history.token)[0]["embeds"][0]["description"]

    board = await fake.push_command("council-leaderboard", [{"name": "scope", "type": 3, "value": "all"}])
    await fake.wait_for(
        lambda: ephemeral_replies(fake, board.token) and ephemeral_replies(fake, board.token)[0]["embeds"], 15
    )
    description = ephemeral_replies(fake, board.token)[0]["embeds"][0]["description"]
    assert "alpha" in description and "Reviewer bias" in description

    help_ = await fake.push_command("council-help")
    await fake.wait_for(lambda: ephemeral_replies(fake, help_.token), 10)
    [text] = ephemeral_replies(fake, help_.token)
    assert text["flags"] & 64 and "/council question:" in text["content"] and len(text["content"]) <= 2000


@pytest.mark.slow
async def test_burst_of_mentions_in_one_channel_is_paced_and_every_answer_delivered(llm, tmp_path, caplog, capsys):
    """Load and pacing on Discord: 40 simultaneous mentions in one channel, against a
    Discord that allows 5 message writes per 5 s per channel and answers 429 beyond it. The 6
    admitted councils (2 running + 4 queued) each get their answer exactly once, in their thread;
    the 34 others are refused privately (a DM) with a retry hint; no channel is flooded."""
    caplog.set_level("INFO")
    base, gateway = discord.http.Route.BASE, DiscordWebSocket.DEFAULT_GATEWAY  # put back by the client
    fake = await FakeDiscord(channel_limit=(5, 5.0)).start()
    settings = make_settings(
        llm,
        tmp_path,
        DISCORD_TOKEN=TOKEN,
        DISCORD_API_URL=fake.api_url,
        COUNCIL_MAX_CONCURRENT=2,
        COUNCIL_MAX_QUEUED=4,
    )
    service = await CouncilService.open(settings)
    client = build_discord_client(service, settings, guild_ready_timeout=0.2)
    task = asyncio.create_task(client.start(TOKEN))
    try:
        await asyncio.wait_for(client.wait_until_ready(), 10)
        started = time.monotonic()
        for i in range(40):
            await fake.push_message(f"<@{fake.bot_id}> Question number {i}?", user_id=5000 + i, name=f"user{i}")
        await wait_finished(fake, 6, within_s=120)
        elapsed = time.monotonic() - started
        # A later mention, once every slot is free: its answer goes through the same paced channel
        # writer after everything queued before it, so a late write of the burst would show by then.
        await fake.push_message(f"<@{fake.bot_id}> A later question?", user_id=9000, name="later")
        await wait_finished(fake, 7, within_s=120)

        stored = await service.queries.history(limit=100)
        later = {s.council_id for s in stored if s.question == "A later question?"}
        accepted = {s.council_id for s in stored} - later
        footers = [(e.get("footer") or {}).get("text", "") for m in answer_messages(fake) for e in m["embeds"][-1:]]
        delivered = [re.match(r"Council ([0-9a-f]+)", f).group(1) for f in footers]
        dms = [m for m in fake.messages.values() if fake.channels.get(int(m["channel_id"]), {}).get("type") == 1]
        channels = {int(c.path.split("/")[2]) for c in fake.calls if c.path.startswith("/channels/")}
        peaks = {ch: fake.peak_writes(ch) for ch in channels}
        limited = [c for c in fake.calls if c.status == 429]
        show(
            capsys,
            f"\n[discord burst] 40 mentions: {len(accepted)} accepted, {len(set(delivered))} answers delivered "
            f"({len(delivered)} answer messages), {len(dms)} refusals by DM; "
            f"{len(fake.channel_writes(fake.channel_id))} writes to the channel, peak per 5 s "
            f"{peaks.get(fake.channel_id, 0)} there and {max(peaks.values())} in any channel, "
            f"{len(limited)} answered 429, {elapsed:.1f} s",
        )
        assert len(accepted) == 6 and len(dms) == 34 and len(later) == 1
        assert sorted(delivered) == sorted(accepted | later)  # every accepted answer, exactly once
        assert all("try again" in m["content"] for m in dms)
        assert max(peaks.values()) <= 5
        assert not errors_logged(caplog.records)
    finally:
        await client.close()
        await asyncio.gather(task, return_exceptions=True)
        await service.aclose()
        await fake.close()
        assert (discord.http.Route.BASE, DiscordWebSocket.DEFAULT_GATEWAY) == (base, gateway)
