"""Figures some tests measure on their way (ack latency, Web API calls, paced bursts): printed with
`pytest -v`, kept out of `-q`'s dots. The benchmarks under bench/ are where figures are reported."""

from __future__ import annotations

import pytest

_shown = False


def configure(config: pytest.Config) -> None:
    global _shown
    _shown = config.getoption("verbose") > 0


def show(capsys: pytest.CaptureFixture[str], text: str) -> None:
    if _shown:
        with capsys.disabled():
            print(text)
