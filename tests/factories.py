"""Builders of realistic council values for storage, export and rendering tests."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from core.engine.council import CouncilControl, run_council
from core.models import (
    Aggregate,
    AggregateEntry,
    CouncilConfig,
    CouncilFinished,
    CouncilRequest,
    CouncilResult,
    CouncilStatus,
    ErrorInfo,
    ErrorKind,
    MemberAnswer,
    Origin,
    ParseStatus,
    Platform,
    Review,
    Synthesis,
    Usage,
)
from core.providers.router import ProviderRouter
from core.settings import Settings


def make_result(
    *,
    council_id: str = "c0ffee0000000001",
    channel_id: str = "C1",
    user_id: str = "U1",
    platform: Platform = Platform.SLACK,
    created_at: datetime | None = None,
    cost: float = 0.01,
    order: tuple[str, ...] = ("m-a", "m-b", "m-c"),
) -> CouncilResult:
    """Three answering members plus one that failed; reviews ranking in `order` (best first)."""
    members = [*order, "m-down"]
    labels = dict(zip("ABC", order))
    model_to_label = {model: label for label, model in labels.items()}
    reviews = []
    for reviewer in order:
        ballot = [m for m in order if m != reviewer]
        reviews.append(
            Review(
                reviewer=reviewer,
                text="Notes...\nFINAL RANKING:\n"
                + "\n".join(f"{i}. Response {model_to_label[m]}" for i, m in enumerate(ballot, 1)),
                shown_labels=[model_to_label[m] for m in reversed(ballot)],
                ballot_labels=[model_to_label[m] for m in ballot],
                ballot_models=ballot,
                parse_status=ParseStatus.COMPLETE,
                latency_s=1.5,
                usage=Usage(prompt_tokens=100, completion_tokens=50, cost_usd=cost / 10),
            )
        )
    reviews.append(
        Review(reviewer="m-x", text="I like them all.", shown_labels=["A", "B"], parse_status=ParseStatus.NONE)
    )
    request = CouncilRequest(
        council_id=council_id,
        question="What is the capital of France?",
        config=CouncilConfig(members=members, chairman=order[0]),
        origin=Origin(
            platform=platform,
            workspace_id="T1",
            channel_id=channel_id,
            thread_id="1.2",
            user_id=user_id,
            user_name="ada",
        ),
        created_at=created_at or datetime.now(UTC),
    )
    entries = [
        AggregateEntry(
            model=m,
            label=model_to_label[m],
            position=i,
            average_rank=float(i),
            rankings_count=2,
            borda=3.0 - i,
            copeland=2.0 - i,
            first_place_votes=2 if i == 1 else 0,
        )
        for i, m in enumerate(order, 1)
    ]
    return CouncilResult(
        council_id=council_id,
        request=request,
        status=CouncilStatus.DEGRADED,
        answers=[
            *(
                MemberAnswer(
                    model=m,
                    label=model_to_label[m],
                    text=f"Paris, says {m}.",
                    latency_s=2.0,
                    usage=Usage(prompt_tokens=10, completion_tokens=5, cost_usd=cost / 10),
                )
                for m in order
            ),
            MemberAnswer(
                model="m-down",
                error=ErrorInfo(kind=ErrorKind.AUTH, message="the API key was rejected (401)", status=401),
            ),
        ],
        reviews=reviews,
        label_to_model=labels,
        aggregate=Aggregate(entries=entries, agreement_w=0.75, ballots_used=3, ballots_unparsed=1),
        synthesis=Synthesis(
            model=order[1],
            text="Paris.",
            by_chairman=False,
            note=f"The chairman ({order[0]}) failed: timeout; {order[1]} synthesized this answer instead.",
        ),
        notices=["m-down failed: auth 401"],
        timings={"stage1_s": 2.0, "stage2_s": 1.5, "stage3_s": 1.0, "total_s": 4.5},
        usage=Usage(prompt_tokens=500, completion_tokens=200, cost_usd=cost),
        finished_at=(created_at or datetime.now(UTC)) + timedelta(seconds=5),
    )


async def run_council_to_end(router, request: CouncilRequest, control: CouncilControl | None = None, on_event=None):
    """Every event of one council and its result; exactly one CouncilFinished, and it comes last."""
    events = []
    async for event in run_council(request, router, control):
        events.append(event)
        if on_event is not None:
            on_event(event, control)
    finished = [e for e in events if isinstance(e, CouncilFinished)]
    assert len(finished) == 1 and events[-1] is finished[0]
    return events, finished[0].result


def scripted_router(server, **settings: str) -> ProviderRouter:
    """A router over the scripted server (tests/llm_server.py), with `settings` on top."""
    values = dict(LLM_BASE_URL=server.base_url, LLM_API_KEY="k", DATABASE_URL="sqlite:///:memory:")
    return ProviderRouter(Settings(_env_file=None, **(values | settings)))
