"""llama-cpp-python inside this process: importing it quietly (its log lines go to Python
logging, its stdout/stderr redirection is disabled), grammars, the abort callback that ends a
running decode, and the plain transcript for models without a chat template."""

from __future__ import annotations

import ctypes
import functools
import logging
import threading
from collections.abc import Callable

from core.providers.base import ProviderConfigError

log = logging.getLogger("core.providers.local")
_native_log = logging.getLogger("llama_cpp.native")

MISSING_LLAMA = "Local models need the [local] extra: pip install -e '.[local]'"


def import_llama():
    try:
        import llama_cpp
    except ImportError as exc:
        raise ProviderConfigError(MISSING_LLAMA) from exc
    except OSError as exc:  # the shared library is there but cannot be loaded
        raise ProviderConfigError(f"llama-cpp-python is installed but cannot load its library: {exc}") from exc
    _quiet_native_logs(llama_cpp)
    _no_fd_redirects(llama_cpp)
    _bounded_tokenize(llama_cpp)
    return llama_cpp


def _bounded_tokenize(llama_cpp) -> None:
    """Size llama-cpp-python's tokenizer buffer by the text instead of the model's training context.

    `LlamaModel.tokenize` allocates (and zero-fills) a ctypes array of `n_ctx_train` tokens on
    every call, whatever LOCAL_N_CTX says: a GGUF claiming `context_length` = 2**31 - 1 cost
    8.5 GB and over a minute per prompt (4 bytes x 2**31, several times per call). A text of
    n bytes never makes more than n + 2 tokens (one per byte, plus BOS/EOS), and llama_tokenize
    says how many it needs when the buffer is short anyway.
    """
    internals = llama_cpp._internals
    model_class = getattr(internals, "LlamaModel", None)
    if model_class is None or getattr(model_class.tokenize, "_bounded", False):
        return
    bindings = llama_cpp.llama_cpp

    def tokenize(self, text: bytes, add_bos: bool, special: bool) -> list[int]:
        size = len(text) + 8
        for _attempt in range(2):
            tokens = (bindings.llama_token * size)()
            count = bindings.llama_tokenize(self.vocab, text, len(text), tokens, size, add_bos, special)
            if count >= 0:
                return list(tokens[:count])
            size = -count
        raise RuntimeError(f"Failed to tokenize {len(text)} bytes: llama_tokenize returned {count}")

    tokenize._bounded = True  # type: ignore[attr-defined]
    model_class.tokenize = tokenize


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
ACTIVE_STOPS: set[threading.Event] = set()  # stop flags of the calls running in worker threads


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
                loud = level == 4 and not any(stop.is_set() for stop in list(ACTIVE_STOPS))
                _native_log.log(logging.WARNING if loud else logging.DEBUG, "%s", line)

        llama_cpp.llama_log_set(callback, ctypes.c_void_p(0))
        _log_callback = callback
    except Exception:  # pragma: no cover - logging is a nicety
        log.debug("could not redirect llama.cpp logs", exc_info=True)


@functools.lru_cache(maxsize=64)
def compiled_grammar(text: str):
    return import_llama().LlamaGrammar.from_string(text, verbose=False)


def install_abort_callback(llama_cpp, llm, should_abort: Callable[[], bool]):
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


def plain_chat_handler(llama_cpp):
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
