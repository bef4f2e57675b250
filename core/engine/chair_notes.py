"""What the chairman is told about how the answers came about, besides the answers themselves:
who moved and who held in the revision rounds (with the first answers of those that moved, so that a
right answer voted out is still on the table), and that Self-MoA's answers are samples of one model.
By label only: no model id reaches the chairman."""

from __future__ import annotations

from core.engine.prompts import redact_ids
from core.engine.state import CouncilState

SELF_MOA_NOTE = (
    "These responses are independent samples of one model's answer to the question, not a ranking: "
    "there was no peer review. Aggregate them: keep what the samples agree on, check what only some "
    "say, and correct what is wrong."
)


def deliberation_note(state: CouncilState) -> str | None:
    """The rounds as the chairman reads them (None without rounds)."""
    if not state.rounds:
        return None
    label_of_seat = {seat: label for label, seat in state.label_to_seat.items()}
    label_of_model = {model: label for label, model in state.label_to_model.items()}
    lines = [
        f"After their first answers the members read each other's and could revise ({len(state.rounds)} "
        "round(s)); the responses above are their latest answers. Members that conform to the majority "
        "without a reason are no evidence for it."
    ]
    moved: list[str] = []
    for revision_round in state.rounds:
        for r in revision_round.revisions:
            label = label_of_seat.get(r.seat)
            if label is None:
                continue
            if not r.moved:
                lines.append(f"Round {revision_round.number}: Response {label} held its answer.")
                continue
            toward = [f"Response {label_of_model[m]}" for m in r.toward if m in label_of_model]
            whom = f" toward {', '.join(toward)}" if toward else ""
            lines.append(f"Round {revision_round.number}: Response {label} changed its answer{whom}.")
            if r.unexplained:
                lines.append(
                    f"Response {label} dropped its earlier position without giving a reason: weigh its first "
                    "answer as well as its change."
                )
            moved.append(r.seat)
    blocks = ["\n".join(lines)]
    ids = state.all_ids()
    for seat in dict.fromkeys(moved):
        label = label_of_seat[seat]
        first = state.answers[seat].text or ""
        blocks.append(
            f"Response {label}'s first answer, written before it read the others:\n"
            + state.chair_fence.wrap(f"RESPONSE {label}", redact_ids(first, ids))
        )
    return "\n\n".join(blocks)
