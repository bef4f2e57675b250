"""Scripted models that sit an eval on tests/llm_server.py: each member knows the right answer to a
question (looked up in the dataset it is given) and gives it with a fixed probability, decided by a
hash of (its name, the question, how many times it was asked it), so runs are reproducible and
repeated samples of one model differ; members given the same `draw_as` draw alike, so they are
right and wrong on the same items (correlated errors). A reviewer scores each answer 9 on every
criterion when it is the reviewer's own last answer to the question, else 3, and ranks by score
(ties alphabetically): its rubric consensus is high when the members agree. A chairman writes the answer
most of the fenced responses share (ties: the first), in quick mode names it PREFERRED, and in
auto mode says whether the two answers' final lines agree.

    python -m tests.eval_fakes           # serves alpha/beta/gamma for the bundled set, prints its URL
    python -m tests.eval_fakes --twins   # beta wrong exactly where alpha is (correlated errors)
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import re
from collections import Counter
from collections.abc import Iterable

from core.eval.dataset import EvalItem, bundled
from core.eval.scoring import final_answer, normalise
from tests.llm_server import ByStage, RecordedRequest, Reply, ScriptedLLMServer, shown_answers

_RESPONSE = re.compile(r"<<<RESPONSE ([A-Z]) [0-9a-f]+>>>\n(.*?)\n<<<END RESPONSE \1 [0-9a-f]+>>>", re.S)


class QuizTaker:
    """Stage-1 answers: right with probability `accuracy` (per name, question and sample)."""

    def __init__(self, name: str, items: Iterable[EvalItem], accuracy: float, draw_as: str | None = None) -> None:
        self.name = name
        self.draw_as = draw_as or name
        self.accuracy = accuracy
        self.targets = [(item.input, item.target) for item in items]
        self.asked: Counter[str] = Counter()
        self.given: dict[str, str] = {}  # an item's question -> this member's last answer to it

    def target_of(self, question: str) -> str | None:
        return next((target for text, target in self.targets if question.startswith(text)), None)

    def __call__(self, call: RecordedRequest) -> str:
        question = call.user
        target = self.target_of(question)
        self.asked[question] += 1
        if target is None:
            return "I do not know.\nANSWER: unknown"
        draw = hashlib.sha256(f"{self.draw_as}|{question}|{self.asked[question]}".encode()).digest()
        right = int.from_bytes(draw[:4], "big") / 2**32 < self.accuracy
        answer = target if right else wrong(target, draw[4])
        self.given[next(text for text, _ in self.targets if question.startswith(text))] = answer
        return f"Working it out step by step.\nANSWER: {answer}"

    def review(self, call: RecordedRequest) -> str:
        """Scores (9 for an answer equal to its own, else 3) and a FINAL RANKING by them."""
        own = next((answer for text, answer in self.given.items() if text in call.user), None)
        answers = shown_answers(call.user)
        score = {
            label: 9 if own is not None and normalise(final_answer(text)) == normalise(own) else 3
            for label, text in answers.items()
        }
        lines = [f"Response {label}: Accuracy={v}, Insight={v}, Completeness={v}" for label, v in score.items()]
        ranked = sorted(score, key=lambda label: (-score[label], label))
        ranking = "\n".join(f"{i}. Response {label}" for i, label in enumerate(ranked, 1))
        return "\n".join(lines) + f"\n\nFINAL RANKING:\n{ranking}"


def wrong(target: str, salt: int) -> str:
    """A plausible wrong answer (a number off by a little, else another word)."""
    if re.fullmatch(r"-?\d+(\.\d+)?", target):
        return str(int(float(target)) + 1 + salt % 3)
    return ("maybe", "unsure", "no idea")[salt % 3] if target not in ("maybe", "unsure", "no idea") else "other"


def majority_of(prompt: str) -> tuple[str | None, str]:
    """(label of the first response with the most common answer, that answer)."""
    found = [(label, normalise(final_answer(text)), final_answer(text)) for label, text in _RESPONSE.findall(prompt)]
    if not found:
        return None, "unknown"
    counts = Counter(key for _, key, _ in found)
    best = max(counts.values())
    label, _, shown = next(entry for entry in found if counts[entry[1]] == best)
    return label, shown


def chair(call: RecordedRequest) -> str:
    """The chairman: auto mode's agreement verdict when asked for one, else the majority answer."""
    if "VERDICT: AGREE" in call.user:  # auto mode: do the two answers agree?
        answers = {normalise(final_answer(text)) for _, text in _RESPONSE.findall(call.user)}
        return "VERDICT: AGREE" if len(answers) == 1 else "They differ in the final answer.\nVERDICT: DISAGREE"
    label, answer = majority_of(call.user)
    verdict = f"PREFERRED: Response {label}\n" if "PREFERRED:" in call.user and label else ""
    return f"{verdict}The council agrees after weighing the answers.\nANSWER: {answer}"


def quiz_member(
    name: str, items: Iterable[EvalItem], accuracy: float, draw_as: str | None = None, **reply: float
) -> ByStage:
    # auto mode's agreement check is a stage of its own where the server knows it (`judge`)
    judge = {"judge": Reply(chair)} if "judge" in ByStage.__dataclass_fields__ else {}
    taker = QuizTaker(name, items, accuracy, draw_as)
    return ByStage(Reply(taker, **reply), Reply(taker.review), Reply(chair), **judge)


async def _serve(size: int, twins: bool) -> None:
    items = bundled(size=size).items
    models = {
        "alpha": quiz_member("alpha", items, 0.70),
        "beta": quiz_member("beta", items, 0.70 if twins else 0.60, draw_as="alpha" if twins else None),
        "gamma": quiz_member("gamma", items, 0.55),
    }
    line_up = "alpha 70%, beta 70% wrong where alpha is" if twins else "alpha 70%, beta 60%"
    async with ScriptedLLMServer(models, record=False) as server:
        print(f"LLM_BASE_URL={server.base_url}  ({line_up}, gamma 55% right)", flush=True)
        await asyncio.Event().wait()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="a scripted OpenAI-compatible server that sits the bundled set")
    parser.add_argument("--size", type=int, default=250)
    parser.add_argument("--twins", action="store_true", help="beta draws as alpha: right and wrong on the same items")
    arguments = parser.parse_args()
    asyncio.run(_serve(arguments.size, arguments.twins))
