"""What bounds a local model runtime, and how its end is told: the default memory ceiling of a
model file (file + KV cache at LOCAL_N_CTX + compute buffers + margin), and the one line that
says why a runtime died (its signal, and the line of its captured stderr that gives the cause)."""

from __future__ import annotations

import os
import re
import signal
from collections.abc import Iterable
from pathlib import Path

from core.providers.base import ProviderConfigError
from core.providers.gguf_info import GGUFError, kv_cache_bytes, read_metadata, vocab_size
from core.settings import Settings

_MB = 1024 * 1024
# Address space a runtime reserves besides the model, its KV cache and its compute buffers,
# measured on the bundled models with llama-cpp-python (VmPeak 777 MB for SmolLM2, 1794 MB for
# Gemma 3 270M; 425 and 611 MB on xllamacpp, which the margin keeps room for): Python with
# llama.cpp imported, glibc's malloc arenas (two: MALLOC_ARENA_MAX).
_BASE_MB = 768
_THREAD_STACK_MB = 8
# llama.cpp's compute buffers grow with the vocabulary: logits of a 512-token batch (4-byte
# floats), reserved about twice over (the graph's output and the context's output buffer).
_BATCH = 512
_BUILD_PATH = re.compile(r"(?:/[^\s:/]+)+/([^\s:/]+:\d+)")
_MEMORY_MARKERS = ("failed to allocate", "std::bad_alloc", "MemoryError", "Cannot allocate memory")
_CAUSE_MARKERS = ("GGML_ASSERT", "error", "failed", "terminate called", "what():", "MemoryError", "Killed")


def memory_ceiling_mb(path: Path, settings: Settings, threads: int) -> int:
    """LOCAL_RUNTIME_MB, else what the model needs: its file, its KV cache at LOCAL_N_CTX, its
    compute buffers, and a margin (the interpreter, thread stacks)."""
    if settings.local.runtime_mb:
        return settings.local.runtime_mb
    size = path.stat().st_size
    try:
        entries = read_metadata(path)
    except GGUFError as exc:
        raise ProviderConfigError(f"cannot load the local model file {path.name}: {exc}") from exc
    kv = kv_cache_bytes(entries, settings.local.n_ctx)
    if kv is None:  # an architecture whose shape we cannot read: as much again as the file
        kv = size
    compute = 2 * (vocab_size(entries) or 256_000) * _BATCH * 4
    # A header claiming absurd dimensions must not lift the ceiling beyond the machine.
    needed = min(size + kv + compute, _physical_memory())
    return needed // _MB + _BASE_MB + threads * _THREAD_STACK_MB


def _physical_memory() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # pragma: no cover - not POSIX
        return 1 << 40


def signal_name(returncode: int) -> str:
    """SIGABRT for a process killed by signal 6; "exit status N" for one that exited."""
    if returncode < 0:
        try:
            return signal.Signals(-returncode).name
        except ValueError:
            return f"signal {-returncode}"
    return f"exit status {returncode}"


def one_line_cause(lines: Iterable[str]) -> str | None:
    """The line of a runtime's stderr that says why it died (an assertion, an error), shortened
    (source paths of the build machine cut to the file name)."""
    for line in reversed(list(lines)):
        if any(marker in line for marker in _CAUSE_MARKERS) and "backtrace" not in line:
            text = _BUILD_PATH.sub(r"\1", " ".join(line.split()))
            return text if len(text) <= 240 else text[:237] + "..."
    return None


def short_of_memory(lines: Iterable[str]) -> bool:
    """A runtime's stderr says an allocation failed (its memory ceiling, most likely)."""
    return any(marker in line for line in lines for marker in _MEMORY_MARKERS)
