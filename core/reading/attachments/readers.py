"""Reading files in worker processes, each with a deadline and a memory ceiling.

No parser runs in the bot's own process: a file is read by a process forked from
multiprocessing's fork server, which has the parsers imported, so a reader costs a fork (a small
file's whole read: tens of ms) instead of a fresh interpreter importing them (0.5-1.5 s here;
bench/bench_attachments.py measures both). As with any multiprocessing start method but fork,
each reader runs the main module again as `__mp_main__`: entry points keep their top level
light and guarded (bot/cli.py, the `council` script and the bench do).
The reader limits its own address space (RLIMIT_AS, `COUNCIL_ATTACHMENT_READ_MB`) and is
killed from here at the deadline (`COUNCIL_ATTACHMENT_READ_S`), so no parser bug, decompression
bomb or pathological file can take the bot's memory or hold it up. At most
`COUNCIL_ATTACHMENT_READERS` files are read at once per `AttachmentReaders` (one per service,
so per process); the others wait in line, at most one deadline each.

A file over a limit becomes a refusal naming the file and the limit; the council goes on.
`aclose()` kills every reader, and a cancelled read kills its own, so shutdown never waits for
a parser. A reader whose parent dies is killed by the kernel (Linux: PR_SET_PDEATHSIG).
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import os
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import TYPE_CHECKING

from pydantic import ValidationError

from core.models.files import AttachmentRefusal, ExtractedAttachment
from core.reading.attachments import worker
from core.reading.attachments.limits import MB, AttachmentLimits, format_bytes

if TYPE_CHECKING:
    from core.settings import Settings

log = logging.getLogger(__name__)

# The fork server imports the worker and every parser once; each reader is a fork of it. The bot's
# own process never imports the parsers (pypdf alone is a quarter of its start-up).
_CONTEXT = multiprocessing.get_context("forkserver")
_CONTEXT.set_forkserver_preload([worker.__name__, "core.reading.attachments.extract"])
_PIPE_CHUNK = 64 * 1024
# A reply is the extracted text as JSON: at most ~12 bytes a character (escaped surrogate pairs).
_REPLY_BYTES_PER_CHAR = 12
_REPLY_OVERHEAD = 1 * MB
# How long a killed reader may take to be gone before its handle is left to the fork server.
_EXIT_WAIT_S = 2.0


@dataclass(frozen=True)
class ReaderLimits:
    deadline_s: float = 10.0
    memory_bytes: int = 256 * MB
    readers: int = 2

    @classmethod
    def from_settings(cls, settings: Settings) -> ReaderLimits:
        return cls(
            deadline_s=settings.attachments.read_s,
            memory_bytes=settings.attachments.read_mb * MB,
            readers=settings.attachments.readers,
        )


@dataclass(frozen=True)
class FileRead:
    """One file's outcome: its attachment or its refusal, with what the read cost."""

    outcome: ExtractedAttachment | AttachmentRefusal
    seconds: float
    # The reader process's peak resident memory (kB), when it could be measured.
    peak_rss_kb: int | None = None


class AttachmentReaders:
    """The reader processes of one service (see the module docstring)."""

    def __init__(self, limits: ReaderLimits | None = None) -> None:
        self.limits = limits or ReaderLimits()
        self._slots = asyncio.Semaphore(self.limits.readers)
        self._start_lock = asyncio.Lock()
        self._running: set[BaseProcess] = set()
        self._closed = False

    async def read(
        self,
        name: str,
        data: bytes,
        *,
        declared_type: str | None = None,
        limits: AttachmentLimits | None = None,
        char_budget: int | None = None,
    ) -> FileRead:
        """`extract_file` in a reader process; never raises for a bad file."""
        limits = limits or AttachmentLimits()
        started = time.perf_counter()
        refused = _Refuser(name, started)
        if self._closed:
            return refused("not read: the bot is shutting down")
        try:
            async with asyncio.timeout(self.limits.deadline_s):
                await self._slots.acquire()
        except TimeoutError:
            return refused(f"not read: every file reader stayed busy for {self.limits.deadline_s:g} s")
        try:
            job = worker.ReadJob(
                name=name,
                declared_type=declared_type,
                size=len(data),
                limits=limits,
                char_budget=limits.max_chars if char_budget is None else char_budget,
                memory_bytes=self.limits.memory_bytes,
                deadline_s=self.limits.deadline_s,
            )
            return await self._read(job, data, refused)
        finally:
            self._slots.release()

    async def aclose(self) -> None:
        """Kill every reader; their reads end with a refusal (or their cancellation)."""
        self._closed = True
        for process in list(self._running):
            _kill(process)

    async def _read(self, job: worker.ReadJob, data: bytes, refused: _Refuser) -> FileRead:
        launched = await self._launch(job)
        if launched is None:
            return refused("could not be read (no file reader could be started)")
        process, request_w, reply_r = launched
        if self._closed:  # closed while it started
            _kill(process)
        sent = asyncio.ensure_future(_write_all(request_w, data))
        try:
            async with asyncio.timeout(self.limits.deadline_s):
                payload = await _read_all(reply_r, _REPLY_BYTES_PER_CHAR * job.char_budget + _REPLY_OVERHEAD)
        except TimeoutError:
            log.info("attachment %r: reader killed at the deadline", job.name)
            peak = worker.peak_rss_kb(process.pid) if process.pid else None
            return refused(self._over_time(), peak)
        except _ReplyTooLarge:
            return refused("could not be read (its reader sent more than it may)")
        finally:
            sent.cancel()
            await asyncio.gather(sent, return_exceptions=True)
            os.close(request_w)
            os.close(reply_r)
            self._running.discard(process)
            exitcode = await _stop(process)
        return self._outcome(job, data, payload, exitcode, refused)

    async def _launch(self, job: worker.ReadJob) -> tuple[BaseProcess, int, int] | None:
        """A started reader of `job` and our ends of its pipes (the request's to write, the reply's
        to read); None when none could be started (logged)."""
        request_r, request_w = os.pipe()
        reply_r, reply_w = os.pipe()
        # The reader's ends, passed to it by the fork server; closed here once it has them.
        child_ends = (Connection(request_r, writable=False), Connection(reply_w, readable=False))
        process = _CONTEXT.Process(
            target=worker.read_file,
            args=(job, *child_ends),
            name=f"attachment reader: {job.name}",
            daemon=True,  # multiprocessing kills daemonic children when the bot exits
        )
        # Started in a thread (the first start waits for the fork server to import the parsers),
        # and never abandoned half-way: a read cancelled meanwhile still stops what was started.
        self._running.add(process)
        starting = asyncio.ensure_future(self._start(process))
        try:
            await asyncio.shield(starting)
        except BaseException as exc:
            await asyncio.gather(starting, return_exceptions=True)
            os.close(request_w)
            os.close(reply_r)
            self._running.discard(process)
            if process.pid is not None:
                await _stop(process)
            if not isinstance(exc, Exception):  # cancelled: the caller goes away
                raise
            log.exception("attachment %r: no reader could be started", job.name)
            return None
        finally:
            for end in child_ends:
                end.close()
        return process, request_w, reply_r

    async def _start(self, process: BaseProcess) -> None:
        async with self._start_lock:  # multiprocessing's bookkeeping is not thread-safe
            await asyncio.to_thread(process.start)

    def _outcome(
        self, job: worker.ReadJob, data: bytes, payload: bytes, exitcode: int | None, refused: _Refuser
    ) -> FileRead:
        try:
            reply = worker.WorkerReply.model_validate_json(payload)
        except ValidationError:
            log.warning("attachment %r: reader ended with code %s and no reply", job.name, exitcode)
            if self._closed:
                return refused("not read: the bot is shutting down")
            if exitcode == -signal.SIGXCPU:  # the CPU backstop, when the deadline kill did not come
                return refused(self._over_time())
            return refused("could not be read (its reader failed)")
        if reply.failure == "memory":
            return refused(self._over_memory(), reply.peak_rss_kb)
        if reply.refused is not None:
            return refused(reply.refused, reply.peak_rss_kb)
        if reply.attachment is None:
            log.warning("attachment %r: reader failed", job.name)
            return refused("could not be read (its reader failed)", reply.peak_rss_kb)
        attachment = reply.attachment
        if attachment.kind == "image":  # its bytes are not sent back: they are here
            attachment = attachment.model_copy(update={"image_data": data})
        return FileRead(attachment, time.perf_counter() - refused.started, reply.peak_rss_kb)

    def _over_time(self) -> str:
        return f"could not be read within the {self.limits.deadline_s:g} s limit for reading one file"

    def _over_memory(self) -> str:
        ceiling = format_bytes(self.limits.memory_bytes)
        return f"could not be read within the {ceiling} memory limit for reading one file"


class _Refuser:
    """Builds the refusal `FileRead` of one file, timed from the start of its read."""

    def __init__(self, name: str, started: float) -> None:
        self.name = name
        self.started = started

    def __call__(self, reason: str, peak_rss_kb: int | None = None) -> FileRead:
        return FileRead(
            outcome=AttachmentRefusal(name=self.name, reason=reason),
            seconds=time.perf_counter() - self.started,
            peak_rss_kb=peak_rss_kb,
        )


class _ReplyTooLarge(Exception):
    pass


def _kill(process: BaseProcess) -> None:
    # Polled first: a reaped reader's pid may belong to another process. Not started: nothing to kill.
    if process.pid is not None and process.exitcode is None:
        process.kill()


async def _stop(process: BaseProcess) -> int | None:
    """Kill the reader if it still runs, wait (briefly) for the fork server to report its end,
    and return its exit code (negative: the signal that ended it)."""
    _kill(process)
    try:
        await asyncio.shield(_readable(process.sentinel, timeout_s=_EXIT_WAIT_S))
    except (asyncio.CancelledError, TimeoutError):
        pass
    exitcode = process.exitcode
    if exitcode is not None:
        process.close()
    return exitcode


async def _readable(fd: int, timeout_s: float | None = None) -> None:
    await _ready(fd, asyncio.get_running_loop().add_reader, asyncio.get_running_loop().remove_reader, timeout_s)


async def _writable(fd: int) -> None:
    await _ready(fd, asyncio.get_running_loop().add_writer, asyncio.get_running_loop().remove_writer, None)


async def _ready(
    fd: int,
    add: Callable[..., None],
    remove: Callable[[int], bool],
    timeout_s: float | None,
) -> None:
    ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def wake() -> None:
        if not ready.done():
            ready.set_result(None)

    add(fd, wake)
    try:
        await asyncio.wait_for(ready, timeout_s)
    finally:
        remove(fd)


async def _write_all(fd: int, data: bytes) -> None:
    """The file's bytes to the reader; a reader gone early (over a limit) just stops the writing."""
    os.set_blocking(fd, False)
    view = memoryview(data)
    while view:
        try:
            view = view[os.write(fd, view[:_PIPE_CHUNK]) :]
        except BlockingIOError:
            await _writable(fd)
        except BrokenPipeError:
            return


async def _read_all(fd: int, max_bytes: int) -> bytes:
    """The reader's reply, until it closes the pipe (by replying and exiting, or by dying)."""
    os.set_blocking(fd, False)
    chunks: list[bytes] = []
    size = 0
    while True:
        try:
            chunk = os.read(fd, _PIPE_CHUNK)
        except BlockingIOError:
            await _readable(fd)
            continue
        if not chunk:
            return b"".join(chunks)
        size += len(chunk)
        if size > max_bytes:
            raise _ReplyTooLarge
        chunks.append(chunk)
