"""The one error of the attachment pipeline: a file refused, with a reason fit to show the user."""

from __future__ import annotations

from core.models.files import AttachmentRefusal


class AttachmentRefused(Exception):
    """A file that will not be read. `reason` is one line, names no secret and no URL."""

    def __init__(self, name: str, reason: str):
        super().__init__(f"{name}: {reason}")
        self.name = name
        self.reason = reason

    def refusal(self) -> AttachmentRefusal:
        return AttachmentRefusal(name=self.name, reason=self.reason)
