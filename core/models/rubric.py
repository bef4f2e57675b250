"""The rubric reviewers score each response on (`COUNCIL_RUBRIC`): criteria and a scale.

The text form is `accuracy, insight, completeness` (the default) optionally followed by the scale,
`accuracy, clarity: 1-5`; `off` (or empty) turns scoring off. Criterion names are ASCII letters and
digits, words separated by spaces, `_` or `-`; how scores are read from a review and summarised is
the module comment of rust/ranking/src/scores.rs."""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field

DEFAULT_RUBRIC = "accuracy, insight, completeness"
_SCALE = re.compile(r"^(?P<criteria>[^:]*?)\s*(?::\s*(?P<low>\d+)\s*-\s*(?P<high>\d+))?\s*$")
_NAME = re.compile(r"^[A-Za-z0-9]+(?:[ _-]+[A-Za-z0-9]+)*$")


class Rubric(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    criteria: list[str] = Field(min_length=1)
    low: int = 1
    high: int = 10

    @property
    def scale(self) -> str:
        return f"{self.low}-{self.high}"


def parse_rubric(text: str | None) -> Rubric | None:
    """The rubric of a `COUNCIL_RUBRIC` value; None when scoring is off. ValueError on a malformed
    value, naming what is wrong."""
    value = (text or "").strip()
    if value.lower() in {"", "off", "none", "false", "0"}:
        return None
    match = _SCALE.match(value)
    if match is None:
        raise ValueError(f"COUNCIL_RUBRIC {value!r}: expected `criterion, criterion: LOW-HIGH`")
    criteria = [re.sub(r"[ _-]+", " ", c.strip().lower()) for c in match["criteria"].split(",") if c.strip()]
    bad = [c for c in criteria if not _NAME.match(c)]
    if not criteria or bad:
        raise ValueError(f"COUNCIL_RUBRIC {value!r}: criteria are comma-separated names of letters and digits")
    if len(set(criteria)) != len(criteria):
        raise ValueError(f"COUNCIL_RUBRIC {value!r}: a criterion is named twice")
    low, high = int(match["low"] or 1), int(match["high"] or 10)
    if low >= high:
        raise ValueError(f"COUNCIL_RUBRIC {value!r}: the scale's low end must be below its high end")
    return Rubric(criteria=criteria, low=low, high=high)
