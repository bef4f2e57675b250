"""Typed values of the attachment pipeline: a file as received, as extracted, and per question.

Pydantic models like `core.models`, so that the wiring round can store them as JSON: an
`ExtractedAttachment` dumps (`model_dump(mode="json")`) without its image bytes, which are kept
out of storage and exports on purpose (the content hash and size identify the image).
"""

from __future__ import annotations

import base64
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

# The question of a council asked with files and no words: the council reads them.
FILES_ONLY_QUESTION = "Read the attached file(s) and tell me what matters in them."


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)


class IncomingFile(_Model):
    """A file as a platform announced it: either its bytes (CLI, tests) or a URL to fetch.

    `declared_type` is what the platform or the file name claims (a MIME type such as
    "application/pdf", or Slack's `filetype` such as "pdf"); it is only a hint, the bytes decide.
    `size` is the platform's declared size, checked before anything is downloaded.
    """

    name: str
    declared_type: str | None = None
    size: int | None = Field(None, ge=0)
    data: bytes | None = Field(None, repr=False)
    url: str | None = Field(None, repr=False)


class TextSection(_Model):
    """One part of a document's text: a PDF page ("page 3"), a DOCX heading, or the whole file (label None)."""

    label: str | None = None
    text: str


AttachmentKind = Literal["text", "image"]


class ExtractedAttachment(_Model):
    """What the council reads from one file.

    Text files carry `sections` (PDF pages, DOCX headings, or one unlabelled section); images carry
    their bytes in `image_data` (not serialised) and `media_type` taken from their magic bytes.
    `notices` are one-line, user-visible remarks about this file (pages or text left out).
    """

    name: str
    kind: AttachmentKind
    media_type: str
    size: int = Field(ge=0)
    sha256: str
    sections: tuple[TextSection, ...] = ()
    page_count: int | None = None
    image_data: bytes | None = Field(default=None, exclude=True, repr=False)
    notices: tuple[str, ...] = ()

    @property
    def text(self) -> str:
        """All extracted text, sections separated by a blank line (labels are left to the prompt renderer)."""
        return "\n\n".join(section.text for section in self.sections)

    @property
    def char_count(self) -> int:
        return sum(len(section.text) for section in self.sections)

    def data_url(self) -> str:
        """The image as a `data:` URL (base64), the form OpenAI-compatible APIs accept for images."""
        if self.kind != "image" or self.image_data is None:
            raise ValueError(f"{self.name} is not an image with data")
        return f"data:{self.media_type};base64,{base64.b64encode(self.image_data).decode('ascii')}"


class AttachmentRefusal(_Model):
    """A file the council will not read, with a one-line reason that names it."""

    name: str
    reason: str

    @property
    def message(self) -> str:
        return f"{self.name}: {self.reason}"


class AttachmentBatch(_Model):
    """Every file of one question: what was read, what was refused, and the question-wide notices.

    The council runs on `attachments`; `refusals` and `notices` are shown privately to the asker
    (the issue's "the council runs on the readable files with a notice naming the others").
    """

    attachments: tuple[ExtractedAttachment, ...] = ()
    refusals: tuple[AttachmentRefusal, ...] = ()
    notices: tuple[str, ...] = ()

    @property
    def images(self) -> tuple[ExtractedAttachment, ...]:
        return tuple(a for a in self.attachments if a.kind == "image")

    @property
    def documents(self) -> tuple[ExtractedAttachment, ...]:
        return tuple(a for a in self.attachments if a.kind == "text")

    def user_notices(self) -> list[str]:
        """Every line to show the asker: refusals first (they name the file), then what was cut."""
        lines = [refusal.message for refusal in self.refusals]
        lines.extend(self.notices)
        for attachment in self.attachments:
            lines.extend(attachment.notices)
        return lines
