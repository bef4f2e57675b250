"""The council's page in the browser app, named where a council's answer is shown (COUNCIL_PUBLIC_URL)."""

from __future__ import annotations

from typing import Any

from bot.surface import Message, Renderer
from core.models import CouncilResult
from core.settings import Settings


class LinkedRenderer:
    """A platform's renderer whose answer messages carry the link to the council's page
    (its render module's `result_messages(result, link=...)`); everything else is the module's."""

    def __init__(self, render: Any, settings: Settings):
        self._render, self._settings = render, settings

    def result_messages(self, result: CouncilResult) -> list[Message]:
        return list(self._render.result_messages(result, link=self._settings.council_url(result.council_id)))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._render, name)


def renderer(render: Any, settings: Settings | None) -> Renderer:
    """`render` itself, or with links when COUNCIL_PUBLIC_URL is set."""
    return LinkedRenderer(render, settings) if settings is not None and settings.tenants.public_url else render
