"""One long answer, the same on every surface's test: about 14,600 characters of Markdown with a
table near the start and a Python code block across the 12,000-character mark, so a surface that
cuts by characters ends inside the code (or mid-word); the rule (bot/long_answer.py) shows the
blocks before the code, says it is cut outside any block and attaches the whole answer."""

from __future__ import annotations

import re

from bot.long_answer import LONG_ANSWER_CHARS

_PARAGRAPH = (
    "Observability starts with the questions you will ask at three in the morning: which request "
    "failed, for whom, and what changed since yesterday. Logs answer the first, traces the second, "
    "and metrics with honest labels the third; none of them replaces reading the code that runs. "
    "Inline the identifiers you need to join them later, keep the cardinality of every label "
    "bounded, and write down the service level you promise before choosing the tools that measure "
    "it, because the promise decides what is worth an alert and what is only worth a dashboard."
)
_TABLE = (
    "| signal | answers | cost |\n"
    "| --- | --- | --- |\n"
    "| logs | what happened | storage |\n"
    "| traces | where the time went | sampling |\n"
    "| metrics | how often, how slow | cardinality |"
)
_FUNCTION = (
    "def observe_{i}(request):\n    span = tracer.start_span('handler_{i}')\n"
    "    span.set_attribute('route', request.path)\n    return span"
)
_CODE = "```python\n" + "\n".join(_FUNCTION.format(i=i) for i in range(14)) + "\n```"


def _build() -> str:
    head = ["# Observability for a small team", _PARAGRAPH, _TABLE]
    body = [f"## Part {i}\n\n{_PARAGRAPH}" for i in range(1, 40)]
    text = "\n\n".join(head)
    while len(text) + len(_PARAGRAPH) + 20 < 11_400:
        text += "\n\n" + body.pop(0)
    text += "\n\n" + _CODE
    while len(text) < 14_500:
        text += "\n\n" + body.pop(0)
    return text + "\n\nThe end of the answer."


LONG_ANSWER = _build()
CODE_AT = LONG_ANSWER.index("```python")
SHOWN = LONG_ANSWER[:CODE_AT].rstrip()  # what every surface shows: the blocks before the code
LAST_SHOWN = SHOWN.rsplit("\n\n", 1)[-1][-60:]  # the end of the last paragraph shown
assert CODE_AT < LONG_ANSWER_CHARS < LONG_ANSWER.index("```", CODE_AT + 3) < 14_000 < len(LONG_ANSWER) < 15_000


def assert_cut_between_blocks(shown: str, note: str = "The answer is cut here") -> None:
    """`shown` (a surface's text of the answer, its cut note included) ends with the blocks before
    the code block, whole; every code fence in it is closed; the note comes after them, outside."""
    assert shown.count("```") % 2 == 0, "a code block left open"
    assert "observe_0" not in shown, "the code block across the limit is not shown in part"
    before, _, after = shown.partition(note)
    assert after, "the cut note is missing"
    assert before.rstrip(" _*(\n").endswith(LAST_SHOWN), before[-200:]
    assert "```" not in after and "|" not in after.split("\n")[0]
    assert not re.search(r"\w…", shown), "cut mid-word"
