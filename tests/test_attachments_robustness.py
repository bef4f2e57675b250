"""Damaged files of every format end in a result or a named refusal, never in another exception."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.reading.attachments import AttachmentLimits, AttachmentRefused
from core.reading.attachments.extract import extract_file
from tests.attachment_files import PNG_1PX, make_docx, make_pdf

SEEDS = {
    "report.pdf": make_pdf(["First page of text", "Second page (with parens)"]),
    "plan.docx": make_docx(["Intro", ("Heading", 1), "Body"], table=[["a", "b"], ["1", "2"]]),
    "dot.png": PNG_1PX,
    "notes.md": "# Title\nSome *markdown* text — ünïcode.\n".encode(),
}
LIMITS = AttachmentLimits(max_chars=500, max_pages=5)


@st.composite
def damaged(draw: st.DrawFn) -> tuple[str, bytes]:
    name = draw(st.sampled_from(sorted(SEEDS)))
    data = bytearray(SEEDS[name])
    for _ in range(draw(st.integers(1, 8))):
        position = draw(st.integers(0, len(data) - 1))
        action = draw(st.sampled_from(["flip", "cut", "insert"]))
        if action == "flip":
            data[position] ^= draw(st.integers(1, 255))
        elif action == "cut":
            del data[position : position + draw(st.integers(1, 256))]
        else:
            data[position:position] = draw(st.binary(min_size=1, max_size=64))
        if not data:
            break
    return name, bytes(data)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(damaged())
def test_damaged_files_are_read_or_refused_by_name(case):
    name, data = case
    try:
        attachment = extract_file(name, data, limits=LIMITS)
    except AttachmentRefused as refused:
        assert refused.name == name and refused.reason and "\n" not in refused.reason
        return
    assert attachment.char_count <= LIMITS.max_chars
    assert all("\n" not in notice for notice in attachment.notices)


@pytest.mark.parametrize("name", sorted(SEEDS))
def test_undamaged_seeds_are_read(name):
    assert extract_file(name, SEEDS[name], limits=LIMITS).name == name
