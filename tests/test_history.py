"""Thread history from the message map (bot/history.py) and the map's core face (core/records/messages.py),
on a real service and database: our mapped messages become the council's question and answer,
progress is left out, an answer split over several messages is one turn, unmapped ones of ours
are not context, people's messages are theirs."""

from __future__ import annotations

import asyncio
import logging

from bot.history import ThreadMessage, conversation
from core.models import ConversationTurn, Origin, Platform
from tests.llm_server import Hang

ORIGIN = Origin(platform=Platform.SLACK, workspace_id="T1", channel_id="C1", thread_id="1.0", user_id="U1")


def ours(message_id: str, text: str) -> ThreadMessage:
    return ThreadMessage(message_id, ours=True, author=None, text=text)


def theirs(message_id: str, author: str, text: str) -> ThreadMessage:
    return ThreadMessage(message_id, ours=False, author=author, text=text)


async def test_a_stored_council_is_its_question_and_one_answer(service):
    result = await service.ask("What is the answer?", ORIGIN)
    cid = result.council_id
    assert result.synthesis is not None
    for message_id, role in (("2", "question"), ("3", "progress"), ("4", "answer"), ("5", "answer")):
        await service.messages.record(Platform.SLACK, "C1", message_id, cid, role)
    thread = [
        theirs("1", "U1", "what is the answer?"),
        ours("2", "> What is the ans…"),  # the shown text is cut: the stored question wins
        ours("3", "Done in 3s"),
        ours("4", "Final answer by al"),  # an answer split over two messages
        ours("5", "pha: 42. (cut)"),
        ours("6", "Here is how to use me"),  # help: ours, but no council's
        theirs("7", "U2", "thanks!"),
        theirs("8", "U2", ""),
    ]
    assert await conversation(service, Platform.SLACK, "C1", thread) == [
        ConversationTurn(role="user", content="what is the answer?", author="U1"),
        ConversationTurn(role="user", content="What is the answer?"),
        ConversationTurn(role="assistant", content=result.synthesis.text, author="council"),
        ConversationTurn(role="user", content="thanks!", author="U2"),
    ]


async def test_each_council_of_a_thread_is_read_once(service, monkeypatch):
    result = await service.ask("What is the answer?", ORIGIN)
    cid = result.council_id
    for message_id, role in (("1", "question"), ("2", "answer"), ("3", "answer")):
        await service.messages.record(Platform.SLACK, "C1", message_id, cid, role)
    read: list[str] = []
    get_result = service.queries.get_result

    async def counted(council_id):
        read.append(council_id)
        return await get_result(council_id)

    monkeypatch.setattr(service.queries, "get_result", counted)
    turns = await conversation(service, Platform.SLACK, "C1", [ours("1", "q"), ours("2", "a"), ours("3", "b")])
    assert [t.role for t in turns] == ["user", "assistant"] and read == [cid]


async def test_the_shown_text_stands_in_for_a_council_not_stored(service):
    for message_id, role in (("q", "question"), ("a1", "answer"), ("a2", "answer")):
        await service.messages.record("discord", "20", message_id, "not-stored", role)
    thread = [ours("q", "What was asked?"), ours("a1", "Part one."), ours("a2", "Part two.")]
    # Once per council, as for a stored one: the first part stands in for the answer.
    assert await conversation(service, Platform.DISCORD, "20", thread) == [
        ConversationTurn(role="user", content="What was asked?"),
        ConversationTurn(role="assistant", content="Part one.", author="council"),
    ]
    # The map is per platform and channel: the same ids elsewhere are not ours to read.
    assert await conversation(service, Platform.DISCORD, "21", thread) == []
    assert await conversation(service, Platform.SLACK, "20", thread) == []


async def test_a_running_councils_question_is_its_request(service, llm):
    llm.script("gamma", Hang())
    run = await service.start_council("Still thinking?", ORIGIN)
    try:
        await service.messages.record(Platform.SLACK, "C1", "9.1", run.council_id, "question")
        turns = await conversation(service, Platform.SLACK, "C1", [ours("9.1", "")])
        assert turns == [ConversationTurn(role="user", content="Still thinking?")]
    finally:
        run.stop()
        await asyncio.wait_for(run.wait(), 30)


async def test_one_lookup_for_the_whole_thread_and_none_without_our_messages(service, monkeypatch):
    asked: list[list[str]] = []
    lookup = service.messages.lookup

    async def counted(platform, channel_id, message_ids):
        asked.append(list(message_ids))
        return await lookup(platform, channel_id, message_ids)

    monkeypatch.setattr(service.messages, "lookup", counted)
    await conversation(service, "slack", "C1", [ours("1", "a"), theirs("2", "U1", "b"), ours("3", "c")])
    assert asked == [["1", "3"]]
    assert await conversation(service, "slack", "C1", [theirs("4", "U1", "hi")]) == [
        ConversationTurn(role="user", content="hi", author="U1")
    ]
    assert asked == [["1", "3"]]


async def test_recording_never_raises(service, caplog):
    await service.storage.close()  # every write now fails
    with caplog.at_level(logging.WARNING, logger="core.records.messages"):
        await service.messages.record(Platform.SLACK, "C1", "1.1", "cid", "answer")
    assert "could not map message 1.1" in caplog.text
