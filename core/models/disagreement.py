"""Where the members stand, beside the synthesis: what every answer makes (agreed), the points
they dispute and who holds which side (contested), what only one member claims (unique) and what
no answer settled (open). Written by the chairman in its "WHERE THEY DIFFER" section, or, for
`agreed` and `unique`, measured from the answers when it wrote none (rust/ranking/src/disagreement.rs);
`written` and `measured` say which part came from where."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from core.models.base import Model

DisagreementPart = Literal["agreed", "contested", "unique", "open"]


class Side(Model):
    members: list[str]  # model ids
    position: str


class ContestedPoint(Model):
    point: str
    sides: list[Side]


class UniqueClaim(Model):
    member: str  # model id
    claim: str


class Disagreement(Model):
    agreed: list[str] = Field(default_factory=list)
    contested: list[ContestedPoint] = Field(default_factory=list)
    unique: list[UniqueClaim] = Field(default_factory=list)
    open: list[str] = Field(default_factory=list)
    written: list[DisagreementPart] = Field(default_factory=list)  # parts the chairman wrote
    measured: list[DisagreementPart] = Field(default_factory=list)  # parts measured from the answers

    @property
    def empty(self) -> bool:
        return not (self.agreed or self.contested or self.unique or self.open)
