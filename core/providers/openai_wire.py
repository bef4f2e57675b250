"""The OpenAI Chat Completions format: request bodies, answers, SSE stream chunks and usage."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx

from core.models import ChatMessage, Usage
from core.providers.base import BadResponseError, CallOptions, ProviderUnavailableError
from core.providers.openai_errors import classify, describe, detail_of, error_code, unwrap


def chat_payload(
    provider: str, model: str, messages: Sequence[ChatMessage], options: CallOptions, *, stream: bool
) -> dict[str, Any]:
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
    if provider == "openrouter":
        payload["usage"] = {"include": True}  # OpenRouter reports cost only when asked
    return payload


def _message_payload(message: ChatMessage) -> dict[str, Any]:
    """A chat message in the OpenAI format: plain text, or text and image parts when it carries images."""
    if not message.images:
        return {"role": message.role, "content": message.content}
    parts: list[dict[str, Any]] = [{"type": "text", "text": message.content}]
    parts += [{"type": "image_url", "image_url": {"url": url}} for url in message.images]
    return {"role": message.role, "content": parts}


def usage_of(raw: Mapping[str, Any] | None, price: tuple[float, float] | None) -> Usage:
    """The reported usage; the cost from `price` (USD per million prompt/completion tokens) when
    the provider reports none."""
    raw = raw or {}
    prompt = int(raw.get("prompt_tokens") or 0)
    completion = int(raw.get("completion_tokens") or 0)
    cost = raw.get("cost")
    if cost is None and price is not None:
        per_prompt, per_completion = price
        cost = (prompt * per_prompt + completion * per_completion) / 1_000_000
    return Usage(prompt_tokens=prompt, completion_tokens=completion, cost_usd=float(cost) if cost is not None else None)


def read_json(response: httpx.Response, what: str) -> Any:
    try:
        return response.json()
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise BadResponseError(f"{what}: the response was not valid JSON: {response.text[:80]!r}") from None


def message_text(body: Any, model: str) -> str:
    try:
        choice = body["choices"][0]
        text = choice["message"].get("content")
    except (KeyError, IndexError, TypeError, AttributeError):
        raise BadResponseError(f"{model} returned no choices: {str(body)[:120]}") from None
    if not isinstance(text, str) or not text.strip():
        reason = choice.get("finish_reason") if isinstance(choice, dict) else None
        raise BadResponseError(f"{model} returned an empty answer (finish_reason={reason})")
    return text


def input_modalities(item: Mapping[str, Any]) -> list[str]:
    architecture = item.get("architecture")
    modalities = architecture.get("input_modalities") if isinstance(architecture, Mapping) else None
    return [m for m in modalities if isinstance(m, str)] if isinstance(modalities, list) else []


async def sse_chunks(response: httpx.Response, model: str) -> AsyncIterator[dict[str, Any]]:
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
                raise unwrap(classify(error_code(chunk), detail_of(chunk), model, "the provider", None))
            if isinstance(chunk, dict):
                yield chunk
    except httpx.HTTPError as exc:
        raise ProviderUnavailableError(f"the stream from {model} broke off: {describe(exc)}") from None


@dataclass
class StreamedAnswer:
    """What a stream has said so far: the text pieces, the last finish reason and the usage."""

    parts: list[str] = field(default_factory=list)
    usage: dict[str, Any] | None = None
    finish: str | None = None

    def feed(self, chunk: Mapping[str, Any]) -> str | None:
        """Take one chunk; its new text, if any."""
        if chunk.get("usage"):
            self.usage = chunk["usage"]
        choices = chunk.get("choices") or []
        if not choices:
            return None
        delta = choices[0].get("delta") or {}
        self.finish = choices[0].get("finish_reason") or self.finish
        piece = delta.get("content")
        if piece:
            self.parts.append(piece)
        return piece or None

    @property
    def text(self) -> str:
        return "".join(self.parts)
