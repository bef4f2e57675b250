"""Model providers: OpenAI-compatible endpoints and in-process GGUF models, behind one router."""

from core.providers.base import CallOptions, Provider, ProviderError, TextDelta

__all__ = ["CallOptions", "Provider", "ProviderError", "TextDelta"]
