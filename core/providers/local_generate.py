"""Inside the local model runtime (the child process, `local_worker`): loading a model file once,
and generating with it (thread count, empty-answer retry, token usage, stopping between tokens
or mid-decode). Nothing here knows about the event loop or the parent process."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from core.models import ChatMessage, Usage
from core.providers import local_models
from core.providers.base import BadResponseError, CallOptions
from core.providers.llama_runtime import LoadedModel, load_model
from core.providers.local_models import LocalModel, Preset
from core.providers.local_prompt import chat_messages, fit_context, ranking_grammar
from core.settings import Settings


def cpu_count() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


class Aborted(Exception):
    """The caller stopped waiting; the worker ended early."""


@dataclass
class ModelInstance:
    """One model file, shared by all presets of that file (one per runtime process)."""

    path: Path
    chat_format: str | None
    llm: LoadedModel | None = None


# The preset's samplers, passed to llama.cpp's engine as they are.
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


def default_threads(cpus: int, pinned: int | None) -> int:
    """Threads of one runtime process: LOCAL_N_THREADS when set, else half the cores (at least
    one). llama.cpp's engine fixes its threads when it loads a model, and a council runs a few
    models at once: on two cores two runtimes of one thread each answer side by side, where two
    threads each would spin waiting for each other (measured here: 1 token/s against 11)."""
    if pinned:
        return pinned
    return max(1, cpus // 2)


class LocalGenerator:
    """Loads one model file and runs calls on it, one at a time (the runtime's parent serialises
    them)."""

    def __init__(self, n_ctx: int, n_threads: int):
        self.n_ctx = n_ctx
        self.n_threads = n_threads

    def load(self, instance: ModelInstance) -> LoadedModel:
        if instance.llm is None:
            plain = True if instance.chat_format == local_models.PLAIN_FORMAT else None
            instance.llm = load_model(instance.path, self.n_ctx, self.n_threads, plain)
        return instance.llm

    def generate(
        self,
        instance: ModelInstance,
        resolved: LocalModel,
        messages: Sequence[ChatMessage],
        sampling: Sampling,
        stop: threading.Event,
        emit: Callable[[str, Any], None],
    ) -> tuple[str, Usage, str | None]:
        llm = self.load(instance)
        if stop.is_set():
            raise Aborted()
        chat = chat_messages(resolved, messages)
        chat, max_tokens = fit_context(llm, chat, sampling.max_tokens, llm.n_ctx, resolved.name)
        reply = _stream(llm, chat, sampling, max_tokens, stop, emit)
        if not reply.text.strip() and not reply.emitted and not stop.is_set():
            # Tiny models sometimes end at once; one retry with another seed usually answers.
            retry = replace(sampling, seed=(sampling.seed or 0) + 1, temperature=max(sampling.temperature, 0.7))
            reply = _stream(llm, chat, retry, max_tokens, stop, emit)
        if stop.is_set():
            raise Aborted()
        if not reply.text.strip():
            raise BadResponseError(f"local:{resolved.name} returned an empty answer")
        return reply.text, reply.usage, reply.finish


@dataclass
class _Reply:
    text: str
    finish: str | None
    emitted: bool
    usage: Usage


def _stream(
    llm: LoadedModel,
    chat: list[dict[str, str]],
    sampling: Sampling,
    max_tokens: int,
    stop: threading.Event,
    emit: Callable[[str, Any], None],
) -> _Reply:
    """One streamed call with the preset's sampling (and grammar); stops between tokens once
    `stop` is set."""
    parts: list[str] = []
    state: dict[str, Any] = {"finish": None, "usage": None, "error": None}

    def on_chunk(chunk: dict[str, Any]) -> bool:
        if "error" in chunk:
            state["error"] = chunk["error"]
            return True
        choice = (chunk.get("choices") or [{}])[0]
        piece = (choice.get("delta") or {}).get("content") or choice.get("text")
        if piece and not parts:
            piece = piece.lstrip()  # "Answer: ..." transcripts and templates lead with blanks
        if piece:
            parts.append(piece)
            emit("delta", piece)
        state["finish"] = choice.get("finish_reason") or state["finish"]
        state["usage"] = chunk.get("usage") or _timings_usage(chunk) or state["usage"]
        return stop.is_set()

    llm.stream(_request(chat, sampling, max_tokens), on_chunk)
    if state["error"] is not None:
        _raise(state["error"], llm.n_ctx)
    usage = state["usage"] or {}
    return _Reply(
        text="".join(parts),
        finish=state["finish"],
        emitted=bool(parts),
        usage=Usage(
            prompt_tokens=int(usage.get("prompt_tokens", 0)),
            completion_tokens=int(usage.get("completion_tokens", 0)),
            cost_usd=0.0,
        ),
    )


def _timings_usage(chunk: dict[str, Any]) -> dict[str, int] | None:
    """The token counts of a final chunk that carries llama.cpp's timings but no usage."""
    timings = chunk.get("timings")
    if not timings:
        return None
    prompt = int(timings.get("prompt_n", 0)) + int(timings.get("cache_n", 0))
    return {"prompt_tokens": prompt, "completion_tokens": int(timings.get("predicted_n", 0))}


def _request(chat: list[dict[str, str]], sampling: Sampling, max_tokens: int) -> dict[str, Any]:
    request: dict[str, Any] = {
        "messages": chat,
        "max_tokens": max_tokens,
        "temperature": sampling.temperature,
        "stream_options": {"include_usage": True},
        **{name: getattr(sampling, name) for name in _SAMPLERS if getattr(sampling, name) is not None},
    }
    if sampling.grammar:
        request["grammar"] = sampling.grammar
    return request


def _raise(error: dict[str, Any], n_ctx: int) -> None:
    message = str(error.get("message") or error)
    if error.get("type") == "exceed_context_size_error":
        raise BadResponseError(
            f"the prompt is too long for the local model's context window (LOCAL_N_CTX={n_ctx}): {message}"
        )
    raise RuntimeError(message)
