"""The lines of a running council, as they happen: the queue, who sits, each member's answer or
failure, a revision round's title (the stages' titles are in stages.py)."""

from __future__ import annotations

from core.models.stages import MemberAnswer


def queued_line(position: int) -> str:
    """`Waiting for a free slot (position 2 in the queue)`."""
    return f"Waiting for a free slot (position {position} in the queue)"


def council_opening(mode: str, members: list[str], chairman: str) -> str:
    """Who sits, and what a quick or auto council does: `Council: alpha, beta; chairman chair.`."""
    names = ", ".join(members)
    if mode == "quick":
        return f"Quick council: {names} answer, the chairman {chairman} compares them (no peer review)."
    if mode == "auto":
        return f"Auto council: {names} answer first; if they disagree, the whole council. Chairman {chairman}."
    return f"Council: {names}; chairman {chairman}."


def member_answered(name: str, latency_s: float | None) -> str:
    """`alpha answered in 1.2 s`."""
    return f"{name} answered" + (f" in {latency_s:.1f} s" if latency_s is not None else "")


def member_failed(name: str, answer: MemberAnswer) -> str:
    """`gamma failed: timeout after 30 s`: a member's failure as it happens."""
    return f"{name} failed: {answer.error.short() if answer.error else 'no answer'}"


def round_title(number: int) -> str:
    """A revision round's heading: `Round 2 · members revise after reading each other's answers`."""
    return f"Round {number} · members revise after reading each other's answers"
