"""Broken GGUF files for the crash tests: a copy of a model with one integer of its metadata
rewritten in place (`llama.block_count` = 100000 makes llama.cpp abort on GGML_ASSERT;
`llama.context_length` = 2**31 - 1 claims a huge context). Only fixed-size integers are
rewritten, so the file keeps its size and its tensors their offsets."""

from __future__ import annotations

import shutil
import struct
from pathlib import Path

from core.providers.gguf_info import FIXED, read_metadata


def rewrite_int(source: Path, target: Path, key: str, value: int) -> Path:
    """A copy of `source` at `target` whose integer metadata `key` is `value`."""
    entry = read_metadata(source)[key]
    if not isinstance(entry.value, int) or isinstance(entry.value, bool):
        raise ValueError(f"{key} is not an integer")
    shutil.copyfile(source, target)
    with open(target, "r+b") as handle:
        handle.seek(entry.offset)
        handle.write(struct.pack("<" + FIXED[entry.kind], value))
    return target
