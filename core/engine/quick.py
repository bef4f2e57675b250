"""Quick mode's verdict: the chairman's first line, `PREFERRED: Response X`, compares the two
answers. It is held back from the stream (never shown) and kept as a two-label ballot, so that
the leaderboard learns from quick councils too."""

from __future__ import annotations

import re
from typing import Protocol

from core.models import ParseStatus, Review

_VERDICT = re.compile(r"^[\s*_#>`]*PREFERRED\s*:?[\s*_`]*(?:RESPONSE\s+)?([A-Z])\b", re.IGNORECASE)
_MAX_HEAD_CHARS = 200  # a first line longer than this is no verdict: show it


class Screen(Protocol):
    reason: str | None

    @property
    def text(self) -> str: ...

    def feed(self, piece: str) -> str: ...

    def finish(self) -> str: ...


class ScreenInFront:
    """A screen in front of another: what it takes off the stream is its own; the reason a text
    was replaced, and the text shown, are the inner screen's."""

    def __init__(self, inner: Screen) -> None:
        self.inner = inner

    @property
    def reason(self) -> str | None:
        return self.inner.reason

    @reason.setter
    def reason(self, value: str | None) -> None:
        self.inner.reason = value

    @property
    def text(self) -> str:
        return self.inner.text


class VerdictScreen(ScreenInFront):
    """A screen that first takes the verdict line off the stream, then passes the rest on."""

    def __init__(self, inner: Screen, labels: list[str]) -> None:
        super().__init__(inner)
        self.labels = labels
        self.preferred: str | None = None
        self._head: str | None = ""  # the first line while held; None once released

    def feed(self, piece: str) -> str:
        if self._head is None:
            return self.inner.feed(piece)
        self._head += piece
        if "\n" not in self._head.lstrip() and len(self._head) < _MAX_HEAD_CHARS:
            return ""
        return self._release()

    def finish(self) -> str:
        shown = self._release() if self._head is not None else ""
        return shown + self.inner.finish()

    def _release(self) -> str:
        head, self._head = self._head or "", None
        first, _, rest = head.lstrip().partition("\n")
        match = _VERDICT.match(first)
        if match and match.group(1).upper() in self.labels:
            self.preferred = match.group(1).upper()
            head = rest.lstrip("\n")
        return self.inner.feed(head) if head else ""


def verdict_review(reviewer: str, screen: VerdictScreen, label_to_model: dict[str, str]) -> Review | None:
    """The chairman's comparison as a ballot (None when it named no answer)."""
    shown = list(screen.labels)
    if screen.preferred is None:
        return None
    order = [screen.preferred, *(label for label in shown if label != screen.preferred)]
    return Review(
        reviewer=reviewer,
        text=f"PREFERRED: Response {screen.preferred}",
        shown_labels=shown,
        ballot_labels=order,
        ballot_models=[label_to_model[label] for label in order],
        parse_status=ParseStatus.COMPLETE,
        format="text",  # the verdict line: a text ballot, audited like any other
    )
