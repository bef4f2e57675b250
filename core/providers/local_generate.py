"""The worker-thread side of the local provider: loading a model file once, and generating
with it (thread count, empty-answer retry, token usage, stopping between tokens or mid-decode)."""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from core.models import ChatMessage, Usage
from core.providers import local_models
from core.providers.base import BadResponseError, CallOptions, ProviderConfigError
from core.providers.llama_runtime import (
    ACTIVE_STOPS,
    compiled_grammar,
    import_llama,
    install_abort_callback,
    plain_chat_handler,
)
from core.providers.local_models import LocalModel, Preset
from core.providers.local_prompt import chat_messages, fit_context, ranking_grammar
from core.settings import Settings

# One model loads at a time in the process: llama.cpp's first-use initialisation and
# llama-cpp-python's stdout/stderr redirection while loading are not safe from two threads at
# once (a fresh demo crashed with SIGSEGV while two bundled models loaded together).
_LOADING = threading.Lock()


def _cpu_count() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


class Aborted(Exception):
    """The caller stopped waiting; the worker ended early."""


@dataclass
class ModelInstance:
    """One loaded model file, shared by all presets of that file."""

    path: Path
    chat_format: str | None
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)  # one call at a time
    load_lock: threading.Lock = field(default_factory=threading.Lock)
    llm: Any = None
    stop: threading.Event | None = None  # the running call's stop flag (read by the abort callback)
    abort_cb: Any = None
    closed: bool = False


# The preset's samplers, passed to llama-cpp-python as they are.
_SAMPLERS = ("top_p", "top_k", "min_p", "repeat_penalty", "seed")


@dataclass(frozen=True)
class Sampling:
    max_tokens: int
    temperature: float
    top_p: float
    top_k: int
    min_p: float
    repeat_penalty: float
    seed: int | None
    grammar: str | None = None  # GBNF the output must follow


def sampling_for(preset: Preset, options: CallOptions, settings: Settings) -> Sampling:
    """The preset's sampling; the call's max_tokens (capped by LOCAL_MAX_TOKENS) and temperature win,
    and a review gets the grammar of its ranking."""
    limit = settings.local.max_tokens
    max_tokens = min(options.max_tokens, limit) if options.max_tokens else limit
    temperature = options.temperature if options.temperature is not None else preset.temperature
    grammar = ranking_grammar(options.ranking_labels) if options.ranking_labels else None
    samplers = {name: getattr(preset, name) for name in _SAMPLERS}
    return Sampling(max_tokens=max(1, max_tokens), temperature=temperature, grammar=grammar, **samplers)


class LocalGenerator:
    """Runs calls on loaded models, in worker threads; counts the calls running right now so
    that, without LOCAL_N_THREADS, concurrent models share the CPUs instead of oversubscribing."""

    def __init__(self, settings: Settings):
        self.settings = settings
        self._cpus = _cpu_count()
        self._busy = 0
        self._busy_lock = threading.Lock()

    @contextmanager
    def busy(self) -> Iterator[None]:
        """Held by a worker thread for as long as its call runs."""
        with self._busy_lock:
            self._busy += 1
        try:
            yield
        finally:
            with self._busy_lock:
                self._busy -= 1

    def _load(self, instance: ModelInstance):
        with instance.load_lock:
            if instance.llm is not None:
                return instance.llm
            if instance.closed:
                raise ProviderConfigError("the local provider is closed")
            llama_cpp = import_llama()
            threads = self.settings.local.n_threads or self._cpus
            try:
                with _LOADING:
                    llm = llama_cpp.Llama(
                        model_path=str(instance.path),
                        n_ctx=self.settings.local.n_ctx,
                        n_threads=threads,
                        n_threads_batch=threads,
                        verbose=False,
                    )
            except (ValueError, RuntimeError, OSError) as exc:
                raise ProviderConfigError(f"cannot load the local model file {instance.path}: {exc}") from exc
            if instance.chat_format == local_models.PLAIN_FORMAT or (
                instance.chat_format is None and "tokenizer.chat_template" not in (llm.metadata or {})
            ):
                llm.chat_handler = plain_chat_handler(llama_cpp)
            instance.abort_cb = install_abort_callback(
                llama_cpp, llm, lambda: instance.stop is not None and instance.stop.is_set()
            )
            instance.llm = llm
            return llm

    def _threads_now(self) -> int:
        if self.settings.local.n_threads:
            return self.settings.local.n_threads
        with self._busy_lock:
            busy = max(1, self._busy)
        return max(1, self._cpus // busy)

    def generate(
        self,
        instance: ModelInstance,
        resolved: LocalModel,
        messages: Sequence[ChatMessage],
        sampling: Sampling,
        stop: threading.Event,
        emit: Callable[[str, Any], None],
    ):
        llm = self._load(instance)
        if stop.is_set():
            raise Aborted()
        llama_cpp = import_llama()
        threads = self._threads_now()
        try:
            llama_cpp.llama_set_n_threads(llm.ctx, threads, threads)
        except Exception:  # pragma: no cover - older bindings
            pass
        chat = chat_messages(resolved, messages)
        chat, max_tokens = fit_context(llm, chat, sampling.max_tokens, llm.n_ctx(), resolved.name)
        instance.stop = stop
        ACTIVE_STOPS.add(stop)
        try:
            text, finish, emitted = self._run_stream(llm, chat, sampling, max_tokens, stop, emit)
            if not text.strip() and not emitted and not stop.is_set():
                # Tiny models sometimes end at once; one retry with another seed usually answers.
                retry = replace(sampling, seed=(sampling.seed or 0) + 1, temperature=max(sampling.temperature, 0.7))
                text, finish, emitted = self._run_stream(llm, chat, retry, max_tokens, stop, emit)
        except Aborted:
            llm.reset()
            raise
        finally:
            instance.stop = None
            ACTIVE_STOPS.discard(stop)
        if stop.is_set():
            raise Aborted()
        completion_tokens = len(llm.tokenize(text.encode("utf-8"), add_bos=False, special=True)) if text else 0
        prompt_tokens = max(0, llm.n_tokens - completion_tokens + (1 if finish == "length" else 0))
        if not text.strip():
            raise BadResponseError(f"local:{resolved.name} returned an empty answer")
        return text, Usage(prompt_tokens=prompt_tokens, completion_tokens=completion_tokens, cost_usd=0.0), finish

    def _run_stream(self, llm, chat, sampling: Sampling, max_tokens: int, stop, emit):
        parts: list[str] = []
        finish = None
        emitted = False
        try:
            chunks = _chat_chunks(llm, chat, sampling, max_tokens)
            try:
                for chunk in chunks:
                    if stop.is_set():
                        raise Aborted()
                    choice = chunk["choices"][0]
                    piece = (choice.get("delta") or {}).get("content")
                    if piece and not emitted:
                        piece = piece.lstrip()  # "Answer: ..." transcripts and templates lead with blanks
                    if piece:
                        parts.append(piece)
                        emitted = True
                        emit("delta", piece)
                    if choice.get("finish_reason"):
                        finish = choice["finish_reason"]
            finally:
                chunks.close()
        except Aborted:
            raise
        except ValueError as exc:
            if "context window" in str(exc):
                raise BadResponseError(
                    f"the prompt is too long for the local model's context window (LOCAL_N_CTX={llm.n_ctx()}): {exc}"
                ) from exc
            raise
        except RuntimeError:
            if stop.is_set():  # llama_decode returned 2: our abort callback ended the decode
                raise Aborted() from None
            raise
        return "".join(parts), finish, emitted


def _chat_chunks(llm, chat, sampling: Sampling, max_tokens: int):
    """llama-cpp-python's streamed chat completion with the preset's sampling (and grammar)."""
    grammar = compiled_grammar(sampling.grammar) if sampling.grammar else None
    return llm.create_chat_completion(
        messages=chat,
        stream=True,
        max_tokens=max_tokens,
        temperature=sampling.temperature,
        grammar=grammar,
        **{name: getattr(sampling, name) for name in _SAMPLERS},
    )
