"""Where the final answer came from, measured: each member's share of the synthesis,
the sources' (files read and web results) and the chairman's own, from the word-trigram support of
each sentence computed in Rust (the method: rust/ranking/src/composition.rs). Not asked of the
chairman: a model's account of its own sources is not evidence."""

from __future__ import annotations

from core import ranking
from core.models import CouncilRequest, MemberAnswer

SOURCES = "sources"
CHAIRMAN = "chairman"


def source_texts(request: CouncilRequest) -> list[str]:
    """The files and web results the council read, as texts the synthesis may quote."""
    texts = [a.text for a in request.attachments if a.kind == "text"]
    texts += [f"{s.title}\n{s.snippet}" for s in request.sources]
    return texts


def measure(text: str, answers: list[MemberAnswer], request: CouncilRequest) -> dict[str, float]:
    """Member model -> share, `sources` -> share, `chairman` -> own share (summing to 1)."""
    members = [a for a in answers if a.ok and a.text]
    groups = [[a.text or ""] for a in members] + [source_texts(request)]
    measured = ranking.composition(text, groups)
    shares: dict[str, float] = {}
    for answer, share in zip(members, measured.shares, strict=False):
        shares[answer.model] = shares.get(answer.model, 0.0) + share
    shares[SOURCES] = measured.shares[-1]
    shares[CHAIRMAN] = measured.own
    return shares
