"""A GGUF file's metadata, read from its header without llama.cpp (so a file that makes
llama.cpp abort can still be sized and named): what the local runtime's memory ceiling is
estimated from.

GGUF v2/v3 layout: magic "GGUF", version (u32), tensor count and key/value count (u64), then
each key/value as key (u64 length + UTF-8 bytes), value type (u32), value.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

# value type -> struct format of the fixed-size types
FIXED = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}
_STRING, _ARRAY = 8, 9
_HEADER_BYTES = 16 * 1024 * 1024  # metadata comes first; vocabularies of large models fit well within
_MAX_ITEMS = 4_000_000  # a corrupt header must not make us loop for ever


class GGUFError(ValueError):
    """Not a GGUF file, or a header we cannot read."""


@dataclass(frozen=True)
class Entry:
    """One metadata key: where its value starts in the file, its type, and the value (for an array:
    None, and `count` says its length)."""

    offset: int
    kind: int
    value: int | float | bool | str | None
    count: int | None = None


def _value(data: bytes, at: int, kind: int) -> tuple[int | float | bool | str | None, int]:
    """The value at `at` (None for arrays) and the offset after it."""
    if kind in FIXED:
        fmt = "<" + FIXED[kind]
        return struct.unpack_from(fmt, data, at)[0], at + struct.calcsize(fmt)
    if kind == _STRING:
        (length,) = struct.unpack_from("<Q", data, at)
        return data[at + 8 : at + 8 + length].decode("utf-8", "replace"), at + 8 + length
    if kind == _ARRAY:
        item_kind, count = struct.unpack_from("<IQ", data, at)
        at += 12
        if count > _MAX_ITEMS:
            raise GGUFError(f"an array of {count} items")
        if item_kind in FIXED:
            return None, at + count * struct.calcsize("<" + FIXED[item_kind])
        for _ in range(count):
            _, at = _value(data, at, item_kind)
        return None, at
    raise GGUFError(f"unknown value type {kind}")


def read_metadata(path: Path) -> dict[str, Entry]:
    """Every metadata key of the file at `path`; GGUFError when it is not a readable GGUF."""
    with open(path, "rb") as handle:
        data = handle.read(_HEADER_BYTES)
    if data[:4] != b"GGUF":
        raise GGUFError(f"{path.name} is not a GGUF file")
    try:
        (count,) = struct.unpack_from("<Q", data, 16)
        if count > _MAX_ITEMS:
            raise GGUFError(f"{path.name}: {count} metadata keys")
        entries: dict[str, Entry] = {}
        at = 24
        for _ in range(count):
            (length,) = struct.unpack_from("<Q", data, at)
            key = data[at + 8 : at + 8 + length].decode("utf-8", "replace")
            at += 8 + length
            (kind,) = struct.unpack_from("<I", data, at)
            value, after = _value(data, at + 4, kind)
            count = struct.unpack_from("<Q", data, at + 8)[0] if kind == _ARRAY else None
            entries[key] = Entry(offset=at + 4, kind=kind, value=value, count=count)
            at = after
    except struct.error as exc:
        raise GGUFError(f"{path.name}: the metadata is cut short ({exc})") from exc
    return entries


def _int(entries: dict[str, Entry], key: str) -> int | None:
    entry = entries.get(key)
    return int(entry.value) if entry is not None and isinstance(entry.value, int) else None


def kv_cache_bytes(entries: dict[str, Entry], n_ctx: int) -> int | None:
    """The f16 K and V caches of `n_ctx` tokens (llama.cpp's default cache type), or None when the
    header does not say the shape."""
    arch = entries.get("general.architecture")
    if arch is None or not isinstance(arch.value, str):
        return None
    prefix = arch.value
    layers = _int(entries, f"{prefix}.block_count")
    embd = _int(entries, f"{prefix}.embedding_length")
    heads = _int(entries, f"{prefix}.attention.head_count")
    kv_heads = _int(entries, f"{prefix}.attention.head_count_kv") or heads
    if not (layers and embd and heads and kv_heads):
        return None
    key_len = _int(entries, f"{prefix}.attention.key_length") or embd // heads
    value_len = _int(entries, f"{prefix}.attention.value_length") or embd // heads
    return layers * n_ctx * kv_heads * (key_len + value_len) * 2


def vocab_size(entries: dict[str, Entry]) -> int | None:
    """The number of tokens of the model's vocabulary."""
    tokens = entries.get("tokenizer.ggml.tokens")
    return tokens.count if tokens is not None else None
