"""Auto mode: two seats answer first (quick mode's choice, made at admission); when their answers
agree the council ends with them, and when they do not it escalates to the full three stages,
keeping both answers (no model is asked the same question twice).

Whether they agree:
- both answers short (one line, at most SHORT_CHARS once normalised): they agree when they are
  equal once normalised (`normalised`), and the first stands as written (2 model calls);
- otherwise the chairman judges, in the format of rust/ranking/src/verdict.rs (1 call); when it
  says AGREE, quick mode's light synthesis follows (4 calls in all); DISAGREE, an unreadable
  verdict or a failed judgement escalate.

Escalation widens the council to every member: the others answer (StageStarted(1) and their
MemberStarted again), then stages 2 and 3 run as in standard mode. The check is the result's
`agreement` (AgreementCheck: `escalated`, `reason`), and the events AgreementStarted (a judgement
is asked) and AgreementChecked (decided) let adapters show it."""

from __future__ import annotations

import re
import time
import unicodedata
from collections.abc import AsyncGenerator, Awaitable
from contextlib import aclosing
from typing import TYPE_CHECKING

from core.engine import prompts
from core.engine.batch import Outcome, SeatCall
from core.engine.runner import Calls
from core.engine.state import CouncilState
from core.models import (
    AgreementCheck,
    AgreementChecked,
    AgreementStarted,
    ChairmanFinished,
    Completion,
    CouncilEvent,
    MemberAnswer,
    Synthesis,
    seats,
)
from core.providers.base import CallOptions
from core.ranking import parse_verdict

if TYPE_CHECKING:
    from core.providers.router import ProviderRouter

SHORT_CHARS = 60  # a short answer, compared by normalised equality: a number, a name, a date
JUDGEMENT_TOKENS = 300  # two sentences and the verdict line; a longer reply is cut, its verdict lost

DISAGREED = "the first two answers disagreed"
SAME = "the first two answers were the same"  # then the first stands as written
_DECORATION = re.compile(r"[*_`~#>\"'\u2018\u2019\u201c\u201d]")
_THOUSANDS = re.compile(r"(?<=\d)[,\u202f\u00a0 ](?=\d{3}\b)")
_EDGES = " .,;:!?()[]"


def normalised(text: str) -> str:
    """An answer as compared for equality: Unicode compatibility forms folded, case folded,
    markdown emphasis and quotes dropped, digit groups joined (1,000 = 1000), spaces collapsed,
    punctuation at either end dropped."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    folded = _THOUSANDS.sub("", _DECORATION.sub("", folded))
    return " ".join(folded.split()).strip(_EDGES)


def is_short(text: str) -> bool:
    return "\n" not in text.strip() and len(normalised(text)) <= SHORT_CHARS


async def run_agreement(
    state: CouncilState, calls: Calls, router: ProviderRouter
) -> AsyncGenerator[CouncilEvent, None]:
    """Decide whether the first two answers stand (sets state.agreement; widens the council when
    it escalates; an answer standing as written is state.synthesis)."""
    first = [state.answers[seat] for seat in state.members]
    answered = [a for a in first if a.ok]
    check = _without_judgement(state, answered)
    if check is None:
        judge = seats.primary(state.config.chairman)
        yield state.event(AgreementStarted, judge=judge)
        check = await _judgement(state, calls, router, answered)
        if check is None:  # stopped while the chairman judged
            return
    state.agreement = check
    if check.escalated:
        state.widen()
    yield state.event(AgreementChecked, check=check)
    if check.reason == SAME:
        state.synthesis = _as_written(answered[0])
        state.answered_at = time.perf_counter()
        yield state.event(ChairmanFinished, synthesis=state.synthesis)


def _without_judgement(state: CouncilState, answered: list[MemberAnswer]) -> AgreementCheck | None:
    """The check when no judgement is needed (None: ask the chairman)."""
    if state.control.synthesize_requested:
        return AgreementCheck(escalated=False, reason="you asked to synthesize now")
    others = state.others()
    if state.resumed_escalated():
        return AgreementCheck(escalated=True, reason="the council had escalated before it was resumed")
    if len(answered) < 2:
        missing = "only one of the first two seats answered" if answered else "neither of the first two seats answered"
        return AgreementCheck(escalated=bool(others), reason=missing)
    a, b = (answer.text or "" for answer in answered)
    if is_short(a) and is_short(b):
        if normalised(a) == normalised(b):
            return AgreementCheck(escalated=False, reason=SAME)
        return AgreementCheck(escalated=True, reason=DISAGREED)
    return None


async def _judgement(
    state: CouncilState, calls: Calls, router: ProviderRouter, answered: list[MemberAnswer]
) -> AgreementCheck | None:
    """The chairman's verdict (its chain's fallbacks may answer); None when the council was stopped."""
    texts = {label: answer.text or "" for label, answer in zip("AB", answered)}
    messages = prompts.agreement_messages(
        state.request.question,
        texts,
        state.chair_fence,
        history=state.request.history,
        member_ids=state.all_ids(),
    )
    options = CallOptions(timeout_s=state.config.member_timeout_s, temperature=0.0, max_tokens=JUDGEMENT_TOKENS)

    def ask(model: str) -> Awaitable[Completion]:
        return router.complete(model, messages, options)

    chain = seats.seat_models(state.config.chairman)
    batch = calls.launch_seats({"judge": SeatCall(chain, ask)}, "judgement", state.config.member_timeout_s)
    outcome = Outcome()
    async with aclosing(calls.gather(batch, state.policy(), "judgement", "judgements")) as outcomes:
        async for arrived in outcomes:  # one: the judge's
            outcome = arrived
    if state.control.stopped:
        return None
    return _check_of(outcome)


def _check_of(outcome: Outcome) -> AgreementCheck:
    judge = outcome.model
    latency = outcome.latency_s
    if outcome.completion is None:
        if outcome.skipped:  # synthesize now: the two answers are used as they are
            return AgreementCheck(escalated=False, reason="you asked to synthesize now", judge=judge)
        error = outcome.error
        cause = error.short() if error else "no reply"
        reason = f"the chairman could not judge whether the first two answers agree ({cause})"
        return AgreementCheck(escalated=True, reason=reason, judge=judge, error=error, latency_s=latency)
    text = outcome.completion.text
    verdict = parse_verdict(text)
    if verdict == "agree":
        escalated, reason = False, "the chairman judged that the first two answers agree"
    elif verdict == "disagree":
        escalated, reason = True, DISAGREED
    else:
        escalated, reason = True, "the chairman's judgement could not be read"
    return AgreementCheck(
        escalated=escalated,
        reason=reason,
        judge=judge,
        verdict=verdict,
        text=text,
        latency_s=latency,
        usage=outcome.completion.usage,
    )


def _as_written(answer: MemberAnswer) -> Synthesis:
    """Two equal short answers: the first (the faster seat's) is the council's answer."""
    return Synthesis(model=answer.model, text=answer.text or "", by_chairman=False, agreed=True)
