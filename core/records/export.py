"""A council as a JSON document (a superset of the classic llm-council response) or Markdown."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from core.models import Attempt, CouncilRequest, CouncilResult, ErrorInfo, Leaderboard, MemberAnswer, Review, Usage
from core.models.seats import fallback_note, short_cause
from core.models.voice import (
    DIFFER_TITLE,
    STAGE_VIEWS,
    agreement_word,
    answer_name,
    author_note,
    author_of,
    ballots_read,
    check_line,
    consensus_text,
    differ_parts,
    differ_source,
    file_summary,
    late_line,
    lens_line,
    measured,
    result_composition_line,
    result_dissent_lines,
    review_title,
    rounds_lines,
    self_moa_line,
    source_line,
    written_by,
)

if TYPE_CHECKING:
    from core.models.feedback import FeedbackVote


def _error(error: ErrorInfo | None) -> dict[str, Any] | None:
    return error.model_dump(mode="json") if error else None


def _attempts(attempts: Sequence[Attempt]) -> list[dict[str, str]]:
    """The models of a seat that failed before the one that answered, each with its cause on one line."""
    return [{"model": a.model, "error": short_cause(a.error.short())} for a in attempts]


def _usage(usage: Usage) -> dict[str, Any]:
    return usage.model_dump(mode="json")


def _feedback(votes: Sequence[FeedbackVote]) -> dict[str, Any]:
    return {
        "good": sum(v.vote.value == "good" for v in votes),
        "bad": sum(v.vote.value == "bad" for v in votes),
        "votes": [v.model_dump(mode="json", exclude={"council_id"}) for v in votes],
    }


def _weights(result: CouncilResult) -> dict[str, float]:
    """The weight each reviewer's ballot had (1 unless COUNCIL_REVIEWER_WEIGHTS said otherwise)."""
    weights = result.request.config.reviewer_weights
    return {r.reviewer: weights.get(r.reviewer, 1.0) for r in result.reviews} | dict(weights)


def to_document(result: CouncilResult, votes: Sequence[FeedbackVote] = ()) -> dict[str, Any]:
    """The classic shape (`stage1`, `stage2`, `stage3`, `metadata`) plus everything we keep,
    and the readers' feedback."""
    return {
        **_request_fields(result),
        "stage1": [_answer_fields(a, result) for a in result.answers],
        # refine mode: each round's revisions in full (metadata.rounds has who moved toward whom)
        "revisions": [r.model_dump(mode="json") for r in result.rounds],
        "stage2": [_review_fields(r) for r in result.reviews],
        "stage3": _synthesis_fields(result),
        "metadata": _metadata(result),
        "error": _error(result.error),
        "timings": result.timings,
        "usage": _usage(result.usage),
        "feedback": _feedback(votes),
    }


def _request_fields(result: CouncilResult) -> dict[str, Any]:
    """Who asked what, when, with which configuration, and what the council read besides the question."""
    request = result.request
    return {
        "id": result.council_id,
        "question": request.question,
        "status": result.status.value,
        "created_at": request.created_at.isoformat(),
        "finished_at": result.finished_at.isoformat(),
        "origin": request.origin.model_dump(mode="json"),
        "config": request.config.model_dump(mode="json"),
        "history": [turn.model_dump(mode="json") for turn in request.history],
        # What the council read besides the question (image bytes are never exported).
        "attachments": [a.model_dump(mode="json") for a in request.attachments],
        "sources": [{"number": i, **source.model_dump(mode="json")} for i, source in enumerate(request.sources, 1)],
        "image_members": request.image_members,
    }


def _answer_fields(a: MemberAnswer, result: CouncilResult) -> dict[str, Any]:
    lens = result.request.config.lens(a.seat or a.model)
    return {
        "model": a.model,
        "seat": a.seat or a.model,
        "lens": lens.model_dump(mode="json") if lens else None,
        "final_response": result.final_text(a),  # after the revision rounds (refine mode), else `response`
        "attempts": _attempts(a.attempts),
        "response": a.text,
        "label": f"Response {a.label}" if a.label else None,
        "error": _error(a.error),
        "latency_s": a.latency_s,
        "usage": _usage(a.usage),
    }


def _review_fields(r: Review) -> dict[str, Any]:
    return {
        "model": r.reviewer,
        "ranking": r.text,
        "parsed_ranking": [f"Response {label}" for label in r.ballot_labels],
        "parsed_ranking_models": r.ballot_models,
        "parse_status": r.parse_status.value,
        "format": r.format,
        "scores": {f"Response {label}": values for label, values in r.scores.items()},
        "shown_labels": [f"Response {label}" for label in r.shown_labels],
        "error": _error(r.error),
        "latency_s": r.latency_s,
        "usage": _usage(r.usage),
    }


def _synthesis_fields(result: CouncilResult) -> dict[str, Any]:
    synthesis = result.synthesis
    if synthesis is None:
        return {"model": result.request.config.chairman, "response": None, "error": _error(result.error)}
    return {
        "model": synthesis.model,
        "response": synthesis.text,
        "by_chairman": synthesis.by_chairman,
        "author": author_of(synthesis).value,  # chairman, as_written (auto mode) or stand_in
        "author_line": written_by(synthesis),
        "note": synthesis.note,
        "author_note": author_note(result),
        "attempts": _attempts(synthesis.attempts),
        "latency_s": synthesis.latency_s,
        "usage": _usage(synthesis.usage),
    }


def _metadata(result: CouncilResult) -> dict[str, Any]:
    """The classic `metadata` (label map, aggregate ranking) plus the aggregate's counts and dissent."""
    aggregate = result.aggregate
    return {
        "label_to_model": {f"Response {k}": v for k, v in result.label_to_model.items()},
        "aggregate_rankings": [entry.model_dump(mode="json") for entry in (aggregate.entries if aggregate else [])],
        "agreement_w": aggregate.agreement_w if aggregate else None,
        # rubric scores: model -> criterion -> mean, and their consensus (0-100)
        "scores": aggregate.scores if aggregate else {},
        "consensus": aggregate.consensus if aggregate else None,
        "rubric": result.request.config.rubric.model_dump(mode="json") if result.request.config.rubric else None,
        "ballots_used": aggregate.ballots_used if aggregate else 0,
        "ballots_unparsed": aggregate.ballots_unparsed if aggregate else 0,
        # the reviews that came after the synthesis began: their ballots, and the ranking with them
        # (a council stored before late_aggregate counted them in its aggregate: aggregate.ballots_late)
        "ballots_late": (result.late_aggregate or aggregate).ballots_late if aggregate else 0,
        "late_aggregate_rankings": [e.model_dump(mode="json") for e in result.late_aggregate.entries]
        if result.late_aggregate
        else None,
        "ballots_read": ballots_read(result),  # `Ballots read: 2 of 3`, of the reviews the chairman was given
        "late_reviews": late_line(result),
        "aggregation": aggregate.method if aggregate else None,
        "reviewer_weights": _weights(result),
        "dissent": [
            d.model_dump(mode="json", include={"reviewer", "preferred", "reason"})
            for d in (aggregate.dissent if aggregate else [])
        ],
        "notices": result.notices,
        # auto mode: whether the first two answers disagreed and the whole council deliberated
        "escalated": result.escalated,
        # where the final answer came from (core/engine/composition.py): member, sources, chairman -> share
        "composition": result.composition,
        # where the members stand (core/engine/disagreement.py): agreed, contested, unique, open
        "disagreement": result.disagreement.model_dump(mode="json") if result.disagreement else None,
        "agreement": result.agreement.model_dump(mode="json") if result.agreement else None,
        # measured doubt (its consensus under the line-up's eval threshold) and the strategy `best` chose
        "unsure": result.unsure is not None,
        "unsure_line": measured.unsure_line(result.unsure) if result.unsure is not None else None,
        "strategy": result.request.config.strategy.model_dump(mode="json") if result.request.config.strategy else None,
        # refine mode: one list per round run, `{"member", "moved", "toward"}` per member
        "rounds": [r.moves() for r in result.rounds],
        "rounds_ended": result.rounds[-1].ended if result.rounds else None,
        "self_moa": self_moa_line(result.request.config, _answered(result)),
    }


def _answered(result: CouncilResult) -> int:
    return sum(1 for a in result.answers if a.ok)


def to_json(result: CouncilResult, votes: Sequence[FeedbackVote] = (), *, indent: int | None = 2) -> str:
    return json.dumps(to_document(result, votes), indent=indent, ensure_ascii=False)


def leaderboard_document(board: Leaderboard) -> dict[str, Any]:
    """`council leaderboard --json`: {"ratings": [...], "bias": [...]} and what they cover."""
    return {
        "scope": board.scope,
        "councils": board.councils,
        "ballots": board.ballots,
        "ratings": [row.model_dump(mode="json") for row in board.rows],
        "bias": [entry.model_dump(mode="json") for entry in board.bias],
        "approval": [a.model_dump(mode="json") for a in board.approval],
    }


def _fmt_seconds(value: float | None) -> str:
    return f"{value:.1f} s" if value is not None else "–"


def feedback_lines(votes: Sequence[FeedbackVote]) -> list[str]:
    """The readers' votes as Markdown lines (also `council show`)."""
    if not votes:
        return ["*(no votes yet)*"]
    good = sum(v.vote.value == "good" for v in votes)
    out = [f"👍 {good} · 👎 {len(votes) - good}", ""]
    for v in votes:
        mark = "👍" if v.vote.value == "good" else "👎"
        who = v.user_name or v.user_id
        out.append(f"- {mark} {who} ({v.updated_at:%Y-%m-%d %H:%M} UTC)" + (f": {v.comment}" if v.comment else ""))
    return out


def to_markdown(result: CouncilResult, votes: Sequence[FeedbackVote] = ()) -> str:
    """Everything a reader needs to audit a council: answers, reviews, ballots, aggregate, metadata."""
    out: list[str] = [
        *_md_header(result),
        *_md_final_answer(result),
        *_md_differ(result),
        *_md_material(result.request),
        *_md_aggregate(result),
        *_md_agreement(result),
        *_md_rounds(result),
        *_md_answers(result),
        *_md_reviews(result),
        "## Readers' feedback",
        "",
        *feedback_lines(votes),
        "",
    ]
    return "\n".join(out).rstrip() + "\n"


def _md_header(result: CouncilResult) -> list[str]:
    """Title, question, the facts list, then the notices and the failure (if any) as quotes."""
    request = result.request
    out: list[str] = [f"# Council {result.council_id}", ""]
    out += [f"**Question:** {request.question}", ""]
    out += [
        f"- Status: {result.status.value}",
        f"- Asked: {request.created_at:%Y-%m-%d %H:%M:%S} UTC via {request.origin.platform.value}"
        + (f" by {request.origin.user_name or request.origin.user_id}" if request.origin.user_id else ""),
        f"- Mode: {request.config.mode}",
        f"- Members: {', '.join(request.config.members)}",
        f"- Chairman: {request.config.chairman}",
        f"- Duration: {_fmt_seconds(result.timings.get('total_s'))}; "
        f"tokens: {result.usage.prompt_tokens} in / {result.usage.completion_tokens} out"
        + (f"; cost: ${result.usage.cost_usd:.4f}" if result.usage.cost_usd is not None else ""),
        "",
    ]
    for notice in result.notices:
        out.append(f"> {notice}")
    if result.notices:
        out.append("")
    if result.error is not None:
        out += [f"> **Failed:** {result.error.short()}", ""]
    return out


def _md_final_answer(result: CouncilResult) -> list[str]:
    out = ["## Final answer", ""]
    for line in measured.lead_lines(result):  # measured doubt and `best`'s strategy come first
        out += [f"> {line}", ""]
    if result.synthesis is not None:
        synthesis = result.synthesis
        who = written_by(synthesis)
        out += [f"*{who[:1].upper()}{who[1:]}*", "", synthesis.text, ""]
        if (meter := result_composition_line(result)) is not None:
            out += [f"*{meter}*", ""]
    else:
        out += ["*(no synthesis)*", ""]
    return out


def _md_differ(result: CouncilResult) -> list[str]:
    """Where the members stand, as a section of the export (nothing when there is no account)."""
    parts = differ_parts(result.disagreement)
    if not parts:
        return []
    out = [f"## {DIFFER_TITLE}", ""]
    for heading, items in parts:
        out += [f"**{heading}**", "", *(f"- {item}" for item in items), ""]
    if (source := differ_source(result)) is not None:
        out += [f"*{source}*", ""]
    return out


def _md_material(request: CouncilRequest) -> list[str]:
    """The web sources and the files the council read (text files in full, fences defused)."""
    out: list[str] = []
    if request.sources:
        out += ["## Sources", ""]
        out += [f"- {source_line(i, s)}" for i, s in enumerate(request.sources, 1)]
        out.append("")
    if request.attachments:
        out += ["## Files read", ""]
        for attachment in request.attachments:
            out += [f"### {file_summary(attachment)}", "", f"sha256 `{attachment.sha256}`", ""]
            if attachment.kind == "text":
                out += ["```text", attachment.text.replace("```", "`\u200b``"), "```", ""]
    return out


def _md_aggregate(result: CouncilResult) -> list[str]:
    out = [f"## {STAGE_VIEWS['ranking']}", ""]
    aggregate = result.aggregate
    if not (aggregate and aggregate.entries):
        return [*out, "*(no ranking)*", ""]
    out += [
        "| # | model | label | mean rank | votes | Borda | Copeland | 1st places |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for e in aggregate.entries:
        mean = f"{e.average_rank:.2f}" if e.average_rank is not None else "–"
        out.append(
            f"| {e.position} | {e.model} | {e.label or '–'} | {mean} | {e.rankings_count} | "
            f"{e.borda:.1f} | {e.copeland:.1f} | {e.first_place_votes} |"
        )
    w = aggregate.agreement_w
    agreement = f"Agreement (Kendall's W): {w:.3f} ({agreement_word(w)})" if w is not None else "Agreement: n/a"
    consensus = consensus_text(aggregate)
    out += ["", agreement + (f"; rubric {consensus}" if consensus else ""), ""]
    for line in (ballots_read(result), late_line(result)):
        out += [line, ""] if line else []
    out += _md_scores(result)
    if any(weight != 1 for weight in result.request.config.reviewer_weights.values()):
        weights = ", ".join(f"{m} ×{w:g}" for m, w in _weights(result).items())
        out += [f"Weighted ballots: {weights}", ""]
    dissent = result_dissent_lines(result)
    out += [f"> {line}" for line in dissent]
    out += [""] if dissent else []
    return out


def _md_scores(result: CouncilResult) -> list[str]:
    """Each answer's mean rubric scores as a table (nothing without scores)."""
    aggregate, rubric = result.aggregate, result.request.config.rubric
    if aggregate is None or rubric is None or not aggregate.scores:
        return []
    out = [
        f"| model | {' | '.join(rubric.criteria)} |",
        "|---|" + "---|" * len(rubric.criteria),
    ]
    for model, means in aggregate.scores.items():
        cells = " | ".join(f"{means[c]:.1f}" if c in means else "–" for c in rubric.criteria)
        out.append(f"| {model} | {cells} |")
    return [*out, "", f"Rubric scores: mean per criterion, scale {rubric.scale}.", ""]


def _md_agreement(result: CouncilResult) -> list[str]:
    """Auto mode's check of the first two answers: what decided it, and the judgement as written."""
    check = result.agreement
    if check is None:
        return []
    out = ["## Agreement check (auto mode)", "", check_line(check), ""]
    if check.judge is not None:
        out += [f"*Judged by {check.judge}, {_fmt_seconds(check.latency_s)}; verdict: {check.verdict or 'none'}*", ""]
    if check.text:
        out += [check.text, ""]
    return out


def _md_rounds(result: CouncilResult) -> list[str]:
    """Refine mode: who moved toward whom in each round, then each revision as written."""
    if not result.rounds:
        return []
    out = ["## Revision rounds", "", *(f"- {line}" for line in rounds_lines(result.rounds)), ""]
    for revision_round in result.rounds:
        for r in revision_round.revisions:
            state = "kept its answer" if r.kept else "moved" if r.moved else "held"
            why = f" — “{r.reason}”" if r.reason else ""
            out += [f"### Round {revision_round.number} — {r.model} ({state}){why}", ""]
            if r.error is not None:
                out += [f"*Did not revise: {r.error.short()}*", ""]
            elif r.moved:
                out += [r.text or "", ""]
    return out


def _md_answers(result: CouncilResult) -> list[str]:
    out = [f"## {STAGE_VIEWS['answers']}" + (" (first answers, before the rounds)" if result.rounds else ""), ""]
    if (line := self_moa_line(result.request.config, _answered(result))) is not None:
        out += [f"*{line}*", ""]
    for a in result.answers:
        out += [f"### {answer_name(a)}", ""]
        if (lens := lens_line(result.request.config.lens(a.seat or a.model))) is not None:
            out += [f"*{lens}*", ""]
        if a.error is not None:
            out += [f"*Failed: {a.error.short()}*", ""]
            continue
        fallback = fallback_note(a.model, a.attempts)
        if fallback:
            out += [f"*Seat {a.seat}: {fallback}*", ""]
        out += [f"*{_fmt_seconds(a.latency_s)}, {a.usage.completion_tokens} tokens*", "", a.text or "", ""]
    return out


def _md_reviews(result: CouncilResult) -> list[str]:
    out = [f"## {STAGE_VIEWS['reviews']}", ""]
    if result.label_to_model:
        out += ["Labels: " + ", ".join(f"Response {k} = {v}" for k, v in sorted(result.label_to_model.items())), ""]
    for r in result.reviews:
        out += [f"### {review_title(r)}", ""]
        if r.error is not None:
            out += [f"*Failed: {r.error.short()}*", ""]
            continue
        shown = ", ".join(f"Response {x}" for x in r.shown_labels)
        out += [f"*Shown, in this order: {shown}*", "", r.text or "", ""]
        ballot = " > ".join(f"{label} ({model})" for label, model in zip(r.ballot_labels, r.ballot_models))
        source = f" — {r.format} ballot" if r.format else ""
        out += [f"**Extracted ballot ({r.parse_status.value}):** {ballot or 'none'}{source}", ""]
        if r.scores:
            scored = "; ".join(
                f"{label}: " + ", ".join(f"{c} {v:g}" for c, v in values.items()) for label, values in r.scores.items()
            )
            out += [f"**Scores:** {scored}", ""]
    return out
