"""Where the final answer came from, measured: each member's share of the synthesis,
the sources' (files read and web results) and the chairman's own, from the word-trigram support of
each sentence computed in Rust (the method: rust/ranking/src/composition.rs). Not asked of the
chairman: a model's account of its own sources is not evidence.

The writer's own share (what no text of the council supports) belongs to whoever wrote the answer:
`chairman` when the chairman did; when a member stood in for a chairman that failed, it is that
member's, added to its entry (its stage-1 answer and its new text are both its own), and there is
no `chairman` entry."""

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


def measure(
    text: str, answers: list[MemberAnswer], request: CouncilRequest, stand_in: str | None = None
) -> dict[str, float]:
    """Member model -> share, `sources` -> share and the writer's own share (summing to 1): under
    `chairman`, or added to the `stand_in` member's entry when one wrote the answer."""
    members = [a for a in answers if a.ok and a.text]
    groups = [[a.text or ""] for a in members] + [source_texts(request)]
    measured = ranking.composition(text, groups)
    shares: dict[str, float] = {}
    for answer, share in zip(members, measured.shares, strict=False):
        shares[answer.model] = shares.get(answer.model, 0.0) + share
    shares[SOURCES] = measured.shares[-1]
    if stand_in is None:
        shares[CHAIRMAN] = measured.own
    else:
        shares[stand_in] = shares.get(stand_in, 0.0) + measured.own
    return shares
