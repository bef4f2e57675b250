"""Which attachment reader processes are alive: read from /proc (Linux), for the tests that check
that readers are killed and never outlive their process."""

from __future__ import annotations

import os
from pathlib import Path


def _parent_of(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat.rsplit(")", 1)[1].split()[1])


def descendants(pid: int) -> set[int]:
    """Every live process below `pid` (children, their children, ...)."""
    parents = {int(entry): _parent_of(int(entry)) for entry in os.listdir("/proc") if entry.isdigit()}
    found: set[int] = set()
    frontier = {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def _is_forkserver(pid: int) -> bool:
    try:
        return b"multiprocessing.forkserver" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def readers_of(pid: int) -> set[int]:
    """The reader processes of `pid`: the children of its multiprocessing fork server."""
    servers = {child for child in descendants(pid) if _is_forkserver(child) and _parent_of(child) == pid}
    return {child for child in descendants(pid) if _parent_of(child) in servers}


def alive(pids: set[int]) -> set[int]:
    """Those of `pids` still running (a zombie counts as gone)."""
    running = set()
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            running.add(pid)
    return running


def peak_rss_kb(pid: int) -> int | None:
    """A process's peak resident memory so far (VmHWM, kB)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None
