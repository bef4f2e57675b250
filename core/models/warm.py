"""Building the validators the models defer, while a council waits on its members.

Every model defers its schema (`defer_build=True`) so that a command which never uses it does not
build it at start-up. A council then builds them one by one as its stages hand over, each on the
path someone waits for: about 10 ms at each stage change of a `council ask`. Built while stage 1's
calls are in flight instead, they cost nothing anyone waits for. One model at a time, so that a
reply arriving meanwhile waits for one build (about a millisecond), not for all of them.
"""

from __future__ import annotations

import asyncio

from pydantic import BaseModel

from core.models import _Model

_built = False  # once per process: after the first council every model is built


async def build_deferred_models() -> None:
    global _built
    if _built:
        return
    _built = True
    for model in _subclasses(_Model):
        if not model.__pydantic_complete__:  # a council's own use may have built it meanwhile
            model.model_rebuild()
            await asyncio.sleep(0)


def _subclasses(base: type[BaseModel]) -> list[type[BaseModel]]:
    found: list[type[BaseModel]] = []
    for model in base.__subclasses__():
        found += [model, *_subclasses(model)]
    return found
