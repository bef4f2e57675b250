"""Stage 2: each member ranks the others' anonymous answers, in parallel; the ballots are aggregated.

With COUNCIL_MAX_REVIEWERS=k each answer goes to k reviewers (`review_plans`). Once the ballots
still pending cannot change the first place (core/engine/decision.py), the stage ends and the
chairman starts with the ranking so far; `collect_late_reviews` records the late ones afterwards
(Review.late, ReviewFinished after the answer) and ranks again with them (`late_aggregate`): the
ranking shown with the answer stays the one the chairman was given."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import aclosing
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, Any

from core import ranking
from core.engine import ballots, dissent, prompts
from core.engine.batch import Outcome
from core.engine.decision import first_place_decided
from core.engine.runner import Calls
from core.engine.state import CouncilState
from core.models import (
    Aggregate,
    AggregateEntry,
    AggregateReady,
    ChatMessage,
    CouncilEvent,
    ParseStatus,
    Review,
    ReviewFinished,
    StageStarted,
)
from core.shared import markers

if TYPE_CHECKING:
    from core.providers.router import ProviderRouter


async def run_reviews(state: CouncilState, calls: Calls, router: ProviderRouter) -> AsyncGenerator[CouncilEvent, None]:
    config = state.config
    plans = state.review_plans = review_plans(state)
    stored = state.stored_reviews(plans)  # a resumed council: these reviewers are not asked again
    for reviewer, review in stored.items():
        plans[reviewer] = list(review.shown_labels)
    if plans:  # none when a lone answer may not be reviewed by its own author
        builder = prompts.ReviewPrompts(
            state.request.question,
            state.labelled_texts(),
            state.review_fence,
            history=state.request.history,
            member_ids=state.all_ids(),
            rubric=config.rubric,
        )
        review_calls = state.review_calls = {
            r: _review_call(state, builder, router, r, shown) for r, shown in plans.items() if r not in stored
        }
        batch = calls.launch(dict(review_calls), "review", config.member_timeout_s)
        yield state.event(StageStarted, stage=2)
        for review in stored.values():
            _restore_review(state, calls, review)
            yield state.event(ReviewFinished, review=review)
        policy = replace(state.policy(), decide=partial(first_place_decided, state))
        async with aclosing(calls.gather(batch, policy, "review", "reviewers")) as outcomes:
            async for outcome in outcomes:
                review = _record_review(state, outcome, review_calls[outcome.key])
                yield state.event(ReviewFinished, review=review)  # never mutated afterwards
        if batch.late:
            state.late_reviews = batch
        _order_reviews(state)
    if state.control.stopped:
        return
    state.aggregate = aggregate_reviews(state)
    yield state.event(AggregateReady, aggregate=state.aggregate, label_to_model=dict(state.label_to_model))


async def collect_late_reviews(state: CouncilState, calls: Calls) -> AsyncGenerator[CouncilEvent, None]:
    """Record the reviews a decision left running (until their deadline), each as it ends, and
    rank again with them (`state.late_aggregate`, when any of them gave a ballot)."""
    batch = state.late_reviews
    if batch is None:
        return
    late = 0
    async with aclosing(calls.collect_late(batch)) as outcomes:
        async for outcome in outcomes:
            review = _record_review(state, outcome, state.review_calls[outcome.key], late=True)
            late += bool(review.ballot_models)
            yield state.event(ReviewFinished, review=review)
    _order_reviews(state)
    if late:
        state.late_aggregate = aggregate_reviews(state)
        state.late_aggregate.ballots_late = late


def _order_reviews(state: CouncilState) -> None:
    # Member order, not arrival order; reviews still running (decided early) come later.
    state.reviews = {r: state.reviews[r] for r in state.review_plans if r in state.reviews}


def review_plans(state: CouncilState) -> dict[str, list[str]]:
    """Reviewer -> labels it is shown, in a fresh random order per reviewer (position bias).

    With max_reviewers=k (fewer than the others' answers), reviewer i of the N answered seats, in a
    random rotation, is shown the k answers after its own: every answer is reviewed k times and
    every reviewer reviews k answers (N·k reviews instead of N·(N-1))."""
    labels = list(state.label_to_model)
    k = state.config.max_reviewers
    plans = {}
    if k is not None and 2 <= k < len(labels) - 1:
        rotation = labels[:]
        state.rng.shuffle(rotation)
        for i, own in enumerate(rotation):
            shown = [rotation[(i + j) % len(rotation)] for j in range(1, k + 1)]
            state.rng.shuffle(shown)
            plans[state.label_to_model[own]] = shown
        return {state.label_to_model[label]: plans[state.label_to_model[label]] for label in labels}
    for own, reviewer in state.label_to_model.items():
        shown = [label for label in labels if not (state.config.exclude_self_review and label == own)]
        if shown:
            state.rng.shuffle(shown)
            plans[reviewer] = shown
    return plans


def _review_call(
    state: CouncilState, builder: prompts.ReviewPrompts, router: ProviderRouter, reviewer: str, shown: list[str]
) -> ballots.ReviewCall:
    def messages(json_ballot: bool) -> list[ChatMessage]:
        return state.material.apply(builder.messages(shown, json_ballot=json_ballot), reviewer, state.review_fence)

    return ballots.ReviewCall(
        model=reviewer,
        complete=partial(router.complete, reviewer),
        text_messages=messages(False),
        json_messages=messages(True) if ballots.asks_json(state.config.ballot_format, reviewer) else None,
        options=replace(state.options(None), ranking_labels=tuple(shown)),
        shown=shown,
        rubric=state.config.rubric,
    )


def _restore_review(state: CouncilState, calls: Calls, review: Review) -> None:
    if state.was_skipped(review.error):
        state.skipped.add(f"review:{review.reviewer}")
    calls.usage += review.usage
    state.reviews[review.reviewer] = review


def _record_review(state: CouncilState, outcome: Outcome, call: ballots.ReviewCall, *, late: bool = False) -> Review:
    if outcome.skipped:
        state.skipped.add(f"review:{outcome.key}")
    fields: dict[str, Any] = {}
    if outcome.completion is not None:
        rubric = state.config.rubric
        if call.json_ballot is not None:
            text, order = call.json_ballot.evaluation, call.json_ballot.order
            status = "complete" if len(order) == len(call.shown) else "partial" if order else "none"
            scores = call.json_ballot.scores
        else:
            text = outcome.completion.text
            parsed = ranking.parse_ranking(text, call.shown)
            order, status = list(parsed.order), parsed.status
            scores = ranking.parse_scores(text, call.shown, rubric.criteria, rubric.low, rubric.high) if rubric else {}
        fields = dict(
            text=markers.strip_markers(text, state.nonces()),  # shown to users
            usage=outcome.completion.usage,
            ballot_labels=order,
            ballot_models=[state.label_to_model[label] for label in order],
            parse_status=ParseStatus(status),
            format=call.format,
            scores=scores,
        )
    review = Review(
        reviewer=outcome.key,
        shown_labels=call.shown,
        error=outcome.error,
        latency_s=outcome.latency_s,
        late=late,
        **fields,
    )
    state.reviews[outcome.key] = review
    return review


def aggregate_reviews(state: CouncilState) -> Aggregate:
    parsed = [r for r in state.reviews.values() if r.error is None and r.parse_status is not ParseStatus.NONE]
    scores = ranking.aggregate(
        {r.reviewer: r.ballot_labels for r in parsed},
        state.label_to_model,
        exclude_self=state.config.exclude_self_review,
        weights=state.config.reviewer_weights or None,
    )
    model_to_label = {m: label for label, m in state.label_to_model.items()}
    entries = [
        AggregateEntry(
            model=s.candidate,
            label=model_to_label.get(s.candidate),
            position=s.position,
            average_rank=s.average_rank,
            rankings_count=s.rankings_count,
            borda=s.borda,
            copeland=s.copeland,
            first_place_votes=s.first_place_votes,
        )
        for s in scores
    ]
    candidates = list(state.label_to_model.values())
    shown = [_shown_models(r, state.label_to_model) or candidates for r in parsed]
    agreement = ranking.kendall_w([r.ballot_models for r in parsed], candidates, shown)
    unparsed = sum(1 for r in state.reviews.values() if r.text is not None and r.parse_status is ParseStatus.NONE)
    aggregate = Aggregate(
        entries=entries,
        agreement_w=agreement,
        method="weighted_mean_rank" if any(w != 1 for w in state.config.reviewer_weights.values()) else "mean_rank",
        ballots_used=len(parsed),
        ballots_unparsed=unparsed,
    )
    _add_scores(state, aggregate)
    aggregate.reviewer_tau = dissent.reviewer_taus(parsed, aggregate)
    aggregate.dissent = dissent.find_dissent(parsed, aggregate)
    return aggregate


def _shown_models(review: Review, label_to_model: dict[str, str]) -> list[str]:
    """The answers a reviewer was shown (never its own with self-exclusion): agreement counts what
    it left unranked among them as placed below, and what it never saw as unknown."""
    shown = [label_to_model[label] for label in review.shown_labels if label in label_to_model]
    return shown + [m for m in review.ballot_models if m not in shown]


def _add_scores(state: CouncilState, aggregate: Aggregate) -> None:
    """Each answer's mean per criterion and the consensus, from every review that scored (a review
    whose ranking could not be read may still have scored)."""
    rubric = state.config.rubric
    sheets = [
        {state.label_to_model[label]: values for label, values in r.scores.items() if label in state.label_to_model}
        for r in state.reviews.values()
        if r.error is None and r.scores
    ]
    if rubric is None or not sheets:
        return
    summary = ranking.score_summary(sheets, rubric.criteria, rubric.low, rubric.high)
    aggregate.scores = {e.model: summary.means[e.model] for e in aggregate.entries if e.model in summary.means}
    aggregate.consensus = summary.consensus
