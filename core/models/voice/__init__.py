"""Every sentence about a council lives here: the platform-free facts of a council as plain text.

Slack, Discord, the terminal, the web app (its pages and their JSON twins), the API's transcript and
metadata, MCP and the Markdown/JSON exports only format these facts for their medium (escape them,
add emoji or bold, lay them out): none of them decides what a council says. httpx's BaseClient is
the model: each rule once here, the surfaces only adapt.

A new sentence goes into the module it belongs to (or a new one, named for its job); this package
re-exports every public name, so a surface imports it from `core.models.voice`. The modules:

    names          model ids shortened for lines and tables
    authorship     who wrote the answer: the chairman, a member's answer standing as written, a
                   stand-in for the chairman
    opening        what a streamed answer says first when something went wrong
    progress       the lines of a running council: queue, who sits, members, rounds
    stages         stage titles, which stages a result has (its stage buttons), the streamed tail
    status         the final status line, a finished council's title and summary, the footer's fields
    agreement      Kendall's W in words, the rubric's consensus, auto mode's check
    ballots        how many ballots the council read, and the reviews that came after the synthesis began
    reading        what the council read besides the question (files, web sources)
    ranking        the ranking in one line, a review's ballot, the minority views, the rubric
                   scores, the composition meter
    differ         where they differ: the folded section's title, headings, items, who wrote it
    deliberation   revision rounds, lenses, Self-MoA's samples
    measured       measured doubt (unsure), effective votes, thresholds, the strategy `best` chose
    text           what a cut answer says, the API's link line, a text as a quote
    facts          the facts every JSON surface carries under the same names
    modes          the council's modes and what each does (core/modes.py: it must import nothing)
"""

from __future__ import annotations

from core.models.voice import measured
from core.models.voice.agreement import (
    HIGH_CONSENSUS,
    JUDGING,
    LOW_CONSENSUS,
    agreement_text,
    agreement_word,
    check_line,
    consensus_text,
    escalation_heading,
    escalation_line,
    judging_line,
)
from core.models.voice.authorship import (
    STANDING_IN,
    Author,
    author_note,
    author_of,
    chairman_replaced,
    other_notices,
    stand_in_note,
    stood_as_written,
    writer_replaced,
    written_by,
)
from core.models.voice.ballots import (
    AFTER_SYNTHESIS,
    LateReviews,
    ballots_read,
    late_line,
    late_order,
    late_reviews,
    review_state,
    review_title,
)
from core.models.voice.deliberation import (
    ENDED_CONVERGED,
    ENDED_LAST,
    ENDED_NO_MOVE,
    ENDED_STOPPED,
    ENDED_SYNTHESIZE,
    LENS_CLIP,
    deliberation_lines,
    lens_line,
    revision_line,
    round_line,
    rounds_lines,
    self_moa_line,
)
from core.models.voice.differ import (
    DIFFER_HEADINGS,
    DIFFER_TITLE,
    differ_lines,
    differ_parts,
    differ_source,
)
from core.models.voice.facts import (
    told,
)
from core.models.voice.measured import (
    best_fallback_line,
    best_line,
    effective_votes_line,
    lead_lines,
    redundant_seat_line,
    threshold_line,
    unsure_line,
)
from core.models.voice.names import (
    short_model,
)
from core.models.voice.opening import (
    Mark,
    Opening,
)
from core.models.voice.progress import (
    council_opening,
    member_answered,
    member_failed,
    queued_line,
    round_title,
)
from core.models.voice.ranking import (
    CHAIRMAN_SHARE,
    METER_CELLS,
    ballot_line,
    composition_line,
    dissent_line,
    dissent_lines,
    ranking_line,
    result_composition_line,
    result_dissent_lines,
    score_line,
    score_lines,
)
from core.models.voice.reading import (
    READ_TITLE,
    file_summary,
    files_notice,
    read_lines,
    safe_file_name,
    source_line,
)
from core.models.voice.stages import (
    STAGE_BUTTONS,
    STAGE_TITLES,
    STAGE_VIEWS,
    WAITING_FOR_MEMORY,
    answer_name,
    answer_state,
    answer_took,
    revised_name,
    stage_progress,
    stage_title,
    stages_of,
    stream_tail,
)
from core.models.voice.status import (
    STOPPED_BEFORE_ANSWER,
    Tone,
    failed_answers,
    failed_members,
    failure_line,
    final_status,
    footer_fields,
    gave_no_answer,
    members_answered,
    mode_field,
    no_answer,
    result_title,
    summary_line,
    took,
)
from core.models.voice.text import (
    cut_note,
    link_line,
    quote,
)

# modes: in core/modes.py, which imports nothing (the CLI's help lists them without loading pydantic)
from core.modes import MODE_DESCRIPTIONS, MODES, modes_help

__all__ = [
    "AFTER_SYNTHESIS",
    "CHAIRMAN_SHARE",
    "DIFFER_HEADINGS",
    "DIFFER_TITLE",
    "ENDED_CONVERGED",
    "ENDED_LAST",
    "ENDED_NO_MOVE",
    "ENDED_STOPPED",
    "ENDED_SYNTHESIZE",
    "HIGH_CONSENSUS",
    "JUDGING",
    "LENS_CLIP",
    "LOW_CONSENSUS",
    "METER_CELLS",
    "MODES",
    "MODE_DESCRIPTIONS",
    "READ_TITLE",
    "STAGE_BUTTONS",
    "STAGE_TITLES",
    "STAGE_VIEWS",
    "STANDING_IN",
    "STOPPED_BEFORE_ANSWER",
    "WAITING_FOR_MEMORY",
    "Author",
    "LateReviews",
    "Mark",
    "Opening",
    "Tone",
    "agreement_text",
    "agreement_word",
    "answer_name",
    "answer_state",
    "answer_took",
    "author_note",
    "author_of",
    "ballot_line",
    "ballots_read",
    "best_fallback_line",
    "best_line",
    "chairman_replaced",
    "check_line",
    "composition_line",
    "consensus_text",
    "council_opening",
    "cut_note",
    "deliberation_lines",
    "differ_lines",
    "differ_parts",
    "differ_source",
    "dissent_line",
    "dissent_lines",
    "effective_votes_line",
    "escalation_heading",
    "escalation_line",
    "failed_answers",
    "failed_members",
    "failure_line",
    "file_summary",
    "files_notice",
    "final_status",
    "footer_fields",
    "gave_no_answer",
    "judging_line",
    "late_line",
    "late_order",
    "late_reviews",
    "lead_lines",
    "lens_line",
    "link_line",
    "measured",
    "member_answered",
    "member_failed",
    "members_answered",
    "mode_field",
    "modes_help",
    "no_answer",
    "other_notices",
    "queued_line",
    "quote",
    "ranking_line",
    "read_lines",
    "redundant_seat_line",
    "result_composition_line",
    "result_dissent_lines",
    "result_title",
    "review_state",
    "review_title",
    "revised_name",
    "revision_line",
    "round_line",
    "round_title",
    "rounds_lines",
    "safe_file_name",
    "score_line",
    "score_lines",
    "self_moa_line",
    "short_model",
    "source_line",
    "stage_progress",
    "stage_title",
    "stages_of",
    "stand_in_note",
    "stood_as_written",
    "stream_tail",
    "summary_line",
    "threshold_line",
    "told",
    "took",
    "unsure_line",
    "writer_replaced",
    "written_by",
]
