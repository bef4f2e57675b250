"""Files attached to a question: fetching within limits and reading them.

Public interface (what the wiring round uses; everything else in the package is internal):

- Models (`core/models/files.py`): `IncomingFile` (name, declared_type, size, data | url) as an adapter
  receives it; `ExtractedAttachment` (name, kind "text" | "image", media_type, size, sha256,
  sections of `TextSection(label, text)`, page_count, image_data, notices) as the council reads
  it; `AttachmentRefusal(name, reason)`; `AttachmentBatch(attachments, refusals, notices)` per
  question, with `user_notices()` for the asker.
- `AttachmentLimits.from_settings(settings)`: per file, per question, files, characters, pages.
- `await prepare_attachments(files, limits=..., fetcher=...) -> AttachmentBatch`: the one call an
  adapter or the service makes per question; never raises for a bad file.
- `AttachmentFetcher(allowed_hosts=allowed_file_hosts(SLACK_FILE_HOSTS, settings.slack.api_url),
  bearer_token=settings.slack.bot_token, timeout_s=limits.fetch_timeout_s)`: downloads only from
  the platform's hosts (Discord: `DISCORD_FILE_HOSTS`, no token: its CDN URLs are signed).
- `AttachmentReaders(ReaderLimits.from_settings(settings))`: the reader processes (deadline,
  memory ceiling, how many at once) of one service; `prepare_attachments(..., readers=...)` reads
  through them, `await readers.read(name, data, ...) -> FileRead` reads one file, `aclose()`
  kills every reader.
- `extract_file(name, data, declared_type=..., limits=..., char_budget=...)`: one file in this
  process, raising `AttachmentRefused(name, reason)`: what a reader process runs.

Wiring still to do (not here): prompts render `ExtractedAttachment.sections` fenced as data with
the file name; members whose model takes no images get a line instead of the image part; storage
keeps `attachment.model_dump(mode="json")` (image bytes are excluded); adapters turn Slack
`files` / Discord attachments into `IncomingFile(url=...)` and show `batch.user_notices()`
privately.
"""

from core.models.files import (
    AttachmentBatch,
    AttachmentKind,
    AttachmentRefusal,
    ExtractedAttachment,
    IncomingFile,
    TextSection,
)
from core.reading.attachments.batch import prepare_attachments
from core.reading.attachments.errors import AttachmentRefused
from core.reading.attachments.fetch import DISCORD_FILE_HOSTS, SLACK_FILE_HOSTS, AttachmentFetcher, allowed_file_hosts
from core.reading.attachments.limits import AttachmentLimits
from core.reading.attachments.readers import AttachmentReaders, FileRead, ReaderLimits

__all__ = [
    "DISCORD_FILE_HOSTS",
    "SLACK_FILE_HOSTS",
    "AttachmentBatch",
    "AttachmentFetcher",
    "AttachmentKind",
    "AttachmentLimits",
    "AttachmentReaders",
    "AttachmentRefusal",
    "AttachmentRefused",
    "ExtractedAttachment",
    "FileRead",
    "IncomingFile",
    "ReaderLimits",
    "TextSection",
    "allowed_file_hosts",
    "prepare_attachments",
]
