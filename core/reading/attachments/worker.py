"""The reader process's side: one file read under a memory ceiling, the result sent back as JSON.

Runs in a process forked from multiprocessing's fork server (`core.reading.attachments.readers`), which
has this module and the parsers imported already, so a read starts in milliseconds. The process
limits itself before touching the file: an address-space ceiling (RLIMIT_AS: a parser that
allocates past it gets MemoryError), a CPU-time backstop (RLIMIT_CPU), and it ends when the bot
does (its request pipe closes: SIGIO; on Linux also PR_SET_PDEATHSIG, when the fork server goes). The
parent kills it at the deadline; nothing here decides the time limit.

The reply is JSON validated by the parent (never a pickle: the process parsed hostile bytes).
"""

from __future__ import annotations

import ctypes
import fcntl
import math
import os
import resource
import select
import signal
import sys
import warnings
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Literal

from pydantic import BaseModel, ConfigDict

from core.models.files import ExtractedAttachment
from core.reading.attachments.errors import AttachmentRefused
from core.reading.attachments.limits import AttachmentLimits

_PR_SET_PDEATHSIG = 1
# CPU seconds past the deadline before the kernel stops a reader whose parent could not.
_CPU_BACKSTOP_S = 5


@dataclass(frozen=True)
class ReadJob:
    """What the parent asks: the file's name and size (its bytes follow on the request pipe)."""

    name: str
    declared_type: str | None
    size: int
    limits: AttachmentLimits
    char_budget: int
    memory_bytes: int
    deadline_s: float


class WorkerReply(BaseModel):
    """One of: the attachment (images without their bytes: the parent has them), the reason the
    file was refused, or a failure; and the reader's peak resident memory."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    attachment: ExtractedAttachment | None = None
    refused: str | None = None
    failure: Literal["memory", "error"] | None = None
    peak_rss_kb: int | None = None


def read_file(job: ReadJob, request: Connection, reply: Connection) -> None:
    """The target of a reader process."""
    _quiet()
    _limit_self(job)
    data = _receive(request.fileno(), job.size)
    _exit_with_the_bot(request.fileno())
    outcome = _read(job, data)
    _send(reply.fileno(), outcome.model_copy(update={"peak_rss_kb": peak_rss_kb()}))
    reply.close()


def _read(job: ReadJob, data: bytes) -> WorkerReply:
    # Imported here, not at the top: the bot's own process imports this module but never parses;
    # the fork server has the parsers loaded already (readers.py preloads them).
    from core.reading.attachments.extract import extract_file

    failure: Literal["memory", "error"] | None = None
    try:
        attachment = extract_file(
            job.name, data, declared_type=job.declared_type, limits=job.limits, char_budget=job.char_budget
        )
        return WorkerReply(attachment=attachment)
    except AttachmentRefused as refused:
        return WorkerReply(refused=refused.reason)
    except MemoryError:
        failure = "memory"
    except Exception:  # a parser bug: the parent says the file could not be read
        failure = "error"
    # Built after the handler, once the frames holding the parser's memory are gone.
    return WorkerReply(failure=failure)


def _quiet() -> None:
    """Nothing a parser prints reaches the parent's stdout (`council ask --json` writes there)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.close(devnull)
    sys.stdout = open(os.devnull, "w")  # the process's stdout until it exits
    warnings.simplefilter("ignore")


def _limit_self(job: ReadJob) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (job.memory_bytes, job.memory_bytes))
    cpu_s = math.ceil(job.deadline_s) + _CPU_BACKSTOP_S
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_s, cpu_s + 1))
    if sys.platform == "linux":
        # The fork server is the parent; it exits with the bot, and the reader with it.
        ctypes.CDLL(None).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() == 1:
            os._exit(1)


def _exit_with_the_bot(request_fd: int) -> None:
    """The bot holds the request pipe open until it has the reply: its end closing (the bot
    killed, even by SIGKILL) ends this reader, by SIGIO's default action, whatever the parser is
    doing. PR_SET_PDEATHSIG alone cannot: the reader's parent is the fork server, which stays up
    while any of its children holds its liveness pipe. (No watcher thread: its stack and malloc
    arena would take ~70 MB of the address-space ceiling.)"""
    signal.signal(signal.SIGIO, signal.SIG_DFL)
    fcntl.fcntl(request_fd, fcntl.F_SETOWN, os.getpid())
    fcntl.fcntl(request_fd, fcntl.F_SETFL, fcntl.fcntl(request_fd, fcntl.F_GETFL) | os.O_ASYNC)
    poll = select.poll()
    poll.register(request_fd, select.POLLIN)
    if poll.poll(0):  # closed before the signal was asked for
        os._exit(1)


def _receive(fd: int, size: int) -> bytes:
    buffer = bytearray(size)
    view = memoryview(buffer)
    received = 0
    with open(fd, "rb", buffering=0, closefd=False) as pipe:
        while received < size:
            count = pipe.readinto(view[received:])
            if not count:
                break
            received += count
    view.release()
    return bytes(buffer[:received]) if received < size else bytes(buffer)


def _send(fd: int, reply: WorkerReply) -> None:
    payload = reply.model_dump_json().encode()
    with open(fd, "wb", buffering=0, closefd=False) as pipe:
        view = memoryview(payload)
        try:
            while view:
                view = view[pipe.write(view) or 0 :]
        except BrokenPipeError:  # the parent stopped waiting (deadline, shutdown)
            pass


def peak_rss_kb(pid: int | str = "self") -> int | None:
    """A process's peak resident memory (VmHWM), from /proc; None where there is no /proc."""
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        return None
    return None
