"""Model ids shortened for lines and tables."""

from __future__ import annotations


def short_model(model: str) -> str:
    """`openrouter:openai/gpt-5.1` -> `gpt-5.1`: enough to recognise, short enough for a table."""
    return (
        model.split(":", 1)[-1].rsplit("/", 1)[-1]
        if "/" in model or model.startswith(("local:", "openrouter:"))
        else model
    )
