"""OpenAI-compatible Chat Completions client (OpenRouter, LiteLLM, vLLM, Ollama, llama.cpp...).

One shared `httpx.AsyncClient` carries every call (connection pooling). Transient failures
(429, 5xx, connection errors) are retried with jittered exponential backoff that honours
Retry-After, all within the per-call deadline. Every failure leaves as a typed ProviderError
carrying the provider's own words, never the key.

The wire format lives in `openai_wire`, the meaning of failures in `openai_errors`, the
backoff in `retry`; this module is the client that puts them together.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any

import httpx
from pydantic import SecretStr

from core.models import ChatMessage, Completion
from core.providers.base import (
    AuthError,
    BadResponseError,
    CallOptions,
    KeyProof,
    ModelNotFoundError,
    ProviderError,
    ProviderTimeoutError,
    StreamItem,
    TextDelta,
)
from core.providers.openai_errors import classify, detail_of, error_code, error_detail, unreachable
from core.providers.openai_wire import (
    StreamedAnswer,
    chat_payload,
    input_modalities,
    message_text,
    read_json,
    sse_chunks,
    usage_of,
)
from core.providers.retry import RetryPolicy


class OpenAICompatProvider:
    def __init__(
        self,
        name: str,
        base_url: str,
        api_key: SecretStr | None,
        http: httpx.AsyncClient,
        *,
        max_retries: int = 3,
        retry_base_s: float = 0.5,
        retry_max_s: float = 20.0,
        extra_headers: Mapping[str, str] | None = None,
        prices: Mapping[str, tuple[float, float]] | None = None,
        key_path: str = "models",
    ):
        self.name = name
        self.base_url = base_url.rstrip("/")
        self._api_key = api_key
        self._http = http
        self._retry = RetryPolicy(max_retries, retry_base_s, retry_max_s)
        self._extra_headers = dict(extra_headers or {})
        self._prices = dict(prices or {})
        self._key_path = key_path  # what `check_key` asks for (see there)

    def __repr__(self) -> str:  # never shows the key
        return f"OpenAICompatProvider(name={self.name!r}, base_url={self.base_url!r})"

    # ------------------------------------------------------------------ public API

    async def complete(self, model: str, messages: Sequence[ChatMessage], options: CallOptions) -> Completion:
        started = time.perf_counter()
        payload = chat_payload(self.name, model, messages, options, stream=False)
        try:
            async with asyncio.timeout(options.timeout_s):
                body = await self._retry.run(lambda: self._post_json(model, payload))
        except TimeoutError:
            raise ProviderTimeoutError(f"{model} did not answer within {options.timeout_s:g} s") from None
        text = message_text(body, model)
        return Completion(
            model=model,
            text=text,
            usage=usage_of(body.get("usage"), self._prices.get(model)),
            latency_s=time.perf_counter() - started,
            finish_reason=(body.get("choices") or [{}])[0].get("finish_reason"),
        )

    async def stream(
        self, model: str, messages: Sequence[ChatMessage], options: CallOptions
    ) -> AsyncIterator[StreamItem]:
        started = time.perf_counter()
        payload = chat_payload(self.name, model, messages, options, stream=True)
        answer = StreamedAnswer()
        try:
            async with asyncio.timeout(options.timeout_s):
                async with self._open_stream(model, payload) as response:
                    async for chunk in sse_chunks(response, model):
                        piece = answer.feed(chunk)
                        if piece:
                            yield TextDelta(piece)
        except TimeoutError:
            raise ProviderTimeoutError(f"{model} did not finish within {options.timeout_s:g} s") from None
        if not answer.text.strip():
            raise BadResponseError(f"{model} streamed an empty answer")
        yield Completion(
            model=model,
            text=answer.text,
            usage=usage_of(answer.usage, self._prices.get(model)),
            latency_s=time.perf_counter() - started,
            finish_reason=answer.finish,
        )

    def context_window(self, model: str) -> int | None:
        return None  # endpoints do not say; their models hold far more than a council prompt

    async def list_models(self) -> list[str]:
        return [item["id"] for item in await self._model_entries()]

    async def image_models(self) -> set[str]:
        """Ids whose entry in the model list says they take images (OpenRouter's
        `architecture.input_modalities`; any endpoint that returns that field counts)."""
        return {item["id"] for item in await self._model_entries() if "image" in input_modalities(item)}

    async def check_key(self, probe_models: Sequence[str] = ()) -> KeyProof:
        """Requests that a rejected key fails (AuthError): `GET /key` on OpenRouter, whose model
        list is public, else `GET /models`, which OpenAI, vLLM and LiteLLM guard with the key. A
        model list that answers the same without the key (Ollama, many proxies) proves nothing:
        then one completion of `max_tokens: 1` does, with the first of `probe_models` (cheapest
        first) that the endpoint lists. An endpoint given no key proves none (`proven` False)."""
        try:
            body = await self._retry.run(lambda: self._get(self._key_path, f"{self.name} /{self._key_path}"))
        except ModelNotFoundError:  # a 404: the endpoint has no such path
            raise BadResponseError(f"{self.name} has no /{self._key_path} to check the key with") from None
        if not self._has_key():
            return KeyProof(False, "no key is set and it answers without one")
        if self._key_path != "models":
            return KeyProof(True, f"GET /{self._key_path}")
        try:
            await self._retry.run(lambda: self._get("models", f"{self.name} model list", keyed=False))
        except AuthError:  # refused without the key: the key is what opened it
            return KeyProof(True, "its model list, which refuses requests without a key")
        except ProviderError:
            pass  # no answer without the key either way: a call decides
        model = _probe_model(probe_models, _model_ids(body))
        public = "its model list answers without a key too"
        if model is None:
            return KeyProof(False, f"{public}, and no configured model is served by it to try one call with")
        options = CallOptions(timeout_s=15.0, max_tokens=1)
        payload = chat_payload(self.name, model, [ChatMessage(role="user", content="Hi")], options, stream=False)
        try:
            await self._retry.run(lambda: self._post_json(model, payload))
        except AuthError:
            raise
        except ProviderError as exc:
            return KeyProof(False, f"{public}, and a one-token call to {model} failed: {exc.info().short()}")
        return KeyProof(True, f"a one-token call to {model}")

    async def aclose(self) -> None:
        """The shared client belongs to the router; nothing to close here."""

    # ------------------------------------------------------------------ internals

    async def _get(self, path: str, what: str, *, keyed: bool = True) -> Any:
        headers = self._headers() if keyed else {k: v for k, v in self._headers().items() if k != "Authorization"}
        try:
            response = await self._http.get(f"{self.base_url}/{path}", headers=headers)
        except httpx.HTTPError as exc:
            raise unreachable(self.name, exc) from None
        if response.status_code >= 400:
            raise classify(response.status_code, error_detail(response), "", self.name, response)
        return read_json(response, what)

    async def _model_entries(self) -> list[dict[str, Any]]:
        body = await self._retry.run(lambda: self._get("models", f"{self.name} model list"))
        return _model_entries(body)

    def _has_key(self) -> bool:
        return self._api_key is not None and bool(self._api_key.get_secret_value())

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", **self._extra_headers}
        if self._api_key is not None and self._has_key():
            headers["Authorization"] = f"Bearer {self._api_key.get_secret_value()}"
        return headers

    async def _post_json(self, model: str, payload: dict) -> dict[str, Any]:
        try:
            response = await self._http.post(f"{self.base_url}/chat/completions", json=payload, headers=self._headers())
        except httpx.HTTPError as exc:
            raise unreachable(self.name, exc) from None
        if response.status_code >= 400:
            raise classify(response.status_code, error_detail(response), model, self.name, response)
        body = read_json(response, model)
        if isinstance(body, dict) and body.get("error"):
            raise classify(error_code(body), detail_of(body), model, self.name, None)
        return body

    @asynccontextmanager
    async def _open_stream(self, model: str, payload: dict) -> AsyncIterator[httpx.Response]:
        """Retries apply only until the first byte: a stream is never replayed half-way."""

        async def connect() -> httpx.Response:
            request = self._http.build_request(
                "POST", f"{self.base_url}/chat/completions", json=payload, headers=self._headers()
            )
            try:
                response = await self._http.send(request, stream=True)
            except httpx.HTTPError as exc:
                raise unreachable(self.name, exc) from None
            if response.status_code >= 400:
                await response.aread()
                outcome = classify(response.status_code, error_detail(response), model, self.name, response)
                await response.aclose()
                raise outcome
            return response

        response = await self._retry.run(connect)
        try:
            yield response
        finally:
            await response.aclose()


def _model_entries(body: Any) -> list[dict[str, Any]]:
    data = body.get("data") if isinstance(body, dict) else body
    return [item for item in data or [] if isinstance(item, dict) and "id" in item]


def _model_ids(body: Any) -> set[str]:
    return {str(item["id"]) for item in _model_entries(body)}


def _probe_model(candidates: Sequence[str], listed: set[str]) -> str | None:
    """The model a key check may spend one token on: the first candidate the endpoint lists, else
    the first candidate (some proxies list fewer models than they serve)."""
    return next((model for model in candidates if model in listed), candidates[0] if candidates else None)
