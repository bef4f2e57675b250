"""OpenAI-compatible Chat Completions client (OpenRouter, LiteLLM, vLLM, Ollama, llama.cpp...).

One shared `httpx.AsyncClient` carries every call (connection pooling). Transient failures
(429, 5xx, connection errors) are retried with jittered exponential backoff that honours
Retry-After, all within the per-call deadline. Every failure leaves as a typed ProviderError
carrying the provider's own words, never the key.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import random
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any

import httpx
from pydantic import SecretStr

from core.models import ChatMessage, Completion, Usage
from core.providers.base import (
    AuthError,
    BadResponseError,
    CallOptions,
    ModelNotFoundError,
    ProviderError,
    ProviderTimeoutError,
    ProviderUnavailableError,
    RateLimitedError,
    StreamItem,
    TextDelta,
)

_MAX_DETAIL = 300
_RETRYABLE_STATUS = {408, 409, 425, 429, 500, 502, 503, 504, 520, 522, 524, 529}


class _Retry(Exception):
    """Internal: a transient failure worth another attempt."""

    def __init__(self, error: ProviderError):
        self.error = error


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
    ):
        self.name = name
        self.base_url = base_url.rstrip("/")
        self._api_key = api_key
        self._http = http
        self.max_retries = max_retries
        self.retry_base_s = retry_base_s
        self.retry_max_s = retry_max_s
        self._extra_headers = dict(extra_headers or {})
        self._prices = dict(prices or {})

    def __repr__(self) -> str:  # never shows the key
        return f"OpenAICompatProvider(name={self.name!r}, base_url={self.base_url!r})"

    # ------------------------------------------------------------------ public API

    async def complete(self, model: str, messages: Sequence[ChatMessage], options: CallOptions) -> Completion:
        started = time.perf_counter()
        payload = self._payload(model, messages, options, stream=False)
        try:
            async with asyncio.timeout(options.timeout_s):
                body = await self._with_retries(model, options, lambda: self._post_json(model, payload))
        except TimeoutError:
            raise ProviderTimeoutError(f"{model} did not answer within {options.timeout_s:g} s") from None
        text = _message_text(body, model)
        return Completion(
            model=model,
            text=text,
            usage=self._usage(model, body.get("usage")),
            latency_s=time.perf_counter() - started,
            finish_reason=(body.get("choices") or [{}])[0].get("finish_reason"),
        )

    async def stream(
        self, model: str, messages: Sequence[ChatMessage], options: CallOptions
    ) -> AsyncIterator[StreamItem]:
        started = time.perf_counter()
        payload = self._payload(model, messages, options, stream=True)
        parts: list[str] = []
        usage_raw: dict[str, Any] | None = None
        finish: str | None = None
        try:
            async with asyncio.timeout(options.timeout_s):
                async with self._open_stream(model, payload, options) as response:
                    async for chunk in _sse_chunks(response, model):
                        if chunk.get("usage"):
                            usage_raw = chunk["usage"]
                        choices = chunk.get("choices") or []
                        if not choices:
                            continue
                        delta = choices[0].get("delta") or {}
                        finish = choices[0].get("finish_reason") or finish
                        piece = delta.get("content")
                        if piece:
                            parts.append(piece)
                            yield TextDelta(piece)
        except TimeoutError:
            raise ProviderTimeoutError(f"{model} did not finish within {options.timeout_s:g} s") from None
        text = "".join(parts)
        if not text.strip():
            raise BadResponseError(f"{model} streamed an empty answer")
        yield Completion(
            model=model,
            text=text,
            usage=self._usage(model, usage_raw),
            latency_s=time.perf_counter() - started,
            finish_reason=finish,
        )

    def context_window(self, model: str) -> int | None:
        return None  # endpoints do not say; their models hold far more than a council prompt

    async def list_models(self) -> list[str]:
        return [item["id"] for item in await self._model_entries()]

    async def image_models(self) -> set[str]:
        """Ids whose entry in the model list says they take images (OpenRouter's
        `architecture.input_modalities`; any endpoint that returns that field counts)."""
        return {item["id"] for item in await self._model_entries() if "image" in _input_modalities(item)}

    async def _model_entries(self) -> list[dict[str, Any]]:
        async def fetch() -> dict[str, Any]:
            try:
                response = await self._http.get(f"{self.base_url}/models", headers=self._headers())
            except httpx.HTTPError as exc:
                raise _Retry(ProviderUnavailableError(f"{self.name} is unreachable: {_describe(exc)}")) from None
            if response.status_code >= 400:
                raise _classify(response.status_code, _error_detail(response), "", self.name, response)
            return _json(response, f"{self.name} model list")

        body = await self._with_retries("models", CallOptions(timeout_s=30), fetch)
        data = body.get("data") if isinstance(body, dict) else body
        return [item for item in data or [] if isinstance(item, dict) and "id" in item]

    async def aclose(self) -> None:
        """The shared client belongs to the router; nothing to close here."""

    # ------------------------------------------------------------------ internals

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", **self._extra_headers}
        if self._api_key is not None and self._api_key.get_secret_value():
            headers["Authorization"] = f"Bearer {self._api_key.get_secret_value()}"
        return headers

    def _payload(self, model: str, messages: Sequence[ChatMessage], options: CallOptions, *, stream: bool) -> dict:
        payload: dict[str, Any] = {
            "model": model,
            "messages": [_message_payload(m) for m in messages],
            "stream": stream,
        }
        if stream:
            payload["stream_options"] = {"include_usage": True}
        if options.temperature is not None:
            payload["temperature"] = options.temperature
        if options.max_tokens is not None:
            payload["max_tokens"] = options.max_tokens
        if options.response_format is not None:
            payload["response_format"] = dict(options.response_format)
        if self.name == "openrouter":
            payload["usage"] = {"include": True}  # OpenRouter reports cost only when asked
        return payload

    async def _post_json(self, model: str, payload: dict) -> dict[str, Any]:
        try:
            response = await self._http.post(f"{self.base_url}/chat/completions", json=payload, headers=self._headers())
        except httpx.HTTPError as exc:
            raise _Retry(ProviderUnavailableError(f"{self.name} is unreachable: {_describe(exc)}")) from None
        if response.status_code >= 400:
            raise _classify(response.status_code, _error_detail(response), model, self.name, response)
        body = _json(response, model)
        if isinstance(body, dict) and body.get("error"):
            raise _classify(_error_code(body), _detail_of(body), model, self.name, None)
        return body

    @asynccontextmanager
    async def _open_stream(self, model: str, payload: dict, options: CallOptions):
        """Retries apply only until the first byte: a stream is never replayed half-way."""
        attempt = 0
        while True:
            request = self._http.build_request(
                "POST", f"{self.base_url}/chat/completions", json=payload, headers=self._headers()
            )
            try:
                response = await self._http.send(request, stream=True)
            except httpx.HTTPError as exc:
                error: ProviderError = ProviderUnavailableError(f"{self.name} is unreachable: {_describe(exc)}")
            else:
                if response.status_code < 400:
                    break
                await response.aread()
                outcome = _classify(response.status_code, _error_detail(response), model, self.name, response)
                await response.aclose()
                if not isinstance(outcome, _Retry):
                    raise outcome
                error = outcome.error
            if attempt >= self.max_retries:
                raise error
            await asyncio.sleep(self._backoff(attempt, error))
            attempt += 1
        try:
            yield response
        finally:
            await response.aclose()

    async def _with_retries(self, model: str, options: CallOptions, call) -> Any:
        attempt = 0
        while True:
            try:
                return await call()
            except _Retry as retry:
                if attempt >= self.max_retries:
                    raise retry.error from None
                await asyncio.sleep(self._backoff(attempt, retry.error))
                attempt += 1

    def _backoff(self, attempt: int, error: ProviderError) -> float:
        if error.retry_after_s is not None:
            return min(max(error.retry_after_s, 0.0), self.retry_max_s)
        # Full jitter: spreads retries of many councils hitting the same limit.
        return random.uniform(0, min(self.retry_max_s, self.retry_base_s * (2**attempt)))

    def _usage(self, model: str, raw: Mapping[str, Any] | None) -> Usage:
        raw = raw or {}
        prompt = int(raw.get("prompt_tokens") or 0)
        completion = int(raw.get("completion_tokens") or 0)
        cost = raw.get("cost")
        if cost is None and model in self._prices:
            per_prompt, per_completion = self._prices[model]
            cost = (prompt * per_prompt + completion * per_completion) / 1_000_000
        return Usage(
            prompt_tokens=prompt, completion_tokens=completion, cost_usd=float(cost) if cost is not None else None
        )


# ---------------------------------------------------------------------- helpers


def _message_payload(message: ChatMessage) -> dict[str, Any]:
    """A chat message in the OpenAI format: plain text, or text and image parts when it carries images."""
    if not message.images:
        return {"role": message.role, "content": message.content}
    parts: list[dict[str, Any]] = [{"type": "text", "text": message.content}]
    parts += [{"type": "image_url", "image_url": {"url": url}} for url in message.images]
    return {"role": message.role, "content": parts}


def _input_modalities(item: Mapping[str, Any]) -> list[str]:
    architecture = item.get("architecture")
    modalities = architecture.get("input_modalities") if isinstance(architecture, Mapping) else None
    return [m for m in modalities if isinstance(m, str)] if isinstance(modalities, list) else []


async def _sse_chunks(response: httpx.Response, model: str) -> AsyncIterator[dict[str, Any]]:
    try:
        async for line in response.aiter_lines():
            line = line.strip()
            if not line or line.startswith(":") or not line.startswith("data:"):
                continue
            data = line[5:].strip()
            if data == "[DONE]":
                return
            try:
                chunk = json.loads(data)
            except json.JSONDecodeError:
                raise BadResponseError(f"{model} sent an unreadable stream chunk: {data[:80]!r}") from None
            if isinstance(chunk, dict) and chunk.get("error"):
                raise _unwrap(_classify(_error_code(chunk), _detail_of(chunk), model, "the provider", None))
            if isinstance(chunk, dict):
                yield chunk
    except httpx.HTTPError as exc:
        raise ProviderUnavailableError(f"the stream from {model} broke off: {_describe(exc)}") from None


def _unwrap(outcome: ProviderError | _Retry) -> ProviderError:
    return outcome.error if isinstance(outcome, _Retry) else outcome


def _classify(
    status: int, detail: str, model: str, provider: str, response: httpx.Response | None
) -> ProviderError | _Retry:
    """Map an HTTP status (and the provider's message) to a typed error, or a retry."""
    suffix = f": {detail}" if detail else ""
    lowered = detail.lower()
    if status in (401, 403):
        return AuthError(f"the API key was rejected by {provider} ({status}){suffix}", status=status)
    if (
        status == 404
        or "model_not_found" in lowered
        or ("model" in lowered and "not" in lowered and "exist" in lowered)
    ):
        return ModelNotFoundError(f"model `{model}` was not found at {provider}{suffix}", status=status)
    retry_after = _retry_after(response) if response is not None else None
    if status == 429:
        return _Retry(
            RateLimitedError(
                f"{provider} is rate limiting requests (429){suffix}", status=status, retry_after_s=retry_after
            )
        )
    if status in _RETRYABLE_STATUS or status >= 500:
        return _Retry(
            ProviderUnavailableError(f"{provider} failed ({status}){suffix}", status=status, retry_after_s=retry_after)
        )
    return BadResponseError(f"{provider} refused the request ({status}){suffix}", status=status)


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after")
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        parsed = email.utils.parsedate_to_datetime(value)
        return max(0.0, parsed.timestamp() - time.time()) if parsed else None


def _json(response: httpx.Response, what: str) -> Any:
    try:
        return response.json()
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise BadResponseError(f"{what}: the response was not valid JSON: {response.text[:80]!r}") from None


def _error_detail(response: httpx.Response) -> str:
    try:
        return _detail_of(response.json())
    except (json.JSONDecodeError, UnicodeDecodeError, ValueError):
        return response.text.strip()[:_MAX_DETAIL]


def _detail_of(body: Any) -> str:
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict):
            message = error.get("message") or error.get("detail") or ""
            code = error.get("code")
            text = f"{message} ({code})" if code and str(code) not in str(message) else str(message)
            return text[:_MAX_DETAIL]
        return str(error)[:_MAX_DETAIL]
    return str(body)[:_MAX_DETAIL]


def _error_code(body: dict) -> int:
    error = body.get("error")
    code = error.get("code") if isinstance(error, dict) else None
    return code if isinstance(code, int) else 500


def _message_text(body: Any, model: str) -> str:
    try:
        choice = body["choices"][0]
        text = choice["message"].get("content")
    except (KeyError, IndexError, TypeError, AttributeError):
        raise BadResponseError(f"{model} returned no choices: {str(body)[:120]}") from None
    if not isinstance(text, str) or not text.strip():
        reason = choice.get("finish_reason") if isinstance(choice, dict) else None
        raise BadResponseError(f"{model} returned an empty answer (finish_reason={reason})")
    return text


def _describe(exc: httpx.HTTPError) -> str:
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
