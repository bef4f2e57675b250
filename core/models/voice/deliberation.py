"""The deliberation: revision rounds and each member's move, lenses, Self-MoA's samples."""

from __future__ import annotations

from collections.abc import Sequence

from core.models.deliberation import Lens, Revision, RevisionRound
from core.models.requests import CouncilConfig
from core.models.seats import primary
from core.models.stages import CouncilResult

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
