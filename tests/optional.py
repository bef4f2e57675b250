"""Optional test stacks (llama-cpp-python, its server, the bundled GGUF models).

A developer without them sees a skip with the install command; CI sets REQUIRE_ALL_TEST_STACKS=1
so that a stack that failed to install fails the run instead of silently skipping its tests.
"""

from __future__ import annotations

import os

import pytest

REQUIRE_ALL = os.environ.get("REQUIRE_ALL_TEST_STACKS") == "1"


def needs(missing: str | None) -> pytest.MarkDecorator:
    """`skipif` on what is missing, or a collection error when CI requires every stack."""
    if missing is not None and REQUIRE_ALL:
        raise RuntimeError(f"REQUIRE_ALL_TEST_STACKS=1 but {missing}")
    return pytest.mark.skipif(missing is not None, reason=missing or "")
