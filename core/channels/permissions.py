"""Who may see or do what with councils: every such rule of the service, in one place.

Adapters never decide: they pass the Actor (who acts) and the Origin (where), and the service
asks these rules before it acts or shows anything.
"""

from __future__ import annotations

from collections.abc import Collection

from core.errors import NotFound, PermissionDenied
from core.models import Actor, CouncilResult, Origin, Platform

# Who the platform itself counts as an admin (Actor.is_platform_admin), as the refusal names it.
PLATFORM_ADMINS = {
    Platform.SLACK: "Slack workspace admins and owners",
    Platform.DISCORD: "Discord members with the Manage Server permission",
}


class Permissions:
    def __init__(self, admin_users: Collection[str]) -> None:
        self.admin_users = admin_users  # COUNCIL_ADMIN_USERS: admins on every platform

    def is_admin(self, actor: Actor) -> bool:
        return actor.is_platform_admin or actor.user_id in self.admin_users

    def require_admin(self, actor: Actor, platform: Platform) -> None:
        """Changing a channel's council (members, chairman, limits) and reading its audit log."""
        if not self.is_admin(actor):
            admins = [*filter(None, [PLATFORM_ADMINS.get(platform)]), "users listed in COUNCIL_ADMIN_USERS"]
            raise PermissionDenied(f"Only admins can change the council: {' and '.join(admins)}.")

    def require_may_stop(self, actor: Actor, asked: Origin) -> None:
        """Stopping a council, or making it synthesize now: its asker or an admin."""
        if actor.user_id != asked.user_id and not self.is_admin(actor):
            raise PermissionDenied("Only the person who asked, or an admin, can stop this council.")

    @staticmethod
    def visible_to(result: CouncilResult, viewer: Origin, *, admin: bool = False) -> bool:
        """A council stays in the workspace (Slack team, Discord server) it was asked in; there it
        is visible from its channel, to whoever asked it, and to the workspace's admins."""
        asked = result.request.origin
        if asked.platform is not viewer.platform or asked.workspace_id != viewer.workspace_id:
            return False
        return admin or asked.channel_id == viewer.channel_id or asked.user_id == viewer.user_id

    def require_visible(self, result: CouncilResult, viewer: Origin | None, *, admin: bool = False) -> None:
        """With `viewer` (the chat adapters), a council it may not see is reported as not found;
        without (the CLI, which owns the database), any council may be seen."""
        if viewer is not None and not self.visible_to(result, viewer, admin=admin):
            raise NotFound(f"No council with id `{result.council_id}` here.")
