"""The model ids the API offers, and what each asks of the council.

`llm-council`: the council as configured (its mode is COUNCIL_MODE); `llm-council-quick`: quick
mode (two members answer, the chairman compares them and writes the answer: three model calls);
`llm-council-auto`: auto mode (two members answer; the whole council only when they disagree);
`llm-council-best`: the mode the line-up's latest eval run measured best (core/admission/measured.py).
`llm-council-refine`: refine mode (revision rounds before the reviews); `llm-council-self-moa`:
Self-MoA (the best member sampled several times, aggregated by the chairman).
Named channel presets would become more entries (`llm-council-<preset>`). Each configured member and
the chairman are listed too, under their primary model id (`model_list`): those answer alone.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.models import CouncilMode
from core.modes import MODE_DESCRIPTIONS, MODES

COUNCIL_MODEL = "llm-council"
CREATED = 1_700_000_000  # a fixed `created` so that model lists are stable between calls


@dataclass(frozen=True)
class CouncilChoice:
    id: str
    description: str
    members: tuple[str, ...] | None = None  # None: the configured council
    chairman: str | None = None
    mode: CouncilMode | None = None  # None: the configured default (COUNCIL_MODE)


# What the model list adds to a mode's description (core/modes.py says what each mode does).
_NAMES = {"quick": "Quick council", "auto": "Auto council", "refine": "Refine council", "self-moa": "Self-MoA"}
_COSTS = {
    "quick": " (3 model calls)",
    "auto": " (2 to 4 model calls)",
    "best": " (the standard council until there is such a run); the answer says which ran and why",
}


def _choice(mode: CouncilMode) -> CouncilChoice:
    name = _NAMES.get(mode, f"{mode.capitalize()} council")
    return CouncilChoice(
        f"{COUNCIL_MODEL}-{mode}", f"{name}: {MODE_DESCRIPTIONS[mode]}{_COSTS.get(mode, '')}.", mode=mode
    )


CHOICES = (
    CouncilChoice(COUNCIL_MODEL, "The configured council: members answer, rank each other, a chairman answers."),
    *(_choice(mode) for mode in MODES if mode != "standard"),
)


def resolve(model_id: str) -> CouncilChoice | None:
    return next((choice for choice in CHOICES if choice.id == model_id), None)


DIRECT_DESCRIPTION = "A member of the council (or its chairman) answering alone, without a council."


def model_list(direct: list[str]) -> dict:
    """The councils, then each member and the chairman under its primary model id (`direct`: the
    caller's, from service.direct.available) answering alone."""
    councils = [(c.id, c.description) for c in CHOICES]
    members = [(model, DIRECT_DESCRIPTION) for model in direct if resolve(model) is None]
    return {
        "object": "list",
        "data": [
            {"id": id_, "object": "model", "created": CREATED, "owned_by": "llm-council", "description": description}
            for id_, description in councils + members
        ],
    }


def resolve_mode(mode: str | None) -> CouncilChoice | None:
    """The MCP tool's `mode` argument: `standard` (the default) is `llm-council`, `quick` is
    `llm-council-quick`, `auto` is `llm-council-auto`, and so on for `refine` and `self-moa`."""
    name = (mode or "standard").strip().lower()
    return resolve(COUNCIL_MODEL if name == "standard" else f"{COUNCIL_MODEL}-{name}")


def mode_names() -> list[str]:
    return ["standard" if c.id == COUNCIL_MODEL else c.id.removeprefix(f"{COUNCIL_MODEL}-") for c in CHOICES]
