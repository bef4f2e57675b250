"""Every sentence about a council lives here: the platform-free facts of a council as plain text.

Slack, Discord, the terminal, the web app (its pages and their JSON twins), the API's transcript and
metadata, MCP and the Markdown/JSON exports only format these facts for their medium (escape them,
add emoji or bold, lay them out): none of them decides what a council says. httpx's BaseClient is
the model: each rule once here, the surfaces only adapt.

A new sentence goes into the section it belongs to (or a new section, with a banner like the
others); a surface that needs it imports it from here. Sections, in order:

    names          model ids shortened for lines and tables
    who wrote it   the chairman, a member's answer standing as written, a stand-in for the chairman
    modes          the council's modes and what each does (core/modes.py: it must import nothing)
    stages         stage titles, which stages a result has (its stage buttons), the streamed tail
    status         the final status line and the footer's fields
    agreement      Kendall's W in words, the rubric's consensus, auto mode's check
    ballots        how many ballots the council read, and the reviews that came after the synthesis began
    material       what the council read besides the question (files, web sources)
    dissent, scores, composition
    where they differ   the disagreement's folded section: title, headings, items, who wrote it
    deliberation   revision rounds, lenses, Self-MoA's samples
    long answers   what a cut answer says, the API's link line
    quoting        a text as a quote
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

from core.models.base import ErrorKind, counted
from core.models.deliberation import Lens, Revision, RevisionRound
from core.models.disagreement import Disagreement
from core.models.files import ExtractedAttachment
from core.models.requests import CouncilConfig, CouncilRequest
from core.models.search import SearchResult
from core.models.seats import primary
from core.models.stages import (
    Aggregate,
    AgreementCheck,
    CouncilResult,
    CouncilStatus,
    Dissent,
    MemberAnswer,
    Review,
    Synthesis,
)

# modes: in core/modes.py, which imports nothing (the CLI's help lists them without loading pydantic)
from core.modes import MODE_DESCRIPTIONS as MODE_DESCRIPTIONS
from core.modes import MODES as MODES
from core.modes import modes_help as modes_help

# --------------------------------------------------------------------------- names


def short_model(model: str) -> str:
    """`openrouter:openai/gpt-5.1` -> `gpt-5.1`: enough to recognise, short enough for a table."""
    return (
        model.split(":", 1)[-1].rsplit("/", 1)[-1]
        if "/" in model or model.startswith(("local:", "openrouter:"))
        else model
    )


# --------------------------------------------------------------------------- who wrote it


class Author(str, Enum):
    """Who wrote a council's answer."""

    CHAIRMAN = "chairman"  # the chairman (one of its seat's models) synthesized it
    AS_WRITTEN = "as_written"  # auto mode: the first two answers agreed, a member's stands as written
    STAND_IN = "stand_in"  # the chairman failed: a member synthesized it, or the best answer as written


def author_of(synthesis: Synthesis) -> Author:
    if synthesis.by_chairman:
        return Author.CHAIRMAN
    return Author.AS_WRITTEN if synthesis.agreed else Author.STAND_IN


def written_by(synthesis: Synthesis, name: str | None = None) -> str:
    """Who wrote the answer, to follow "Final answer" or "Council answer": `by the chairman, beta`,
    `as written by alpha`, `by gamma, standing in for the chairman`. `name`: the model as shown
    (short_model on a chat platform; the full id by default)."""
    model = name or synthesis.model
    return {
        Author.CHAIRMAN: f"by the chairman, {model}",
        Author.AS_WRITTEN: f"as written by {model}",
        Author.STAND_IN: f"by {model}, standing in for the chairman",
    }[author_of(synthesis)]


def stand_in_note(synthesis: Synthesis) -> str | None:
    """Why a stand-in wrote the answer, said before the answer (a degraded result never wears the
    chairman's title); None when the chairman wrote it or the first two answers agreed."""
    if author_of(synthesis) is not Author.STAND_IN:
        return None
    return synthesis.note or f"The chairman failed; {synthesis.model} wrote this answer instead."


def chairman_replaced(chairman: str, writer: str) -> str:
    """Said before a stand-in's streamed answer (its note, with the cause, comes once it has finished)."""
    return f"The chairman {chairman} failed; {writer} wrote this answer instead."


def writer_replaced(previous: str, writer: str) -> str:
    """Said live when the model writing the answer stopped and another takes over."""
    return f"{previous} stopped; {writer} writes the answer."


def stood_as_written(check: AgreementCheck | None, synthesis: Synthesis, label: str | None) -> str:
    """Why a member's answer stands as written in auto mode (one of the result's notices)."""
    reason = check.reason if check is not None else "the first two answers agreed"
    response = f"Response {label} (by {synthesis.model})" if label else f"the answer by {synthesis.model}"
    return f"Auto mode: {reason}; this is {response} as written."


def author_note(result: CouncilResult) -> str | None:
    """The sentence that says who wrote the answer when it was not simply the chairman: the
    stand-in's note, or why an answer stands as written."""
    synthesis = result.synthesis
    if synthesis is None:
        return None
    if author_of(synthesis) is Author.AS_WRITTEN:
        label = next((a.label for a in result.answers if a.model == synthesis.model and a.label), None)
        return stood_as_written(result.agreement, synthesis, label)
    return stand_in_note(synthesis)


def other_notices(result: CouncilResult) -> list[str]:
    """The result's notices but the one `author_note` says (shown with the answer's author)."""
    said = author_note(result)
    synthesis = result.synthesis
    stored_note = synthesis.note if synthesis is not None and author_of(synthesis) is Author.STAND_IN else None
    return [n for n in result.notices if n not in (said, stored_note)]


# --------------------------------------------------------------------------- stages

# A member of a later memory batch (MemberWaiting), until it is asked: every interface's progress.
WAITING_FOR_MEMORY = "waiting for memory"

# While a council runs: what each stage does.
STAGE_TITLES = {1: "Stage 1 · members answer", 2: "Stage 2 · anonymous peer review", 3: "Stage 3 · chairman synthesis"}
# A finished council's stage details (buttons, modals, page sections): what each holds.
DIFFER_TITLE = "Where they differ"  # the folded account of where the members stand
STAGE_VIEWS = {
    "answers": "Stage 1 · answers",
    "reviews": "Stage 2 · reviews",
    "ranking": "Aggregate ranking",
    "differ": DIFFER_TITLE,
}
STAGE_BUTTONS = {"answers": "Answers", "reviews": "Reviews", "ranking": "Ranking", "differ": DIFFER_TITLE}


def stage_progress(stage: int) -> str:
    """The chat status's first line while a council runs: the stage's title (`starting` before)."""
    return STAGE_TITLES.get(stage) or ("starting" if stage == 0 else "working")


def stages_of(result: CouncilResult) -> list[str]:
    """The stage details a result has (its stage buttons): no Reviews or Ranking button to open an
    empty stage (a quick council has no reviews), Where they differ when there is an account of it."""
    present = {
        "answers": bool(result.answers),
        "reviews": bool(result.reviews),
        "ranking": bool(result.reviews) and result.aggregate is not None,
        "differ": bool(differ_parts(result.disagreement)),
    }
    return [stage for stage in STAGE_VIEWS if present[stage]]


def stream_tail(text: str, limit: int) -> str:
    """The end of the chairman's text as it streams into a status message: its last `limit`
    characters, from a line break when one is near, with an ellipsis where it was cut."""
    if len(text) <= limit:
        return text
    tail = text[-limit:]
    cut = tail.find("\n")
    return "…" + (tail[cut + 1 :] if 0 <= cut < 200 else tail)


# --------------------------------------------------------------------------- status


class Tone(str, Enum):
    """How a final status reads: each surface picks its mark (emoji, colour) for it."""

    OK = "ok"
    WARN = "warn"
    FAILED = "failed"
    STOPPED = "stopped"


def took(result: CouncilResult) -> str:
    """` in 3.1 s` (empty when the duration is unknown)."""
    seconds = result.timings.get("total_s")
    return f" in {seconds:.1f} s" if seconds is not None else ""


def members_answered(result: CouncilResult) -> str:
    return f"{sum(1 for a in result.answers if a.ok)}/{len(result.answers)} members answered"


def result_title(result: CouncilResult) -> str:
    """A finished council in one line, claiming no more than happened: the title of Slack's
    streamed answer."""
    synthesis = result.synthesis
    quick = "The quick council" if result.request.config.mode == "quick" else "The council"
    if synthesis is not None and author_of(synthesis) is Author.STAND_IN:
        return f"The chairman failed; {short_model(synthesis.model)} answered instead{took(result)}"
    failed = [short_model(a.model) for a in result.answers if a.error is not None]
    if failed:
        them = "it" if len(failed) == 1 else "them"
        return f"{', '.join(failed)} failed; {quick.lower()} answered without {them}{took(result)}"
    if result.status is CouncilStatus.DEGRADED:
        return f"{quick} answered, with problems{took(result)}"
    return f"{quick} answered{took(result)}"


def summary_line(result: CouncilResult) -> str:
    """Under the answer, in one plain line: who answered, what failed, who the reviewers put
    first and how far they agreed (the figures are behind the stage buttons)."""
    synthesis = result.synthesis
    parts = [f"{sum(1 for a in result.answers if a.ok)} of {len(result.answers)} members answered"]
    failed = [short_model(a.model) for a in result.answers if a.error is not None]
    if failed:
        parts.append(f"{', '.join(failed)} failed")
    if synthesis is not None and author_of(synthesis) is Author.STAND_IN:
        parts.append(f"the chairman failed, {short_model(synthesis.model)} wrote the answer")
    aggregate = result.aggregate
    if result.reviews and aggregate is not None and aggregate.entries and aggregate.agreement_w is not None:
        word = agreement_word(aggregate.agreement_w)
        parts.append(f"the reviewers put {short_model(aggregate.entries[0].model)} first ({word} agreement)")
    line = "; ".join(parts) + "."
    if result.request.config.mode == "quick":
        return f"A quick council: {line[0].lower()}{line[1:]}"
    return line[0].upper() + line[1:]


def mode_field(mode: str) -> str:
    return f"{mode} mode"


def final_status(result: CouncilResult) -> tuple[Tone, str]:
    """The status message's last line, without where the answer is (each surface says that)."""
    if result.status is CouncilStatus.FAILED:
        return Tone.FAILED, f"The council failed{took(result)}"
    if result.status is CouncilStatus.CANCELLED:
        return Tone.STOPPED, f"The council was stopped{took(result)}"
    tone = Tone.WARN if result.status is CouncilStatus.DEGRADED else Tone.OK
    done = "Finished with problems" if tone is Tone.WARN else "Done"
    return tone, f"{done}{took(result)}: {members_answered(result)}, {counted(len(result.reviews), 'review')}"


def no_answer(answer: MemberAnswer) -> str:
    """`gamma gave no answer: auth 401: invalid api key` (one of the result's notices)."""
    return f"{answer.model} gave no answer: {answer.error.short() if answer.error else 'no answer'}"


def failed_members(result: CouncilResult) -> list[str]:
    """`no_answer` of every member that failed (not the ones the user skipped)."""
    return [no_answer(a) for a in result.answers if a.error is not None and a.error.kind is not ErrorKind.CANCELLED]


def footer_fields(result: CouncilResult, name: str | None = None) -> list[str]:
    """The footer under an answer: `Council <id>`, the mode, who wrote it, members answered, time,
    tokens, cost. `name`: the writer's model as shown (short on chat platforms)."""
    fields = [f"Council {result.council_id}", mode_field(result.request.config.mode)]
    if result.synthesis is not None:
        fields.append(written_by(result.synthesis, name))
    if result.answers:
        fields.append(members_answered(result))
    seconds = result.timings.get("total_s")
    if seconds is not None:
        fields.append(f"{seconds:.1f} s")
    fields.append(f"{result.usage.prompt_tokens + result.usage.completion_tokens:,} tokens")
    if result.usage.cost_usd:
        fields.append(f"${result.usage.cost_usd:.4f}")
    return fields


# --------------------------------------------------------------------------- agreement


def agreement_word(w: float) -> str:
    """Kendall's W in a word."""
    return "strong" if w >= 0.7 else "moderate" if w >= 0.4 else "weak"


def agreement_text(w: float | None) -> str:
    """`W=0.78 (strong)`, or `W n/a` when it cannot be computed."""
    return f"W={w:.2f} ({agreement_word(w)})" if w is not None else "W n/a"


# Consensus of the rubric scores (0-100, rust/ranking/src/scores.rs) below which it is called low
# and the chairman is asked to address the disagreements (core/engine/chair_prompt.py).
LOW_CONSENSUS = 60.0
HIGH_CONSENSUS = 80.0


def consensus_text(aggregate: Aggregate | None) -> str | None:
    """`consensus 72/100 (moderate)`, shown beside Kendall's W; None without rubric scores."""
    if aggregate is None or aggregate.consensus is None:
        return None
    c = aggregate.consensus
    word = "high" if c >= HIGH_CONSENSUS else "moderate" if c >= LOW_CONSENSUS else "low"
    return f"consensus {c:.0f}/100 ({word})"


JUDGING = "checks whether the first two answers agree"


def judging_line(judge: str) -> str:
    """Auto mode, while the chairman judges: `beta checks whether the first two answers agree`."""
    return f"{judge} {JUDGING}"


def check_line(check: AgreementCheck) -> str:
    """Auto mode's check once decided, as a sentence: `Escalated: the first two answers disagreed;
    the whole council deliberates.` or `The first two answers were the same.`"""
    if check.escalated:
        return f"Escalated: {check.reason}; the whole council deliberates."
    return f"{check.reason[:1].upper()}{check.reason[1:]}."


# --------------------------------------------------------------------------- ballots


def ballots_read(result: CouncilResult) -> str | None:
    """`Ballots read: 2 of 3`, over the reviews the chairman was given; None without reviews."""
    on_time = [r for r in result.reviews if not r.late]
    if not on_time:
        return None
    parsed = sum(1 for r in on_time if r.ballot_models)
    return f"Ballots read: {parsed} of {len(on_time)}"


@dataclass(frozen=True)
class LateReviews:
    """Reviews that arrived after the synthesis began: the chairman never saw them."""

    count: int
    ranking: Aggregate | None  # the ranking with them (None: it is the same as without them)


def late_reviews(result: CouncilResult) -> LateReviews | None:
    """The reviews that came after the synthesis began (a late one that failed is a notice)."""
    late = [r for r in result.reviews if r.late and r.error is None]
    if not late:
        return None
    return LateReviews(len(late), result.late_aggregate)


def late_line(result: CouncilResult) -> str | None:
    """`1 review arrived after the synthesis began; with it the ranking is 1. gamma · 2. beta ·
    3. alpha.` The ranking shown with the answer stays the one the chairman was given."""
    late = late_reviews(result)
    if late is None:
        return None
    arrived = f"{counted(late.count, 'review')} arrived after the synthesis began"
    them = "it" if late.count == 1 else "them"
    if late.ranking is None or not late.ranking.entries or result.aggregate is None:
        return f"{arrived}; the chairman did not see {them}."
    if [e.model for e in late.ranking.entries] == [e.model for e in result.aggregate.entries]:
        return f"{arrived}; with {them} the ranking is the same."
    return f"{arrived}; with {them} the ranking is {late_order(late.ranking)}."


def late_order(aggregate: Aggregate) -> str:
    """A ranking as one short line: `1. alpha · 2. beta · 3. gamma`."""
    return " · ".join(f"{e.position}. {short_model(e.model)}" for e in aggregate.entries)


def review_title(review: Review) -> str:
    """`Review by beta`, and `(after the synthesis began)` for a late one: a stage detail's heading."""
    return f"Review by {review.reviewer}{review_state(review)}"


AFTER_SYNTHESIS = " (after the synthesis began)"


def review_state(review: Review) -> str:
    """` (after the synthesis began)` for a late review, else empty (progress lines, stage details)."""
    return AFTER_SYNTHESIS if review.late else ""


# --------------------------------------------------------------------------- material

READ_TITLE = "What the council read"
_UNSAFE_NAME = re.compile(r"[<>\r\n\t]+")


def safe_file_name(name: str) -> str:
    """A file name fit for a fence marker and a one-line notice (no brackets, no line breaks)."""
    return _UNSAFE_NAME.sub(" ", name).strip()[:200] or "unnamed file"


def files_notice(lines: list[str]) -> str:
    """The private note to the asker about files not read or cut (`AttachmentBatch.user_notices()`)."""
    return "About your files (only you can see this):\n" + "\n".join(f"• {line}" for line in lines)


def file_summary(attachment: ExtractedAttachment) -> str:
    """One line per file for history, `council show`, exports: name, type, size (and pages)."""
    pages = f", {attachment.page_count} page(s)" if attachment.page_count else ""
    return f"{safe_file_name(attachment.name)} ({attachment.media_type}, {_size(attachment.size)}{pages})"


def source_line(number: int, source: SearchResult) -> str:
    date = f" ({source.published.isoformat()})" if source.published else ""
    return f"[{number}] {source.title}{date}: {source.url}"


def read_lines(request: CouncilRequest) -> list[str]:
    """What the council read besides the question, as plain lines (empty when nothing)."""
    lines = [f"File: {file_summary(a)}" for a in request.attachments]
    lines += [f"Source {source_line(i, s)}" for i, s in enumerate(request.sources, 1)]
    return lines


def _size(size: int) -> str:
    if size >= 1024 * 1024:
        return f"{size / (1024 * 1024):.1f} MB"
    if size >= 1024:
        return f"{size / 1024:.0f} KB"
    return f"{size} B"


# --------------------------------------------------------------------------- dissent, scores, composition


def dissent_line(d: Dissent) -> str:
    """The minority view as one plain line (renderers escape it for their platform)."""
    place = f", placed {d.place} overall" if d.place is not None else ""
    label = f"Response {d.preferred_label} ({d.preferred})" if d.preferred_label else d.preferred
    why = f": “{d.reason}”" if d.reason else ""
    return f"Minority view: {d.reviewer} preferred {label}{place}{why}"


def dissent_lines(aggregate: Aggregate | None) -> list[str]:
    return [dissent_line(d) for d in aggregate.dissent] if aggregate is not None else []


def result_dissent_lines(result: CouncilResult) -> list[str]:
    """The minority views of the chairman's ranking, then those of the reviews that came after the
    synthesis began (against the ranking with them), marked so."""
    late = {r.reviewer for r in result.reviews if r.late}
    later = result.late_aggregate.dissent if result.late_aggregate is not None else []
    return dissent_lines(result.aggregate) + [
        f"{dissent_line(d)}{AFTER_SYNTHESIS}" for d in later if d.reviewer in late
    ]


def score_line(model: str, means: dict[str, float]) -> str:
    """One answer's mean rubric scores: `model: accuracy 8.0 · insight 7.5`."""
    return f"{model}: " + " · ".join(f"{criterion} {value:.1f}" for criterion, value in means.items())


def score_lines(aggregate: Aggregate | None) -> list[str]:
    return [score_line(m, v) for m, v in aggregate.scores.items() if v] if aggregate is not None else []


METER_CELLS = 10
CHAIRMAN_SHARE = "chairman"  # the chairman's own share (core/engine/composition.py)


def composition_line(composition: dict[str, float] | None, stand_in: str | None = None) -> str | None:
    """The composition meter: `Composition ███████░░░ alpha 46% · beta 22% · sources 2% · chairman's own 30%`.
    The filled cells are what came from the council's texts, the empty ones the writer's own: the
    chairman's, or (`stand_in`: the member that wrote the answer for a chairman that failed) that
    member's, its stage-1 answer included."""
    if not composition:
        return None
    own_key = stand_in if stand_in is not None and CHAIRMAN_SHARE not in composition else CHAIRMAN_SHARE
    own = composition.get(own_key, 0.0)
    filled = round((1 - own) * METER_CELLS)
    parts = [
        f"{name} {share:.0%}"
        for name, share in sorted(composition.items(), key=lambda item: -item[1])
        if name != own_key and share >= 0.005
    ]
    parts.append(f"{'chairman' if own_key == CHAIRMAN_SHARE else own_key}'s own {own:.0%}")
    return f"Composition {'█' * filled}{'░' * (METER_CELLS - filled)} " + " · ".join(parts)


def result_composition_line(result: CouncilResult) -> str | None:
    """The meter of a result, naming the stand-in's own share as its own."""
    synthesis = result.synthesis
    stand_in = synthesis.model if synthesis is not None and author_of(synthesis) is Author.STAND_IN else None
    return composition_line(result.composition, stand_in)


# --------------------------------------------------------------------------- where they differ

# Where the members stand (core/models/disagreement.py): the title of the folded section every
# interface shows, each part's heading, and the line that says which parts were written, which measured.
DIFFER_HEADINGS = {
    "agreed": "Every answer says",
    "contested": "Contested",
    "unique": "Only one member says",
    "open": "Still open",
}
_MEASURED_WHAT = {"agreed": "what every answer says", "unique": "what only one member says"}


def differ_parts(disagreement: Disagreement | None) -> list[tuple[str, list[str]]]:
    """Each non-empty part as (heading, plain item lines); a contested point is one line with its
    sides: `point: alpha, gamma: never; beta: briefly`."""
    if disagreement is None:
        return []
    items = {
        "agreed": list(disagreement.agreed),
        "contested": [
            f"{c.point}: " + "; ".join(f"{', '.join(s.members)}: {s.position}" for s in c.sides)
            for c in disagreement.contested
        ],
        "unique": [f"{u.member}: {u.claim}" for u in disagreement.unique],
        "open": list(disagreement.open),
    }
    return [(DIFFER_HEADINGS[part], lines) for part, lines in items.items() if lines]


def differ_source(result: CouncilResult) -> str | None:
    """Who wrote the account: `Written by chair; what only one member says measured from the answers
    (shared wording)`; None without one."""
    d = result.disagreement
    if d is None or d.empty:
        return None
    writer = result.synthesis.model if result.synthesis is not None else "the chairman"
    measured = [_MEASURED_WHAT[p] for p in d.measured if p in _MEASURED_WHAT and getattr(d, p)]
    measured_text = f"{' and '.join(measured)} measured from the answers (shared wording)" if measured else ""
    if d.written and measured_text:
        return f"Written by {writer}; {measured_text}."
    if d.written:
        return f"Written by {writer}."
    if not measured_text:
        return None
    return f"{measured_text[0].upper()}{measured_text[1:]}: {writer} wrote no account of it."


def differ_lines(result: CouncilResult) -> list[str]:
    """The whole account as plain lines (terminal, exports): headings, `• ` items, the source line;
    empty when there is nothing to show."""
    parts = differ_parts(result.disagreement)
    if not parts:
        return []
    out: list[str] = []
    for heading, items in parts:
        out.append(f"{heading}:")
        out += [f"• {item}" for item in items]
    source = differ_source(result)
    return out + ([source] if source else [])


# --------------------------------------------------------------------------- deliberation
ENDED_NO_MOVE = "no member moved"
ENDED_CONVERGED = "the answers converged"
ENDED_LAST = "the last round allowed"
ENDED_STOPPED = "the council was stopped"
ENDED_SYNTHESIZE = "you asked to synthesize now"

LENS_CLIP = 60


def _names(names: Sequence[str]) -> str:
    if len(names) <= 1:
        return "".join(names)
    return f"{', '.join(names[:-1])} and {names[-1]}"


def round_line(revision_round: RevisionRound) -> str:
    """`Round 1: gamma moved toward alpha; alpha and beta held` (a failed revision held its answer)."""
    moved: list[str] = []
    held: list[str] = []
    for r in revision_round.revisions:
        if r.moved:
            toward = f" toward {_names(r.toward)}" if r.toward else " on its own"
            moved.append(f"{r.model} moved{toward}" + ("" if r.reason else " (without saying why)"))
        else:
            held.append(r.model)
    parts = list(moved)
    if held:
        parts.append(f"{_names(held)} held")
    return f"Round {revision_round.number}: " + ("; ".join(parts) if parts else "no revision arrived")


def revision_line(revision: Revision) -> str:
    """One member's revision as it arrives: `gamma moved toward alpha: “reason”`, `alpha held`."""
    if revision.error is not None:
        return f"{revision.model} kept its answer (no revision: {revision.error.short()})"
    why = f": “{revision.reason}”" if revision.reason else ""
    if revision.moved:
        toward = f" toward {_names(revision.toward)}" if revision.toward else " on its own"
        return f"{revision.model} moved{toward}{why or ' (without saying why)'}"
    return f"{revision.model} {'kept its answer' if revision.kept else 'held'}{why}"


def rounds_lines(rounds: Sequence[RevisionRound]) -> list[str]:
    """One line per round, and why the rounds ended when that is worth saying."""
    lines = [round_line(r) for r in rounds]
    last = rounds[-1] if rounds else None
    if last is not None and last.ended in (ENDED_NO_MOVE, ENDED_CONVERGED):
        lines.append(f"The rounds ended after round {last.number}: {last.ended}.")
    return lines


def lens_line(lens: Lens | None) -> str | None:
    """`lens: skeptic`, `lens: “answer as the engineer …”`, with its temperature and length when set."""
    if lens is None or lens.empty:
        return None
    parts = []
    if lens.preset:
        parts.append(lens.preset)
    elif lens.persona:
        text = " ".join(lens.persona.split())
        parts.append(f"“{text if len(text) <= LENS_CLIP else text[: LENS_CLIP - 1].rstrip() + '…'}”")
    if lens.temperature is not None:
        parts.append(f"temperature {lens.temperature:g}")
    if lens.max_tokens is not None:
        parts.append(f"at most {lens.max_tokens} tokens")
    return "lens: " + ", ".join(parts)


def self_moa_line(config: CouncilConfig, answered: int | None = None) -> str | None:
    """`6 samples of alpha, aggregated by chair` (None outside Self-MoA)."""
    if config.mode != "self-moa" or not config.members:
        return None
    count = answered if answered is not None else config.samples
    noun = "sample" if count == 1 else "samples"
    return f"{count} {noun} of {primary(config.members[0])}, aggregated by {primary(config.chairman)}"


def deliberation_lines(result: CouncilResult) -> list[str]:
    """Self-MoA's samples, each member's lens and the rounds, as plain lines (empty when none)."""
    lines = []
    if (samples := self_moa_line(result.request.config, sum(1 for a in result.answers if a.ok))) is not None:
        lines.append(samples)
    for answer in result.answers:
        lens = lens_line(result.request.config.lens(answer.seat or answer.model))
        if lens is not None and f"{answer.model}: {lens}" not in lines:  # Self-MoA's samples share one
            lines.append(f"{answer.model}: {lens}")
    return lines + rounds_lines(result.rounds)


# --------------------------------------------------------------------------- long answers, links


def cut_note(answer: str) -> str:
    """Under the shown start of a long answer (bot/long_answer.py)."""
    return f"The answer is cut here: the whole answer ({len(answer):,} characters) is in the attached Markdown file."


def link_line(url: str) -> str:
    """The one-line Markdown link the API's answer ends with (COUNCIL_API_LINK)."""
    return f"[Open this council in the browser]({url})"


# --------------------------------------------------------------------------- quoting


def quote(text: str) -> str:
    """`text` as a quote: every line (at any line break, also a lone CR) starts with "> " and a blank
    one is ">", so the quoted text cannot end the quote. Callers escape or clip it first, as their
    medium needs (the chairman's prompts neutralise it: core/engine/prompts.py)."""
    return "\n".join(f"> {line}" if line.strip() else ">" for line in text.splitlines() or [""])
