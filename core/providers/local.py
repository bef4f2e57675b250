"""Local GGUF models with llama.cpp, each in a runtime process of its own: a council with no key
and no network, that a crashing model cannot take down.

    LocalProvider(settings)      the router hands it `local:NAME` ids (without the prefix)

* One runtime process (`local_runtime.ModelRuntime`, running `local_worker`) per model file,
  started and loaded on first use, kept loaded, and shared by every preset of that file
  (`smollm2` and `smollm2-creative` are one 100 MB model, two personas). A crash, abort or kill
  of that process fails the call it was serving with one typed line (LocalRuntimeCrash); the
  next call starts a new one. See docs/local-models.md.
* Calls to one model are serialised (the runtime's asyncio.Lock); different files run in
  parallel. Without LOCAL_N_THREADS, each runtime uses half the cores (at least one), so two
  models at once do not oversubscribe a small machine (llama.cpp fixes its threads at load).
* Streaming: the runtime sends each piece as it comes; the stream yields TextDelta items and
  ends with one Completion (token usage, cost 0).
* Timeouts and cancellation: `CallOptions.timeout_s` covers the whole call (waiting for the
  model, loading it, generating). When it expires or the caller goes away, the runtime is
  told to stop: it stops at the next token, or while it reads the prompt at the end of the
  batch of 64 tokens it is on, so a timed-out call frees the CPU within a fraction of a second.
  The model's lock is released only when the runtime has really ended the call.
* Prompts that do not fit `LOCAL_N_CTX`: the oldest conversation turns go first, then the
  middle of the longest message is cut (marked as such); BadResponseError if even that fails.
* Chat templates: the GGUF's embedded template (applied by llama.cpp's engine, e.g. SmolLM2's
  ChatML). A file without one (the bundled Gemma 3 270M is the *base* model, no template) gets
  a plain "Question: ... Answer:" transcript: base models continue a transcript sensibly, and
  babble on turn markers.
* Personas: each bundled name has its own system text and sampling (temperature, top_p,
  top_k, seed); CallOptions.temperature, when set, overrides the preset's temperature.

This module is the asyncio side (resolving, locks, deadlines); the process supervisor is
`local_runtime`, the runtime process `local_worker`, generation inside it `local_generate`,
prompt fitting `local_prompt`, and llama.cpp itself (xllamacpp) `llama_runtime`.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

from core.models import ChatMessage, Completion, Usage
from core.providers import local_models
from core.providers.base import (
    BadResponseError,
    CallOptions,
    ProviderConfigError,
    ProviderTimeoutError,
    StreamItem,
    TextDelta,
)
from core.providers.llama_runtime import MISSING_LLAMA, import_llama
from core.providers.local_generate import sampling_for
from core.providers.local_models import LocalModel
from core.providers.local_prompt import ranking_grammar
from core.providers.local_runtime import LocalRuntimeCrash, ModelRuntime
from core.settings import Settings

__all__ = ["MISSING_LLAMA", "LocalProvider", "LocalRuntimeCrash", "ranking_grammar"]

log = logging.getLogger(__name__)


class LocalProvider:
    """The `local:` provider (see the module docstring). Belongs to one event loop."""

    name = "local"

    def __init__(self, settings: Settings):
        self.settings = settings
        self._runtimes: dict[Path, ModelRuntime] = {}
        self._models: dict[str, LocalModel] = {}
        self._draining: set[asyncio.Task] = set()

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
        started = time.perf_counter()
        deadline = asyncio.get_running_loop().time() + options.timeout_s
        runtime: ModelRuntime | None = None  # set once we hold its lock
        started_call = False
        try:
            async with asyncio.timeout_at(deadline):
                resolved = await self._resolve(model)
                wanted = self._runtime(resolved)
                await wanted.lock.acquire()
                runtime = wanted
                await runtime.ensure_loaded()
            runtime.start(self._request(resolved, messages, options))
            started_call = True
            while True:
                async with asyncio.timeout_at(deadline):  # never held across a yield
                    event = await runtime.next_event()
                if event.kind == "delta":
                    yield TextDelta(event.data["text"])
                    continue
                if event.kind == "done":
                    yield _completion(model, event.data, started)
                return  # an "aborted" the caller did not ask for cannot happen; end quietly
        except TimeoutError:
            raise ProviderTimeoutError(
                f"local:{model} gave no answer within the {options.timeout_s:g} s time limit"
                + ("" if started_call else " (the model was busy with other calls)")
            ) from None
        finally:
            if runtime is not None:
                self._release(runtime, started_call)

    async def aclose(self) -> None:
        if self._draining:
            await asyncio.wait(list(self._draining), timeout=30)
        runtimes = list(self._runtimes.values())
        self._runtimes.clear()
        await asyncio.gather(*(runtime.close() for runtime in runtimes), return_exceptions=True)

    # ------------------------------------------------------------------ plumbing

    async def _resolve(self, model: str) -> LocalModel:
        resolved = self._models.get(model)
        if resolved is None:
            await asyncio.to_thread(import_llama)  # the first question a missing extra should answer
            # Blocking: assembling gemma writes 250 MB once.
            resolved = await asyncio.to_thread(local_models.resolve, model, self.settings)
            self._models[model] = resolved
        return resolved

    def _runtime(self, resolved: LocalModel) -> ModelRuntime:
        key = resolved.path
        runtime = self._runtimes.get(key)
        if runtime is None:
            runtime = self._runtimes[key] = ModelRuntime(key, resolved.chat_format, self.settings)
        elif runtime.chat_format != resolved.chat_format:  # pragma: no cover - one format per file
            raise ProviderConfigError(f"{key} is configured with two chat formats")
        return runtime

    def _request(self, resolved: LocalModel, messages: Sequence[ChatMessage], options: CallOptions) -> dict:
        return {
            "name": resolved.name,
            "preset": dataclasses.asdict(resolved.preset),
            "messages": [{"role": m.role, "content": m.content} for m in messages],
            "sampling": dataclasses.asdict(sampling_for(resolved.preset, options, self.settings)),
        }

    def _release(self, runtime: ModelRuntime, started_call: bool) -> None:
        """Free the model for the next call; a call still running in the runtime (its caller went
        away or timed out) is stopped first, and the lock held until it has ended."""
        if not (started_call and runtime.in_flight):
            runtime.lock.release()
            return

        async def drain() -> None:
            try:
                await runtime.stop_and_drain()
            finally:
                runtime.lock.release()

        task = asyncio.get_running_loop().create_task(drain())
        self._draining.add(task)
        task.add_done_callback(self._draining.discard)


def _completion(model: str, data: dict, started: float) -> Completion:
    return Completion(
        model=model,
        text=data["text"],
        usage=Usage(**data["usage"]),
        finish_reason=data.get("finish"),
        latency_s=time.perf_counter() - started,
    )
