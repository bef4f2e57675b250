"""The sentences of what was measured: effective votes, consensus thresholds, the unsure line and
the strategy `best` chose. Plain text; every surface only formats it (renderers escape it for
their platform)."""

from __future__ import annotations

from core.models.doubt import ALWAYS, Unsure
from core.models.eval import ConfigReport, ConsensusReport, EffectiveVotes, RedundantSeat
from core.models.stages import CouncilResult


def _percent(value: float | None) -> str:
    return "—" if value is None else f"{value:.0%}"


def effective_votes_line(votes: EffectiveVotes) -> str:
    if votes.n_eff is None or votes.mean_correlation is None:
        return (
            f"Effective independent votes: not measurable ({votes.members} members over {votes.items} items: "
            "a member right or wrong on every item has no correlation)"
        )
    return (
        f"Effective independent votes: {votes.n_eff:.2f} of {votes.members} members "
        f"(mean error correlation {votes.mean_correlation:+.2f} over {votes.items} items)"
    )


def redundant_seat_line(seat: RedundantSeat) -> str:
    return (
        f"Most redundant seat: {seat.seat} (n_eff {seat.n_eff_without:.2f} without it); majority of the members' "
        f"answers {_percent(seat.vote_accuracy)}, without it {_percent(seat.vote_accuracy_without)} on the same items"
    )


def threshold_line(c: ConsensusReport) -> str:
    if not c.unsure_below:
        return f"never unsure: at no consensus was {c.config} less accurate than {c.versus or 'its best member'}"
    under = "at every consensus" if c.unsure_below >= ALWAYS else f"under consensus {c.unsure_below}"
    return (
        f"unsure {under}: {c.config} was right {_percent(c.unsure_accuracy)} of the time there "
        f"({c.unsure_items} items), {c.versus or 'its best member'} more often"
    )


def unsure_line(unsure: Unsure) -> str:
    """The first line of an unsure result, with the measured figure."""
    t = unsure.threshold
    measure = "" if unsure.measure == "none" else f" (consensus {unsure.consensus:.0f})"
    if t.run is None:
        return (
            f"The council is unsure{measure}: under COUNCIL_UNSURE_BELOW {t.below}, "
            "and there is no eval run of this line-up yet to measure how often such answers are right"
        )
    if t.below >= ALWAYS:
        return (
            f"The council is unsure{measure}: on this line-up's last eval (run {t.run}), its answers were right "
            f"{_percent(t.accuracy)} of the time at any consensus, less often than its best member alone"
        )
    return (
        f"The council is unsure{measure}: on this line-up's last eval (run {t.run}), "
        f"answers with consensus under {t.below} were right {_percent(t.accuracy)} of the time"
    )


def best_fallback_line(run: str | None, others: int) -> str:
    """`best` without a usable eval run of this line-up: standard, and why."""
    if run is not None:
        return f"standard: eval run {run} of this line-up measured no mode this council can run"
    ignored = f" ({others} eval run{'s' if others != 1 else ''} of other line-ups ignored)" if others else ""
    return f"standard: no eval run of this line-up yet{ignored}"


def _calls(row: ConfigReport) -> str:
    return f"{row.mean_calls:.1f} calls"


def best_line(chosen: ConfigReport, top: ConfigReport, standard: ConfigReport | None, run: str, *, priced: bool) -> str:
    """Which strategy `best` ran and why, in one line naming the eval run."""
    spend = (lambda r: f"${r.cost_usd:.5f}") if priced else _calls
    if chosen.name == top.name:
        why = f"the most accurate ({chosen.accuracy:.0%} at {spend(chosen)} a question)"
        if standard is not None and standard.name != chosen.name:
            points = round((chosen.accuracy - standard.accuracy) * 100)
            why += f", {abs(points)} points {'ahead of' if points >= 0 else 'behind'} standard ({spend(standard)})"
        return f"{chosen.name}: on eval run {run} it was {why}"
    return (
        f"{chosen.name}: on eval run {run} it was the cheapest within the 95% interval of the most accurate, "
        f"{top.name} ({chosen.accuracy:.0%} at {spend(chosen)} a question against {top.accuracy:.0%} at {spend(top)})"
    )


def lead_lines(result: CouncilResult) -> list[str]:
    """What an answer says first, above everything else, in every interface: that the council is
    unsure (with the measured figure), then which strategy `best` ran and why."""
    lines = []
    if (unsure := result.unsure) is not None:
        lines.append(unsure_line(unsure))
    if result.request.config.strategy is not None and result.synthesis is not None:
        lines.append(result.request.config.strategy.line)
    return lines
