"""Seats: a council member (or the chairman) is a chain of models, `primary|fallback|...`.

When a seat's model fails (after the provider's own retries of transient errors), the next model
of the chain answers in the same seat, within the same deadline; the council counts seats.
The one user-visible sentence about a fallback lives here, so every interface says it alike.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from core.models import Attempt

SEPARATOR = "|"


def seat_models(spec: str) -> list[str]:
    """The models of a seat, in order, without blanks or repeats."""
    return list(dict.fromkeys(part.strip() for part in spec.split(SEPARATOR) if part.strip()))


def clean_seat(spec: str) -> str:
    """A seat's spec written the one way (`a|b`), or "" when it names no model."""
    return SEPARATOR.join(seat_models(spec))


def primary(spec: str) -> str:
    models = seat_models(spec)
    return models[0] if models else spec.strip()


def all_models(specs: Iterable[str]) -> list[str]:
    """Every model any of the seats may call, once each, in order."""
    return list(dict.fromkeys(m for spec in specs for m in seat_models(spec)))


def fallback_note(model: str, attempts: Sequence[Attempt]) -> str | None:
    """'answered by the fallback X (Y failed: cause)', or None when the seat's first model answered."""
    if not attempts:
        return None
    failed = "; ".join(f"{a.model} failed: {short_cause(a.error.short())}" for a in attempts)
    return f"answered by the fallback {model} ({failed})"


def short_cause(text: str, limit: int = 120) -> str:
    """One line, at most `limit` characters: causes are quoted inside other sentences."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"
