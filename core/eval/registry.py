"""The `inspect_ai` entry point of this package (pyproject.toml, [project.entry-points.inspect_ai]):
inspect-ai imports it to find the `council` model provider. Importing the provider's module is
deferred to its first use, as inspect-ai's own providers do, so that listing entry points stays
cheap."""

from __future__ import annotations

from inspect_ai.model import ModelAPI, modelapi


@modelapi(name="council")
def council() -> type[ModelAPI]:
    from core.eval.provider import CouncilModelAPI

    return CouncilModelAPI
