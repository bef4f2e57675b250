"""The local model runtime: one child process per model file, run by `local_runtime` as

    python -m core.providers.local_worker MODEL.gguf --n-ctx N --threads T [--chat-format F] [--limit-mb M]

It loads the model once and answers calls one at a time. The protocol is one JSON object per
line: requests on stdin, events on the process's original stdout. File descriptor 1 is then
pointed at stderr, so whatever llama.cpp prints reaches the parent's captured
stderr and never the protocol stream, nor a user's terminal.

    parent -> child   {"op": "generate", "name", "preset", "messages", "sampling"}
                      {"op": "stop"}                the running call ends at its next token (or prompt batch)
    child -> parent   {"ev": "loaded"}              once, after the model loaded
                      {"ev": "delta", "text"}       a piece of the answer
                      {"ev": "done", "text", "usage", "finish", "elapsed_s"}  (the call's time in here)
                      {"ev": "aborted"}             the call was stopped
                      {"ev": "error", "kind", "message"}   a typed failure of this call (or of the load)

End of stdin (the parent closed it, or died) ends the process. A native crash ends it too; the
parent sees the signal and reports it as the call's failure.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any, TextIO

from core.models import ChatMessage
from core.providers.base import BadResponseError, ProviderConfigError, ProviderError
from core.providers.local_generate import Aborted, LocalGenerator, ModelInstance, Sampling
from core.providers.local_models import LocalModel, Preset

_KINDS: dict[type[ProviderError], str] = {ProviderConfigError: "config", BadResponseError: "bad_response"}


class Channel:
    """The protocol stream to the parent (thread-safe: the generating thread and the main one write)."""

    def __init__(self, stream: TextIO):
        self._stream = stream
        self._lock = threading.Lock()

    def send(self, event: str, **fields: Any) -> None:
        line = json.dumps({"ev": event, **fields}, ensure_ascii=False)
        with self._lock:
            self._stream.write(line + "\n")
            self._stream.flush()


def _take_stdout() -> TextIO:
    """The protocol stream: a private copy of fd 1; fd 1 itself then goes to stderr."""
    protocol = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return protocol


def _limit_memory(limit_mb: int | None) -> None:
    """The address-space ceiling (RLIMIT_AS): an allocation beyond it fails instead of taking the
    machine's memory (llama.cpp then aborts or reports the failure; either costs this process only)."""
    if not limit_mb:
        return
    ceiling = limit_mb * 1024 * 1024
    try:
        import resource  # POSIX only
    except ImportError:  # pragma: no cover - Windows: no ceiling
        print("no memory ceiling on this platform", file=sys.stderr)
        return
    try:
        _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        if hard != resource.RLIM_INFINITY:
            ceiling = min(ceiling, hard)
        resource.setrlimit(resource.RLIMIT_AS, (ceiling, hard))
    except (ValueError, OSError) as exc:  # pragma: no cover - platforms without RLIMIT_AS
        print(f"could not set the memory ceiling: {exc}", file=sys.stderr)


class Worker:
    """One loaded model and the call running on it."""

    def __init__(self, channel: Channel, instance: ModelInstance, generator: LocalGenerator):
        self.channel = channel
        self.instance = instance
        self.generator = generator
        self.stop = threading.Event()
        self.thread: threading.Thread | None = None

    def handle(self, request: dict[str, Any]) -> None:
        op = request.get("op")
        if op == "stop":
            self.stop.set()
        elif op == "generate":
            if self.thread is not None:
                self.thread.join()  # the parent waits for a call's end before the next; belt and braces
            self.stop = threading.Event()
            self.thread = threading.Thread(target=self._generate, args=(request, self.stop), daemon=True)
            self.thread.start()

    def _generate(self, request: dict[str, Any], stop: threading.Event) -> None:
        started = time.perf_counter()
        try:
            resolved = LocalModel(request["name"], self.instance.path, Preset(**request["preset"]))
            messages = [ChatMessage(role=m["role"], content=m["content"]) for m in request["messages"]]
            sampling = Sampling(**request["sampling"])
            emit = self._emitter(stop)
            text, usage, finish = self.generator.generate(self.instance, resolved, messages, sampling, stop, emit)
            elapsed = time.perf_counter() - started
            self.channel.send("done", text=text, usage=usage.model_dump(), finish=finish, elapsed_s=elapsed)
        except Aborted:
            self.channel.send("aborted")
        except ProviderError as exc:
            self.channel.send("error", kind=_KINDS.get(type(exc), "failed"), message=exc.message)
        except MemoryError:
            self.channel.send(
                "error", kind="memory", message=f"out of memory while answering with {self.instance.path.name}"
            )
        except Exception as exc:  # a llama.cpp failure costs this call, not the runtime
            self.channel.send("error", kind="failed", message=f"{type(exc).__name__}: {exc}")

    def _emitter(self, stop: threading.Event):
        def emit(kind: str, value: Any) -> None:
            if kind == "delta" and not stop.is_set():
                self.channel.send("delta", text=value)

        return emit


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="local_worker")
    parser.add_argument("model")
    parser.add_argument("--n-ctx", type=int, required=True)
    parser.add_argument("--threads", type=int, required=True)
    parser.add_argument("--chat-format", default=None)
    parser.add_argument("--limit-mb", type=int, default=None)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = _arguments(argv)
    channel = Channel(_take_stdout())
    _limit_memory(args.limit_mb)
    instance = ModelInstance(path=Path(args.model), chat_format=args.chat_format)
    generator = LocalGenerator(n_ctx=args.n_ctx, n_threads=args.threads)
    try:
        generator.load(instance)
    except ProviderError as exc:
        channel.send("error", kind=_KINDS.get(type(exc), "failed"), message=exc.message)
        os._exit(0)
    except MemoryError:
        channel.send("error", kind="memory", message=f"out of memory while loading {instance.path.name}")
        os._exit(0)
    channel.send("loaded")
    worker = Worker(channel, instance, generator)
    for line in sys.stdin:
        if line.strip():
            worker.handle(json.loads(line))
    # The parent is gone or closed us: leave without running llama.cpp's destructors, which may
    # race a generation still in its thread.
    os._exit(0)


if __name__ == "__main__":
    main()
