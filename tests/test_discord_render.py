"""Discord rendering stays within Discord's message and embed limits whatever the models write."""

from __future__ import annotations

import discord

from bot.discord import render
from core.models import (
    Aggregate,
    AggregateEntry,
    CouncilConfig,
    CouncilRequest,
    CouncilResult,
    CouncilStatus,
    MemberAnswer,
    ParseStatus,
    Review,
    Synthesis,
)


def result(answer_chars: int = 30_000, members: int = 8, status=CouncilStatus.OK, by_chairman=True) -> CouncilResult:
    models = [f"provider/model-{i}" for i in range(members)]
    text = ("Lorem ipsum dolor sit amet @everyone <@123>. " * (answer_chars // 45 + 1))[:answer_chars]
    request = CouncilRequest(question="q", config=CouncilConfig(members=models, chairman=models[0]))
    return CouncilResult(
        council_id=request.council_id,
        request=request,
        status=status,
        answers=[MemberAnswer(model=m, label=chr(65 + i), text=text, latency_s=1.0) for i, m in enumerate(models)],
        reviews=[
            Review(
                reviewer=m,
                text=text,
                shown_labels=["A", "B"],
                ballot_labels=["A", "B"],
                ballot_models=models[:2],
                parse_status=ParseStatus.COMPLETE,
            )
            for m in models
        ],
        label_to_model={chr(65 + i): m for i, m in enumerate(models)},
        aggregate=Aggregate(
            entries=[
                AggregateEntry(model=m, position=i + 1, average_rank=i + 1.0, rankings_count=3)
                for i, m in enumerate(models)
            ],
            agreement_w=0.5,
            ballots_used=8,
        ),
        synthesis=Synthesis(
            model=models[1],
            text=text,
            by_chairman=by_chairman,
            note=None if by_chairman else "The chairman timed out; model-1 synthesized.",
        ),
        notices=[] if status is CouncilStatus.OK else ["model-7 failed: timeout"],
        timings={"total_s": 12.0},
    )


def within_limits(messages: list[dict]) -> None:
    for message in messages:
        embeds: list[discord.Embed] = message.get("embeds", [])
        assert len(embeds) <= 10
        assert sum(len(e) for e in embeds) <= 6000
        for e in embeds:
            assert len(e.description or "") <= 4096 and len(e.title or "") <= 256
            assert all(len(f.value or "") <= 1024 for f in e.fields)
            assert "@everyone" not in (e.description or "") and "<@123>" not in (e.description or "")
        assert len(message.get("content") or "") <= 2000


def test_long_answer_is_cut_and_attached():
    r = result()
    messages = render.result_messages(r)
    within_limits(messages)
    # Cut with a note; the file itself is the runner's, as on Slack (bot/following.py, tested end to end).
    assert "The answer is cut here" in "".join(e.description or "" for m in messages for e in m["embeds"])
    assert "file" not in messages[-1]
    assert messages[0]["embeds"][-1].footer.text.startswith(f"{render.FOOTER_PREFIX}{r.council_id}")


def test_medium_answer_is_split_without_file():
    messages = render.result_messages(result(answer_chars=9000))
    within_limits(messages)
    assert "file" not in messages[-1]
    joined = "".join(e.description for m in messages for e in m["embeds"])
    assert joined.count("Lorem") >= 190


def test_degraded_result_says_so_first():
    messages = render.result_messages(result(answer_chars=200, status=CouncilStatus.DEGRADED, by_chairman=False))
    first = messages[0]["embeds"][0]
    assert first.title.startswith("⚠️") and "standing in for the chairman" in first.title
    assert first.description.startswith("⚠️ The chairman timed out")


def test_stage_details_fit_in_a_few_messages():
    r = result(answer_chars=12_000)
    for stage in ("answers", "reviews", "ranking"):
        messages = render.stage_messages(r, stage, markdown="# full")
        within_limits(messages)
        assert len(messages) <= render.STAGE_MESSAGES


def test_status_message_fits_and_round_trips_the_question():
    from bot.progress import CouncilProgress

    progress = CouncilProgress("abc")
    progress.stage = 3
    progress.chairman_text = "x @everyone " * 1000
    content = render.status_content("What now?\nSecond line @here", "abc", "<@1>", progress)
    assert len(content) <= 2000 and "@everyone" not in content and "@here" not in content
    assert render.question_from_status(content) == "What now?\nSecond line @\u200bhere"
