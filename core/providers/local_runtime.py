"""The supervisor of the local model runtimes: one child process (`local_worker`) per model file.

    ModelRuntime(path, chat_format, settings)   one model file's child, started on first use

* The child loads the model once and keeps it loaded between calls; calls to it are serialised
  by `lock` (the provider holds it for a call and until the child has really ended that call).
* A crash, abort or kill of the child fails the call it was serving with one typed line,
  LocalRuntimeCrash ("the local model runtime crashed: SIGABRT while loading bad.gguf (...)"),
  and nothing else: the next call starts a new child, after a backoff that doubles with each
  crash in a row (0.5 s, 1 s, 2 s ... 30 s) and resets after a call that worked.
* Loading has a deadline (LOCAL_LOAD_TIMEOUT_S); the child is killed when it passes.
* Memory ceiling: the child limits its own address space (RLIMIT_AS) to LOCAL_RUNTIME_MB, or by
  default to what the model needs (`local_limits.memory_ceiling_mb`): file + KV cache at
  LOCAL_N_CTX + compute buffers + margin.
* The child's stderr (llama.cpp's log, GGML_ASSERT lines, abort backtraces) is captured: its
  lines go to debug logging, and at most one of them becomes the cause in the error message.
"""

from __future__ import annotations

import asyncio
import collections
import json
import logging
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import core
from core.providers.base import BadResponseError, ProviderConfigError, ProviderError, ProviderUnavailableError
from core.providers.local_limits import memory_ceiling_mb, one_line_cause, short_of_memory, signal_name
from core.settings import Settings
from core.telemetry import metrics

log = logging.getLogger("core.providers.local")
_native_log = logging.getLogger("llama_cpp.native")

_MB = 1024 * 1024
_BACKOFF_S = (0.5, 30.0)  # first delay after a crash, and the longest
_STOP_GRACE_S = 10.0  # a stopped call must end within this, or its child is killed
_TAIL_LINES = 80


class LocalRuntimeCrash(ProviderUnavailableError):
    """The local model runtime (a child process) died while serving this call."""


@dataclass(frozen=True)
class Event:
    """One message from the child; kind "exit" when its stream ended (it died or quit)."""

    kind: str
    data: dict[str, Any]


class ModelRuntime:
    """One model file's child process (see the module docstring). Belongs to one event loop."""

    def __init__(self, path: Path, chat_format: str | None, settings: Settings):
        self.path = path
        self.chat_format = chat_format
        self.settings = settings
        self.lock = asyncio.Lock()  # one call at a time, held until the child ended it
        self.in_flight = False  # a generation is running in the child
        self.last_outcome: str | None = None  # how the last call ended: done, aborted, error, crashed
        self.last_call_s: float | None = None  # the last finished call's time inside the child
        self._process: asyncio.subprocess.Process | None = None
        self._events: asyncio.Queue[Event] = asyncio.Queue()
        self._readers: list[asyncio.Task] = []
        self._stderr: collections.deque[str] = collections.deque(maxlen=_TAIL_LINES)
        self._crashes = 0
        self._restart_at = 0.0
        self._phase = "starting"
        self._limit_mb: int | None = None

    # ------------------------------------------------------------------ the child's life

    @property
    def alive(self) -> bool:
        return self._process is not None and self._process.returncode is None

    async def ensure_loaded(self) -> None:
        """A child with the model loaded (starts one, after the crash backoff, when there is none).
        Call with `lock` held."""
        if self.alive:
            return
        delay = self._restart_at - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)
        threads = _threads(self.settings.local.n_threads)
        self._limit_mb = await asyncio.to_thread(memory_ceiling_mb, self.path, self.settings, threads)
        await self._spawn(self._limit_mb, threads)
        self._phase = "loading"
        try:
            async with asyncio.timeout(self.settings.local.load_timeout_s):
                event = await self._events.get()
        except TimeoutError:
            await self.kill()
            self._crashed()
            raise LocalRuntimeCrash(
                f"the local model runtime did not load {self.path.name} within "
                f"{self.settings.local.load_timeout_s:g} s (LOCAL_LOAD_TIMEOUT_S)"
            ) from None
        except BaseException:  # the caller gave up mid-load: a half-loaded child is of no use
            await self.kill()
            raise
        if event.kind == "loaded":
            self._phase = "idle"
            return
        await self._reap()
        self._crashed()
        raise self._failure(event)

    async def _spawn(self, limit_mb: int, threads: int) -> None:
        command = [sys.executable, "-m", "core.providers.local_worker", str(self.path)]
        command += ["--n-ctx", str(self.settings.local.n_ctx), "--threads", str(threads), "--limit-mb", str(limit_mb)]
        if self.chat_format:
            command += ["--chat-format", self.chat_format]
        self._events = asyncio.Queue()
        self._stderr.clear()
        self._process = await asyncio.create_subprocess_exec(
            *command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=_child_env(),
            start_new_session=True,  # a Ctrl-C at the terminal is the parent's to handle, not the child's
            limit=16 * _MB,  # one protocol line holds a whole answer
        )
        self._readers = [
            asyncio.create_task(self._read_events(self._process, self._events)),
            asyncio.create_task(self._read_stderr(self._process)),
        ]

    async def _read_events(self, process: asyncio.subprocess.Process, events: asyncio.Queue[Event]) -> None:
        assert process.stdout is not None
        try:
            async for raw in process.stdout:
                try:
                    message = json.loads(raw)
                except ValueError:
                    log.debug("local runtime %s: not a protocol line: %r", self.path.name, raw[:200])
                    continue
                events.put_nowait(Event(message.pop("ev", "?"), message))
        finally:
            events.put_nowait(Event("exit", {}))

    async def _read_stderr(self, process: asyncio.subprocess.Process) -> None:
        assert process.stderr is not None
        async for raw in process.stderr:
            line = raw.decode("utf-8", "replace").rstrip()
            if line:
                self._stderr.append(line)
                _native_log.debug("%s: %s", self.path.name, line)

    async def _reap(self) -> int:
        """Wait for the child's end (its stream already ended) and for its stderr to be read."""
        process = self._process
        if process is None:
            return 0
        try:
            async with asyncio.timeout(5):
                code = await process.wait()
                await asyncio.gather(*self._readers, return_exceptions=True)
        except TimeoutError:
            process.kill()
            code = await process.wait()
        return code

    async def kill(self) -> None:
        if self._process is None:
            return
        if self._process.returncode is None:
            self._process.kill()
        await self._reap()
        self._process = None
        self.in_flight = False

    async def close(self) -> None:
        """Ask the child to leave (end of its stdin), then kill it if it does not."""
        process = self._process
        if process is None:
            return
        if process.returncode is None and process.stdin is not None:
            process.stdin.close()
            try:
                async with asyncio.timeout(5):
                    await process.wait()
            except TimeoutError:
                pass
        await self.kill()

    def _crashed(self) -> None:
        self._crashes += 1
        metrics.LOCAL_RUNTIME_CRASHES.labels(metrics.model_label(self.path.name)).inc()
        first, longest = _BACKOFF_S
        self._restart_at = time.monotonic() + min(longest, first * 2 ** (self._crashes - 1))
        self.last_outcome = "crashed"

    # ------------------------------------------------------------------ calls

    def send(self, request: dict[str, Any]) -> None:
        process = self._process
        if process is None or process.stdin is None or process.returncode is not None:
            return  # it died: the event reader reports that
        process.stdin.write((json.dumps(request, ensure_ascii=False) + "\n").encode("utf-8"))

    def start(self, request: dict[str, Any]) -> None:
        """Start a generation (lock held, model loaded)."""
        self._phase = "answering"
        self.in_flight = True
        self.send({"op": "generate", **request})

    async def next_event(self) -> Event:
        """The running call's next event; its end (done, aborted, error) or the child's death ends
        the call. A death is raised as LocalRuntimeCrash, an error as its typed ProviderError."""
        event = await self._events.get()
        if event.kind == "delta":
            return event
        self.in_flight = False
        if event.kind == "exit":
            await self._reap()
            failure = self._failure(event)
            self._crashed()
            raise failure
        self._phase = "idle"
        if event.kind in ("done", "aborted"):
            self.last_outcome = event.kind
            if event.kind == "done":
                self._crashes = 0
                self.last_call_s = event.data.get("elapsed_s")
            return event
        self.last_outcome = "error"
        raise self._failure(event)

    async def stop_and_drain(self) -> None:
        """The caller went away mid-call: stop the generation and wait for the child to end it
        (killing the child when it does not within a grace period)."""
        self.send({"op": "stop"})
        try:
            async with asyncio.timeout(_STOP_GRACE_S):
                while self.in_flight:
                    try:
                        await self.next_event()
                    except ProviderError:
                        break
        except TimeoutError:
            log.warning("local runtime %s did not stop within %g s; killing it", self.path.name, _STOP_GRACE_S)
            await self.kill()

    def _failure(self, event: Event) -> ProviderError:
        """The typed error for an "error" event or the child's death."""
        if event.kind == "error":
            kind = event.data.get("kind")
            message = str(event.data.get("message") or "the local model failed")
            if kind == "memory" or short_of_memory(self._stderr):
                return LocalRuntimeCrash(f"{message} ({self._ceiling_hint()})")
            if kind == "config":
                return ProviderConfigError(message)
            return BadResponseError(message)
        code = self._process.returncode if self._process is not None else None
        how = signal_name(code) if code is not None else "it stopped answering"
        doing = "loading" if self._phase == "loading" else "answering with"
        cause = one_line_cause(self._stderr)
        text = f"the local model runtime crashed: {how} while {doing} {self.path.name}"
        if cause:
            text += f" ({cause})"
        if short_of_memory(self._stderr):
            text += f" ({self._ceiling_hint()})"
        log.info("%s", text)  # the bots log INFO; the terminal shows the member's error instead
        return LocalRuntimeCrash(text)

    def _ceiling_hint(self) -> str:
        if self._limit_mb:
            return f"memory ceiling {self._limit_mb} MB; LOCAL_RUNTIME_MB sets it"
        return "LOCAL_RUNTIME_MB sets the memory ceiling"


def _threads(pinned: int | None) -> int:
    from core.providers.local_generate import cpu_count, default_threads

    return default_threads(cpu_count(), pinned)


def _child_env() -> dict[str, str]:
    """The parent's environment, plus: this code's own tree first on the path (the child must run
    the same `core` as the parent), no gdb backtrace on abort (ggml attaches gdb otherwise, slow
    and noisy), two malloc arenas (glibc reserves 64 MB of address space per thread's arena,
    which the memory ceiling would count), and OpenMP threads that sleep instead of spinning
    while they wait for each other (llama.cpp's threads are OpenMP's: on a busy machine two
    spinning threads made 1.2 tokens/s where sleeping ones made 8.1)."""
    env = dict(os.environ)
    root = str(Path(core.__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join([root, *filter(None, [env.get("PYTHONPATH")])])
    env["GGML_NO_BACKTRACE"] = "1"
    env.setdefault("MALLOC_ARENA_MAX", "2")
    env.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    env["PYTHONUNBUFFERED"] = "1"
    return env
