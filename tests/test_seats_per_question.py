"""A question's own members and chairman (issue 33): the `members: a, b; chairman: c` keywords and
the rule on which models a question may choose (core/channels/admin.py), which admission applies
(the chat adapters' tests: test_slack_modes.py, test_discord_modes.py; the API: test_api.py)."""

from __future__ import annotations

import pytest

from core.channels.admin import allowed_models, check_choice
from core.errors import InputRejected
from core.models import ChannelSettings, CouncilConfig
from core.models.keywords import Keywords, split_keywords, split_seats_prefix


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("members: a, b; chairman: c What?", ("What?", ["a", "b"], "c")),
        (
            "Chairman: llama3:8b\nmembers: openai/gpt-5.1,anthropic/claude|local:smollm2  Why?",
            (
                "Why?",
                ["openai/gpt-5.1", "anthropic/claude|local:smollm2"],
                "llama3:8b",
            ),
        ),
        ("members: a b", ("b", ["a"], None)),  # ids are comma-separated: the question starts at `b`
        ("What are the members: a, b?", ("What are the members: a, b?", None, None)),
        ("plain question", ("plain question", None, None)),
    ],
)
def test_seats_prefix(text, expected):
    assert split_seats_prefix(text) == expected


@pytest.mark.parametrize("bad", ["members: ; chairman: c Q", "chairman: a, b Q", "members:"])
def test_seats_prefix_refuses_what_names_nothing(bad):
    with pytest.raises(InputRejected, match="needs"):
        split_seats_prefix(bad)


def test_keywords_in_any_order():
    assert split_keywords("search: members: a, b; chairman: c quick: Q?") == Keywords(
        "Q?", "quick", True, ["a", "b"], "c"
    )
    assert split_keywords("auto: Q") == Keywords("Q", "auto")


def test_allowed_models_default_to_the_channels_council_with_fallbacks():
    config = CouncilConfig(members=["a|a2", "b"], chairman="c|b")
    assert allowed_models(config, None) == ["a", "a2", "b", "c"]
    listed = ChannelSettings(channel_key="k", allowed_models=["x", "y"])
    assert allowed_models(config, listed) == ["x", "y"]
    check_choice(["a", "b", "c"], ["a", "b"], "c")
    check_choice(["a", "b"], None, None)
    with pytest.raises(InputRejected, match=r"`x`, `y` are not allowed here; this channel allows: a, b\."):
        check_choice(["a", "b"], ["a|x"], "y")
