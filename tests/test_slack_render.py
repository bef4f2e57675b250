"""Slack Block Kit rendering and admin parsing, without any server."""

from __future__ import annotations

import json

import pytest

from bot.councils import answer_file, is_long
from bot.progress import CouncilProgress
from bot.slack import modals, render
from bot.slack.admin import parse_admin
from core.errors import InputRejected
from core.models import (
    ChairmanToken,
    CouncilStarted,
    CouncilStatus,
    ErrorInfo,
    ErrorKind,
    MemberAnswer,
    StageStarted,
    Synthesis,
)
from tests.factories import make_result
from tests.slack_fake import MESSAGE_BLOCKS, MODAL_BLOCKS, SECTION_TEXT, block_problems


def check(blocks, limit=MESSAGE_BLOCKS):
    assert not block_problems(blocks, limit), block_problems(blocks, limit)
    assert len(blocks) <= limit
    for block in blocks:
        if block["type"] == "section":
            assert len(block["text"]["text"]) <= SECTION_TEXT


def texts(blocks) -> str:
    return json.dumps(blocks, ensure_ascii=False)


@pytest.mark.parametrize(
    ("markdown", "expected"),
    [
        ("**bold** and *italic*", "*bold* and _italic_"),
        ("__bold__ ~~gone~~", "*bold* ~gone~"),
        ("## A heading ##", "*A heading*"),
        ("- one\n  * two\n+ three", "• one\n  • two\n• three"),
        ("see [the docs](https://example.com/a?b=1&c=2)", "see <https://example.com/a?b=1&amp;c=2|the docs>"),
        ("a < b > c & d", "a &lt; b &gt; c &amp; d"),
        ("> quoted\n-> arrow", "> quoted\n-&gt; arrow"),
        ("`**kept**` **bold**", "`**kept**` *bold*"),
        ("```python\nif a < b:\n    x = '**'\n```", "```\nif a &lt; b:\n    x = '**'\n```"),
        ("```\nunclosed <tag>", "```\nunclosed &lt;tag&gt;\n```"),
        ("---", "──────────"),
        ("2 * 3 * 4 = 24", "2 * 3 * 4 = 24"),
    ],
)
def test_markdown_becomes_mrkdwn(markdown, expected):
    assert render.mrkdwn(markdown) == expected


@pytest.mark.parametrize(
    "text",
    [
        "<!channel> hi",
        "<!here|here>",
        "<@U999>",
        "<!subteam^S1>",
        "<#C1>",
        "[x](<!channel>)",
        "[x](https://a.b/<!channel>)",
        "@here and @everyone and @channel",
    ],
)
def test_no_text_can_ping(text):
    for out in (render.mrkdwn(text), render.plain(text)):
        assert "<!" not in out and "<@" not in out and "<#" not in out
        assert "@here" not in out and "@everyone" not in out and "@channel" not in out


def test_result_message_order_and_limits():
    result = make_result()  # degraded: the chairman failed, a member synthesized
    [message] = render.result_messages(result)
    blocks = message["blocks"]
    check(blocks)
    assert blocks[0]["block_id"] == f"council-a-{result.council_id}-0"
    assert ":warning:" in blocks[0]["text"]["text"] and "chairman" in blocks[0]["text"]["text"]
    assert "Paris." in blocks[1]["text"]["text"]
    kinds = [b["type"] for b in blocks]
    # Under the answer: one plain line with the footer, stage buttons, then Slack's feedback buttons (👍 / 👎).
    assert kinds[-3:] == ["context", "actions", "context_actions"] and kinds[-4] == "section"
    [feedback] = blocks[-1]["elements"]
    assert feedback["type"] == "feedback_buttons" and feedback["action_id"] == "council_feedback"
    assert feedback["positive_button"]["value"] == f"good:{result.council_id}"
    assert feedback["negative_button"]["value"] == f"bad:{result.council_id}"
    assert "Ranking: 1. m-a" not in texts(blocks)  # the figures are behind the Ranking button
    assert "3 of 4 members answered" in texts(blocks)
    assert "Paris" in message["text"] or "chairman" in message["text"]


@pytest.mark.parametrize("size", [2999, 3001, 11999, 12000])
def test_answers_up_to_the_file_threshold_are_split_into_sections(size):
    result = make_result()
    result.synthesis = Synthesis(model="m-a", text="y" * size)  # no break anywhere
    messages = render.result_messages(result)
    assert len(messages) == 1 and not is_long(result)
    check(messages[0]["blocks"])
    shown = "".join(b["text"]["text"] for b in messages[0]["blocks"][1:] if b["type"] == "section")
    assert shown.count("y") == size


def test_long_answer_shows_the_start_and_is_attached():
    result = make_result()
    text = ("A sentence of the answer. " * 40 + "\n\n") * 30
    result.synthesis = Synthesis(model="m-a", text=text)
    assert is_long(result)
    [message] = render.result_messages(result)
    check(message["blocks"])
    assert "The answer is cut here" in texts(message["blocks"])
    assert 11000 < len(texts(message["blocks"])) < 16000  # the same start every surface shows
    filename, _title, content = answer_file(result)
    assert filename == f"council-{result.council_id}.md" and text in content
    assert content.startswith("# What is the capital of France?")


def test_failed_and_cancelled_results():
    result = make_result()
    result.status = CouncilStatus.FAILED
    result.synthesis = None
    result.aggregate = None
    result.reviews = []
    result.error = ErrorInfo(kind=ErrorKind.AUTH, message="every member failed <!channel>")
    [message] = render.result_messages(result)
    check(message["blocks"])
    first = message["blocks"][0]["text"]["text"]
    assert first.startswith(":warning: The council failed") and "<!channel>" not in first
    assert "m-down: auth 401" in texts(message["blocks"])
    assert [e["action_id"] for e in message["blocks"][-1]["elements"]] == ["council_stage_answers"]
    result.status = CouncilStatus.CANCELLED
    assert "stopped" in render.result_messages(result)[0]["blocks"][0]["text"]["text"]
    assert "stopped" in render.final_status(result)


def test_stage_modals_stay_within_limits():
    result = make_result()
    huge = ("Long answer paragraph. " * 100 + "\n\n") * 20  # ~46,000 characters each
    result.answers = [
        MemberAnswer(model=f"vendor/model-{i}", label=chr(65 + i), text=huge, latency_s=1.0) for i in range(8)
    ]
    for stage in render.STAGES:
        view = modals.stage_modal(result, stage)
        assert view["type"] == "modal" and len(view["title"]["text"]) <= modals.MODAL_TITLE_MAX
        check(view["blocks"], MODAL_BLOCKS)
        assert len(texts(view["blocks"])) < 80000
    answers = texts(modals.stage_modal(result, "answers")["blocks"])
    assert all(f"vendor/model-{i}" in answers for i in range(8))
    assert f"/council export {result.council_id}" in answers
    reviews = texts(modals.stage_modal(result, "reviews")["blocks"])
    assert "Extracted ballot (complete): m-b &gt; m-c" in reviews and "Labels: A = m-a" in reviews
    assert "Extracted ballot: none" in reviews
    ranking = texts(modals.stage_modal(result, "ranking")["blocks"])
    assert "copeland" in ranking and "Kendall's W: 0.75" in ranking


def test_short_answers_are_shown_whole_in_the_modal():
    result = make_result()
    result.answers[0].text = "z" * 20000
    view = modals.stage_modal(result, "answers")
    assert texts(view["blocks"]).count("z") == 20000
    assert "Paris, says m-b." in texts(view["blocks"])


def test_status_message_while_streaming():
    progress = CouncilProgress("abc123")
    progress.apply(CouncilStarted(council_id="abc123", members=["a/x", "b/y"], chairman="a/x"))
    progress.apply(StageStarted(council_id="abc123", stage=3))
    progress.apply(ChairmanToken(council_id="abc123", model="a/x", delta="<!here> " + "token " * 2000))
    message = render.status_message("abc123", progress)
    check(message["blocks"])
    assert message["blocks"][0]["block_id"] == "council-s-abc123"
    assert message["blocks"][-1]["type"] == "actions"
    assert "<!here>" not in texts(message["blocks"])
    assert "Stage 3 · chairman synthesis" in message["blocks"][0]["text"]["text"]
    done = render.status_message("abc123", None, running=False, final="done")
    assert [b["type"] for b in done["blocks"]] == ["section", "context"]
    assert done["blocks"][0]["block_id"] == "council-s-abc123"


def test_question_message():
    message = render.question_message("Why <!channel>?\n" + "q" * 5000, "U1", "cid1")
    check(message["blocks"])
    assert message["blocks"][0]["text"]["text"].startswith("<@U1> asked the council:\n> Why")
    assert (
        "&lt;!channel&gt;?" in texts(message["blocks"])
        and "".join(b["text"]["text"] for b in message["blocks"]).count("q") == 5000
    )
    assert "<!channel>" not in message["text"]
    assert message["blocks"][0]["block_id"] == "council-q-cid1"


def test_parse_admin():
    assert parse_admin("members a, b c").members == ["a", "b", "c"]
    assert parse_admin("chairman x/y").chairman == "x/y"
    assert parse_admin("limits user=3 channel=10 budget=$2.5").limits == {
        "user_per_hour": 3,
        "channel_per_hour": 10,
        "daily_budget_usd": 2.5,
    }
    assert parse_admin("audit 5").count == 5
    assert parse_admin("SHOW").op == "show"
    for bad in ("", "help", "frob", "members", "chairman a b", "limits", "limits user=x", "limits speed=3", "audit 99"):
        with pytest.raises(InputRejected):
            parse_admin(bad)


def test_streamed_text_is_cut_between_words_and_never_pings():
    """The chairman's text, arriving a character at a time, is sent in pieces that are each
    neutralised: no piece may end inside `<!here>`, `<@U1>` or `@channel`."""
    import re

    from bot.progress import CouncilProgress
    from bot.render_text import neutralize_slack
    from bot.slack.stream import ProgressStream

    text = (
        "Hi <!here> and <@U999>, ping @channel or @everyone; mail a@b.c <#C1> `code <!channel>` "
        + "x" * 50
        + "<!subteam^S1> end @here\n"
    ) * 3
    stream = ProgressStream(None, "C1", "1.1", team_id="T1", user_id="U1")  # type: ignore[arg-type]
    progress = CouncilProgress("c1", stage=3, chairman="alpha", chairman_model="alpha")
    pieces = []
    for i in range(1, len(text) + 1):
        progress.chairman_text = text[:i]
        stream._progress = progress
        if i % 7 and i < len(text):
            continue
        chunks, commit = stream._pending(final=i == len(text))
        commit()
        pieces += [c["text"] for c in chunks if c["type"] == "markdown_text"]
    joined = "".join(pieces)
    assert len(pieces) > 10
    assert joined.replace("\u200b", "") == text
    assert joined == neutralize_slack(text)  # the pieces, each neutralised, as the whole would be
    assert not re.search(r"<[!@#]", joined) and not re.search(r"@(here|channel|everyone)", joined)
