"""Optional test stacks (llama.cpp through xllamacpp, the bundled GGUF models).

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


def llama_threads() -> int:
    """Threads for a llama.cpp model in the tests: this worker's share of the cores.

    Under pytest-xdist the llama tests run beside other workers that keep the cores busy.
    llama.cpp's threads wait for each other at every step by spinning, so two threads on two
    cores that other processes also want run several times slower than one thread (a council
    on llama.cpp's server: 73 s against 125 s with two busy loops beside it), and burn the CPU
    the other workers need. Alone (no xdist), a test gets every core. (The default split, without
    LOCAL_N_THREADS, has a test of its own in tests/test_local_provider.py.)"""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    return max(1, (os.cpu_count() or 1) // workers)
