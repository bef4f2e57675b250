"""Golden outputs of `core.records.export`: a rich council's Markdown and JSON document, byte for byte.

The expected texts were produced by the exporter before it was split into small helpers (issue 11);
they pin every section so that refactors of `to_markdown` / `to_document` cannot change a byte.
"""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from pathlib import Path

from core.models import (
    Attempt,
    ContestedPoint,
    ConversationTurn,
    CouncilResult,
    CouncilStatus,
    Disagreement,
    Dissent,
    ErrorInfo,
    ErrorKind,
    Review,
    Side,
    UniqueClaim,
)
from core.models.feedback import FeedbackVote, Vote
from core.models.files import ExtractedAttachment, TextSection
from core.models.search import SearchResult
from core.records.export import to_document, to_json, to_markdown
from tests.factories import make_result

ASKED = datetime(2026, 3, 4, 5, 6, 7, tzinfo=UTC)


def rich_result() -> CouncilResult:
    """Every optional part filled: files, sources, history, weights, dissent, fallbacks, a failed review."""
    base = make_result(council_id="feedbeef00000001", created_at=ASKED)
    config = base.request.config.model_copy(update={"reviewer_weights": {"m-a": 2.0, "m-b": 0.5}})
    request = base.request.model_copy(
        update={
            "config": config,
            "history": [
                ConversationTurn(role="user", content="Earlier question", author="ada"),
                ConversationTurn(role="assistant", content="Earlier answer"),
            ],
            "attachments": [
                ExtractedAttachment(
                    name="notes.md",
                    kind="text",
                    media_type="text/markdown",
                    size=2048,
                    sha256="ab" * 32,
                    sections=(TextSection(text="Intro with ```code```"), TextSection(label="page 2", text="More.")),
                    page_count=2,
                    notices=("page 3 left out",),
                ),
                ExtractedAttachment(
                    name="map.png", kind="image", media_type="image/png", size=3 * 1024 * 1024, sha256="cd" * 32
                ),
            ],
            "sources": [
                SearchResult(
                    title="Paris", url="https://example.org/paris", snippet="Capital.", published=date(2025, 1, 2)
                ),
                SearchResult(title="France", url="https://example.org/france"),
            ],
            "image_members": ["m-a"],
        }
    )
    failure = ErrorInfo(kind=ErrorKind.TIMEOUT, message="timed out after 120 s\nsecond line")
    answers = list(base.answers)
    answers[1] = answers[1].model_copy(update={"seat": "m-z|m-b", "attempts": [Attempt(model="m-z", error=failure)]})
    reviews = [
        *base.reviews,
        Review(reviewer="m-down", error=ErrorInfo(kind=ErrorKind.AUTH, message="denied", status=403)),
        base.reviews[0].model_copy(update={"reviewer": "m-json", "format": "json"}),
    ]
    aggregate = base.aggregate.model_copy(
        update={
            "method": "schulze",
            "ballots_late": 1,
            "dissent": [
                Dissent(reviewer="m-c", preferred="m-c", preferred_label="C", place=3, tau=-0.5, reason="C is concise.")
            ],
        }
    )
    synthesis = base.synthesis.model_copy(update={"latency_s": 1.25, "attempts": [Attempt(model="m-a", error=failure)]})
    return base.model_copy(
        update={
            "request": request,
            "answers": answers,
            "reviews": reviews,
            "aggregate": aggregate,
            "synthesis": synthesis,
            "notices": ["m-down failed: auth 401", "one ballot arrived late"],
            "disagreement": Disagreement(
                agreed=["Paris is the capital."],
                contested=[
                    ContestedPoint(
                        point="Since when",
                        sides=[
                            Side(members=["m-a"], position="since 987"),
                            Side(members=["m-b", "m-c"], position="since 508"),
                        ],
                    )
                ],
                unique=[UniqueClaim(member="m-c", claim="The Seine floods.")],
                written=["contested"],
                measured=["agreed", "unique"],
            ),
        }
    )


def failed_result() -> CouncilResult:
    """A council that ended without synthesis or ranking, with an error and no usage cost."""
    base = make_result(council_id="feedbeef00000002", created_at=ASKED)
    origin = base.request.origin.model_copy(update={"user_id": None})
    request = base.request.model_copy(update={"origin": origin})
    return base.model_copy(
        update={
            "request": request,
            "status": CouncilStatus.FAILED,
            "synthesis": None,
            "aggregate": None,
            "label_to_model": {},
            "reviews": [],
            "notices": [],
            "error": ErrorInfo(kind=ErrorKind.TIMEOUT, message="every member timed out"),
            "usage": base.usage.model_copy(update={"cost_usd": None}),
            "timings": {},
        }
    )


def votes() -> list[FeedbackVote]:
    when = datetime(2026, 3, 4, 6, 0, tzinfo=UTC)
    return [
        FeedbackVote(
            council_id="feedbeef00000001",
            user_id="U1",
            user_name="ada",
            vote=Vote.GOOD,
            comment="Clear.",
            created_at=when,
            updated_at=when,
        ),
        FeedbackVote(council_id="feedbeef00000001", user_id="U2", vote=Vote.BAD, created_at=when, updated_at=when),
    ]


GOLDEN = Path(__file__).parent / "golden"  # the exports as written before the exporter was split


def golden(name: str) -> str:
    return (GOLDEN / name).read_text(encoding="utf-8")


def test_markdown_of_a_rich_council_is_unchanged():
    assert to_markdown(rich_result(), votes()) == golden("council-rich.md")


def test_markdown_of_a_failed_council_is_unchanged():
    assert to_markdown(failed_result()) == golden("council-failed.md")


def test_json_of_a_rich_council_is_unchanged():
    assert to_json(rich_result(), votes()) == golden("council-rich.json")
    assert to_document(rich_result(), votes()) == json.loads(golden("council-rich.json"))


def test_json_of_a_failed_council_is_unchanged():
    assert to_json(failed_result()) == golden("council-failed.json")
    assert to_document(failed_result()) == json.loads(golden("council-failed.json"))
