"""Shared rendering: splitting within limits, pings neutralised, ranking lines."""

import random

import pytest

from bot.long_answer import split_text
from bot.render_text import (
    aggregate_table,
    neutralize_discord,
    neutralize_slack,
    ranking_line,
    short_model,
)
from core.models import Aggregate, AggregateEntry


@pytest.mark.parametrize("limit", [50, 300, 3000])
def test_split_text_respects_limit_and_loses_nothing(limit):
    rng = random.Random(limit)
    words = ["alpha", "beta", "gamma\n", "\n\n", "delta", "x" * 70]
    text = " ".join(rng.choice(words) for _ in range(2000))
    chunks = split_text(text, limit)
    assert all(len(c) <= limit for c in chunks)
    # Only whitespace at the cut points may go.
    assert "".join("".join(chunks).split()) == "".join(text.split())


def test_split_text_keeps_code_fences_balanced():
    text = "intro\n```python\n" + "print('hello world')\n" * 300 + "```\noutro"
    chunks = split_text(text, 500)
    assert len(chunks) > 3
    for chunk in chunks:
        assert chunk.count("```") % 2 == 0, chunk


def test_split_text_short_text_is_one_chunk():
    assert split_text("hello", 100) == ["hello"]


@pytest.mark.parametrize(
    "raw",
    ["<!channel> look", "<!here|here>", "<!everyone>", "hi <@U123ABC>", "<!subteam^S1>", "@channel now", "<#C1>"],
)
def test_neutralize_slack_breaks_every_mention_form(raw):
    out = neutralize_slack(raw)
    assert "<!" not in out and "<@" not in out and "<#" not in out
    assert "@channel" not in out.lower().replace("\u200b", "") or "@\u200b" in out


@pytest.mark.parametrize("raw", ["@everyone", "@here", "<@123>", "<@!123>", "<@&456>", "@EVERYONE hi"])
def test_neutralize_discord(raw):
    out = neutralize_discord(raw)
    assert "@everyone" not in out.lower() and "@here" not in out.lower()
    assert "<@" not in out


def test_ranking_line_and_table():
    aggregate = Aggregate(
        entries=[
            AggregateEntry(
                model="openrouter:openai/gpt-5.1", label="A", position=1, average_rank=1.0, rankings_count=3
            ),
            AggregateEntry(model="local:smollm2", label="B", position=2, average_rank=1.67, rankings_count=3),
        ],
        agreement_w=0.8,
        ballots_used=3,
    )
    line = ranking_line(aggregate)
    assert line.startswith("1. gpt-5.1 (1.00, 3 votes) · 2. smollm2 (1.67, 3 votes)")
    assert "W=0.80" in line
    table = aggregate_table(aggregate)
    assert "openrouter:openai/gpt-5.1" in table and "Kendall's W: 0.80" in table
    assert ranking_line(None) == "Ranking unavailable."


def test_short_model():
    assert short_model("openrouter:openai/gpt-5.1") == "gpt-5.1"
    assert short_model("local:smollm2") == "smollm2"
    assert short_model("llama3:8b") == "llama3:8b"
