"""All files of one question: the council gets the readable ones, every other file is named with its reason."""

from __future__ import annotations

from pydantic import SecretStr

from core.reading.attachments import AttachmentFetcher, AttachmentLimits, IncomingFile, prepare_attachments
from tests.attachment_files import PNG_1PX, make_docx, make_pdf
from tests.file_host_fake import FileHostFake


def text_file(name: str, text: str) -> IncomingFile:
    return IncomingFile(name=name, data=text.encode())


async def test_every_format_in_one_question_in_the_given_order():
    batch = await prepare_attachments(
        [
            IncomingFile(name="report.pdf", declared_type="application/pdf", data=make_pdf(["Q3 revenue up"])),
            IncomingFile(name="plan.docx", data=make_docx(["Ship in May."])),
            IncomingFile(name="chart.png", declared_type="image/png", data=PNG_1PX),
            text_file("notes.md", "# Notes\nmeet Friday"),
        ]
    )
    assert [(a.name, a.kind) for a in batch.attachments] == [
        ("report.pdf", "text"),
        ("plan.docx", "text"),
        ("chart.png", "image"),
        ("notes.md", "text"),
    ]
    assert [a.name for a in batch.images] == ["chart.png"]
    assert [a.name for a in batch.documents] == ["report.pdf", "plan.docx", "notes.md"]
    assert batch.refusals == () and batch.user_notices() == []


async def test_unreadable_files_are_named_and_the_others_still_read():
    batch = await prepare_attachments(
        [
            text_file("good.txt", "fine"),
            IncomingFile(name="secret.pdf", data=make_pdf(["x"], user_password="pw")),
            IncomingFile(name="fake.png", data=b"not a png"),
            text_file("also-good.csv", "a,b\n1,2"),
        ]
    )
    assert [a.name for a in batch.attachments] == ["good.txt", "also-good.csv"]
    assert batch.user_notices() == [
        "secret.pdf: is password-protected; send a copy without a password",
        "fake.png: is not a valid PNG file (its content does not match)",
    ]


async def test_files_beyond_the_count_limit_are_refused_by_name():
    files = [text_file(f"f{n}.txt", f"file {n}") for n in range(1, 5)]
    batch = await prepare_attachments(files, limits=AttachmentLimits(max_files=2))
    assert [a.name for a in batch.attachments] == ["f1.txt", "f2.txt"]
    assert [r.message for r in batch.refusals] == [
        "f3.txt: not read: at most 2 files can be attached to one question",
        "f4.txt: not read: at most 2 files can be attached to one question",
    ]


async def test_the_character_budget_is_shared_in_order():
    files = [text_file("a.txt", "a" * 60), text_file("b.txt", "b" * 60), text_file("c.txt", "c" * 60)]
    batch = await prepare_attachments(files, limits=AttachmentLimits(max_chars=100))
    assert [(a.name, a.char_count) for a in batch.attachments] == [("a.txt", 60), ("b.txt", 40)]
    assert sum(a.char_count for a in batch.attachments) == 100
    assert batch.user_notices() == [
        "c.txt: not read: earlier files used the 100-character limit for one question",
        "b.txt: text cut at the 100-character limit for one question; 20 characters of it left out",
    ]


async def test_images_do_not_use_the_character_budget():
    files = [text_file("a.txt", "a" * 100), IncomingFile(name="pic.png", data=PNG_1PX)]
    batch = await prepare_attachments(files, limits=AttachmentLimits(max_chars=100))
    assert [a.name for a in batch.attachments] == ["a.txt", "pic.png"]


async def test_total_bytes_per_question():
    files = [text_file("a.txt", "a" * 600), text_file("b.txt", "b" * 600), text_file("c.txt", "c" * 300)]
    batch = await prepare_attachments(files, limits=AttachmentLimits(max_total_bytes=1000))
    assert [a.name for a in batch.attachments] == ["a.txt", "c.txt"]
    assert [r.message for r in batch.refusals] == [
        "b.txt: not read: the files of one question may total at most 1000 bytes"
    ]


async def test_the_same_content_twice_is_read_once():
    batch = await prepare_attachments([text_file("a.txt", "same"), text_file("copy of a.txt", "same")])
    assert [a.name for a in batch.attachments] == ["a.txt"]
    assert batch.notices == ("copy of a.txt: same content as a.txt, read once",)


async def test_remote_files_are_fetched_and_declared_sizes_checked_before_download():
    pdf = make_pdf(["Fetched over HTTP"])
    async with FileHostFake(files={"r.pdf": pdf, "big.txt": b"x" * 10}, token="tok") as host:
        assert len(pdf) < 2048
        limits = AttachmentLimits(max_file_bytes=2048)
        async with AttachmentFetcher(allowed_hosts=["127.0.0.1"], bearer_token=SecretStr("tok")) as fetcher:
            batch = await prepare_attachments(
                [
                    IncomingFile(name="r.pdf", size=len(pdf), url=host.url("/files/r.pdf")),
                    IncomingFile(name="big.txt", size=10**9, url=host.url("/files/big.txt")),
                    IncomingFile(name="elsewhere.txt", url="https://example.com/x.txt"),
                    IncomingFile(name="nowhere.txt"),
                ],
                limits=limits,
                fetcher=fetcher,
            )
    assert [a.text for a in batch.attachments] == ["Fetched over HTTP"]
    assert len(host.seen_authorization) == 1  # big.txt was refused without a download
    assert [r.message for r in batch.refusals] == [
        "big.txt: is larger than the 2 KB limit per file",
        "elsewhere.txt: is not stored on the platform's file servers, so it was not downloaded",
        "nowhere.txt: could not be downloaded (no address to fetch it from)",
    ]


async def test_a_url_without_a_fetcher_is_refused():
    batch = await prepare_attachments([IncomingFile(name="x.txt", url="https://files.slack.com/x")])
    assert batch.user_notices() == ["x.txt: could not be downloaded (no address to fetch it from)"]


async def test_declared_sizes_over_the_total_are_refused_without_a_download():
    async with FileHostFake(files={"a.txt": b"a" * 600, "b.txt": b"b" * 600, "c.txt": b"c" * 300}) as host:
        async with AttachmentFetcher(allowed_hosts=["127.0.0.1"]) as fetcher:
            batch = await prepare_attachments(
                [
                    IncomingFile(name=name, size=size, url=host.url(f"/files/{name}"))
                    for name, size in (("a.txt", 600), ("b.txt", 600), ("c.txt", 300))
                ],
                limits=AttachmentLimits(max_total_bytes=1000),
                fetcher=fetcher,
            )
    assert [a.name for a in batch.attachments] == ["a.txt", "c.txt"]
    assert [r.name for r in batch.refusals] == ["b.txt"]
    assert len(host.seen_authorization) == 2  # b.txt was never requested
