"""llama.cpp inside the runtime process, through xllamacpp: prebuilt wheels of llama.cpp's own
server engine, so a first install downloads 34 MB instead of compiling llama.cpp for ten minutes
(pip still builds xllamacpp from source where no wheel fits the machine).

Here: importing it, starting its engine on one model file (loopback only, behind a key of this
process's own), the tokenizer the prompt fitting needs (the engine's /tokenize and /detokenize,
which its Python API does not expose), and the plain transcript for models without a chat
template."""

from __future__ import annotations

import json
import secrets
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.providers.base import ProviderConfigError
from core.providers.gguf_info import GGUFError, read_metadata

MISSING_LLAMA = "Local models need the [local] extra: pip install -e '.[local]'"
PLAIN_STOPS = ["\nQuestion:", "<end_of_turn>"]
_TOKENIZER_TIMEOUT_S = 30.0
# Prompt evaluation runs in batches of this many tokens, and the engine reports its progress
# after each one: a call stopped while its prompt is being read ends at the next batch
# (a fraction of a second for the bundled models) instead of after the whole prompt.
PROMPT_BATCH = 64


def import_llama():
    try:
        import xllamacpp
    except ImportError as exc:
        raise ProviderConfigError(MISSING_LLAMA) from exc
    except OSError as exc:  # the extension is there but its library cannot be loaded
        raise ProviderConfigError(f"xllamacpp is installed but cannot load its library: {exc}") from exc
    return xllamacpp


def has_chat_template(path: Path) -> bool:
    """Whether the GGUF file embeds a chat template (base models usually do not)."""
    try:
        return "tokenizer.chat_template" in read_metadata(path)
    except (GGUFError, OSError) as exc:
        raise ProviderConfigError(f"cannot load the local model file {path.name}: {exc}") from exc


def plain_prompt(messages: Sequence[dict[str, str]]) -> str:
    """A "Question: ... Answer:" transcript for base models that have no chat template: they
    continue a transcript sensibly, and babble on turn markers."""
    system = "\n\n".join(m["content"].strip() for m in messages if m["role"] == "system" and m["content"])
    parts = [system] if system else []
    for message in messages:
        if message["role"] == "user":
            parts.append(f"Question: {message['content'].strip()}")
        elif message["role"] == "assistant":
            parts.append(f"Answer: {message['content'].strip()}")
    return "\n\n".join(parts) + "\n\nAnswer:"


@dataclass
class LoadedModel:
    """One model file loaded in llama.cpp's engine, with the means to call it."""

    engine: Any  # xllamacpp.Server
    n_ctx: int
    chat_template: bool
    _key: str

    def stream(self, request: dict[str, Any], on_chunk: Callable[[dict[str, Any]], bool]) -> None:
        """Run one streamed call; `on_chunk` returns True to stop it (between tokens, or between
        two batches of the prompt)."""
        request = {**request, "stream": True, "return_progress": True}
        if self.chat_template:
            self.engine.handle_chat_completions(request, on_chunk)
        else:
            messages = request.pop("messages")
            body = {**request, "prompt": plain_prompt(messages), "stop": PLAIN_STOPS}
            self.engine.handle_completions(body, on_chunk)

    def tokenize(self, text: str) -> list[int]:
        reply = self._post("/tokenize", {"content": text, "add_special": False, "parse_special": False})
        return [int(token) for token in reply["tokens"]]

    def detokenize(self, tokens: Sequence[int]) -> str:
        return str(self._post("/detokenize", {"tokens": list(tokens)})["content"])

    def _post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        request = urllib.request.Request(
            self.engine.listening_address + path,
            data=json.dumps(body).encode("utf-8"),
            headers={"Content-Type": "application/json", "Authorization": f"Bearer {self._key}"},
        )
        try:
            with urllib.request.urlopen(request, timeout=_TOKENIZER_TIMEOUT_S) as reply:
                return json.loads(reply.read())
        except (urllib.error.URLError, OSError, ValueError) as exc:
            raise RuntimeError(f"llama.cpp's tokenizer did not answer: {exc}") from exc


def load_model(path: Path, n_ctx: int, threads: int, plain: bool | None) -> LoadedModel:
    """Start llama.cpp's engine on `path` (one slot: the parent serialises the calls).

    `plain`: True for the Question/Answer transcript, None to use the file's own template when it
    has one."""
    xllamacpp = import_llama()
    chat_template = has_chat_template(path) if plain is None else not plain
    key = secrets.token_urlsafe(24)  # the engine listens on loopback: nobody else may call it
    params = xllamacpp.CommonParams()
    params.model.path = str(path)
    params.n_ctx = n_ctx
    params.n_parallel = 1
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    params.n_batch = PROMPT_BATCH
    params.n_ubatch = PROMPT_BATCH
    params.n_threads_http = 1
    params.hostnames = ["127.0.0.1"]
    params.port = 0
    params.api_keys = [key]
    params.warmup = False
    params.ctx_shift = False
    params.endpoint_metrics = False
    params.use_jinja = True
    try:
        engine = xllamacpp.Server(params)
    except RuntimeError as exc:
        raise ProviderConfigError(f"cannot load the local model file {path.name}: {exc}") from exc
    return LoadedModel(engine=engine, n_ctx=n_ctx, chat_template=chat_template, _key=key)
