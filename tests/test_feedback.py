"""Readers' feedback in the core: one changeable vote per user per council, comments, who may
vote, and the votes in history, exports and the leaderboard (real service, real SQLite)."""

import json

import pytest

from core.errors import InputRejected, NotFound
from core.models import Origin, Platform
from core.models.feedback import Vote
from core.service import CouncilService
from tests.conftest import BACKENDS, backend_url, make_settings

ASKED = Origin(platform=Platform.SLACK, workspace_id="T1", channel_id="C1", user_id="U1", user_name="ada")
READER = ASKED.model_copy(update={"user_id": "U2", "user_name": "bob"})
OUTSIDER = ASKED.model_copy(update={"channel_id": "C9", "user_id": "U9"})
OTHER_TEAM = ASKED.model_copy(update={"workspace_id": "T2"})


@pytest.fixture(params=BACKENDS)
def database_url(request, tmp_path) -> str:
    """The feedback SQL is plain SQL for both backends: every service test runs on each."""
    return backend_url(request, tmp_path)


async def test_one_vote_per_user_per_council_changeable_with_a_comment(service, llm):
    result = await service.ask("What is six times seven?", ASKED)
    cid = result.council_id
    first = await service.feedback.vote(cid, READER, "bad")
    assert first.vote is Vote.BAD and first.comment is None
    changed = await service.feedback.vote(cid, READER, Vote.GOOD)
    assert changed.vote is Vote.GOOD and changed.created_at == first.created_at
    assert changed.updated_at >= first.updated_at
    await service.feedback.vote(cid, ASKED, "bad")
    commented = await service.feedback.comment(cid, ASKED, "  Missed the units. key=test-key-not-secret ")
    assert commented.comment.startswith("Missed the units. key=") and "test-key-not-secret" not in commented.comment
    votes = await service.feedback.votes(cid)
    assert [(v.user_id, v.vote) for v in votes] == [("U2", Vote.GOOD), ("U1", Vote.BAD)]

    [summary] = await service.queries.history(ASKED, "channel")
    assert (summary.votes_good, summary.votes_bad) == (1, 1)
    document = json.loads(await service.queries.export(cid, "json"))
    assert document["feedback"]["good"] == 1 and document["feedback"]["bad"] == 1
    assert {v["user_id"]: v["comment"] for v in document["feedback"]["votes"]}["U2"] is None
    markdown = await service.queries.export(cid, "markdown")
    assert "## Readers' feedback" in markdown and "👎 ada" in markdown and "Missed the units." in markdown

    recent = await service.feedback.recent(days=1)
    assert {e.user_id for e in recent} == {"U1", "U2"} and recent[0].question == "What is six times seven?"


async def test_only_someone_who_can_see_the_council_may_vote(service, llm):
    result = await service.ask("What is six times seven?", ASKED)
    cid = result.council_id
    for viewer in (OUTSIDER, OTHER_TEAM):
        with pytest.raises(NotFound):
            await service.feedback.vote(cid, viewer, "good")
    # An admin of the workspace sees every council of it; another workspace's admin does not.
    assert (await service.feedback.vote(cid, OUTSIDER, "good", admin=True)).vote is Vote.GOOD
    with pytest.raises(NotFound):
        await service.feedback.vote(cid, OTHER_TEAM, "good", admin=True)
    with pytest.raises(NotFound):
        await service.feedback.vote("0123456789abcdef", READER, "good")
    with pytest.raises(InputRejected):
        await service.feedback.vote(cid, READER, "meh")
    with pytest.raises(InputRejected):  # a comment needs a vote first
        await service.feedback.comment(cid, READER, "why")
    assert [v.user_id for v in await service.feedback.votes(cid)] == ["U9"]


async def test_leaderboard_shows_human_approval_per_chairman_and_winner(service, llm):
    from bot.render_text import leaderboard_table

    results = [await service.ask(f"Question {i}?", ASKED) for i in range(2)]
    await service.feedback.vote(results[0].council_id, ASKED, "good")
    await service.feedback.vote(results[0].council_id, READER, "good")
    await service.feedback.vote(results[1].council_id, ASKED, "bad")
    board = await service.leaderboard(None, "all", rounds=50)
    approval = {a.model: a for a in board.approval}
    assert (approval["alpha"].chairman_good, approval["alpha"].chairman_bad) == (2, 1)
    winners = [r.aggregate.entries[0].model for r in results]
    assert sum(a.winner_good + a.winner_bad for a in approval.values()) == 3
    assert approval[winners[1]].winner_bad >= 1
    table = leaderboard_table(board)
    assert "👍 as chairman" in table and "67% (2/3)" in table


async def test_votes_survive_a_reopened_database(llm, tmp_path):
    settings = make_settings(llm, tmp_path)
    async with await CouncilService.open(settings) as service:
        cid = (await service.ask("What is six times seven?", ASKED)).council_id
        await service.feedback.vote(cid, READER, "good")
    async with await CouncilService.open(settings) as service:
        assert [v.vote for v in await service.feedback.votes(cid)] == [Vote.GOOD]
        assert await service.storage.schema_version() >= 5
