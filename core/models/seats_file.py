"""COUNCIL_SEATS_FILE: the council's seats with their lenses, as a TOML file of `[[seat]]` tables.

    [[seat]]
    model = "openrouter:openai/gpt-5.1|local:smollm2"   # a seat as in COUNCIL_MODELS, fallbacks included
    persona = "skeptic"                                # a preset's name, or the instruction's text
    temperature = 0.9
    max_tokens = 800

Read with the standard library's tomllib; a file that does not parse, or a seat that is wrong, is one
line naming the file, the line and the reason."""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.models.deliberation import Lens, lens_of
from core.models.seats import clean_seat

_KEYS = {"model", "persona", "temperature", "max_tokens"}
_AT_LINE = re.compile(r"\s*\(at line (\d+), column \d+\)$")
_SEAT_HEADER = re.compile(r"^\s*\[\[\s*seat\s*\]\]")


@dataclass(frozen=True)
class SeatSpec:
    seat: str  # `primary|fallback`, written the one way
    lens: Lens


def read_seats_file(path: Path) -> list[SeatSpec]:
    """The seats of the file in order, or ValueError: `seats.toml line 3: the reason`."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: cannot be read ({exc.__class__.__name__}: {exc})") from None
    return parse_seats(text, str(path))


def parse_seats(text: str, name: str = "seats file") -> list[SeatSpec]:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        message = str(getattr(exc, "msg", None) or exc)
        line = getattr(exc, "lineno", None)
        found = _AT_LINE.search(message)
        if found is not None:
            line = line or int(found.group(1))
            message = message[: found.start()]
        raise ValueError(f"{name} line {line or '?'}: {message}") from None
    unknown = sorted(set(data) - {"seat"})
    if unknown:
        raise ValueError(f"{name}: unknown table or key `{unknown[0]}` (the file holds `[[seat]]` tables)")
    tables = data.get("seat", [])
    if not isinstance(tables, list) or not tables:
        raise ValueError(f"{name}: no `[[seat]]` table")
    lines = [n for n, line in enumerate(text.splitlines(), 1) if _SEAT_HEADER.match(line)]
    specs = []
    for index, table in enumerate(tables):
        where = f"{name} line {lines[index]}" if index < len(lines) else f"{name} seat {index + 1}"
        try:
            specs.append(_seat(table))
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from None
    seen = [spec.seat for spec in specs]
    duplicate = next((seat for seat in seen if seen.count(seat) > 1), None)
    if duplicate is not None:
        raise ValueError(f"{name}: the seat `{duplicate}` is listed twice")
    return specs


def _seat(table: Any) -> SeatSpec:
    if not isinstance(table, dict):
        raise ValueError("a seat is a table of keys")
    unknown = sorted(set(table) - _KEYS)
    if unknown:
        raise ValueError(f"unknown key `{unknown[0]}` (a seat has {', '.join(sorted(_KEYS))})")
    model = table.get("model")
    if not isinstance(model, str) or not clean_seat(model):
        raise ValueError("`model` must name the seat's model (a chain `primary|fallback` too)")
    persona = table.get("persona")
    if persona is not None and not isinstance(persona, str):
        raise ValueError("`persona` must be text (a preset's name or the instruction)")
    temperature = table.get("temperature")
    if temperature is not None and (
        isinstance(temperature, bool) or not isinstance(temperature, int | float) or not 0 <= temperature <= 2
    ):
        raise ValueError("`temperature` must be a number from 0 to 2")
    max_tokens = table.get("max_tokens")
    if max_tokens is not None and (isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1):
        raise ValueError("`max_tokens` must be a whole number of at least 1")
    lens = lens_of(persona, temperature=float(temperature) if temperature is not None else None, max_tokens=max_tokens)
    return SeatSpec(seat=clean_seat(model), lens=lens)
