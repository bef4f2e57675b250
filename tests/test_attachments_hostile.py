"""Hostile files (issue 28) are read in reader processes within the deadline and the memory
ceiling, stop at the characters the council reads, and never hold up or outlive the bot."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from collections.abc import Callable

import pytest
from pydantic import ValidationError

from core.reading.attachments import (
    AttachmentLimits,
    AttachmentReaders,
    AttachmentRefusal,
    ExtractedAttachment,
    ReaderLimits,
)
from core.reading.attachments.limits import MB
from core.settings import Settings
from tests.attachment_files import PNG_1PX
from tests.hostile_files import HOSTILE, docx_empty_paragraphs
from tests.reader_processes import alive, descendants, readers_of

DEFAULT = ReaderLimits()  # 10 s, 256 MB, 2 readers: the settings' defaults
_cache: dict[str, bytes] = {}


@pytest.fixture(scope="session")
def hostile() -> Callable[[str], bytes]:
    """Each hostile file, generated once per session."""

    def get(name: str) -> bytes:
        if name not in _cache:
            _cache[name] = docx_empty_paragraphs() if name == "empty.docx" else HOSTILE[name]()
        return _cache[name]

    return get


def attachment(outcome: ExtractedAttachment | AttachmentRefusal) -> ExtractedAttachment:
    assert isinstance(outcome, ExtractedAttachment), outcome
    return outcome


def expect_paragraphs(read: ExtractedAttachment) -> None:
    assert read.char_count <= 100_000 and read.text.startswith("a\na\na")
    assert read.notices == (
        "paragraphs.docx: text cut at the 100,000-character limit for one question; "
        "the rest of the document was not read",
    )


def expect_deep(read: ExtractedAttachment) -> None:
    assert read.text == "Before the deep part."
    assert read.notices == ("deep.docx: the rest of it could not be read (damaged or incomplete)",)


def expect_pages(read: ExtractedAttachment) -> None:
    assert [s.label for s in read.sections] == [f"page {n}" for n in range(1, 201)]
    assert read.page_count == 100_000
    assert read.notices == ("pages.pdf: only the first 200 of 100,000 pages were read (page limit)",)


def expect_inflating(read: ExtractedAttachment) -> None:
    assert [(s.label, s.text) for s in read.sections] == [("page 2", "The page after it.")]
    assert read.notices == ("inflating.pdf: page 1 could not be read",)


def expect_one_line(read: ExtractedAttachment) -> None:
    assert 99_800 <= read.char_count <= 100_000 and read.text.startswith("word word")
    assert read.notices == (
        "one-line.txt: text cut at the 100,000-character limit for one question; the rest of the file was not read",
    )


def expect_columns(read: ExtractedAttachment) -> None:
    assert read.char_count == 100_000 and read.text.startswith("c0,c1,c2")
    assert read.notices[0].startswith("columns.csv: text cut at the 100,000-character limit")


EXPECTED = {
    "paragraphs.docx": expect_paragraphs,
    "deep.docx": expect_deep,
    "pages.pdf": expect_pages,
    "inflating.pdf": expect_inflating,
    "one-line.txt": expect_one_line,
    "columns.csv": expect_columns,
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
async def test_each_hostile_file_is_read_within_the_deadline_and_the_memory_ceiling(name, hostile):
    data = hostile(name)
    assert len(data) <= 20 * MB
    readers = AttachmentReaders(DEFAULT)
    read = await readers.read(name, data, limits=AttachmentLimits())
    EXPECTED[name](attachment(read.outcome))
    assert read.seconds < DEFAULT.deadline_s
    assert read.peak_rss_kb is not None and read.peak_rss_kb * 1024 < DEFAULT.memory_bytes
    assert not alive(readers_of(os.getpid()))


async def test_a_file_past_the_deadline_is_killed_and_named(hostile):
    readers = AttachmentReaders(ReaderLimits(deadline_s=1.0))
    read = await readers.read("empty.docx", hostile("empty.docx"))
    assert read.outcome == AttachmentRefusal(
        name="empty.docx", reason="could not be read within the 1 s limit for reading one file"
    )
    assert read.seconds < 4
    assert not alive(readers_of(os.getpid()))


async def test_a_file_past_the_memory_ceiling_is_named(hostile):
    # The inflating page needs its 75 MB (pypdf's own cap) on top of the reader's own memory.
    readers = AttachmentReaders(ReaderLimits(memory_bytes=100 * MB))
    read = await readers.read("inflating.pdf", hostile("inflating.pdf"))
    assert read.outcome == AttachmentRefusal(
        name="inflating.pdf", reason="could not be read within the 100 MB memory limit for reading one file"
    )


async def test_at_most_the_configured_readers_run_and_the_others_wait_in_line(hostile):
    data = hostile("empty.docx")
    readers = AttachmentReaders(ReaderLimits(deadline_s=1.5, readers=2))
    most = 0

    async def watch() -> None:
        nonlocal most
        while True:
            most = max(most, len(alive(readers_of(os.getpid()))))
            await asyncio.sleep(0.02)

    watcher = asyncio.create_task(watch())
    reads = await asyncio.gather(*(readers.read(f"slow-{n}.docx", data) for n in range(3)))
    watcher.cancel()
    assert most == 2
    reasons = [read.outcome.reason for read in reads if isinstance(read.outcome, AttachmentRefusal)]
    assert len(reasons) == 3
    assert reasons.count("could not be read within the 1.5 s limit for reading one file") >= 2
    assert set(reasons) <= {
        "could not be read within the 1.5 s limit for reading one file",
        "not read: every file reader stayed busy for 1.5 s",
    }
    assert not alive(readers_of(os.getpid()))


async def until_a_reader_runs(pid: int, within_s: float = 15) -> set[int]:
    deadline = time.monotonic() + within_s
    while not (running := alive(readers_of(pid))):
        assert time.monotonic() < deadline, "no reader process started"
        await asyncio.sleep(0.02)
    return running


async def test_a_cancelled_read_kills_its_reader(hostile):
    readers = AttachmentReaders(ReaderLimits(deadline_s=60))
    read = asyncio.create_task(readers.read("empty.docx", hostile("empty.docx")))
    running = await until_a_reader_runs(os.getpid())
    read.cancel()
    with pytest.raises(asyncio.CancelledError):
        await read
    assert not alive(running)


async def test_closing_the_readers_ends_their_reads_at_once(hostile):
    readers = AttachmentReaders(ReaderLimits(deadline_s=60))
    read = asyncio.create_task(readers.read("empty.docx", hostile("empty.docx")))
    running = await until_a_reader_runs(os.getpid())
    started = time.monotonic()
    await readers.aclose()
    outcome = (await read).outcome
    assert outcome == AttachmentRefusal(name="empty.docx", reason="not read: the bot is shutting down")
    assert time.monotonic() - started < 3
    assert not alive(running)
    late = await readers.read("late.txt", b"text")
    assert late.outcome == AttachmentRefusal(name="late.txt", reason="not read: the bot is shutting down")


async def test_images_come_back_with_their_bytes_and_text_files_with_their_text():
    readers = AttachmentReaders()
    image, text = await asyncio.gather(readers.read("dot.png", PNG_1PX), readers.read("a.txt", b"plain words"))
    assert attachment(image.outcome).image_data == PNG_1PX
    assert attachment(text.outcome).text == "plain words"


def test_reader_limits_come_from_the_settings():
    assert ReaderLimits.from_settings(Settings(_env_file=None)) == ReaderLimits(10.0, 256 * MB, 2)
    custom = Settings(
        _env_file=None,
        COUNCIL_ATTACHMENT_READ_S="2.5",
        COUNCIL_ATTACHMENT_READ_MB="512",
        COUNCIL_ATTACHMENT_READERS="4",
    )
    assert ReaderLimits.from_settings(custom) == ReaderLimits(2.5, 512 * MB, 4)
    with pytest.raises(ValidationError, match="COUNCIL_ATTACHMENT_READ_MB"):
        Settings(_env_file=None, COUNCIL_ATTACHMENT_READ_MB="64")  # less than a reader itself needs


async def test_readers_die_with_a_bot_that_is_killed(hostile, tmp_path):
    """SIGKILL leaves no handler to run: the fork server sees its parent gone and exits, and the
    kernel kills its readers (PR_SET_PDEATHSIG)."""
    slow = tmp_path / "empty.docx"
    slow.write_bytes(hostile("empty.docx"))
    script = (
        "import asyncio, pathlib, sys\n"
        "from core.reading.attachments import AttachmentReaders, ReaderLimits\n"
        "data = pathlib.Path(sys.argv[1]).read_bytes()\n"
        "asyncio.run(AttachmentReaders(ReaderLimits(deadline_s=120)).read('empty.docx', data))\n"
    )
    bot = await asyncio.create_subprocess_exec(sys.executable, "-c", script, str(slow))
    try:
        readers = await until_a_reader_runs(bot.pid, within_s=30)
        helpers = descendants(bot.pid)
        bot.send_signal(signal.SIGKILL)
        await bot.wait()
        for _ in range(100):
            if not alive(helpers | readers):
                break
            await asyncio.sleep(0.05)
        assert not alive(helpers | readers)
    finally:
        if bot.returncode is None:
            bot.kill()
            await bot.wait()
