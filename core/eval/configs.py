"""The configurations an eval compares, by name:

    standard | quick | auto     the council in that mode, with the configured seats and chairman
    refine                      the council with revision rounds (COUNCIL_ROUNDS) before the reviews
    member:<id>                 one model alone (a seat's primary, or any model id the router knows)
    chairman                    the configured chairman's primary alone
    self-consistency[:<id>]     one model sampled as many times as `standard`'s mean model calls in
                                this run (equal compute), majority vote; default model: the most
                                accurate member of this run
    self-moa[:<id>]             Self-MoA (arXiv 2502.00674): one model sampled k times and the same
                                model aggregating the samples, k + 1 = `standard`'s mean calls in
                                this run (equal compute); default model: the most accurate member

The same names follow `council/` as inspect-ai model names (core/eval/provider.py), except
self-consistency, which is a solver over `council/member:<id>` (core/eval/tasks.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from core.errors import ConfigurationError
from core.models import MODES, seats

Kind = Literal["council", "member", "chairman", "self-consistency", "self-moa"]
# The council modes an eval runs as configurations (self-moa is its own kind, `best` is resolved first).
COUNCIL_MODES: tuple[str, ...] = tuple(mode for mode in MODES if mode not in ("self-moa", "best"))
SELF_CONSISTENCY = "self-consistency"
SELF_MOA = "self-moa"
_ORDER: dict[Kind, int] = {"member": 0, "chairman": 1, "council": 2, "self-consistency": 3, "self-moa": 4}


@dataclass(frozen=True)
class ConfigSpec:
    name: str
    kind: Kind
    mode: str | None = None  # a council's mode
    model: str | None = None  # member / self-consistency / self-moa model (None: chosen in the run)
    samples: int | None = None  # self-moa's k (None: the standard council's calls less one)

    @property
    def model_name(self) -> str:
        """The inspect-ai model name of a configuration that is one (not self-consistency)."""
        return f"council/{self.name}"


def parse(name: str) -> ConfigSpec:
    """A configuration name, or ConfigurationError naming the accepted forms."""
    name = name.strip()
    if name in COUNCIL_MODES:
        return ConfigSpec(name, "council", mode=name)
    if name == "chairman":
        return ConfigSpec(name, "chairman")
    if name.startswith("member:") and name.removeprefix("member:").strip():
        return ConfigSpec(name, "member", model=name.removeprefix("member:").strip())
    if name == SELF_CONSISTENCY:
        return ConfigSpec(name, "self-consistency")
    if name.startswith(SELF_CONSISTENCY + ":") and name.removeprefix(SELF_CONSISTENCY + ":").strip():
        return ConfigSpec(name, "self-consistency", model=name.removeprefix(SELF_CONSISTENCY + ":").strip())
    if name == SELF_MOA:
        return ConfigSpec(name, "self-moa")
    if name.startswith(SELF_MOA + ":") and name.removeprefix(SELF_MOA + ":").strip():
        return ConfigSpec(name, "self-moa", model=name.removeprefix(SELF_MOA + ":").strip())
    raise ConfigurationError(
        f"unknown configuration {name!r}: use {', '.join(COUNCIL_MODES)}, member:<model id>, chairman, "
        "self-consistency[:<model id>] or self-moa[:<model id>]"
    )


def mode_available(mode: str) -> bool:
    """Whether this version's engine has the mode (`auto` lands with the adaptive council)."""
    return mode in MODES


def require_mode(mode: str) -> None:
    if not mode_available(mode):
        raise ConfigurationError(f"council/{mode}: this version of the council has no {mode!r} mode")


def default_names(members: Sequence[str]) -> list[str]:
    """Every configuration: the modes this version has, each member alone, the chairman alone,
    and self-consistency and Self-MoA of the best member."""
    names = [mode for mode in COUNCIL_MODES if mode_available(mode)]
    names += [f"member:{seats.primary(seat)}" for seat in members]
    return [*names, "chairman", SELF_CONSISTENCY, *([SELF_MOA] if mode_available(SELF_MOA) else [])]


def chosen(text: str | None, members: Sequence[str]) -> list[ConfigSpec]:
    """`--configs a,b,c` (default: every configuration), parsed, without repeats, in run order:
    members and the chairman first (self-consistency and Self-MoA pick the best of them), then the
    council modes (both match standard's calls), then self-consistency, then Self-MoA."""
    names = [n.strip() for n in text.split(",") if n.strip()] if text else default_names(members)
    if not names:
        raise ConfigurationError("--configs names no configuration")
    specs = list(dict.fromkeys(parse(name) for name in names))
    for spec in specs:
        if spec.kind == "council" and spec.mode is not None:
            require_mode(spec.mode)
        if spec.kind == "self-moa":
            require_mode(SELF_MOA)
    return sorted(specs, key=lambda s: _ORDER[s.kind])
