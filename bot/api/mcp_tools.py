"""The council as MCP tools (official `mcp` SDK): consult_council, council_history, council_show."""

from __future__ import annotations

import importlib.metadata
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel

from bot.api import catalog
from bot.api.keys import LOCAL_USER, ApiKeys, caller_origin, origin_for
from bot.api.transcript import CouncilTranscript
from core.errors import CouncilError
from core.models import Actor, CouncilFinished, CouncilResult, CouncilStatus, CouncilSummary, Disagreement, Origin
from core.models.voice import (
    MODE_DESCRIPTIONS,
    deliberation_lines,
    measured,
    told,
)
from core.service import CouncilService

if TYPE_CHECKING:
    from core.service import CouncilRun


PACKAGE = "llm-council-bot"
CONSULT_DESCRIPTION = (
    "Ask the council a question. Returns the final answer, who wrote it, the aggregate ranking of the "
    "members' answers and the reviewers' agreement (Kendall's W). `mode`: "
    + "; ".join(
        f"{mode}{' (default)' if mode == 'standard' else ''}: {what}" for mode, what in MODE_DESCRIPTIONS.items()
    )
    + ". `members`/`chairman`: model ids replacing the configured council for this question."
)


class RankedModel(BaseModel):
    position: int
    model: str
    average_rank: float | None
    votes: int


class CouncilAnswer(BaseModel):
    council_id: str
    status: str
    answer: str
    written_by: str | None
    by_chairman: bool
    # chairman, as_written (auto mode: the first two answers agreed) or stand_in (the chairman failed),
    # and the sentence saying so when it was not simply the chairman
    author: str | None = None
    author_line: str | None = None  # `as written by alpha`
    author_note: str | None = None
    failed_members: list[str] = []  # `gamma gave no answer: <cause>` for each member that failed
    ballots: str | None = None  # `Ballots read: 2 of 3` (of the reviews the chairman was given)
    late_reviews: str | None = None  # the reviews that arrived after the synthesis began, and their ranking
    mode: str = "standard"
    ranking: list[RankedModel]
    agreement_w: float | None
    consensus: float | None = None  # of the rubric scores, 0-100
    scores: dict[str, dict[str, float]] = {}  # model -> criterion -> mean rubric score
    composition: dict[str, float] | None = None  # member, `sources`, `chairman` -> share of the answer
    disagreement: Disagreement | None = None  # where the members stand (agreed, contested, unique, open)
    notices: list[str]
    escalated: bool | None = None  # auto mode: the first two answers disagreed and the whole council deliberated
    unsure: bool = False  # its consensus was under its line-up's measured threshold (said first in `answer`)
    unsure_line: str | None = None
    strategy: str | None = None  # mode `best`: which strategy ran and why (said first in `answer`)
    # refine mode: one list per round, `{"member", "moved", "toward"}` per member, and each round as a line
    rounds: list[list[dict[str, Any]]] = []
    deliberation: list[str] = []  # Self-MoA's samples, each member's lens, the rounds: as every interface says them
    url: str | None = None  # the council's page in the browser app (COUNCIL_PUBLIC_URL)


class PastCouncil(BaseModel):
    council_id: str
    created_at: str
    question: str
    status: str
    winner: str | None
    agreement_w: float | None
    consensus: float | None = None


class CouncilHistory(BaseModel):
    councils: list[PastCouncil]


@dataclass(frozen=True)
class Caller:
    origin: Origin
    owns_database: bool  # stdio: the local user, who owns the database as with the CLI


def _caller(ctx: Context, keys: ApiKeys) -> Caller:
    headers = ctx.headers
    if headers is None:
        return Caller(origin_for(LOCAL_USER), owns_database=True)
    # Over HTTP the bearer middleware has already checked this very request's key.
    name = keys.name_for(headers.get("authorization")) if keys.enabled else LOCAL_USER
    return Caller(caller_origin(keys, name or LOCAL_USER, headers), owns_database=False)


def _answer(result: CouncilResult, text: str, link: str | None = None) -> CouncilAnswer:
    aggregate = result.aggregate
    return CouncilAnswer(
        council_id=result.council_id,
        status=result.status.value,
        answer=text,
        written_by=result.synthesis.model if result.synthesis else None,
        by_chairman=bool(result.synthesis and result.synthesis.by_chairman),
        **told(result),  # who wrote it and why, failed members, ballots, late reviews, mode: as the web and API
        ranking=[
            RankedModel(position=e.position, model=e.model, average_rank=e.average_rank, votes=e.rankings_count)
            for e in (aggregate.entries if aggregate else [])
        ],
        agreement_w=aggregate.agreement_w if aggregate else None,
        consensus=aggregate.consensus if aggregate else None,
        scores=aggregate.scores if aggregate else {},
        composition=result.composition,
        disagreement=result.disagreement,
        notices=result.notices,
        escalated=result.escalated,
        unsure=result.unsure is not None,
        unsure_line=measured.unsure_line(result.unsure) if result.unsure is not None else None,
        strategy=result.request.config.strategy.line if result.request.config.strategy else None,
        rounds=[r.moves() for r in result.rounds],
        deliberation=deliberation_lines(result),
        url=link,
    )


def package_version() -> str:
    """The installed package's version (MCP's serverInfo.version)."""
    try:
        return importlib.metadata.version(PACKAGE)
    except importlib.metadata.PackageNotFoundError:  # a checkout run without installing it
        return "0+unknown"


def build_mcp(service: CouncilService, keys: ApiKeys) -> MCPServer:
    server: MCPServer = MCPServer(
        "llm-council",
        version=package_version(),
        instructions="Ask a council of LLMs: they answer, rank each other anonymously, and a chairman answers.",
        log_level="WARNING",
    )

    # The tools' names, parameters and docstrings are what MCP clients see; their work is below.
    @server.tool(description=CONSULT_DESCRIPTION)
    async def consult_council(
        question: str,
        ctx: Context,
        mode: str | None = None,
        members: list[str] | None = None,
        chairman: str | None = None,
    ) -> CouncilAnswer:
        """Ask the council a question (the description MCP clients see: CONSULT_DESCRIPTION)."""
        caller = _caller(ctx, keys)
        run = await _start(service, caller, question, mode, members, chairman)
        transcript, result = await _follow(service, caller, run, ctx)
        if result.status is CouncilStatus.FAILED:
            raise ToolError(transcript.failure or "The council failed.")
        return _answer(result, transcript.content, service.settings.council_url(result.council_id))

    @server.tool()
    async def council_history(ctx: Context, limit: int = 10) -> CouncilHistory:
        """Recent councils (yours over HTTP; every council over stdio), newest first."""
        caller = _caller(ctx, keys)
        summaries = await service.queries.history(None if caller.owns_database else caller.origin, "user", limit)
        return CouncilHistory(councils=[_past_council(s) for s in summaries])

    @server.tool()
    async def council_show(council_id: str, ctx: Context) -> str:
        """One council in full as Markdown: every answer, review, ballot, the ranking and the answer."""
        caller = _caller(ctx, keys)
        try:
            return await service.queries.export(
                council_id, "markdown", viewer=None if caller.owns_database else caller.origin
            )
        except CouncilError as exc:
            raise ToolError(exc.user_message) from None

    return server


async def _start(
    service: CouncilService,
    caller: Caller,
    question: str,
    mode: str | None,
    members: list[str] | None,
    chairman: str | None,
) -> CouncilRun:
    """Start a council in the chosen mode; explicit members/chairman replace the mode's."""
    choice = catalog.resolve_mode(mode)
    if choice is None:
        raise ToolError(f"Unknown mode `{mode}`; available: {', '.join(catalog.mode_names())}.")
    try:
        return await service.start_council(
            question,
            caller.origin,
            members=members or choice.members,
            chairman=chairman or choice.chairman,
            mode=choice.mode,
        )
    except CouncilError as exc:
        raise ToolError(exc.user_message) from None


async def _follow(
    service: CouncilService, caller: Caller, run: CouncilRun, ctx: Context
) -> tuple[CouncilTranscript, CouncilResult]:
    """Report each step as MCP progress until the council finishes; stop it if the client goes away."""
    config = run.request.config
    transcript, step, result = CouncilTranscript(config.mode, config.members, config=config), 0, None
    try:
        async for event in run.events():
            if isinstance(event, CouncilFinished):
                result = event.result
                break
            line = transcript.on_event(event).reasoning.strip(" \n*")
            if line:
                step += 1
                await ctx.report_progress(step, None, line)
    finally:
        if result is None:  # the client cancelled the call or went away
            with anyio.CancelScope(shield=True):
                await service.stop(run.council_id, Actor(user_id=caller.origin.user_id or LOCAL_USER))
    assert result is not None  # events() always ends with CouncilFinished
    transcript.finish(result)
    return transcript, result


def _past_council(s: CouncilSummary) -> PastCouncil:
    return PastCouncil(
        council_id=s.council_id,
        created_at=s.created_at.isoformat(),
        question=s.question,
        status=s.status.value,
        winner=s.winner,
        agreement_w=s.agreement_w,
        consensus=s.consensus,
    )
