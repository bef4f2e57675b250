"""Browser sign-ins with a record on the server (`service.sessions`): the cookie holds only a
random token, and the stored session says who it signs in, until when, and whether as an admin.

- Signing out revokes the session: the old cookie, replayed, signs nobody in.
- A session ends after COUNCIL_WEB_SESSION_HOURS unused; each use renews it (once a minute at
  most, so that reading pages does not write on every request), never past MAX_LIFETIME_S from
  sign-in: then the person signs in again.
- The admin flag the platform gave at sign-in is asked again every COUNCIL_WEB_ADMIN_CHECK_MINUTES
  (`AdminCheck`, e.g. Slack's users.info). A demoted admin's session is revoked; when nobody can
  be asked (no bot token, Discord's admin rights come only with a sign-in), an admin's session
  ends at the check and the person signs in again, which asks the platform anew.
- `council web --revoke USER|all` revokes sessions from the command line.
"""

from __future__ import annotations

import hashlib
import logging
import secrets
import time
from collections.abc import Awaitable, Callable

from core.models import Platform
from core.models.browse import Viewer, WebSession
from core.settings import Settings
from core.storage import Storage

log = logging.getLogger(__name__)

MAX_LIFETIME_S = 7 * 24 * 3600.0
RENEW_EVERY_S = 60.0
# Whether a signed-in person is still an admin: True or False when the platform answered, None
# when nobody can ask it.
AdminCheck = Callable[[WebSession], Awaitable[bool | None]]


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class WebSessions:
    def __init__(self, storage: Storage, settings: Settings) -> None:
        self.storage = storage
        self.lifetime_s = settings.web.session_hours * 3600
        self.check_every_s = settings.web.admin_check_minutes * 60
        self.admin_check: AdminCheck | None = None  # set by the browser app (it knows the platforms)

    async def open(self, viewer: Viewer) -> str:
        """A new session for `viewer`, signed in just now; the token its cookie carries."""
        origin = viewer.origin
        assert origin is not None and origin.workspace_id and origin.user_id
        now = time.time()
        token = secrets.token_urlsafe(32)
        session = WebSession(
            platform=origin.platform.value,
            workspace_id=origin.workspace_id,
            user_id=origin.user_id,
            user_name=viewer.name,
            admin=viewer.is_platform_admin,
            created_at=now,
            expires_at=now + self.lifetime_s,
            admin_checked_at=now,
        )
        await self.storage.web_sessions.create(_hash(token), session)
        await self.storage.web_sessions.forget_expired(now - MAX_LIFETIME_S)
        return token

    async def viewer(self, token: str) -> Viewer | None:
        """Who `token` signs in now; None when nobody (unknown, expired or revoked)."""
        key = _hash(token)
        session = await self.storage.web_sessions.get(key)
        now = time.time()
        if session is None or session.revoked_at is not None or session.expires_at <= now:
            return None
        if session.admin and now - session.admin_checked_at >= self.check_every_s:
            session = await self._recheck(key, session, now)
            if session is None:
                return None
        renewed = min(now + self.lifetime_s, session.created_at + MAX_LIFETIME_S)
        if renewed - session.expires_at >= RENEW_EVERY_S:
            await self.storage.web_sessions.renew(key, renewed)
        return Viewer.signed_in(
            Platform(session.platform), session.workspace_id, session.user_id, session.user_name, admin=session.admin
        )

    async def _recheck(self, key: str, session: WebSession, now: float) -> WebSession | None:
        """The admin flag asked again: the session as it stands now, or None when it ended."""
        still = await self.admin_check(session) if self.admin_check is not None else None
        if still:
            await self.storage.web_sessions.checked(key, True, now)
            return session
        await self.storage.web_sessions.revoke(key, now)
        why = "is no longer an admin" if still is False else "is an admin nobody can ask about again"
        log.info("web session of %s ended: the user %s", session.user_id, why)
        return None

    async def close(self, token: str) -> None:
        """Signed out: the token signs nobody in any more."""
        await self.storage.web_sessions.revoke(_hash(token), time.time())

    async def revoke(self, user_id: str | None) -> int:
        """Every live session of `user_id` (None: everyone's) ended; how many were."""
        return await self.storage.web_sessions.revoke_user(user_id, time.time())
