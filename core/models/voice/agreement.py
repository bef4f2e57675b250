"""Agreement in words: Kendall's W, the rubric's consensus, and auto mode's check of the first two
answers."""

from __future__ import annotations

from core.models.stages import Aggregate, AgreementCheck


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
        return escalation_line(check.reason)
    return f"{check.reason[:1].upper()}{check.reason[1:]}."


def escalation_line(reason: str, *, done: bool = False) -> str:
    """`Escalated: the first two answers disagreed; the whole council deliberates.` (`done`: a
    finished council's, in the past)."""
    return f"Escalated: {reason}; the whole council deliberate{'d' if done else 's'}."


def escalation_heading(reason: str, members: list[str]) -> tuple[str, str]:
    """Auto mode's escalation as a heading and what follows it, naming every seat:
    (`Escalated: the first two answers disagreed.`, `The whole council deliberates: alpha, beta, gamma.`)."""
    return f"Escalated: {reason}.", f"The whole council deliberates: {', '.join(members)}."
