"""Evaluation items: the bundled offline set generated from a seed, or a JSONL/CSV file.

The bundled set has exact answers by construction (integer or exact-decimal arithmetic, calendar
arithmetic with `datetime`, string operations done in Python), over five kinds taken in turn so
that `--limit N` still mixes them. The same seed and size give the same items byte for byte
(`fingerprint`), which is what lets an interrupted run continue on the same samples.
"""

from __future__ import annotations

import csv
import hashlib
import json
import random
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import date, timedelta
from decimal import Decimal
from pathlib import Path

from core.errors import ConfigurationError

BUNDLED_SEED = 2026
BUNDLED_SIZE = 250
KINDS = ("arithmetic", "dates", "units", "lists", "logic")


@dataclass(frozen=True)
class EvalItem:
    id: str
    input: str
    target: str
    choices: tuple[str, ...] = ()
    kind: str = ""


@dataclass(frozen=True)
class Dataset:
    name: str
    items: tuple[EvalItem, ...]
    meta: dict[str, object] = field(default_factory=dict)

    def fingerprint(self) -> str:
        """sha256 of the items as data: equal for the same questions, answers and choices."""
        payload = json.dumps([asdict(item) for item in self.items], sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(payload.encode()).hexdigest()

    def first(self, limit: int | None) -> Dataset:
        if limit is None or limit >= len(self.items):
            return self
        return Dataset(f"{self.name}, first {limit}", self.items[:limit], self.meta)


# --------------------------------------------------------------------------- bundled


def bundled(seed: int = BUNDLED_SEED, size: int = BUNDLED_SIZE) -> Dataset:
    """`size` items over the five kinds in turn, from `random.Random(seed)` alone."""
    rng = random.Random(seed)
    makers: dict[str, Callable[[random.Random], tuple[str, str]]] = {
        "arithmetic": _arithmetic,
        "dates": _dates,
        "units": _units,
        "lists": _lists,
        "logic": _logic,
    }
    items = []
    for index in range(size):
        kind = KINDS[index % len(KINDS)]
        question, answer = makers[kind](rng)
        items.append(EvalItem(id=f"{kind}-{index:04d}", input=question, target=answer, kind=kind))
    return Dataset(f"bundled (seed {seed}, {size} items)", tuple(items), {"seed": seed, "size": size})


_NAMES = ("Maya", "Omar", "Lena", "Ravi", "Chen", "Ada", "Tom", "Ines", "Kofi", "Sara")
_ITEMS = ("pencils", "apples", "tickets", "notebooks", "stickers", "lemons")


def _arithmetic(rng: random.Random) -> tuple[str, str]:
    name, thing = rng.choice(_NAMES), rng.choice(_ITEMS)
    form = rng.randrange(4)
    if form == 0:
        packs, per, price = rng.randint(2, 9), rng.randint(3, 12), rng.randint(2, 15)
        paid = (packs * price // 10 + 1) * 10 + 10 * rng.randint(0, 2)
        return (
            f"{name} buys {packs} packs of {thing}; each pack holds {per} {thing} and costs ${price}. "
            f"{name} pays with ${paid}. How many dollars of change does {name} get?",
            str(paid - packs * price),
        )
    if form == 1:
        start, sold, restock = rng.randint(40, 200), rng.randint(5, 39), rng.randint(10, 60)
        days = rng.randint(2, 5)
        return (
            f"A shop starts with {start} {thing}. Each day for {days} days it sells {sold} of them, and at "
            f"the end it receives {restock} more. How many {thing} does it have now?",
            str(start - sold * days + restock),
        )
    if form == 2:
        rows, cols, removed = rng.randint(3, 12), rng.randint(3, 12), rng.randint(1, 9)
        return (
            f"{name} arranges chairs in {rows} rows of {cols}, then takes away {removed} chairs. "
            "How many chairs are left?",
            str(rows * cols - removed),
        )
    speed, hours, minutes = rng.randint(30, 90), rng.randint(1, 4), rng.choice((0, 15, 30, 45))
    distance = Decimal(speed) * (Decimal(hours) + Decimal(minutes) / 60)
    return (
        f"A train travels at a steady {speed} km/h for {hours} hours and {minutes} minutes. "
        "How many kilometres does it cover?",
        _decimal(distance),
    )


_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


def _dates(rng: random.Random) -> tuple[str, str]:
    day = date(2000, 1, 1) + timedelta(days=rng.randrange(365 * 30))
    form = rng.randrange(3)
    if form == 0:
        delta = rng.randint(3, 400)
        return (
            f"What date is {delta} days after {day.isoformat()}? Give the date as YYYY-MM-DD.",
            (day + timedelta(days=delta)).isoformat(),
        )
    if form == 1:
        other = day + timedelta(days=rng.randint(2, 900))
        return (
            f"How many days are there from {day.isoformat()} to {other.isoformat()} "
            "(counting the second date but not the first)?",
            str((other - day).days),
        )
    return f"Which day of the week was {day.isoformat()}? Answer with the weekday's English name.", _WEEKDAYS[
        day.weekday()
    ]


# (from, to, factor) with exact decimal factors
_CONVERSIONS = (
    ("kilometres", "metres", Decimal(1000)),
    ("hours", "minutes", Decimal(60)),
    ("kilograms", "grams", Decimal(1000)),
    ("feet", "inches", Decimal(12)),
    ("inches", "centimetres", Decimal("2.54")),
    ("miles", "yards", Decimal(1760)),
    ("litres", "millilitres", Decimal(1000)),
    ("days", "hours", Decimal(24)),
    ("metres", "centimetres", Decimal(100)),
    ("pounds", "ounces", Decimal(16)),
)


def _units(rng: random.Random) -> tuple[str, str]:
    source, target, factor = rng.choice(_CONVERSIONS)
    amount = Decimal(rng.randint(2, 95)) / (Decimal(2) if rng.random() < 0.4 else Decimal(1))
    if rng.random() < 0.3:  # the other way round
        value = amount * factor
        return f"Convert {_decimal(value)} {target} to {source}.", _decimal(amount)
    return f"Convert {_decimal(amount)} {source} to {target}.", _decimal(amount * factor)


_WORDS = ("planet", "garden", "silver", "rocket", "window", "pepper", "marble", "castle", "banana", "letter")


def _lists(rng: random.Random) -> tuple[str, str]:
    form = rng.randrange(5)
    numbers = rng.sample(range(1, 100), rng.randint(4, 7))
    shown = ", ".join(map(str, numbers))
    if form == 0:
        return (
            f"Sort these numbers from smallest to largest: {shown}. Answer as a comma-separated list.",
            ", ".join(map(str, sorted(numbers))),
        )
    if form == 1:
        return f"What is the sum of {shown}?", str(sum(numbers))
    word = rng.choice(_WORDS)
    if form == 2:
        return f"Write the word '{word}' backwards.", word[::-1]
    if form == 3:
        letter = rng.choice(sorted(set(word)))
        return f"How many times does the letter '{letter}' appear in the word '{word}'?", str(word.count(letter))
    return (
        f"What is the second largest number in this list: {shown}?",
        str(sorted(numbers)[-2]),
    )


_CREATURES = ("bloops", "razzies", "lazzies", "wugs", "daxes", "feps", "toves", "glims")


def _logic(rng: random.Random) -> tuple[str, str]:
    form = rng.randrange(3)
    if form == 0:
        a, b, c = rng.sample(_CREATURES, 3)
        valid = rng.random() < 0.5
        premise = f"All {a} are {b}. All {b} are {c}." if valid else f"All {a} are {b}. Some {b} are {c}."
        return f"{premise} Does it follow that all {a} are {c}? Answer yes or no.", "yes" if valid else "no"
    if form == 1:
        people = rng.sample(_NAMES, 3)  # tallest first
        pairs = [(people[0], people[1]), (people[1], people[2])]
        rng.shuffle(pairs)
        facts = " ".join(f"{x} is taller than {y}." for x, y in pairs)
        ask_short = rng.random() < 0.5
        return (
            f"{facts} Who is the {'shortest' if ask_short else 'tallest'}? Answer with the name only.",
            people[2] if ask_short else people[0],
        )
    p, q = rng.choice((True, False)), rng.choice((True, False))
    op = rng.choice(("and", "or"))
    value = (p and q) if op == "and" else (p or q)
    return (
        f"Let P be {str(p).lower()} and Q be {str(q).lower()}. Is 'P {op} Q' true or false? Answer true or false.",
        str(value).lower(),
    )


def _decimal(value: Decimal) -> str:
    """An exact decimal without exponent or trailing zeros (`52.50` -> `52.5`, `100.0` -> `100`)."""
    text = format(value.normalize(), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


# --------------------------------------------------------------------------- files


def from_file(path: str | Path) -> Dataset:
    """A JSONL or CSV file of `input` and `target` (and optional `choices`, `id`): ConfigurationError
    with one line naming the file and the row otherwise."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigurationError(f"--dataset {path}: cannot be read ({exc.strerror or exc})") from None
    except UnicodeDecodeError:
        raise ConfigurationError(f"--dataset {path}: not UTF-8 text") from None
    rows = _csv_rows(text, path) if path.suffix.lower() == ".csv" else _jsonl_rows(text, path)
    items = [_item(row, index, path) for index, row in enumerate(rows, 1)]
    if not items:
        raise ConfigurationError(f"--dataset {path}: no items")
    ids = [item.id for item in items]
    if len(set(ids)) != len(ids):
        raise ConfigurationError(f"--dataset {path}: item ids repeat")
    return Dataset(path.name, tuple(items), {"path": str(path)})


def _jsonl_rows(text: str, path: Path) -> list[dict]:
    rows = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ConfigurationError(f"--dataset {path}: line {number} is not JSON ({exc.msg})") from None
        if not isinstance(row, dict):
            raise ConfigurationError(f"--dataset {path}: line {number} is not a JSON object")
        rows.append(row)
    return rows


def _csv_rows(text: str, path: Path) -> list[dict]:
    reader = csv.DictReader(text.splitlines())
    if not reader.fieldnames or not {"input", "target"} <= set(reader.fieldnames):
        raise ConfigurationError(f"--dataset {path}: the CSV header must name input and target columns")
    rows = []
    for row in reader:
        choices = row.get("choices")
        if choices:  # JSON list, or choices separated by '|'
            try:
                row["choices"] = json.loads(choices)
            except json.JSONDecodeError:
                row["choices"] = [c.strip() for c in choices.split("|")]
        rows.append(row)
    return rows


def _item(row: dict, number: int, path: Path) -> EvalItem:
    question, target = row.get("input"), row.get("target")
    if not isinstance(question, str) or not question.strip():
        raise ConfigurationError(f"--dataset {path}: item {number} has no input text")
    if isinstance(target, list) and len(target) == 1:
        target = target[0]
    if isinstance(target, int | float) and not isinstance(target, bool):
        target = str(target)
    if not isinstance(target, str) or not target.strip():
        raise ConfigurationError(f"--dataset {path}: item {number} has no target (a string or a number)")
    choices = row.get("choices") or ()
    if not isinstance(choices, Sequence) or isinstance(choices, str) or not all(isinstance(c, str) for c in choices):
        raise ConfigurationError(f"--dataset {path}: item {number}: choices must be a list of strings")
    return EvalItem(
        id=str(row.get("id") or number), input=question.strip(), target=target.strip(), choices=tuple(choices)
    )
