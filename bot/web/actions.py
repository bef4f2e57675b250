"""The pages that act: ask a council (`/ask`), stop one or make it synthesize now, sign in and out.
Every form post carries the session's CSRF token and comes from our own origin
(bot/web/security.py); a script with a bearer key posts without one (no browser sends its key)."""

from __future__ import annotations

import logging
from typing import Any

from starlette.datastructures import UploadFile
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from bot.web import signin
from bot.web.auth import after_sign_in, forget
from bot.web.context import Pages
from bot.web.security import CSRF_FIELD, form_allowed
from core.errors import CouncilError, InputRejected, PermissionDenied
from core.models import Platform
from core.models.browse import Viewer, WebSession
from core.models.files import IncomingFile
from core.models.voice import MODE_DESCRIPTIONS, MODES

log = logging.getLogger(__name__)

MAX_FILE_FORM_BYTES = 64 * 1024 * 1024  # the form as a whole; each file's own limits are the service's


class Actions:
    def __init__(self, pages: Pages):
        self.pages = pages
        self.service = pages.service

    async def _checked_form(self, request: Request, viewer: Viewer):  # type: ignore[no-untyped-def]
        form = await request.form(max_part_size=MAX_FILE_FORM_BYTES)
        if "authorization" not in request.headers and not form_allowed(
            request, form.get(CSRF_FIELD), self.service.settings.tenants.public_url
        ):
            raise PermissionDenied("This form expired or came from another site: reload the page and try again.")
        return form

    async def ask_form(self, request: Request) -> Response:
        viewer = self.pages.viewer(request)
        return self._ask_page(request, viewer, await self.service.browse.models(viewer))

    def _ask_page(self, request: Request, viewer: Viewer, models: list[str], **values: Any) -> Response:
        values["mode"] = values.get("mode") or "standard"
        limit = self.service.settings.limits.max_question_chars
        return self.pages.page(
            request,
            "ask.html",
            page="ask",
            models=models,
            modes=MODES,
            describe=MODE_DESCRIPTIONS,
            limit=limit,
            **values,
        )

    async def ask(self, request: Request) -> Response:
        viewer = self.pages.viewer(request)
        form = await self._checked_form(request, viewer)
        question = str(form.get("question") or "").strip()
        members = [str(m) for m in form.getlist("members") if m]
        chairman = str(form.get("chairman") or "") or None
        mode = str(form.get("mode") or "") or None
        try:
            if mode is not None and mode not in MODES:
                raise InputRejected(f"Unknown mode `{mode[:20]}`: {', '.join(MODES)}.")
            await self.service.browse.check_choice(viewer, members, chairman, mode)  # type: ignore[arg-type]
            files = [
                IncomingFile(name=item.filename or "file", declared_type=item.content_type, data=await item.read())
                for item in form.getlist("files")
                if isinstance(item, UploadFile) and item.filename
            ]
            origin = viewer.asking_origin
            batch = await self.service.reading.read_files(files, origin.platform)
            run = await self.service.start_council(
                question,
                origin,
                members=members or None,
                chairman=chairman,
                attachments=batch.attachments,
                notices=batch.user_notices(),
                mode=mode,  # type: ignore[arg-type]
            )
        except CouncilError as exc:
            if "authorization" in request.headers:
                raise
            models = await self.service.browse.models(viewer)
            # A question over the limit comes back cut to it (the form can be fixed), never whole.
            shown = question[: self.service.settings.limits.max_question_chars]
            return self._ask_page(request, viewer, models, error=exc.user_message, question=shown, mode=mode)
        log.info("council %s asked in the browser by %s", run.council_id, viewer.name)
        return RedirectResponse(f"/c/{run.council_id}", status_code=303)

    async def stop(self, request: Request) -> Response:
        viewer = self.pages.viewer(request)
        form = await self._checked_form(request, viewer)
        view = await self.service.browse.council(viewer, request.path_params["council_id"])  # NotFound: not theirs
        synthesize = form.get("action") == "synthesize"
        if not synthesize and form.get("confirm") != "yes" and "authorization" not in request.headers:
            # Stop ends the council without an answer: a person confirms it (a script means it).
            return self.pages.page(
                request, "confirm_stop.html", page="council", council_id=view.council_id, question=view.request.question
            )
        await self.service.stop(view.council_id, viewer.actor, synthesize=synthesize)
        return RedirectResponse(f"/c/{view.council_id}", status_code=303)

    # ------------------------------------------------------------------ sign-in

    def signin_page(self, request: Request, error: str | None = None, status: int | None = None) -> Response:
        auth = self.pages.auth
        guilds = signin.discord_guilds(request)
        status = status or (400 if error else 200)
        return self.pages.page(
            request, "signin.html", status=status, slack=auth.slack, discord=auth.discord, guilds=guilds, error=error
        )

    def _failed(self, request: Request, exc: CouncilError) -> Response:
        return self.signin_page(request, exc.user_message, getattr(exc, "status", 400))

    async def slack_start(self, request: Request) -> Response:
        if not self.pages.auth.slack:
            return self.signin_page(request, "Sign in with Slack is not configured.")
        return signin.slack_start(self.service.settings, request)

    async def slack_callback(self, request: Request) -> Response:
        try:
            await signin.slack_finish(self.service.settings, request, self.service.sessions, self._team_token)
        except CouncilError as exc:
            return self._failed(request, exc)
        return RedirectResponse(after_sign_in(request), status_code=303)

    async def _team_token(self, team: str) -> str | None:
        if self.service.settings.tenants.secret_key is None:  # no OAuth distribution: nothing stored
            return None
        bot = await self.service.tenants.installations.find_team_bot(team)
        token = (bot or {}).get("bot_token")
        return token if isinstance(token, str) else None

    async def discord_start(self, request: Request) -> Response:
        if not self.pages.auth.discord:
            return self.signin_page(request, "Sign in with Discord is not configured.")
        return signin.discord_start(self.service.settings, request)

    async def discord_callback(self, request: Request) -> Response:
        try:
            guilds = await signin.discord_finish(self.service.settings, request)
            if len(guilds) == 1:
                await signin.discord_choose(request, guilds[0]["id"], self.service.sessions)
                return RedirectResponse(after_sign_in(request), status_code=303)
        except CouncilError as exc:
            return self._failed(request, exc)
        return self.signin_page(request)  # several servers: the person chooses one

    async def discord_guild(self, request: Request) -> Response:
        form = await request.form()
        if not form_allowed(request, form.get(CSRF_FIELD), self.service.settings.tenants.public_url):
            return self.signin_page(request, "This form expired: sign in again.")
        try:
            await signin.discord_choose(request, str(form.get("guild") or ""), self.service.sessions)
        except CouncilError as exc:
            return self._failed(request, exc)
        return RedirectResponse(after_sign_in(request), status_code=303)

    async def signout(self, request: Request) -> Response:
        form = await request.form()
        if form_allowed(request, form.get(CSRF_FIELD), self.service.settings.tenants.public_url):
            await forget(request, self.service.sessions)
        return RedirectResponse("/signin" if self.pages.auth.can_sign_in else "/", status_code=303)

    async def admin_still(self, session: WebSession) -> bool | None:
        """Whether a signed-in admin still is one (service.sessions asks on a schedule)."""
        if session.platform != Platform.SLACK.value:
            return None  # Discord's Manage Server comes with a sign-in only
        return await signin.slack_still_admin(self.service.settings, session, self._team_token)
