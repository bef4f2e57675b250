"""One `council ...` command run as a real process by the tests, its output in a log file."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


class CouncilProcess:
    def __init__(self, args: list[str], env: dict[str, str], log: Path, cwd: Path = ROOT):
        self.args, self.env, self.log, self.cwd = args, env, log, cwd
        self.process: asyncio.subprocess.Process | None = None

    async def start(self) -> CouncilProcess:
        with self.log.open("ab") as out:
            self.process = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "bot.cli", *self.args, env=self.env, cwd=self.cwd, stdout=out, stderr=out
            )
        return self

    def failure(self) -> AssertionError:
        return AssertionError(f"`council {' '.join(self.args)}`: {self.log.read_text()[-3000:]}")

    async def until(self, predicate: Callable[[], object], timeout: float) -> None:
        """Wait for `predicate()`, failing early (with the log) if the process ended."""
        deadline = time.monotonic() + timeout
        while not predicate():
            assert self.process is not None
            if self.process.returncode is not None or time.monotonic() > deadline:
                raise self.failure()
            await asyncio.sleep(0.1)

    def kill9(self) -> None:
        assert self.process is not None
        os.kill(self.process.pid, signal.SIGKILL)

    async def stop(self) -> None:
        if self.process is None or self.process.returncode is not None:
            return
        self.process.terminate()
        try:
            await asyncio.wait_for(self.process.wait(), 15)
        except TimeoutError:
            self.process.kill()
            await self.process.wait()
