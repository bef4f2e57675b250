"""In-process GGUF models with llama-cpp-python: a council with no key and no network.

    LocalProvider(settings)      the router hands it `local:NAME` ids (without the prefix)

* One `llama_cpp.Llama` per model file, loaded lazily on first use and shared by every
  preset of that file (`smollm2` and `smollm2-creative` are one 100 MB model, two personas).
* Calls to one loaded model are serialised (an asyncio.Lock per model) and run in a worker
  thread; different files run in parallel. Without LOCAL_N_THREADS, each call uses
  cpu_count / (models busy right now) threads, so two models at once do not oversubscribe
  a small machine and a lone chairman gets every core.
* Streaming: the worker iterates `create_chat_completion(stream=True)` and hands each piece
  to the event loop through an asyncio.Queue; the stream yields TextDelta items and ends
  with one Completion (token usage, cost 0).
* Timeouts and cancellation: `CallOptions.timeout_s` covers the whole call (waiting for the
  model, loading it, generating). When it expires or the caller goes away, the worker is
  told to stop: between tokens it stops at once, and during prompt evaluation llama.cpp's
  abort callback ends the decode, so a timed-out call frees the CPU within milliseconds.
  The model's lock is released only when its worker thread has really finished.
* Prompts that do not fit `LOCAL_N_CTX`: the oldest conversation turns go first, then the
  middle of the longest message is cut (marked as such); BadResponseError if even that fails.
* Chat templates: the GGUF's embedded template (llama-cpp-python's default handler, e.g.
  SmolLM2's ChatML). A file without one (the bundled Gemma 3 270M is the *base* model, no
  template) gets a plain "Question: ... Answer:" transcript instead of llama-cpp-python's
  llama-2 fallback: base models continue a transcript sensibly, and babble on turn markers.
* Personas: each bundled name has its own system text and sampling (temperature, top_p,
  top_k, seed); CallOptions.temperature, when set, overrides the preset's temperature.

This module is the asyncio side (resolving, locks, deadlines, the queue); the worker-thread side
is `local_generate`, prompt fitting `local_prompt`, and llama-cpp-python itself `llama_runtime`.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

from core.models import ChatMessage, Completion
from core.providers import local_models
from core.providers.base import (
    BadResponseError,
    CallOptions,
    ProviderConfigError,
    ProviderError,
    ProviderTimeoutError,
    StreamItem,
    TextDelta,
)
from core.providers.llama_runtime import MISSING_LLAMA, import_llama
from core.providers.local_generate import Aborted, LocalGenerator, ModelInstance, sampling_for
from core.providers.local_models import LocalModel
from core.providers.local_prompt import ranking_grammar
from core.settings import Settings

__all__ = ["MISSING_LLAMA", "LocalProvider", "ranking_grammar"]

log = logging.getLogger(__name__)


class LocalProvider:
    """The `local:` provider (see the module docstring). Belongs to one event loop."""

    name = "local"

    def __init__(self, settings: Settings):
        self.settings = settings
        self._instances: dict[Path, ModelInstance] = {}
        self._models: dict[str, LocalModel] = {}
        self._generator = LocalGenerator(settings)
        self._running: set[asyncio.Future] = set()
        self._stops: set[threading.Event] = set()

    # ------------------------------------------------------------------ protocol

    async def list_models(self) -> list[str]:
        """Bundled names whose package is installed (paths to .gguf files work as well)."""
        return local_models.available_names()

    def context_window(self, model: str) -> int | None:
        return self.settings.local.n_ctx  # every local model is loaded with this window

    async def complete(self, model: str, messages: Sequence[ChatMessage], options: CallOptions) -> Completion:
        if options.response_format is not None:  # no JSON-schema decoding here: the caller falls back
            raise BadResponseError(f"local:{model}: structured output is not supported", status=400)
        completion = None
        async for item in self.stream(model, messages, options):
            if isinstance(item, Completion):
                completion = item
        if completion is None:  # pragma: no cover - stream always ends with one
            raise BadResponseError(f"local:{model}: no completion")
        return completion

    async def stream(
        self, model: str, messages: Sequence[ChatMessage], options: CallOptions
    ) -> AsyncIterator[StreamItem]:
        loop = asyncio.get_running_loop()
        started = time.perf_counter()
        deadline = loop.time() + options.timeout_s
        stop = threading.Event()
        work: asyncio.Future | None = None
        locked: asyncio.Lock | None = None  # held by us until a worker thread takes it over
        try:
            async with asyncio.timeout_at(deadline):
                resolved = await self._resolve(model)
                instance = self._instance(resolved)
                await instance.lock.acquire()
                locked = instance.lock
            queue: asyncio.Queue = asyncio.Queue()
            sampling = sampling_for(resolved.preset, options, self.settings)
            work = self._start(loop, instance, resolved, messages, sampling, stop, queue)
            while True:
                item = await _next_item(queue, deadline, model, started)
                yield item
                if isinstance(item, Completion):
                    return
        except TimeoutError:
            raise ProviderTimeoutError(
                f"local:{model} gave no answer within the {options.timeout_s:g} s time limit"
                + ("" if work is not None else " (the model was busy with other calls)")
            ) from None
        finally:
            stop.set()  # a no-op when the worker is done; otherwise it ends at the next token
            if work is None and locked is not None:
                locked.release()  # the worker never started

    async def aclose(self) -> None:
        for stop in list(self._stops):
            stop.set()
        if self._running:
            await asyncio.wait(list(self._running), timeout=30)
        for instance in self._instances.values():
            instance.closed = True
            if instance.lock.locked():  # a worker is still inside llama.cpp: closing now would crash
                log.warning("local model %s still busy at close; leaving it to the garbage collector", instance.path)
                continue
            if instance.llm is not None:
                try:
                    instance.llm.close()
                except Exception:  # pragma: no cover
                    log.debug("closing %s failed", instance.path, exc_info=True)
                instance.llm = None
        self._instances.clear()

    # ------------------------------------------------------------------ plumbing

    async def _resolve(self, model: str) -> LocalModel:
        resolved = self._models.get(model)
        if resolved is None:
            await asyncio.to_thread(import_llama)  # the first question a missing extra should answer
            # Blocking: assembling gemma writes 250 MB once.
            resolved = await asyncio.to_thread(local_models.resolve, model, self.settings)
            self._models[model] = resolved
        return resolved

    def _instance(self, resolved: LocalModel) -> ModelInstance:
        key = resolved.path
        instance = self._instances.get(key)
        if instance is None:
            instance = self._instances[key] = ModelInstance(path=key, chat_format=resolved.chat_format)
        elif instance.chat_format != resolved.chat_format:  # pragma: no cover - one format per file
            raise ProviderConfigError(f"{key} is configured with two chat formats")
        return instance

    def _start(
        self, loop, instance: ModelInstance, resolved: LocalModel, messages, sampling, stop, queue
    ) -> asyncio.Future:
        """Run the call in a worker thread; the instance lock is released when the thread ends."""

        def emit(kind: str, value: Any) -> None:
            try:
                loop.call_soon_threadsafe(queue.put_nowait, (kind, value))
            except RuntimeError:  # the loop is gone: nobody is listening any more
                stop.set()

        def run() -> None:
            with self._generator.busy():
                try:
                    text, usage, finish = self._generator.generate(instance, resolved, messages, sampling, stop, emit)
                    emit("done", (text, usage, finish))
                except Aborted:
                    pass
                except ProviderError as exc:
                    emit("error", exc)
                except Exception as exc:  # a llama.cpp failure costs this call, not the process
                    log.exception("local model %s failed", resolved.name)
                    emit("error", BadResponseError(f"local:{resolved.name} failed: {type(exc).__name__}: {exc}"))

        work = loop.run_in_executor(None, run)  # from here on, the worker owns the lock
        self._stops.add(stop)

        def finished(future: asyncio.Future) -> None:
            self._running.discard(future)
            self._stops.discard(stop)
            instance.lock.release()

        self._running.add(work)
        work.add_done_callback(finished)
        return work


async def _next_item(queue: asyncio.Queue, deadline: float, model: str, started: float) -> StreamItem:
    """The worker's next piece, its Completion, or its error raised."""
    # The deadline covers waiting only: never hold a timeout scope across a yield
    # (it would cancel the consumer wherever it is).
    async with asyncio.timeout_at(deadline):
        kind, value = await queue.get()
    if kind == "delta":
        return TextDelta(value)
    if kind == "done":
        text, usage, finish = value
        return Completion(
            model=model, text=text, usage=usage, finish_reason=finish, latency_s=time.perf_counter() - started
        )
    raise value
