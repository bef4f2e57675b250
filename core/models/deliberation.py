"""How members deliberate beyond one answer each: a seat's lens (persona, temperature, length),
revision rounds (what each member did in each round) and Self-MoA's samples.

A lens is an operator's or an admin's instruction for one seat; it reaches that member's own
prompts only (stage 1 and its revisions), never a reviewer's or the chairman's. Presets are named
lenses; a persona of free text is bounded by PERSONA_MAX_CHARS and cleaned like a question."""

from __future__ import annotations

from pydantic import Field

from core.models.base import ErrorInfo, Model, Usage

PERSONA_MAX_CHARS = 400
MAX_ROUNDS = 5  # COUNCIL_ROUNDS' upper bound: each round costs one call per member
SAMPLE_MARK = "#"  # Self-MoA's sample keys: `seat#1`, `seat#2`, ... (one seat asked k times)

# Named lenses: what an admin may write instead of a persona's text.
PRESETS: dict[str, str] = {
    "skeptic": "Argue the strongest case against the obvious answer; find what it gets wrong or leaves out.",
    "first-principles": "Reason from first principles: state the assumptions and derive the answer from them.",
    "on-call": "Answer as the engineer who will be paged at 3 a.m. when this goes wrong: failure modes first.",
    "pragmatist": "Prefer what works today at the lowest cost and risk; name the simplest thing that would do.",
    "teacher": "Explain it so a newcomer understands: define terms, give one concrete example.",
}


class Lens(Model):
    """A seat's lens: a persona (text, or a preset's name in `preset`), and its own sampling."""

    persona: str | None = None  # the instruction as the member reads it (a preset's text when preset)
    preset: str | None = None  # the preset's name, when the persona is one
    temperature: float | None = Field(None, ge=0, le=2)
    max_tokens: int | None = Field(None, ge=1)

    @property
    def empty(self) -> bool:
        return self.persona is None and self.temperature is None and self.max_tokens is None


def lens_of(persona: str | None, *, temperature: float | None = None, max_tokens: int | None = None) -> Lens:
    """A lens from what an admin typed: a preset's name (any case) or a persona's text; ValueError
    (one line) for a persona over PERSONA_MAX_CHARS. A persona of one word that names no preset is
    refused as an unknown preset (a typo must not become an instruction)."""
    text = (persona or "").strip()
    if not text:
        return Lens(temperature=temperature, max_tokens=max_tokens)
    name = text.lower()
    if name in PRESETS:
        return Lens(persona=PRESETS[name], preset=name, temperature=temperature, max_tokens=max_tokens)
    if " " not in text:
        raise ValueError(f"Unknown lens preset `{text[:40]}`: choose one of {', '.join(PRESETS)}, or write a persona.")
    if len(text) > PERSONA_MAX_CHARS:
        raise ValueError(f"A persona has at most {PERSONA_MAX_CHARS} characters (this one has {len(text)}).")
    return Lens(persona=text, temperature=temperature, max_tokens=max_tokens)


class Revision(Model):
    """One member's revision in one round: its new answer (or its answer kept), and whether it moved.

    `moved`: its revision is mostly sentences its previous answer did not support (measured by
    core/engine/revision_moves.py); `toward`: the members whose answers those new sentences came
    from (model ids). `reason`: why it changed (or kept) its answer, as it said; a member that moved
    without one is named to the chairman."""

    round: int
    seat: str
    model: str
    text: str | None = None  # the answer after this round (the previous one when it held or failed)
    kept: bool = False  # it said it keeps its answer
    moved: bool = False
    toward: list[str] = Field(default_factory=list)
    new_share: float = 0.0  # the share of its revision its previous answer did not support
    reason: str | None = None
    error: ErrorInfo | None = None
    latency_s: float | None = None
    usage: Usage = Field(default_factory=Usage)

    @property
    def unexplained(self) -> bool:
        """It moved without saying why."""
        return self.moved and not self.reason


class RevisionRound(Model):
    """One round: each member's revision, and why the rounds ended after it (None: they went on)."""

    number: int
    revisions: list[Revision] = Field(default_factory=list)
    converged: float | None = None  # the least support any answer finds in the others after it (0-1)
    ended: str | None = None  # "no member moved", "the answers converged", "the last round", ...

    def moves(self) -> list[dict[str, object]]:
        """`metadata.rounds`' entry for this round: one `{"member", "moved", "toward"}` per member."""
        return [{"member": r.model, "moved": r.moved, "toward": list(r.toward)} for r in self.revisions]


def sample_key(seat: str, number: int) -> str:
    """Self-MoA: the key of the seat's `number`th sample (1-based)."""
    return f"{seat}{SAMPLE_MARK}{number}"


def seat_of_key(key: str) -> str:
    """The seat a stage-1 key asks: itself, or the seat a Self-MoA sample key samples."""
    head, mark, number = key.rpartition(SAMPLE_MARK)
    return head if mark and number.isdigit() else key
