"""The pages that read: history (`/`), one council (`/c/<id>`), its exports, the leaderboard and
the eval runs. Each is also JSON (bot/web/context.py); what they show is `service.browse`'s."""

from __future__ import annotations

from typing import Any, Literal
from urllib.parse import urlencode

from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from bot.web import charts
from bot.web.context import WHERE, Pages
from bot.web.render import RENDERER
from core.errors import InputRejected
from core.models import CouncilResult, CouncilStatus, Platform
from core.models.browse import HistoryQuery
from core.models.share_links import SHARE_PARAM
from core.models.voice import (
    DIFFER_TITLE,
    agreement_text,
    consensus_text,
    deliberation_lines,
    differ_parts,
    differ_source,
    lens_line,
    measured,
    other_notices,
    result_composition_line,
    score_lines,
    stand_in_note,
)
from core.models.voice import told as voice_told
from core.service import CouncilView, timeline

QUERY_FIELDS = ("q", "status", "platform", "channel", "model", "after")


def history_query(request: Request) -> HistoryQuery:
    raw = {key: request.query_params.get(key) or None for key in QUERY_FIELDS}
    try:
        return HistoryQuery(**{key: value for key, value in raw.items() if value is not None})
    except ValidationError:
        raise InputRejected("Unknown filter value: status and platform take the values their menus offer.") from None


def model_texts(result: CouncilResult) -> list[str | None]:
    """Every text of a council its page renders as Markdown."""
    texts: list[str | None] = [turn.content for turn in result.request.history]
    texts += [a.text for a in result.answers] + [result.final_text(a) for a in result.answers]
    texts += [r.text for r in result.reviews]
    return texts + ([result.synthesis.text] if result.synthesis else [])


def degraded_note(result: CouncilResult) -> str | None:
    """Why a stand-in wrote the answer, said first (a degraded result never wears the chairman's title)."""
    return stand_in_note(result.synthesis) if result.synthesis is not None else None


def told(result: CouncilResult) -> dict[str, Any]:
    """What the page says about the council, as the JSON twin's `told` (the same sentences)."""
    return {
        **voice_told(result),
        "notices": other_notices(result),
        "agreement": agreement_text(result.aggregate.agreement_w) if result.aggregate else None,
    }


class ReadPages:
    def __init__(self, pages: Pages):
        self.pages = pages
        self.browse = pages.service.browse

    async def history(self, request: Request) -> Response:
        viewer = self.pages.viewer(request)
        query = history_query(request)
        page = await self.browse.history(viewer, query)
        following = {k: v for k in QUERY_FIELDS if (v := request.query_params.get(k)) and k != "after"}
        next_url = "/?" + urlencode({**following, "after": page.next}) if page.next else None
        return self.pages.twin(
            request,
            page,
            "history.html",
            page="history",
            page_data=page,
            query=query,
            next_url=next_url,
            statuses=[s.value for s in CouncilStatus],
            platforms=[p.value for p in Platform],
            where_names={p.value: name for p, name in WHERE.items()},
        )

    async def council(self, request: Request) -> Response:
        wanted = request.path_params["council_id"]
        share = request.query_params.get(SHARE_PARAM)
        if share is not None:  # a share link: this one council, read-only, whoever holds it
            view = await self.browse.shared(wanted, share)
        else:
            view = await self.browse.council(self.pages.viewer(request), wanted)
            if view.council_id != wanted:  # a start of the id: the page lives at the whole id
                return RedirectResponse(f"/c/{view.council_id}", status_code=302)
        if view.result is None:
            return await self._live(request, view, share)
        result = view.result
        await RENDERER.render_all(model_texts(result))  # off the event loop, once per text
        calls = timeline(result)
        data = {"council": result.model_dump(mode="json"), "running": False}
        data["timeline"] = [call.model_dump(mode="json") for call in calls]
        data["votes"] = [vote.model_dump(mode="json") for vote in view.votes]
        data["told"] = told(result)
        data["lead"] = measured.lead_lines(result)  # what the answer says first: measured doubt, `best`'s strategy
        return self.pages.twin(
            request,
            data,
            "council.html",
            page="council",
            council_id=view.council_id,
            request_=result.request,
            result=result,
            live=False,
            degraded=degraded_note(result),
            told=data["told"],
            lead=measured.lead_lines(result),
            meter=charts.agreement_meter(result.aggregate.agreement_w if result.aggregate else None),
            consensus=consensus_text(result.aggregate),
            scores=score_lines(result.aggregate),
            composition=result_composition_line(result),
            differ=differ_parts(result.disagreement),
            differ_title=DIFFER_TITLE,
            differ_source=differ_source(result),
            deliberation=deliberation_lines(result),
            lenses=[lens_line(result.request.config.lens(a.seat or a.model)) for a in result.answers],
            finals=[revised if (revised := result.final_text(a)) != a.text else None for a in result.answers],
            calls=calls,
            timeline_svg=charts.timeline(calls),
            weights=result.request.config.reviewer_weights,
            votes=view.votes,
            share=share,
        )

    async def _live(self, request: Request, view: CouncilView, share: str | None) -> Response:
        """A council still running: the page follows its events (bot/web/live.py)."""
        run, council_request = view.run, view.request
        await RENDERER.render_all(turn.content for turn in council_request.history)
        data: dict[str, Any] = {"council_id": view.council_id, "running": True}
        data["request"] = council_request.model_dump(mode="json")
        return self.pages.twin(
            request,
            data,
            "council.html",
            page="council",
            council_id=view.council_id,
            request_=council_request,
            live=True,
            elsewhere=run is None,
            share=share,
        )

    async def export(self, request: Request) -> Response:
        viewer = self.pages.viewer(request)
        fmt: Literal["json", "markdown"] = "json" if request.path_params["fmt"] == "json" else "markdown"
        text = await self.browse.export(viewer, request.path_params["council_id"], fmt)
        media = "application/json" if fmt == "json" else "text/markdown; charset=utf-8"
        name = f"council-{request.path_params['council_id']}.{'json' if fmt == 'json' else 'md'}"
        return Response(text, media_type=media, headers={"content-disposition": f'inline; filename="{name}"'})

    async def leaderboard(self, request: Request) -> Response:
        viewer = self.pages.viewer(request)
        board, pairs = await self.browse.leaderboard(viewer)
        chart = charts.rating_intervals(board.rows)
        data = {**board.model_dump(mode="json"), "head_to_head": pairs.model_dump(mode="json")}
        return self.pages.twin(
            request, data, "leaderboard.html", page="leaderboard", board=board, chart=chart, pairs=pairs
        )

    async def eval_runs(self, request: Request) -> Response:
        viewer = self.pages.viewer(request)
        runs = await self.browse.eval_runs(viewer)
        data = {
            "runs": [
                {
                    "run": r.summary.model_dump(mode="json"),
                    "report": r.report.model_dump(mode="json") if r.report else None,
                }
                for r in runs
            ]
        }
        admin = self.pages.service.permissions.viewer_is_admin(viewer)
        return self.pages.twin(
            request,
            data,
            "eval.html",
            page="eval",
            runs=runs,
            admin=admin,
            scatter=charts.accuracy_cost,
            lines=measured,
        )
