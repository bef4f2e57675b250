"""The copy rule of the synthesis screen (issue 22, item 1): quoting the question, the thread, a
member, a file or a source is what a synthesis does; only the prompt's own voice is copying.

The corpus below is judged against the prompts the engine really builds (core/engine/prompts.py), and
two councils run end to end through the scripted LLM server and a real ProviderRouter.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from core.engine.prompts import CHAIRMAN_SYSTEM, brief_chairman_messages, chairman_messages
from core.engine.synthesis_check import COPY_MIN_WORDS, SynthesisJudge, SynthesisScreen
from core.models import ConversationTurn, CouncilRequest, CouncilStatus
from core.records.export import to_document
from core.shared.fences import Fence, new_nonce
from tests.factories import run_council_to_end
from tests.llm_server import RecordedRequest, ScriptedLLMServer, council_member
from tests.test_cli import council
from tests.test_council import CHAIR, MEMBERS, config, members, prefer, router, script, server
from tests.test_discord_adapter import answer_messages, council_option, wait_finished
from tests.test_discord_adapter import env as discord_env
from tests.test_synthesis import TWO_AND_A_CHAIR

__all__ = ["discord_env", "router", "server"]  # fixtures, imported for pytest

ROOT = Path(__file__).resolve().parent.parent

RUST_GO = "What are the trade-offs of Rust vs Go for backend services?"
RUST_GO_OPENING = "The trade-offs of Rust vs Go for backend services come down"


def review(text: str, order: str = "ABC") -> str:
    return text + "\n\nFINAL RANKING:\n" + "\n".join(f"{i}. Response {x}" for i, x in enumerate(order, 1))


@dataclass
class Case:
    name: str
    question: str
    answers: list[str]
    synthesis: str
    history: list[ConversationTurn] = field(default_factory=list)
    material: list[str] = field(default_factory=list)  # file and source texts the prompt carried
    brief: bool = False  # the small-context prompt

    def prompt(self) -> str:
        answers = dict(zip("ABCD", self.answers))
        if self.brief:
            messages = brief_chairman_messages(self.question, answers, history=self.history)
        else:
            reviews = [
                review("Response A is accurate and complete; Response B misses a point; Response C is too short."),
                review("A and B are both right; C leaves out the main trade-off.", "BAC"),
            ]
            fence = Fence(new_nonce())
            messages = chairman_messages(self.question, answers, reviews, None, fence, history=self.history)
        material = "\n\n".join(self.material)
        return "\n\n".join([material, *(m.content for m in messages)])

    def judge(self) -> SynthesisJudge:
        # As core/engine/stream.py builds it: the question, the thread and the material are quotable.
        quoted = [self.question, *(turn.content for turn in self.history), *self.material]
        return SynthesisJudge(self.prompt(), self.answers, quoted)


EARLIER_ANSWER = (
    "Use PostgreSQL for this workload. It handles the concurrent writes you described, its JSONB "
    "columns cover the semi-structured part, and managed offerings exist on every major cloud."
)
THREAD = [
    ConversationTurn(role="user", content="Which database should we use for the order service?", author="ada"),
    ConversationTurn(role="assistant", content=EARLIER_ANSWER),
]
MEMBER_QUOTE = "Go's goroutines make a thousand concurrent connections cheap, and its tooling is famously simple."
RUST_GO_ANSWERS = [
    "Rust gives memory safety without a garbage collector and predictable latency, at the cost of a "
    "steeper learning curve and slower compile times.",
    MEMBER_QUOTE + " Its garbage collector adds small pauses that rarely matter for web backends.",
    "Pick Go for fast delivery and simple services; pick Rust where latency and memory matter most.",
]
FILE_TEXT = (
    "Section 4.2 Refunds. A customer may request a refund within 30 days of delivery. Refunds are "
    "paid to the original payment method within 5 business days."
)
SOURCE_TEXT = (
    "Title: Python 3.13 released\nURL: https://www.python.org/downloads/release/python-3130/\n"
    "Python 3.13 ships an experimental free-threaded build and a new interactive interpreter."
)

CORPUS = [
    Case(
        "restates the question (the issue's example)",
        RUST_GO,
        RUST_GO_ANSWERS,
        RUST_GO_OPENING + " to what you optimise for: Rust buys memory safety without a garbage collector and "
        "tight latency, Go buys speed of delivery and a gentle learning curve.",
    ),
    Case(
        "repeats the question verbatim, then answers",
        RUST_GO,
        RUST_GO_ANSWERS,
        f"**{RUST_GO}**\n\nIn short: Go for most teams, Rust where latency or memory is the product. "
        "Go compiles fast and is easy to hire for; Rust needs more time but catches whole classes of bugs.",
    ),
    Case(
        "quotes a member verbatim",
        RUST_GO,
        RUST_GO_ANSWERS,
        f'As one answer put it, "{MEMBER_QUOTE}" Rust, on the other hand, gives predictable latency and no '
        "garbage collector, which matters for latency-sensitive services.",
    ),
    Case(
        "is one member's answer with a sentence added",
        RUST_GO,
        RUST_GO_ANSWERS,
        RUST_GO_ANSWERS[0] + " " + RUST_GO_ANSWERS[2] + " Both answers agree on that split.",
    ),
    Case(
        "follow-up opening with the earlier answer's first sentence",
        "And if we expect ten times the traffic next year?",
        [
            "PostgreSQL still works; add read replicas and partition the orders table by month.",
            "Consider sharding with Citus once a single primary cannot keep up with writes.",
        ],
        "Use PostgreSQL for this workload. It handles the concurrent writes you described, and at ten "
        "times the traffic you add read replicas first, then partition the orders table by month.",
        history=THREAD,
    ),
    Case(
        "follow-up repeating the whole earlier answer",
        "Are you sure? Summarise your recommendation again.",
        ["Yes: PostgreSQL, for the reasons given.", "PostgreSQL remains the right choice."],
        EARLIER_ANSWER + " Nothing in the follow-up changes that.",
        history=THREAD,
    ),
    Case(
        "follow-up restating the thread's first question",
        "Does that still hold for the analytics side?",
        ["For analytics, add a columnar store such as ClickHouse.", "PostgreSQL with BRIN indexes may do."],
        "Which database should we use for the order service? PostgreSQL, still. For the analytics side, "
        "keep the orders in PostgreSQL and copy them nightly into a columnar store such as ClickHouse.",
        history=THREAD,
    ),
    Case(
        "a bulleted list",
        "How do I make my Python tests run faster?",
        ["Use pytest-xdist.", "Profile with --durations.", "Avoid sleeping in tests."],
        "- Run them in parallel with pytest-xdist (`-n auto`).\n- Find the slow ones with `--durations=10`.\n"
        "- Replace sleeps with events or fake clocks.\n- Share expensive fixtures with a wider scope.",
    ),
    Case(
        "a numbered list restating the question first",
        "What are the steps to rotate a leaked AWS access key?",
        ["Create a new key, deploy it, deactivate the old one, delete it.", "Check CloudTrail for misuse."],
        "To rotate a leaked AWS access key:\n\n1. Create a second access key for the user.\n"
        "2. Deploy it everywhere the old key was used.\n3. Deactivate the leaked key and watch for errors.\n"
        "4. Delete it, and check CloudTrail for anything it was used for.",
    ),
    Case(
        "a Python code block",
        "How do I read a CSV file into a list of dicts in Python?",
        ["Use csv.DictReader.", "pandas.read_csv(...).to_dict('records') also works."],
        "Use the standard library's `csv.DictReader`:\n\n```python\nimport csv\n\nwith open('data.csv', "
        "newline='') as f:\n    rows = list(csv.DictReader(f))\n```\n\nEach row is a dict keyed by the header.",
    ),
    Case(
        "an SQL code block",
        "How do I find duplicate emails in a users table?",
        ["GROUP BY email HAVING COUNT(*) > 1.", "Use a window function."],
        "```sql\nSELECT email, COUNT(*) AS n\nFROM users\nGROUP BY email\nHAVING COUNT(*) > 1\n"
        "ORDER BY n DESC;\n```\nAdd a unique index on `lower(email)` afterwards so it cannot happen again.",
    ),
    Case("a one-word fact", "What is the capital of Australia?", ["Canberra.", "Canberra"], "Canberra."),
    Case(
        "a one-sentence fact restating the question",
        "What is the capital of Australia?",
        ["Canberra.", "Canberra, not Sydney."],
        "The capital of Australia is Canberra.",
    ),
    Case("arithmetic", "What is 17 * 23?", ["391", "17 * 23 = 391"], "17 × 23 = 391."),
    Case(
        "a short answer in the instructions' words",
        "What is the answer to life, the universe and everything?",
        ["42.", "Forty-two, according to Douglas Adams."],
        "The final answer to the question is 42.",
    ),
    Case(
        "yes or no",
        "Is Python's GIL removed in 3.13?",
        ["Not by default; there is an experimental free-threaded build.", "No."],
        "Not by default. Python 3.13 offers an experimental free-threaded build without the GIL.",
    ),
    Case(
        "uses words of the instructions in passing",
        "Which answer should I trust about the boiling point of water at altitude?",
        ["It drops by about 1 °C per 300 m.", "Roughly 1 degree Celsius less every 1,000 feet."],
        "The final answer to the question is that water boils about 1 °C lower for every 300 m of altitude; "
        "both answers say the same thing in different units.",
    ),
    Case(
        "opens with a phrase of the instructions",
        RUST_GO,
        RUST_GO_ANSWERS,
        "Here is the single best final answer for the user, using the strongest points of the answers: choose "
        "Go when delivery speed and simple concurrency matter most, and Rust when predictable latency, memory "
        "safety without a garbage collector, or a small footprint are the product.",
    ),
    Case(
        "a Markdown table",
        "Compare SQLite and PostgreSQL for a small web app.",
        ["SQLite is simpler; PostgreSQL scales better.", "Use PostgreSQL if several servers write."],
        "| | SQLite | PostgreSQL |\n|---|---|---|\n| Setup | a file | a server |\n"
        "| Concurrent writers | one at a time | many |\n| Best for | one server | several servers |",
    ),
    Case(
        "in French, restating the question",
        "Quelle est la différence entre un processus et un thread ?",
        ["Un processus a sa propre mémoire ; les threads la partagent.", "Les threads sont plus légers."],
        "La différence entre un processus et un thread tient à la mémoire : un processus a son propre "
        "espace d'adressage, alors que les threads d'un même processus le partagent.",
    ),
    Case(
        "headings and steps",
        "How should we deploy a Django app?",
        ["Gunicorn behind nginx.", "Use a container and a managed database."],
        "## Recommended setup\n\nRun Django under Gunicorn behind nginx, in a container.\n\n## Steps\n\n"
        "1. Build an image.\n2. Use a managed PostgreSQL.\n3. Serve static files from a CDN.",
    ),
    Case(
        "quotes the attached file",
        "What does our contract say about refunds?",
        ["Refunds within 30 days.", "Paid back in 5 business days."],
        "A customer may request a refund within 30 days of delivery. Refunds are paid to the original "
        "payment method within 5 business days (section 4.2).",
        material=[FILE_TEXT],
    ),
    Case(
        "quotes a search result",
        "What is new in Python 3.13?",
        ["A free-threaded build.", "A new REPL."],
        "Python 3.13 ships an experimental free-threaded build and a new interactive interpreter [1], "
        "along with improved error messages.",
        material=[SOURCE_TEXT],
    ),
    Case(
        "the brief prompt, restating the question",
        RUST_GO,
        RUST_GO_ANSWERS[:2],
        RUST_GO_OPENING + " to safety against simplicity. Rust has no garbage collector and catches memory "
        "bugs at compile time; Go is quicker to learn and its goroutines make concurrency cheap.",
        brief=True,
    ),
    Case(
        "the brief prompt in a follow-up",
        "And if we expect ten times the traffic next year?",
        ["Add read replicas.", "Partition the orders table."],
        "Use PostgreSQL for this workload. It handles the concurrent writes you described; for ten times the "
        "traffic add read replicas and partition the orders table.",
        history=THREAD,
        brief=True,
    ),
]


def screened(judge: SynthesisJudge, text: str) -> tuple[str, str | None]:
    """What a SynthesisScreen shows of `text` streamed word by word, and its verdict."""
    screen = SynthesisScreen(judge)
    shown = "".join(screen.feed(token) for token in re.findall(r"\S+\s*|\s+", text))  # as the scripted server streams
    return shown + screen.finish(), screen.reason


def test_the_corpus_is_large_and_varied():
    assert len(CORPUS) >= 20 and len({case.name for case in CORPUS}) == len(CORPUS)


@pytest.mark.parametrize("case", CORPUS, ids=lambda case: case.name)
def test_no_legitimate_synthesis_is_flagged(case: Case):
    judge = case.judge()
    assert judge.reason(case.synthesis, markers=0) is None
    for cut in range(1, len(case.synthesis.split()) + 1):  # nor any opening of it while it streams
        assert judge.reason(" ".join(case.synthesis.split()[:cut]), markers=0, finished=False) is None
    shown, reason = screened(judge, case.synthesis)
    assert reason is None and shown == case.synthesis


def test_the_issues_example_is_no_copy():
    prompt = "\n\n".join(m.content for m in chairman_messages(RUST_GO, {"A": "x"}, [], None, Fence("f" * 16)))
    # Even without being told what the question is: an opening this short is not judged a copy.
    assert SynthesisJudge(prompt, RUST_GO_ANSWERS).reason(RUST_GO_OPENING, markers=0, finished=False) is None
    # And the question is material: a longer restatement is no copy either.
    longer = " ".join([RUST_GO_OPENING + ":", *[RUST_GO] * 4])  # the question, over and over
    assert len(longer.split()) >= COPY_MIN_WORDS
    assert SynthesisJudge(prompt, RUST_GO_ANSWERS, [RUST_GO]).reason(longer, markers=0) is None


# --------------------------------------------------------------------------- still degenerate


def test_echoed_instructions_are_still_a_copy_and_never_shown():
    case = CORPUS[0]
    judge = case.judge()
    for echo in (CHAIRMAN_SYSTEM, case.prompt().split("\n\n")[-1]):  # the system prompt; the closing task
        shown, reason = screened(judge, echo)
        assert shown == "" and reason is not None and reason.startswith("it mostly copies the prompt")


def test_a_short_complete_echo_of_the_instructions_is_a_copy():
    brief = next(case for case in CORPUS if case.brief)
    echo = "Combine the answers above into one final answer to the question."
    assert len(echo.split()) < COPY_MIN_WORDS
    shown, reason = screened(brief.judge(), echo)
    assert shown == "" and (reason or "").startswith("it mostly copies the prompt")


def test_an_opening_that_looks_like_a_copy_is_held_until_it_can_be_judged():
    judge = CORPUS[0].judge()
    screen = SynthesisScreen(judge)
    words = CHAIRMAN_SYSTEM.split(" ")
    shown = [screen.feed(word + " ") for word in words[:COPY_MIN_WORDS]]
    assert shown == [""] * COPY_MIN_WORDS and screen.reason is not None  # held past OPENING_WORDS, then judged


def test_a_review_echoed_is_a_copy():
    reviewer = (
        "Response A is accurate and complete, and it explains the trade-off well. Response B misses the main "
        "point about memory. Response C is too short to be useful and leaves out the cost of the runtime."
    )
    prompt = chairman_messages(RUST_GO, dict(zip("ABC", RUST_GO_ANSWERS)), [review(reviewer)], None, Fence("0" * 16))
    judge = SynthesisJudge("\n\n".join(m.content for m in prompt), RUST_GO_ANSWERS, [RUST_GO])
    assert (judge.reason(reviewer, markers=0) or "").startswith("it mostly copies the prompt")


# --------------------------------------------------------------------------- end to end


def chair_writing(synthesis: str):
    return council_member("chair answer", prefer("CADB"), synthesis=synthesis, token_delay_s=0.001)


async def test_a_chairman_restating_the_question_stands(server, router):
    synthesis = CORPUS[0].synthesis
    script(server, members(**{CHAIR: chair_writing(synthesis)}))
    _, result = await run_council_to_end(router, CouncilRequest(question=RUST_GO, config=config()))
    document = to_document(result)
    assert document["status"] == "ok" and result.status is CouncilStatus.OK, result.synthesis.note
    assert document["stage3"]["by_chairman"] is True and document["stage3"]["response"] == synthesis


async def test_a_follow_up_opening_like_the_threads_earlier_answer_stands(server, router):
    case = next(c for c in CORPUS if c.name.startswith("follow-up opening"))
    script(server, members(**{CHAIR: chair_writing(case.synthesis)}))
    request = CouncilRequest(question=case.question, history=case.history, config=config())
    _, result = await run_council_to_end(router, request)
    prompt = server.requests_for(CHAIR, stage=3)[0].user
    assert EARLIER_ANSWER in prompt  # the thread was in the chairman's prompt
    assert result.status is CouncilStatus.OK and result.synthesis.by_chairman, result.synthesis.note
    assert result.synthesis.text == case.synthesis


async def test_a_chairman_echoing_its_instructions_is_still_replaced(server, router):
    def parrot(call: RecordedRequest) -> str:
        return call.system  # the whole system prompt back

    script(server, members(**{CHAIR: council_member("chair answer", prefer("CADB"), synthesis=parrot)}))
    _, result = await run_council_to_end(router, CouncilRequest(question=RUST_GO, config=config()))
    assert not result.synthesis.by_chairman and result.synthesis.model in MEMBERS
    assert "it mostly copies the prompt" in result.synthesis.note


async def test_council_ask_json_keeps_a_synthesis_restating_the_question(tmp_path):
    synthesis = CORPUS[0].synthesis
    scripts = {name: council_member(RUST_GO_ANSWERS[i], synthesis="Stand-in.") for i, name in enumerate(("a", "b"))}
    scripts["chair"] = council_member("chair answer", synthesis=synthesis)
    async with ScriptedLLMServer(scripts) as llm:
        code, out, err = await council(tmp_path, llm, "ask", "--json", RUST_GO, extra_env=TWO_AND_A_CHAIR)
    assert code == 0, err
    document = json.loads(out)
    assert document["status"] == "ok", document["stage3"].get("note")
    assert document["stage3"]["by_chairman"] is True and document["stage3"]["response"] == synthesis


async def test_a_discord_follow_up_opening_like_the_threads_earlier_answer_stands(discord_env, llm):
    """The issue's case: a follow-up in a thread started by /council, through the real discord.py
    client against the Discord fake; the chairman (alpha) opens by repeating its earlier answer."""
    opening = "Paris is the capital of France and has been the seat of its government for centuries."
    first = opening + " Versailles held the court for about a hundred years."
    follow_up = opening + " Rome is the capital of Italy, and has been since 1871."

    def alpha_synthesis(call: RecordedRequest) -> str:
        return follow_up if "And of Italy?" in call.user else first

    llm.script("alpha", council_member("alpha says Paris.", synthesis=alpha_synthesis))  # type: ignore[arg-type]
    fake = discord_env.fake
    interaction = await fake.push_command("council", council_option("What is the capital of France?"))
    await wait_finished(fake)
    thread_id = fake.interactions[interaction.token].original_id
    await fake.push_message(f"<@{fake.bot_id}> And of Italy?", channel_id=thread_id)
    await wait_finished(fake, 2)

    assert first in llm.requests_for("alpha", stage=3)[-1].user  # the earlier answer was in the prompt
    [latest, _] = await discord_env.service.queries.history(None, "all", limit=2)
    result = await discord_env.service.queries.get_result(latest.council_id)
    assert result.synthesis.by_chairman and result.status is CouncilStatus.OK, result.synthesis.note
    assert result.synthesis.text == follow_up
    assert any(follow_up in json.dumps(m) for m in answer_messages(fake))
