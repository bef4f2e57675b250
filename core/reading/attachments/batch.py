"""All files of one question: count, sizes, downloads, extraction and the shared character budget.

`prepare_attachments` never raises for a bad file: each unreadable file becomes an
`AttachmentRefusal` naming it, and the council runs on the readable ones. Files are read in the
order given, so earlier files get the character budget first, each in a reader process
(`core.reading.attachments.readers`) with a deadline and a memory ceiling.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Sequence

from core.models.files import AttachmentBatch, AttachmentRefusal, ExtractedAttachment, IncomingFile
from core.reading.attachments.errors import AttachmentRefused
from core.reading.attachments.fetch import AttachmentFetcher
from core.reading.attachments.limits import AttachmentLimits, format_bytes
from core.reading.attachments.readers import AttachmentReaders


async def prepare_attachments(
    files: Sequence[IncomingFile],
    *,
    limits: AttachmentLimits | None = None,
    fetcher: AttachmentFetcher | None = None,
    readers: AttachmentReaders | None = None,
) -> AttachmentBatch:
    """Download (when a file has a URL and no bytes) and read every file within the question's limits.

    `readers` are the service's reader processes (their count is a per-process bound); without
    them this call reads with its own, closed when it returns."""
    limits = limits or AttachmentLimits()
    accepted = list(files[: limits.max_files])
    refusals = _refuse_extra_files(files, limits)
    refusals |= _refuse_over_declared_total(accepted, limits)
    to_read = [(index, file) for index, file in enumerate(accepted) if index not in refusals]
    contents = await asyncio.gather(*(_content(file, limits, fetcher) for _, file in to_read))
    own_readers = readers is None
    reader = _BatchReader(limits, readers or AttachmentReaders())
    try:
        for (index, file), content in zip(to_read, contents):
            refusal = await reader.read(file, content)
            if refusal is not None:
                refusals[index] = refusal
    finally:
        if own_readers:
            await reader.readers.aclose()
    return AttachmentBatch(
        attachments=tuple(reader.attachments),
        refusals=tuple(refusals[index] for index in sorted(refusals)),
        notices=tuple(reader.notices),
    )


def _refuse_extra_files(files: Sequence[IncomingFile], limits: AttachmentLimits) -> dict[int, AttachmentRefusal]:
    """The files past the question's maximum count, by their index."""
    return {
        index: AttachmentRefusal(
            name=extra.name, reason=f"not read: at most {limits.max_files} files can be attached to one question"
        )
        for index, extra in enumerate(files[limits.max_files :], start=limits.max_files)
    }


def _refuse_over_declared_total(
    accepted: Sequence[IncomingFile], limits: AttachmentLimits
) -> dict[int, AttachmentRefusal]:
    """Declared sizes are checked before any download, so a question cannot pull in far more
    than its total; files without a declared size are checked once downloaded."""
    refusals: dict[int, AttachmentRefusal] = {}
    declared_total = 0
    for index, file in enumerate(accepted):
        if file.size is not None and file.size <= limits.max_file_bytes:
            if declared_total + file.size > limits.max_total_bytes:
                refusals[index] = _over_total(file, limits)
            else:
                declared_total += file.size
    return refusals


class _BatchReader:
    """Reads downloaded files in order, keeping what they share: the byte total, the character
    budget (earlier files get it first) and the hashes of contents already read."""

    def __init__(self, limits: AttachmentLimits, readers: AttachmentReaders):
        self._limits = limits
        self.readers = readers
        self._seen_hashes: dict[str, str] = {}
        self._total_bytes = 0
        self._chars_left = limits.max_chars
        self.attachments: list[ExtractedAttachment] = []
        self.notices: list[str] = []

    async def read(self, file: IncomingFile, content: bytes | AttachmentRefused) -> AttachmentRefusal | None:
        """Extract one file; its refusal when it cannot be read (None also for a duplicate)."""
        if isinstance(content, AttachmentRefused):
            return content.refusal()
        if self._total_bytes + len(content) > self._limits.max_total_bytes:
            return _over_total(file, self._limits)
        self._total_bytes += len(content)
        digest = hashlib.sha256(content).hexdigest()
        if digest in self._seen_hashes:
            self.notices.append(f"{file.name}: same content as {self._seen_hashes[digest]}, read once")
            return None
        read = await self.readers.read(
            file.name, content, declared_type=file.declared_type, limits=self._limits, char_budget=self._chars_left
        )
        if isinstance(read.outcome, AttachmentRefusal):
            return read.outcome
        attachment = read.outcome
        self._seen_hashes[digest] = file.name
        self._chars_left -= attachment.char_count
        self.attachments.append(attachment)
        return None


def _over_total(file: IncomingFile, limits: AttachmentLimits) -> AttachmentRefusal:
    return AttachmentRefusal(
        name=file.name,
        reason=f"not read: the files of one question may total at most {format_bytes(limits.max_total_bytes)}",
    )


async def _content(
    file: IncomingFile, limits: AttachmentLimits, fetcher: AttachmentFetcher | None
) -> bytes | AttachmentRefused:
    """The file's bytes, or the refusal: checked against the declared size before any download."""
    too_large = AttachmentRefused(file.name, f"is larger than the {format_bytes(limits.max_file_bytes)} limit per file")
    if file.size is not None and file.size > limits.max_file_bytes:
        return too_large
    if file.data is not None:
        return too_large if len(file.data) > limits.max_file_bytes else file.data
    if file.url is None or fetcher is None:
        return AttachmentRefused(file.name, "could not be downloaded (no address to fetch it from)")
    try:
        return await fetcher.fetch(file.url, name=file.name, max_bytes=limits.max_file_bytes)
    except AttachmentRefused as refused:
        return refused
