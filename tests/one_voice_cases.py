"""The table of tests/test_one_voice.py: one set of councils (scripts for the scripted LLM server)
and the facts every interface must say of each, the same in all of them: who wrote the answer
(and why, when it was not simply the chairman), which members failed, how many ballots the
chairman's ranking was read from and the reviews that came after the synthesis began, the mode.

The reviewers rank the answers by what they say (each member's answer carries a word of its own;
the prompts show no model id), never by label: labels are shuffled per reviewer, and a ranking
by label would make the stand-in, or which review comes late, a matter of chance.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from tests.conftest import MEMBERS
from tests.llm_server import (
    Behaviour,
    ByStage,
    Fail,
    RecordedRequest,
    Reply,
    ScriptedLLMServer,
    WaitFor,
    shown_answers,
)

CHAIRMAN = "alpha"  # COUNCIL_CHAIRMAN of every surface here
WORDS = {"alpha": "basalt", "beta": "fjords", "gamma": "deltas"}
QUESTION = "What is six times seven?"
_ASKED_ON = re.compile(r"\(asked on ([a-z ]+)\)")


def asked_on(where: str) -> str:
    """The question as one surface asks it: the surfaces ask at once, and a council is known by it."""
    return f"{QUESTION} (asked on {where})"


def where_asked(call: RecordedRequest) -> str:
    """Which surface asked the council a model call belongs to (`asked_on`)."""
    found = _ASKED_ON.search(call.user)
    return found.group(1) if found else ""


@dataclass
class UntilItsSynthesis(Behaviour):
    """Holds the reply until the chairman of the same council (the same question) has been asked."""

    then: Behaviour

    async def respond(self, request, call, server):
        asked = where_asked(call)
        held = WaitFor(lambda other: other.stage == 3 and where_asked(other) == asked, self.then)
        return await held.respond(request, call, server)


def answer_of(model: str) -> str:
    return f"The answer is 42, as the {WORDS[model]} show."


def ranked_by(markers: Sequence[str]) -> Callable[[RecordedRequest], str]:
    """A review ranking the shown answers by the first of `markers` each contains (the first marker best)."""

    def text(call: RecordedRequest) -> str:
        answers = shown_answers(call.user)
        place = {
            label: next((i for i, m in enumerate(markers) if m in t), len(markers)) for label, t in answers.items()
        }
        ranked = sorted(answers, key=lambda label: (place[label], label))
        lines = "\n".join(f"{i}. Response {label}" for i, label in enumerate(ranked, 1))
        return f"Notes on each response.\n\nFINAL RANKING:\n{lines}"

    return text


def member(answer: str, review: Callable[[RecordedRequest], str] | Behaviour, synthesis: str | Behaviour) -> ByStage:
    def behaviour(b: Callable[[RecordedRequest], str] | str | Behaviour) -> Behaviour:
        return b if isinstance(b, Behaviour) else Reply(b)

    return ByStage(Reply(answer), behaviour(review), behaviour(synthesis))


def in_order(models: Sequence[str] = MEMBERS) -> Callable[[RecordedRequest], str]:
    """A review ranking the answers by their writers, in `models`' order."""
    return ranked_by([WORDS[m] for m in models])


def synthesis_by(model: str) -> str:
    return f"Council: 42 (written by {model})."


def healthy(llm: ScriptedLLMServer, order: Sequence[str] = MEMBERS, **changes: Behaviour) -> None:
    """Every member answers with its word and ranks the answers in `order` (alpha, beta, gamma)."""
    review = in_order(order)
    for name in MEMBERS:
        llm.script(name, changes.get(name) or member(answer_of(name), review, synthesis_by(name)))


def chairman(llm: ScriptedLLMServer) -> None:
    healthy(llm)


def as_written(llm: ScriptedLLMServer) -> None:
    for name in MEMBERS:  # whichever two seats answer first give the same short answer
        llm.script(name, member("42.", ranked_by([]), synthesis_by(name)))


def stand_in(llm: ScriptedLLMServer) -> None:
    # The chairman (alpha) fails to synthesize; beta, ranked first of the others, stands in and
    # writes for a second or so: a streamed answer opens with the stand-in before the result is known.
    writing = Reply(synthesis_by("beta") + " Six sevens make forty-two." * 8, token_delay_s=0.03)
    healthy(
        llm,
        alpha=member(answer_of("alpha"), in_order(), Fail(500)),
        beta=member(answer_of("beta"), in_order(), writing),
    )


def failed_member(llm: ScriptedLLMServer) -> None:
    healthy(llm, gamma=Fail(401, "invalid api key"))


def escalated(llm: ScriptedLLMServer) -> None:
    numbers = {name: f"{n}." for n, name in enumerate(MEMBERS, 41)}  # any two of them disagree
    review = ranked_by(list(numbers.values()))
    for name, number in numbers.items():
        llm.script(name, member(number, review, synthesis_by(name)))


def late_review(llm: ScriptedLLMServer) -> None:
    # Every ballot puts gamma first; gamma's, which cannot change that, waits for the chairman's
    # call: the chairman starts without it (once it is a straggler) and it arrives late.
    order = ["gamma", "alpha", "beta"]
    late = member(answer_of("gamma"), UntilItsSynthesis(Reply(in_order(order))), synthesis_by("gamma"))
    healthy(llm, order, gamma=late)


# Every surface's grace: a straggler (a review left once first place is decided) gets 10 s, so that
# no ballot is left behind on a busy machine, where six councils run at once.
GRACE = {"COUNCIL_GRACE_S": "10"}
# The late review's case: stage 1 waits for every member (no straggler there to cut), and the review
# left once first place is decided, held until the chairman has been asked, is left after 0.3 s.
LATE_SOON = {"COUNCIL_QUORUM": "1", "COUNCIL_GRACE_S": "0.3"}


@dataclass(frozen=True)
class Case:
    name: str
    script: Callable[[ScriptedLLMServer], None]
    mode: str = "standard"
    author: str = "chairman"  # chairman, as_written, stand_in
    writer: str = CHAIRMAN  # who wrote the answer ("" for as_written: either of the first two)
    failed: tuple[str, ...] = ()
    ballots: str | None = "Ballots read: 3 of 3"
    late: int = 0  # reviews that arrived after the synthesis began
    also: tuple[str, ...] = ()  # further words the case must show
    settings: dict[str, str] = field(default_factory=dict)  # every surface's, beside GRACE


CASES = [
    Case("chairman", chairman),
    Case("as-written", as_written, mode="auto", author="as_written", writer="", ballots=None),
    Case("stand-in", stand_in, author="stand_in", writer="beta"),
    Case("failed-member", failed_member, failed=("gamma",), ballots="Ballots read: 2 of 2"),
    Case("quick", chairman, mode="quick", ballots=None),
    Case("escalated", escalated, mode="auto", also=("escalated: the first two answers disagreed",)),
    Case("late-review", late_review, ballots="Ballots read: 2 of 2", late=1, settings=LATE_SOON),
]

SURFACES = (
    "Slack",  # chat.update (SLACK_STREAMING=off): the answer message and the Ranking modal
    "Slack streamed",  # chat.*Stream: the streamed answer and the Ranking modal
    "Discord",
    "terminal",  # `council ask`: progress on stderr, the result on stdout
    "API",  # the openai client: content, reasoning_content, metadata
    "MCP",  # the mcp client: consult_council's structured answer and its progress
    "web JSON",  # the council's page's JSON twin (`told`)
    "web HTML",
    "Markdown export",
    "JSON export",
)

# A case a surface cannot tell, and why (the running council has a test of its own).
EXCLUDED: dict[tuple[str, str], str] = {}
RUNNING_EXCLUDED = {
    "Slack streamed": "the streamed message shows the stages as Slack's task cards, each with its state "
    "(tests/test_slack_adapter.py); the status message of SLACK_STREAMING=off says the stage",
    "Markdown export": "an export is of a stored council, and a council is stored once it has finished",
    "JSON export": "an export is of a stored council, and a council is stored once it has finished",
}


def check(surface: str, text: str, case: Case) -> None:
    """`text` (everything the surface showed of one council) says the case's facts."""
    said = text.lower()
    where = f"{surface} ({case.name})"

    def says(words: str, fact: str) -> None:
        assert words in said, f"{where} does not say {fact}: {words!r}"

    def never(words: str, fact: str) -> None:
        assert words not in said, f"{where} says {fact}: {words!r}"

    if case.author == "chairman":
        says(f"by the chairman, {case.writer}", "who wrote the answer")
    elif case.author == "as_written":
        assert re.search(r"as written by (alpha|beta|gamma)", said), f"{where} does not say whose answer stood"
        says("the first two answers were the same", "why the answer stood as written")
    else:
        says(f"by {case.writer}, standing in for the chairman", "who stood in")
        says(f"the chairman ({CHAIRMAN}) failed", "that the chairman failed")
    if case.author != "stand_in":  # nothing calls it a failure or a stand-in
        for wrong in ("standing in", "the chairman failed", f"chairman ({CHAIRMAN}) failed", "instead"):
            never(wrong, "the chairman failed, wrongly")
    for model in case.failed:
        says(f"{model} gave no answer", "which member failed")
    if not case.failed:
        never("gave no answer", "a member failed, wrongly")
    if case.ballots is not None:
        says(case.ballots.lower(), "how many ballots")
    else:
        never("ballots read", "ballots of a council without reviews")
    if case.late:
        says(f"{case.late} review arrived after the synthesis began", "the late review")
    else:
        never("after the synthesis began", "a late review, wrongly")
    mode = case.mode
    assert re.search(rf"\b{mode} mode\b|\bmode: {mode}\b|\"mode\": \"{mode}\"", said), f"{where}: no mode {mode}"
    for words in case.also:
        says(words, "the check")


RUNNING = "Stage 3 · chairman synthesis"
# How a surface says the council is still running, where it is not the stage's title.
RUNNING_SAYS = {"web JSON": '"running": true'}


def check_running(surface: str, text: str) -> None:
    """A council whose chairman is writing: the surface says so, and claims no answer yet."""
    said = text.lower()
    running = RUNNING_SAYS.get(surface, RUNNING).lower()
    assert running in said, f"{surface} (running) does not say the council is running: {running!r}"
    for claim in ("by the chairman", "final answer", "standing in", "instead", "gave no answer"):
        assert claim not in said, f"{surface} (running) says {claim!r}"
