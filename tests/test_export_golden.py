"""Golden outputs of `core.export`: a rich council's Markdown and JSON document, byte for byte.

The expected texts were produced by the exporter before it was split into small helpers (issue 11);
they pin every section so that refactors of `to_markdown` / `to_document` cannot change a byte.
"""

from __future__ import annotations

import json
from datetime import UTC, date, datetime

from core.attachments.models import ExtractedAttachment, TextSection
from core.export import to_document, to_json, to_markdown
from core.feedback import FeedbackVote, Vote
from core.models import (
    Attempt,
    ConversationTurn,
    CouncilResult,
    CouncilStatus,
    Dissent,
    ErrorInfo,
    ErrorKind,
    Review,
)
from core.search.models import SearchResult
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


def test_markdown_of_a_rich_council_is_unchanged():
    assert to_markdown(rich_result(), votes()) == RICH_MARKDOWN


def test_markdown_of_a_failed_council_is_unchanged():
    assert to_markdown(failed_result()) == FAILED_MARKDOWN


def test_json_of_a_rich_council_is_unchanged():
    assert to_json(rich_result(), votes()) == RICH_JSON
    assert to_document(rich_result(), votes()) == json.loads(RICH_JSON)


def test_json_of_a_failed_council_is_unchanged():
    assert to_json(failed_result()) == FAILED_JSON
    assert to_document(failed_result()) == json.loads(FAILED_JSON)


# The expected texts, as the exporter wrote them before the split (the `​` in the fence is U+200B).

RICH_MARKDOWN = r"""# Council feedbeef00000001

**Question:** What is the capital of France?

- Status: degraded
- Asked: 2026-03-04 05:06:07 UTC via slack by ada
- Mode: standard
- Members: m-a, m-b, m-c, m-down
- Chairman: m-a
- Duration: 4.5 s; tokens: 500 in / 200 out; cost: $0.0100

> m-down failed: auth 401
> one ballot arrived late

## Final answer

*fallback synthesizer: m-b*

Paris.

## Sources

- [1] Paris (2025-01-02): https://example.org/paris
- [2] France: https://example.org/france

## Files read

### notes.md (text/markdown, 2 KB, 2 page(s))

sha256 `abababababababababababababababababababababababababababababababab`

```text
Intro with `​``code`​``

More.
```

### map.png (image/png, 3.0 MB)

sha256 `cdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcd`

## Aggregate ranking

| # | model | label | mean rank | votes | Borda | Copeland | 1st places |
|---|---|---|---|---|---|---|---|
| 1 | m-a | A | 1.00 | 2 | 2.0 | 1.0 | 2 |
| 2 | m-b | B | 2.00 | 2 | 1.0 | 0.0 | 0 |
| 3 | m-c | C | 3.00 | 2 | 0.0 | -1.0 | 0 |

Agreement (Kendall's W): 0.750

Weighted ballots: m-a ×2, m-b ×0.5, m-c ×1, m-x ×1, m-down ×1, m-json ×1

> Minority view: m-c preferred Response C (m-c), placed 3 overall: “C is concise.”

## Stage 1: answers

### Response A — m-a

*2.0 s, 5 tokens*

Paris, says m-a.

### Response B — m-b

*Seat m-z|m-b: answered by the fallback m-b (m-z failed: timeout: timed out after 120 s second line)*

*2.0 s, 5 tokens*

Paris, says m-b.

### Response C — m-c

*2.0 s, 5 tokens*

Paris, says m-c.

### m-down

*Failed: auth 401: the API key was rejected (401)*

## Stage 2: reviews

Labels: Response A = m-a, Response B = m-b, Response C = m-c

### Review by m-a

*Shown, in this order: Response C, Response B*

Notes...
FINAL RANKING:
1. Response B
2. Response C

**Extracted ballot (complete):** B (m-b) > C (m-c)

### Review by m-b

*Shown, in this order: Response C, Response A*

Notes...
FINAL RANKING:
1. Response A
2. Response C

**Extracted ballot (complete):** A (m-a) > C (m-c)

### Review by m-c

*Shown, in this order: Response B, Response A*

Notes...
FINAL RANKING:
1. Response A
2. Response B

**Extracted ballot (complete):** A (m-a) > B (m-b)

### Review by m-x

*Shown, in this order: Response A, Response B*

I like them all.

**Extracted ballot (none):** none

### Review by m-down

*Failed: auth 403: denied*

### Review by m-json

*Shown, in this order: Response C, Response B*

Notes...
FINAL RANKING:
1. Response B
2. Response C

**Extracted ballot (complete):** B (m-b) > C (m-c) — json ballot

## Readers' feedback

👍 1 · 👎 1

- 👍 ada (2026-03-04 06:00 UTC): Clear.
- 👎 U2 (2026-03-04 06:00 UTC)
"""

FAILED_MARKDOWN = r"""# Council feedbeef00000002

**Question:** What is the capital of France?

- Status: failed
- Asked: 2026-03-04 05:06:07 UTC via slack
- Mode: standard
- Members: m-a, m-b, m-c, m-down
- Chairman: m-a
- Duration: –; tokens: 500 in / 200 out

> **Failed:** timeout: every member timed out

## Final answer

*(no synthesis)*

## Aggregate ranking

*(no ranking)*

## Stage 1: answers

### Response A — m-a

*2.0 s, 5 tokens*

Paris, says m-a.

### Response B — m-b

*2.0 s, 5 tokens*

Paris, says m-b.

### Response C — m-c

*2.0 s, 5 tokens*

Paris, says m-c.

### m-down

*Failed: auth 401: the API key was rejected (401)*

## Stage 2: reviews

## Readers' feedback

*(no votes yet)*
"""

RICH_JSON = r"""{
  "id": "feedbeef00000001",
  "question": "What is the capital of France?",
  "status": "degraded",
  "created_at": "2026-03-04T05:06:07+00:00",
  "finished_at": "2026-03-04T05:06:12+00:00",
  "origin": {
    "platform": "slack",
    "workspace_id": "T1",
    "channel_id": "C1",
    "thread_id": "1.2",
    "user_id": "U1",
    "user_name": "ada"
  },
  "config": {
    "members": [
      "m-a",
      "m-b",
      "m-c",
      "m-down"
    ],
    "chairman": "m-a",
    "mode": "standard",
    "exclude_self_review": true,
    "member_timeout_s": 120.0,
    "quorum": 0.5,
    "grace_s": 20.0,
    "grace_min_s": 5.0,
    "grace_factor": 2.0,
    "max_reviewers": null,
    "max_answer_tokens": null,
    "temperature": null,
    "ballot_format": "text",
    "reviewer_weights": {
      "m-a": 2.0,
      "m-b": 0.5
    }
  },
  "history": [
    {
      "role": "user",
      "content": "Earlier question",
      "author": "ada"
    },
    {
      "role": "assistant",
      "content": "Earlier answer",
      "author": null
    }
  ],
  "attachments": [
    {
      "name": "notes.md",
      "kind": "text",
      "media_type": "text/markdown",
      "size": 2048,
      "sha256": "abababababababababababababababababababababababababababababababab",
      "sections": [
        {
          "label": null,
          "text": "Intro with ```code```"
        },
        {
          "label": "page 2",
          "text": "More."
        }
      ],
      "page_count": 2,
      "notices": [
        "page 3 left out"
      ]
    },
    {
      "name": "map.png",
      "kind": "image",
      "media_type": "image/png",
      "size": 3145728,
      "sha256": "cdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcd",
      "sections": [],
      "page_count": null,
      "notices": []
    }
  ],
  "sources": [
    {
      "number": 1,
      "title": "Paris",
      "url": "https://example.org/paris",
      "snippet": "Capital.",
      "published": "2025-01-02"
    },
    {
      "number": 2,
      "title": "France",
      "url": "https://example.org/france",
      "snippet": "",
      "published": null
    }
  ],
  "image_members": [
    "m-a"
  ],
  "stage1": [
    {
      "model": "m-a",
      "seat": "m-a",
      "attempts": [],
      "response": "Paris, says m-a.",
      "label": "Response A",
      "error": null,
      "latency_s": 2.0,
      "usage": {
        "prompt_tokens": 10,
        "completion_tokens": 5,
        "cost_usd": 0.001
      }
    },
    {
      "model": "m-b",
      "seat": "m-z|m-b",
      "attempts": [
        {
          "model": "m-z",
          "error": "timeout: timed out after 120 s second line"
        }
      ],
      "response": "Paris, says m-b.",
      "label": "Response B",
      "error": null,
      "latency_s": 2.0,
      "usage": {
        "prompt_tokens": 10,
        "completion_tokens": 5,
        "cost_usd": 0.001
      }
    },
    {
      "model": "m-c",
      "seat": "m-c",
      "attempts": [],
      "response": "Paris, says m-c.",
      "label": "Response C",
      "error": null,
      "latency_s": 2.0,
      "usage": {
        "prompt_tokens": 10,
        "completion_tokens": 5,
        "cost_usd": 0.001
      }
    },
    {
      "model": "m-down",
      "seat": "m-down",
      "attempts": [],
      "response": null,
      "label": null,
      "error": {
        "kind": "auth",
        "message": "the API key was rejected (401)",
        "status": 401
      },
      "latency_s": null,
      "usage": {
        "prompt_tokens": 0,
        "completion_tokens": 0,
        "cost_usd": null
      }
    }
  ],
  "stage2": [
    {
      "model": "m-a",
      "ranking": "Notes...\nFINAL RANKING:\n1. Response B\n2. Response C",
      "parsed_ranking": [
        "Response B",
        "Response C"
      ],
      "parsed_ranking_models": [
        "m-b",
        "m-c"
      ],
      "parse_status": "complete",
      "format": null,
      "shown_labels": [
        "Response C",
        "Response B"
      ],
      "error": null,
      "latency_s": 1.5,
      "usage": {
        "prompt_tokens": 100,
        "completion_tokens": 50,
        "cost_usd": 0.001
      }
    },
    {
      "model": "m-b",
      "ranking": "Notes...\nFINAL RANKING:\n1. Response A\n2. Response C",
      "parsed_ranking": [
        "Response A",
        "Response C"
      ],
      "parsed_ranking_models": [
        "m-a",
        "m-c"
      ],
      "parse_status": "complete",
      "format": null,
      "shown_labels": [
        "Response C",
        "Response A"
      ],
      "error": null,
      "latency_s": 1.5,
      "usage": {
        "prompt_tokens": 100,
        "completion_tokens": 50,
        "cost_usd": 0.001
      }
    },
    {
      "model": "m-c",
      "ranking": "Notes...\nFINAL RANKING:\n1. Response A\n2. Response B",
      "parsed_ranking": [
        "Response A",
        "Response B"
      ],
      "parsed_ranking_models": [
        "m-a",
        "m-b"
      ],
      "parse_status": "complete",
      "format": null,
      "shown_labels": [
        "Response B",
        "Response A"
      ],
      "error": null,
      "latency_s": 1.5,
      "usage": {
        "prompt_tokens": 100,
        "completion_tokens": 50,
        "cost_usd": 0.001
      }
    },
    {
      "model": "m-x",
      "ranking": "I like them all.",
      "parsed_ranking": [],
      "parsed_ranking_models": [],
      "parse_status": "none",
      "format": null,
      "shown_labels": [
        "Response A",
        "Response B"
      ],
      "error": null,
      "latency_s": null,
      "usage": {
        "prompt_tokens": 0,
        "completion_tokens": 0,
        "cost_usd": null
      }
    },
    {
      "model": "m-down",
      "ranking": null,
      "parsed_ranking": [],
      "parsed_ranking_models": [],
      "parse_status": "none",
      "format": null,
      "shown_labels": [],
      "error": {
        "kind": "auth",
        "message": "denied",
        "status": 403
      },
      "latency_s": null,
      "usage": {
        "prompt_tokens": 0,
        "completion_tokens": 0,
        "cost_usd": null
      }
    },
    {
      "model": "m-json",
      "ranking": "Notes...\nFINAL RANKING:\n1. Response B\n2. Response C",
      "parsed_ranking": [
        "Response B",
        "Response C"
      ],
      "parsed_ranking_models": [
        "m-b",
        "m-c"
      ],
      "parse_status": "complete",
      "format": "json",
      "shown_labels": [
        "Response C",
        "Response B"
      ],
      "error": null,
      "latency_s": 1.5,
      "usage": {
        "prompt_tokens": 100,
        "completion_tokens": 50,
        "cost_usd": 0.001
      }
    }
  ],
  "stage3": {
    "model": "m-b",
    "response": "Paris.",
    "by_chairman": false,
    "note": "The chairman (m-a) failed: timeout; m-b synthesized this answer instead.",
    "attempts": [
      {
        "model": "m-a",
        "error": "timeout: timed out after 120 s second line"
      }
    ],
    "latency_s": 1.25,
    "usage": {
      "prompt_tokens": 0,
      "completion_tokens": 0,
      "cost_usd": null
    }
  },
  "metadata": {
    "label_to_model": {
      "Response A": "m-a",
      "Response B": "m-b",
      "Response C": "m-c"
    },
    "aggregate_rankings": [
      {
        "model": "m-a",
        "label": "A",
        "position": 1,
        "average_rank": 1.0,
        "rankings_count": 2,
        "borda": 2.0,
        "condorcet_wins": 1.0,
        "first_place_votes": 2
      },
      {
        "model": "m-b",
        "label": "B",
        "position": 2,
        "average_rank": 2.0,
        "rankings_count": 2,
        "borda": 1.0,
        "condorcet_wins": 0.0,
        "first_place_votes": 0
      },
      {
        "model": "m-c",
        "label": "C",
        "position": 3,
        "average_rank": 3.0,
        "rankings_count": 2,
        "borda": 0.0,
        "condorcet_wins": -1.0,
        "first_place_votes": 0
      }
    ],
    "agreement_w": 0.75,
    "ballots_used": 3,
    "ballots_unparsed": 1,
    "ballots_late": 1,
    "aggregation": "schulze",
    "reviewer_weights": {
      "m-a": 2.0,
      "m-b": 0.5,
      "m-c": 1.0,
      "m-x": 1.0,
      "m-down": 1.0,
      "m-json": 1.0
    },
    "dissent": [
      {
        "reviewer": "m-c",
        "preferred": "m-c",
        "reason": "C is concise."
      }
    ],
    "notices": [
      "m-down failed: auth 401",
      "one ballot arrived late"
    ]
  },
  "error": null,
  "timings": {
    "stage1_s": 2.0,
    "stage2_s": 1.5,
    "stage3_s": 1.0,
    "total_s": 4.5
  },
  "usage": {
    "prompt_tokens": 500,
    "completion_tokens": 200,
    "cost_usd": 0.01
  },
  "feedback": {
    "good": 1,
    "bad": 1,
    "votes": [
      {
        "user_id": "U1",
        "user_name": "ada",
        "vote": "good",
        "comment": "Clear.",
        "created_at": "2026-03-04T06:00:00Z",
        "updated_at": "2026-03-04T06:00:00Z"
      },
      {
        "user_id": "U2",
        "user_name": null,
        "vote": "bad",
        "comment": null,
        "created_at": "2026-03-04T06:00:00Z",
        "updated_at": "2026-03-04T06:00:00Z"
      }
    ]
  }
}"""

FAILED_JSON = r"""{
  "id": "feedbeef00000002",
  "question": "What is the capital of France?",
  "status": "failed",
  "created_at": "2026-03-04T05:06:07+00:00",
  "finished_at": "2026-03-04T05:06:12+00:00",
  "origin": {
    "platform": "slack",
    "workspace_id": "T1",
    "channel_id": "C1",
    "thread_id": "1.2",
    "user_id": null,
    "user_name": "ada"
  },
  "config": {
    "members": [
      "m-a",
      "m-b",
      "m-c",
      "m-down"
    ],
    "chairman": "m-a",
    "mode": "standard",
    "exclude_self_review": true,
    "member_timeout_s": 120.0,
    "quorum": 0.5,
    "grace_s": 20.0,
    "grace_min_s": 5.0,
    "grace_factor": 2.0,
    "max_reviewers": null,
    "max_answer_tokens": null,
    "temperature": null,
    "ballot_format": "text",
    "reviewer_weights": {}
  },
  "history": [],
  "attachments": [],
  "sources": [],
  "image_members": [],
  "stage1": [
    {
      "model": "m-a",
      "seat": "m-a",
      "attempts": [],
      "response": "Paris, says m-a.",
      "label": "Response A",
      "error": null,
      "latency_s": 2.0,
      "usage": {
        "prompt_tokens": 10,
        "completion_tokens": 5,
        "cost_usd": 0.001
      }
    },
    {
      "model": "m-b",
      "seat": "m-b",
      "attempts": [],
      "response": "Paris, says m-b.",
      "label": "Response B",
      "error": null,
      "latency_s": 2.0,
      "usage": {
        "prompt_tokens": 10,
        "completion_tokens": 5,
        "cost_usd": 0.001
      }
    },
    {
      "model": "m-c",
      "seat": "m-c",
      "attempts": [],
      "response": "Paris, says m-c.",
      "label": "Response C",
      "error": null,
      "latency_s": 2.0,
      "usage": {
        "prompt_tokens": 10,
        "completion_tokens": 5,
        "cost_usd": 0.001
      }
    },
    {
      "model": "m-down",
      "seat": "m-down",
      "attempts": [],
      "response": null,
      "label": null,
      "error": {
        "kind": "auth",
        "message": "the API key was rejected (401)",
        "status": 401
      },
      "latency_s": null,
      "usage": {
        "prompt_tokens": 0,
        "completion_tokens": 0,
        "cost_usd": null
      }
    }
  ],
  "stage2": [],
  "stage3": {
    "model": "m-a",
    "response": null,
    "error": {
      "kind": "timeout",
      "message": "every member timed out",
      "status": null
    }
  },
  "metadata": {
    "label_to_model": {},
    "aggregate_rankings": [],
    "agreement_w": null,
    "ballots_used": 0,
    "ballots_unparsed": 0,
    "ballots_late": 0,
    "aggregation": null,
    "reviewer_weights": {},
    "dissent": [],
    "notices": []
  },
  "error": {
    "kind": "timeout",
    "message": "every member timed out",
    "status": null
  },
  "timings": {},
  "usage": {
    "prompt_tokens": 500,
    "completion_tokens": 200,
    "cost_usd": null
  },
  "feedback": {
    "good": 0,
    "bad": 0,
    "votes": []
  }
}"""
