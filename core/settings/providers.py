"""Where model calls go: the remote endpoints and their keys, and the in-process local models."""

from __future__ import annotations

import json
from typing import Annotated, Any

from pydantic import Field, SecretStr, ValidationInfo, field_validator
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

    # Memory-aware scheduling of model calls (core/providers/scheduling.py).
    memory_budget_gb: str | None = Field(
        None,
        alias="COUNCIL_MEMORY_BUDGET_GB",
        description="Memory (GB) of an endpoint's models that may be in use at once: a number for every endpoint, "
        "or a JSON object of endpoint (`local`, `openrouter` or its base URL) to GB. Unset: no memory scheduling.",
    )
    model_memory_gb: Annotated[dict[str, float], NoDecode] = Field(
        default_factory=dict,
        alias="MODEL_MEMORY_GB",
        description="Each model's memory in GB, a JSON object of model id to GB; local: models default to their "
        "file's size plus their context.",
    )
    max_concurrent: str | None = Field(
        None,
        alias="LLM_MAX_CONCURRENT",
        description="Model calls in flight at once per endpoint: a number, or a JSON object of endpoint to number "
        "(for endpoints that serve one request at a time). Unset: no limit.",
    )

    @field_validator("model_prices", "model_memory_gb", mode="before")
    @classmethod
    def _parse_prices(cls, value: Any) -> Any:
        if isinstance(value, str):
            return json.loads(value) if value.strip() else {}
        return value

    @field_validator("memory_budget_gb", "max_concurrent")
    @classmethod
    def _check_per_endpoint(cls, value: str | None, info: ValidationInfo) -> str | None:
        alias = {"memory_budget_gb": "COUNCIL_MEMORY_BUDGET_GB", "max_concurrent": "LLM_MAX_CONCURRENT"}
        per_endpoint(value, alias[info.field_name or ""])  # refused at start-up, naming the setting
        return value


class LocalModelSettings(SettingsGroup):
    models_dir: str | None = Field(
        None,
        alias="LOCAL_MODELS_DIR",
        description="Where the local GGUF models are kept (empty: the user's cache directory).",
    )
    n_ctx: int = Field(4096, alias="LOCAL_N_CTX", ge=512, description="Context window of local models, in tokens.")
    n_threads: int | None = Field(
        None,
        alias="LOCAL_N_THREADS",
        description="CPU threads of each local model's runtime (empty: half the cores, at least one).",
    )
    max_tokens: int = Field(
        384, alias="LOCAL_MAX_TOKENS", ge=16, description="Longest answer of a local model, in tokens."
    )
    runtime_mb: int | None = Field(
        None,
        alias="LOCAL_RUNTIME_MB",
        ge=256,
        description="Memory ceiling (MB of address space) of each local model's runtime process "
        "(empty: the model file + its KV cache at LOCAL_N_CTX + compute buffers + a margin).",
    )
    load_timeout_s: float = Field(
        120.0,
        alias="LOCAL_LOAD_TIMEOUT_S",
        gt=0,
        description="Seconds a local model's runtime process may take to load its model before it is killed.",
    )


def per_endpoint(value: str | None, setting: str) -> dict[str, float] | float | None:
    """A number for every endpoint, or a JSON object of endpoint to number; None when unset."""
    text = (value or "").strip()
    if not text:
        return None
    try:
        parsed = json.loads(text)
    except ValueError:
        raise ValueError(f"{setting} must be a number or a JSON object of endpoint to number") from None
    if isinstance(parsed, (int, float)) and not isinstance(parsed, bool) and parsed > 0:
        return float(parsed)
    if isinstance(parsed, dict) and all(
        isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0 for v in parsed.values()
    ):
        return {str(k).rstrip("/"): float(v) for k, v in parsed.items()}
    raise ValueError(f"{setting} must be a positive number or a JSON object of endpoint to positive number")
