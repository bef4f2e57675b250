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
"""

from __future__ import annotations

import asyncio
import ctypes
import functools
import itertools
import logging
import os
import threading
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from core.models import ChatMessage, Completion, Usage
from core.prompts import RANKING_HEADER
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
from core.providers.local_models import LocalModel, Preset
from core.settings import Settings

log = logging.getLogger(__name__)
_native_log = logging.getLogger("llama_cpp.native")

MISSING_LLAMA = "Local models need the [local] extra: pip install -e '.[local]'"
_MESSAGE_OVERHEAD = 8  # template tokens around one message (role markers, separators)
_MIN_OUTPUT_TOKENS = 256  # output room kept before the prompt itself is cut
_MIN_KEEP_TOKENS = 64  # a message is never cut below this
_CUT_MARK = "\n\n[... part of this text was cut: too long for the local model's context window ...]\n\n"


def _import_llama():
    try:
        import llama_cpp
    except ImportError as exc:
        raise ProviderConfigError(MISSING_LLAMA) from exc
    except OSError as exc:  # the shared library is there but cannot be loaded
        raise ProviderConfigError(f"llama-cpp-python is installed but cannot load its library: {exc}") from exc
    _quiet_native_logs(llama_cpp)
    _no_fd_redirects(llama_cpp)
    return llama_cpp


# One model loads at a time in the process: llama.cpp's first-use initialisation and
# llama-cpp-python's stdout/stderr redirection while loading are not safe from two threads at
# once (a fresh demo crashed with SIGSEGV while two bundled models loaded together).
_LOADING = threading.Lock()


class _NoRedirect:
    """Stands in for llama_cpp's `suppress_stdout_stderr` (see `_no_fd_redirects`)."""

    def __init__(self, disable: bool = True):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *_exc):
        return None


def _no_fd_redirects(llama_cpp) -> None:
    """Stop llama-cpp-python from dup2()-ing fds 1 and 2 to /dev/null while it loads a model.

    With verbose=False it silences loading by redirecting the *process's* stdout/stderr (file
    descriptors and sys.stdout/sys.stderr). Done from a worker thread that swallows whatever the
    application prints meanwhile, and two loads that overlap restore each other's /dev/null, so
    stdout stays silenced for good (seen here: the CLI went mute mid-council). llama.cpp's log
    lines already go to Python logging through `_quiet_native_logs`, so nothing needs silencing.
    """
    import llama_cpp._internals as internals
    import llama_cpp.llama as llama_module

    for module in (llama_module, internals):
        if getattr(module, "suppress_stdout_stderr", None) is not _NoRedirect:
            setattr(module, "suppress_stdout_stderr", _NoRedirect)  # noqa: B010 - _internals declares no such name


_log_callback = None  # keeps the ctypes callback alive
_ACTIVE_STOPS: set[threading.Event] = set()  # stop flags of the calls running in worker threads


def _quiet_native_logs(llama_cpp) -> None:
    """Send llama.cpp's own log lines to Python logging (debug) instead of stderr."""
    global _log_callback
    if _log_callback is not None:
        return
    try:
        import llama_cpp._logger

        @llama_cpp.llama_log_callback
        def callback(level: int, text: bytes, _user_data) -> None:
            try:
                line = text.decode("utf-8", "replace").rstrip()
            except Exception:  # pragma: no cover - never raise into C
                return
            if line:  # ggml levels: 1 debug, 2 info, 3 warn, 4 error, 5 continuation
                # An aborted decode (a stopped call) logs errors that are expected: keep them quiet.
                loud = level == 4 and not any(stop.is_set() for stop in list(_ACTIVE_STOPS))
                _native_log.log(logging.WARNING if loud else logging.DEBUG, "%s", line)

        llama_cpp.llama_log_set(callback, ctypes.c_void_p(0))
        _log_callback = callback
    except Exception:  # pragma: no cover - logging is a nicety
        log.debug("could not redirect llama.cpp logs", exc_info=True)


def _cpu_count() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


class _Aborted(Exception):
    """The caller stopped waiting; the worker ended early."""


@dataclass
class _Instance:
    """One loaded model file, shared by all presets of that file."""

    path: Path
    chat_format: str | None
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)  # one call at a time
    load_lock: threading.Lock = field(default_factory=threading.Lock)
    llm: Any = None
    stop: threading.Event | None = None  # the running call's stop flag (read by the abort callback)
    abort_cb: Any = None
    closed: bool = False


@dataclass(frozen=True)
class _Sampling:
    max_tokens: int
    temperature: float
    top_p: float
    top_k: int
    min_p: float
    repeat_penalty: float
    seed: int | None
    grammar: str | None = None  # GBNF the output must follow


class LocalProvider:
    """The `local:` provider (see the module docstring). Belongs to one event loop."""

    name = "local"

    def __init__(self, settings: Settings):
        self.settings = settings
        self._instances: dict[Path, _Instance] = {}
        self._models: dict[str, LocalModel] = {}
        self._cpus = _cpu_count()
        self._busy = 0
        self._busy_lock = threading.Lock()
        self._running: set[asyncio.Future] = set()
        self._stops: set[threading.Event] = set()

    # ------------------------------------------------------------------ protocol

    async def list_models(self) -> list[str]:
        """Bundled names whose package is installed (paths to .gguf files work as well)."""
        return local_models.available_names()

    def context_window(self, model: str) -> int | None:
        return self.settings.local_n_ctx  # every local model is loaded with this window

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
            sampling = self._sampling(resolved.preset, options)
            work = self._start(loop, instance, resolved, messages, sampling, stop, queue)
            while True:
                # The deadline covers waiting only: never hold a timeout scope across a yield
                # (it would cancel the consumer wherever it is).
                async with asyncio.timeout_at(deadline):
                    kind, value = await queue.get()
                if kind == "delta":
                    yield TextDelta(value)
                elif kind == "done":
                    text, usage, finish = value
                    yield Completion(
                        model=model,
                        text=text,
                        usage=usage,
                        finish_reason=finish,
                        latency_s=time.perf_counter() - started,
                    )
                    return
                else:
                    raise value
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
            await asyncio.to_thread(_import_llama)  # the first question a missing extra should answer
            # Blocking: assembling gemma writes 250 MB once.
            resolved = await asyncio.to_thread(local_models.resolve, model, self.settings)
            self._models[model] = resolved
        return resolved

    def _instance(self, resolved: LocalModel) -> _Instance:
        key = resolved.path
        instance = self._instances.get(key)
        if instance is None:
            instance = self._instances[key] = _Instance(path=key, chat_format=resolved.chat_format)
        elif instance.chat_format != resolved.chat_format:  # pragma: no cover - one format per file
            raise ProviderConfigError(f"{key} is configured with two chat formats")
        return instance

    def _sampling(self, preset: Preset, options: CallOptions) -> _Sampling:
        limit = self.settings.local_max_tokens
        max_tokens = min(options.max_tokens, limit) if options.max_tokens else limit
        temperature = options.temperature if options.temperature is not None else preset.temperature
        grammar = ranking_grammar(options.ranking_labels) if options.ranking_labels else None
        return _Sampling(
            max_tokens=max(1, max_tokens),
            temperature=temperature,
            top_p=preset.top_p,
            top_k=preset.top_k,
            min_p=preset.min_p,
            repeat_penalty=preset.repeat_penalty,
            seed=preset.seed,
            grammar=grammar,
        )

    def _start(
        self, loop, instance: _Instance, resolved: LocalModel, messages, sampling, stop, queue
    ) -> asyncio.Future:
        """Run the call in a worker thread; the instance lock is released when the thread ends."""

        def emit(kind: str, value: Any) -> None:
            try:
                loop.call_soon_threadsafe(queue.put_nowait, (kind, value))
            except RuntimeError:  # the loop is gone: nobody is listening any more
                stop.set()

        def run() -> None:
            with self._busy_lock:
                self._busy += 1
            try:
                text, usage, finish = self._generate(instance, resolved, messages, sampling, stop, emit)
                emit("done", (text, usage, finish))
            except _Aborted:
                pass
            except ProviderError as exc:
                emit("error", exc)
            except Exception as exc:  # a llama.cpp failure costs this call, not the process
                log.exception("local model %s failed", resolved.name)
                emit("error", BadResponseError(f"local:{resolved.name} failed: {type(exc).__name__}: {exc}"))
            finally:
                with self._busy_lock:
                    self._busy -= 1

        work = loop.run_in_executor(None, run)  # from here on, the worker owns the lock
        self._stops.add(stop)

        def finished(future: asyncio.Future) -> None:
            self._running.discard(future)
            self._stops.discard(stop)
            instance.lock.release()

        self._running.add(work)
        work.add_done_callback(finished)
        return work

    # ------------------------------------------------------------------ worker thread

    def _load(self, instance: _Instance):
        with instance.load_lock:
            if instance.llm is not None:
                return instance.llm
            if instance.closed:
                raise ProviderConfigError("the local provider is closed")
            llama_cpp = _import_llama()
            threads = self.settings.local_n_threads or self._cpus
            try:
                with _LOADING:
                    llm = llama_cpp.Llama(
                        model_path=str(instance.path),
                        n_ctx=self.settings.local_n_ctx,
                        n_threads=threads,
                        n_threads_batch=threads,
                        verbose=False,
                    )
            except (ValueError, RuntimeError, OSError) as exc:
                raise ProviderConfigError(f"cannot load the local model file {instance.path}: {exc}") from exc
            if instance.chat_format == local_models.PLAIN_FORMAT or (
                instance.chat_format is None and "tokenizer.chat_template" not in (llm.metadata or {})
            ):
                llm.chat_handler = _plain_chat_handler(llama_cpp)
            instance.abort_cb = _install_abort_callback(
                llama_cpp, llm, lambda: instance.stop is not None and instance.stop.is_set()
            )
            instance.llm = llm
            return llm

    def _threads_now(self) -> int:
        if self.settings.local_n_threads:
            return self.settings.local_n_threads
        with self._busy_lock:
            busy = max(1, self._busy)
        return max(1, self._cpus // busy)

    def _generate(
        self,
        instance: _Instance,
        resolved: LocalModel,
        messages: Sequence[ChatMessage],
        sampling: _Sampling,
        stop: threading.Event,
        emit: Callable[[str, Any], None],
    ):
        llm = self._load(instance)
        if stop.is_set():
            raise _Aborted()
        llama_cpp = _import_llama()
        threads = self._threads_now()
        try:
            llama_cpp.llama_set_n_threads(llm.ctx, threads, threads)
        except Exception:  # pragma: no cover - older bindings
            pass
        chat = _chat_messages(resolved, messages)
        chat, max_tokens = _fit(llm, chat, sampling.max_tokens, llm.n_ctx(), resolved.name)
        instance.stop = stop
        _ACTIVE_STOPS.add(stop)
        try:
            text, finish, emitted = self._run_stream(llm, chat, sampling, max_tokens, stop, emit)
            if not text.strip() and not emitted and not stop.is_set():
                # Tiny models sometimes end at once; one retry with another seed usually answers.
                retry = replace(sampling, seed=(sampling.seed or 0) + 1, temperature=max(sampling.temperature, 0.7))
                text, finish, emitted = self._run_stream(llm, chat, retry, max_tokens, stop, emit)
        except _Aborted:
            llm.reset()
            raise
        finally:
            instance.stop = None
            _ACTIVE_STOPS.discard(stop)
        if stop.is_set():
            raise _Aborted()
        completion_tokens = len(llm.tokenize(text.encode("utf-8"), add_bos=False, special=True)) if text else 0
        prompt_tokens = max(0, llm.n_tokens - completion_tokens + (1 if finish == "length" else 0))
        if not text.strip():
            raise BadResponseError(f"local:{resolved.name} returned an empty answer")
        return text, Usage(prompt_tokens=prompt_tokens, completion_tokens=completion_tokens, cost_usd=0.0), finish

    def _run_stream(self, llm, chat, sampling: _Sampling, max_tokens: int, stop, emit):
        parts: list[str] = []
        finish = None
        emitted = False
        try:
            grammar = _compiled_grammar(sampling.grammar) if sampling.grammar else None
            chunks = llm.create_chat_completion(
                messages=chat,
                stream=True,
                max_tokens=max_tokens,
                temperature=sampling.temperature,
                top_p=sampling.top_p,
                top_k=sampling.top_k,
                min_p=sampling.min_p,
                repeat_penalty=sampling.repeat_penalty,
                seed=sampling.seed,
                grammar=grammar,
            )
            try:
                for chunk in chunks:
                    if stop.is_set():
                        raise _Aborted()
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
        except _Aborted:
            raise
        except ValueError as exc:
            if "context window" in str(exc):
                raise BadResponseError(
                    f"the prompt is too long for the local model's context window (LOCAL_N_CTX={llm.n_ctx()}): {exc}"
                ) from exc
            raise
        except RuntimeError:
            if stop.is_set():  # llama_decode returned 2: our abort callback ended the decode
                raise _Aborted() from None
            raise
        return "".join(parts), finish, emitted


# A review's evaluation before its ranking, in characters: long enough to say something, short
# enough that the ranking fits in LOCAL_MAX_TOKENS.
_REVIEW_NOTE_CHARS = (20, 600)
_PERMUTATIONS_UP_TO = 5  # labels; beyond, each place is any label (the parser drops repeats)


@functools.lru_cache(maxsize=64)
def ranking_grammar(labels: tuple[str, ...]) -> str:
    """GBNF for a review: a short evaluation, then FINAL RANKING with every label once.

    Tiny models rarely end with a readable ranking on their own; the grammar fixes the format
    and leaves the judgement (which label goes where) to the model."""
    low, high = _REVIEW_NOTE_CHARS
    quoted = [f'"{label}"' for label in labels]
    if len(labels) <= _PERMUTATIONS_UP_TO:
        orders = itertools.permutations(quoted)
        items = " | ".join(
            " ".join(f'"{n}. Response " {label} "\\n"' for n, label in enumerate(order, 1)) for order in orders
        )
    else:
        any_label = "(" + " | ".join(quoted) + ")"
        items = " ".join(f'"{n}. Response " {any_label} "\\n"' for n in range(1, len(labels) + 1))
    return (
        f'root ::= note "\\n\\n{RANKING_HEADER}\\n" ranking\nnote ::= [^\\n<>]{{{low},{high}}}\nranking ::= {items}\n'
    )


@functools.lru_cache(maxsize=64)
def _compiled_grammar(text: str):
    return _import_llama().LlamaGrammar.from_string(text, verbose=False)


def _install_abort_callback(llama_cpp, llm, should_abort: Callable[[], bool]):
    """Let llama.cpp end a running decode (prompt evaluation included) when the call is stopped."""
    try:
        lib = llama_cpp.llama_cpp._lib
        setter = lib.llama_set_abort_callback
        setter.argtypes = [ctypes.c_void_p, llama_cpp.llama_cpp.ggml_abort_callback, ctypes.c_void_p]
        setter.restype = None

        @llama_cpp.llama_cpp.ggml_abort_callback
        def callback(_data) -> bool:
            try:
                return bool(should_abort())
            except Exception:  # pragma: no cover - never raise into C
                return False

        setter(llm.ctx, callback, None)
        return callback
    except Exception:  # pragma: no cover - bindings without the symbol: stop between tokens only
        log.debug("llama_set_abort_callback unavailable", exc_info=True)
        return None


# --------------------------------------------------------------------------- prompts


def _plain_chat_handler(llama_cpp):
    """A "Question: ... Answer:" transcript for base models that have no chat template."""
    formats = llama_cpp.llama_chat_format

    def formatter(messages, **_kwargs):
        system = "\n\n".join(m["content"].strip() for m in messages if m["role"] == "system" and m["content"])
        parts = [system] if system else []
        for message in messages:
            if message["role"] == "user":
                parts.append(f"Question: {message['content'].strip()}")
            elif message["role"] == "assistant":
                parts.append(f"Answer: {message['content'].strip()}")
        prompt = "\n\n".join(parts) + "\n\nAnswer:"
        return formats.ChatFormatterResponse(prompt=prompt, stop=["\nQuestion:", "<end_of_turn>"])

    return formats.chat_formatter_to_chat_completion_handler(formatter)


def _chat_messages(resolved: LocalModel, messages: Sequence[ChatMessage]) -> list[dict[str, str]]:
    """The preset's persona goes first in the system text."""
    system_parts = [resolved.preset.persona] if resolved.preset.persona else []
    system_parts += [m.content for m in messages if m.role == "system"]
    turns = [{"role": m.role, "content": m.content} for m in messages if m.role != "system"]
    system = "\n\n".join(part.strip() for part in system_parts if part.strip())
    if not turns:
        turns = [{"role": "user", "content": system or "Hello."}]
        system = ""
    if not system:
        return turns
    return [{"role": "system", "content": system}, *turns]


def _fit(llm, chat: list[dict[str, str]], max_tokens: int, n_ctx: int, name: str) -> tuple[list[dict[str, str]], int]:
    """Make prompt + output fit n_ctx: shrink the output budget to a floor, then the prompt."""

    def tokens(text: str) -> list[int]:
        return llm.tokenize(text.encode("utf-8"), add_bos=False, special=False)

    sizes = [len(tokens(m["content"])) + _MESSAGE_OVERHEAD for m in chat]
    total = sum(sizes) + _MESSAGE_OVERHEAD  # BOS + generation prompt
    if total + max_tokens <= n_ctx:
        return chat, max_tokens
    floor = min(max_tokens, _MIN_OUTPUT_TOKENS)
    if total + floor <= n_ctx:
        return chat, n_ctx - total
    max_tokens = floor
    budget = n_ctx - max_tokens
    chat = list(chat)
    # 1. Drop the oldest conversation turns (keep system text and the last message).
    while total > budget:
        droppable = [i for i, m in enumerate(chat[:-1]) if m["role"] != "system"]
        if not droppable:
            break
        i = droppable[0]
        total -= sizes[i]
        del chat[i], sizes[i]
    # 2. Cut the middle of the longest message, keeping its start and end. Re-tokenising the
    #    cut text can cost a few tokens more than counted, so retry with a growing margin.
    originals: dict[int, list[int]] = {}  # message index -> its tokens before any cut
    kept: dict[int, int] = {}  # message index -> tokens of the original kept so far
    mark = len(tokens(_CUT_MARK))
    slack = 8
    for _attempt in range(8):
        if total <= budget:
            break
        i = max(range(len(chat)), key=lambda k: sizes[k])
        toks = originals.setdefault(i, tokens(chat[i]["content"]))
        keep = kept.get(i, len(toks)) - (total - budget) - (0 if i in kept else mark) - slack
        if keep < _MIN_KEEP_TOKENS:
            break
        kept[i] = keep
        head, tail = toks[: keep // 2], toks[len(toks) - (keep - keep // 2) :]
        content = _detok(llm, head) + _CUT_MARK + _detok(llm, tail)
        chat[i] = {"role": chat[i]["role"], "content": content}
        new_size = len(tokens(content)) + _MESSAGE_OVERHEAD
        total += new_size - sizes[i]
        sizes[i] = new_size
        slack *= 2
    if total > budget:
        raise BadResponseError(
            f"the prompt is too long for local:{name} (about {total} tokens, context window "
            f"{n_ctx} with {max_tokens} kept for the answer); raise LOCAL_N_CTX or shorten the question"
        )
    return chat, max_tokens


def _detok(llm, toks: list[int]) -> str:
    return llm.detokenize(toks).decode("utf-8", "ignore")
