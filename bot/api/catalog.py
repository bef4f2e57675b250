"""The model ids the API offers, and what each asks of the council.

Today one model, `llm-council`: the council as configured. Council modes and named channel
presets do not exist in the core yet; when they do, each becomes one more entry here
(`llm-council-<mode>`, `llm-council-<preset>`), and nothing else in the API changes.
"""

from __future__ import annotations

from dataclasses import dataclass

COUNCIL_MODEL = "llm-council"
CREATED = 1_700_000_000  # a fixed `created` so that model lists are stable between calls


@dataclass(frozen=True)
class CouncilChoice:
    id: str
    description: str
    members: tuple[str, ...] | None = None  # None: the configured council
    chairman: str | None = None


CHOICES = (
    CouncilChoice(COUNCIL_MODEL, "The configured council: members answer, rank each other, a chairman answers."),
)


def resolve(model_id: str) -> CouncilChoice | None:
    return next((choice for choice in CHOICES if choice.id == model_id), None)


def model_list() -> dict:
    return {
        "object": "list",
        "data": [
            {"id": c.id, "object": "model", "created": CREATED, "owned_by": "llm-council", "description": c.description}
            for c in CHOICES
        ],
    }


def resolve_mode(mode: str | None) -> CouncilChoice | None:
    """The MCP tool's `mode` argument: `standard` (the default) is `llm-council`, `quick` is
    `llm-council-quick` once that mode exists."""
    name = (mode or "standard").strip().lower()
    return resolve(COUNCIL_MODEL if name == "standard" else f"{COUNCIL_MODEL}-{name}")


def mode_names() -> list[str]:
    return ["standard" if c.id == COUNCIL_MODEL else c.id.removeprefix(f"{COUNCIL_MODEL}-") for c in CHOICES]
