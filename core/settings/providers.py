"""Where model calls go: the remote endpoints and their keys, and the in-process local models."""

from __future__ import annotations

import json
from typing import Annotated, Any

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import NoDecode

from core.settings.group import SettingsGroup

OPENROUTER_BASE_URL = "https://openrouter.ai/api/v1"


class ProviderSettings(SettingsGroup):
    base_url: str | None = Field(
        None,
        alias="LLM_BASE_URL",
        description="Any OpenAI-compatible endpoint (LiteLLM, vLLM, Ollama, llama.cpp server, OpenAI...); "
        "when set, bare model ids go here, otherwise to OpenRouter.",
    )
    api_key: SecretStr | None = Field(None, alias="LLM_API_KEY", description="The key sent to LLM_BASE_URL.")
    openrouter_api_key: SecretStr | None = Field(
        None,
        alias="OPENROUTER_API_KEY",
        description="OpenRouter's key; OpenRouter is the endpoint of bare model ids when LLM_BASE_URL is empty.",
    )
    openrouter_base_url: str = Field(
        OPENROUTER_BASE_URL, alias="OPENROUTER_BASE_URL", description="The base URL of OpenRouter's API."
    )
    max_retries: int = Field(
        3,
        alias="LLM_MAX_RETRIES",
        ge=0,
        le=10,
        description="Retries of a model call on 429/5xx, with jittered exponential backoff (Retry-After honoured).",
    )
    retry_base_s: float = Field(0.5, alias="LLM_RETRY_BASE_S", ge=0, description="First retry's backoff, seconds.")
    retry_max_s: float = Field(
        20.0, alias="LLM_RETRY_MAX_S", ge=0, description="Longest backoff between retries, seconds."
    )
    max_connections: int = Field(
        100, alias="LLM_MAX_CONNECTIONS", ge=1, description="Pooled HTTP connections shared by all councils."
    )
    model_prices: Annotated[dict[str, tuple[float, float]], NoDecode] = Field(
        default_factory=dict,
        alias="MODEL_PRICES",
        description="Prices for cost accounting where the provider reports no cost: a JSON object "
        '{"model id": [USD per 1M prompt tokens, USD per 1M completion tokens]}.',
    )

    @field_validator("model_prices", mode="before")
    @classmethod
    def _parse_prices(cls, value: Any) -> Any:
        if isinstance(value, str):
            return json.loads(value) if value.strip() else {}
        return value


class LocalModelSettings(SettingsGroup):
    models_dir: str | None = Field(
        None,
        alias="LOCAL_MODELS_DIR",
        description="Where the local GGUF models are kept (empty: the user's cache directory).",
    )
    n_ctx: int = Field(4096, alias="LOCAL_N_CTX", ge=512, description="Context window of local models, in tokens.")
    n_threads: int | None = Field(
        None, alias="LOCAL_N_THREADS", description="CPU threads of local models (empty: llama.cpp's choice)."
    )
    max_tokens: int = Field(
        384, alias="LOCAL_MAX_TOKENS", ge=16, description="Longest answer of a local model, in tokens."
    )
