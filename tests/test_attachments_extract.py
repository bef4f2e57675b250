"""Reading one file: every format, every refusal, and the character and page budgets."""

from __future__ import annotations

import io
import random
import zipfile

import pytest

from core.reading.attachments import AttachmentLimits, AttachmentRefused
from core.reading.attachments.detect import DOCX_MEDIA_TYPE
from core.reading.attachments.extract import extract_file
from core.settings import Settings
from tests.attachment_files import GIF_HEAD, JPEG_HEAD, PNG_1PX, WEBP_HEAD, make_docx, make_pdf


def refused(name: str, data: bytes, **kwargs) -> str:
    with pytest.raises(AttachmentRefused) as caught:
        extract_file(name, data, **kwargs)
    message = str(caught.value)
    assert message.startswith(f"{name}: ")
    assert "\n" not in message
    return caught.value.reason


# --------------------------------------------------------------------------- PDF


def test_pdf_text_per_page_with_blank_pages_skipped():
    data = make_pdf(["Revenue grew (a lot) in Q3", "", "Costs fell in Q4"])
    attachment = extract_file("report.pdf", data)
    assert attachment.kind == "text"
    assert attachment.media_type == "application/pdf"
    assert attachment.page_count == 3
    assert [(s.label, s.text) for s in attachment.sections] == [
        ("page 1", "Revenue grew (a lot) in Q3"),
        ("page 3", "Costs fell in Q4"),
    ]
    assert attachment.size == len(data)
    assert len(attachment.sha256) == 64
    assert attachment.notices == ()


def test_pdf_with_only_an_owner_password_is_read():
    attachment = extract_file("locked-printing.pdf", make_pdf(["still readable"], owner_password="owner"))
    assert attachment.text == "still readable"


def test_password_protected_pdf_is_refused():
    assert "password-protected" in refused("secret.pdf", make_pdf(["hidden"], user_password="pw"))


@pytest.mark.parametrize(
    "data",
    [
        b"%PDF-1.7\n1 0 obj garbage that is no PDF at all",
        make_pdf(["truncated document"])[:200],
    ],
)
def test_corrupt_pdf_is_refused(data):
    assert "not a readable PDF" in refused("broken.pdf", data)


def test_pdf_without_text_layer_is_refused():
    assert "no text layer" in refused("scan.pdf", make_pdf(["", ""]))


def test_pdf_page_limit_reads_the_first_pages_with_a_notice():
    data = make_pdf([f"page text {n}" for n in range(1, 6)])
    attachment = extract_file("long.pdf", data, limits=AttachmentLimits(max_pages=2))
    assert [s.label for s in attachment.sections] == ["page 1", "page 2"]
    assert attachment.page_count == 5
    assert attachment.notices == ("long.pdf: only the first 2 of 5 pages were read (page limit)",)


def test_pdf_cut_at_the_character_budget_names_the_page_and_the_pages_not_read():
    data = make_pdf(["a" * 30, "b" * 30, "c" * 30, "d" * 30])
    attachment = extract_file("big.pdf", data, limits=AttachmentLimits(max_chars=45))
    assert [(s.label, s.text) for s in attachment.sections] == [("page 1", "a" * 30), ("page 2", "b" * 15)]
    assert attachment.char_count == 45
    assert attachment.notices == (
        "big.pdf: text cut at the 45-character limit for one question in page 2; "
        "15 characters of it left out, 2 later pages not read",
    )


def test_pdf_cut_counts_pages_beyond_the_page_limit_as_not_read():
    data = make_pdf(["a" * 30, "b" * 30, "c" * 30, "d" * 30, "e" * 30])
    attachment = extract_file("big.pdf", data, limits=AttachmentLimits(max_chars=45, max_pages=3))
    assert attachment.notices == (
        "big.pdf: text cut at the 45-character limit for one question in page 2; "
        "15 characters of it left out, 3 later pages not read",
    )


def test_a_file_claiming_to_be_pdf_without_pdf_bytes_is_refused():
    assert refused("report.pdf", b"just some words") == "is not a valid PDF file (its content does not match)"


# --------------------------------------------------------------------------- DOCX


def test_docx_paragraphs_headings_and_tables_in_order():
    data = make_docx(
        ["Summary first.", ("Pricing", 1), "It costs 3 EUR.", ("Risks", 2), "Few."],
        table=[["Item", "Price"], ["Tea", "3"]],
    )
    attachment = extract_file("plan.docx", data)
    assert attachment.media_type == DOCX_MEDIA_TYPE
    assert [(s.label, s.text) for s in attachment.sections] == [
        (None, "Summary first."),
        ("Pricing", "Pricing\nIt costs 3 EUR."),
        ("Risks", "Risks\nFew.\nItem | Price\nTea | 3"),
    ]


def test_docx_merged_cells_appear_once():
    data = make_docx(["x"], table=[["Quarter", "ignored"], ["Q1", "10"]], merge_first_row=True)
    assert extract_file("t.docx", data).sections[-1].text.splitlines()[1:] == ["Quarter ignored", "Q1 | 10"]


def test_docx_that_is_not_a_zip_is_refused():
    assert "not a valid DOCX" in refused("plan.docx", b"plain words, not a zip")


def test_damaged_docx_is_refused():
    data = bytearray(make_docx(["some text"]))
    # Keep the zip directory (so it is recognised as DOCX) but damage the document part's data.
    start = data.find(b"word/document.xml") + 40
    data[start : start + 200] = b"\x00" * 200
    reason = refused("damaged.docx", bytes(data))
    assert "not a readable DOCX" in reason


def test_docx_with_an_unsupported_zip_version_is_refused_by_name():
    data = bytearray(make_docx(["some text"]))
    central = data.find(b"PK\x01\x02")
    data[central + 6 : central + 8] = (150).to_bytes(2, "little")  # "needs zip version 15.0"
    assert refused("odd.docx", bytes(data)) == "is not a valid DOCX file (its content does not match)"


def test_docx_that_would_inflate_beyond_the_limit_is_refused():
    data = make_docx(["x" * 5000])
    reason = refused("bomb.docx", data, limits=AttachmentLimits(max_unzipped_bytes=1000))
    assert reason == "would unpack to more than 1000 bytes, which is refused"


def test_other_zip_and_old_office_files_are_refused():
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("xl/workbook.xml", "<workbook/>")
    assert "other than DOCX" in refused("sheet.xlsx", buffer.getvalue())
    assert "old binary Office format" in refused("old.doc", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 100)


# --------------------------------------------------------------------------- text


@pytest.mark.parametrize(
    ("name", "media_type"),
    [
        ("notes.txt", "text/plain"),
        ("README.md", "text/markdown"),
        ("data.csv", "text/csv"),
        ("payload.json", "application/json"),
        ("main.py", "text/plain"),
        ("no-extension", "text/plain"),
    ],
)
def test_text_files_by_extension(name, media_type):
    attachment = extract_file(name, "line one\r\nline two — ünïcode\n".encode())
    assert attachment.media_type == media_type
    assert attachment.text == "line one\nline two — ünïcode\n"


def test_text_with_bom_and_invalid_bytes_is_decoded_with_replacement():
    assert extract_file("a.txt", b"\xef\xbb\xbfhello \xff world").text == "hello \ufffd world"
    assert extract_file("b.txt", "utf-16 text".encode("utf-16")).text == "utf-16 text"


def test_binary_file_is_refused():
    assert "binary" in refused("program.exe", b"MZ\x90\x00\x03\x00\x00\x00\x04\x00" * 50)
    assert "binary" in refused("blob.bin", bytes(range(1, 32)) * 40)


def test_empty_files_are_refused():
    assert refused("empty.txt", b"") == "is empty"
    assert refused("blank.md", b"  \n\n ") == "is empty"


def test_text_cut_at_the_budget_says_how_much_was_left_out():
    attachment = extract_file("log.txt", ("word " * 100).encode(), limits=AttachmentLimits(max_chars=52))
    assert attachment.char_count <= 52
    assert attachment.text.endswith("word")  # cut at a word boundary
    (notice,) = attachment.notices
    assert notice.startswith("log.txt: text cut at the 52-character limit for one question; ")
    assert f"{500 - len(attachment.text):,} characters of it left out" in notice


def test_docx_reading_stops_at_the_budget_and_says_the_rest_was_not_read():
    data = make_docx([("One", 1), "a" * 40, ("Two", 1), "b" * 40, ("Three", 1), "c" * 40])
    attachment = extract_file("d.docx", data, limits=AttachmentLimits(max_chars=30))
    assert [(s.label, s.text) for s in attachment.sections] == [("One", "One")]  # cut at the last whitespace
    assert attachment.notices == (
        "d.docx: text cut at the 30-character limit for one question in One; the rest of the document was not read",
    )


def test_a_large_text_file_is_read_only_up_to_the_budget():
    data = ("word " * 100_000).encode()  # 500,000 characters, read in chunks
    attachment = extract_file("big.log", data, limits=AttachmentLimits(max_chars=1000))
    assert attachment.char_count <= 1000 and attachment.text.startswith("word word")
    assert attachment.notices == (
        "big.log: text cut at the 1,000-character limit for one question; the rest of the file was not read",
    )


def test_text_newlines_split_across_chunks_are_one_newline():
    data = b"a" * (64 * 1024 - 1) + b"\r\n" + b"b"
    assert extract_file("crlf.txt", data).text == "a" * (64 * 1024 - 1) + "\nb"


def test_docx_damaged_after_some_text_keeps_that_text_with_a_notice():
    words = random.Random(7).choices(["alpha", "beta", "gamma", "delta", "omega"], k=12_000)
    data = bytearray(make_docx([" ".join(words[n : n + 100]) for n in range(0, len(words), 100)]))
    # Damage the compressed document far from its start: the first paragraphs still inflate.
    with zipfile.ZipFile(io.BytesIO(bytes(data))) as archive:
        info = archive.getinfo("word/document.xml")
    assert info.compress_size > 6_000
    start = info.header_offset + 30 + len(info.filename) + 5_000
    data[start : start + 64] = b"\x00" * 64
    attachment = extract_file("half.docx", bytes(data))
    assert attachment.text.startswith(" ".join(words[:100]))
    assert attachment.notices == ("half.docx: the rest of it could not be read (damaged or incomplete)",)


def test_no_budget_left_refuses_text_but_not_images():
    assert "earlier files used the 100,000-character limit" in refused("late.txt", b"text", char_budget=0)
    assert extract_file("late.png", PNG_1PX, char_budget=0).kind == "image"


def test_per_file_size_limit():
    reason = refused("huge.txt", b"x" * 2048, limits=AttachmentLimits(max_file_bytes=1024))
    assert reason == "is larger than the 1 KB limit per file"


# --------------------------------------------------------------------------- images


@pytest.mark.parametrize(
    ("name", "data", "media_type"),
    [
        ("a.png", PNG_1PX, "image/png"),
        ("b.jpg", JPEG_HEAD, "image/jpeg"),
        ("c.gif", GIF_HEAD, "image/gif"),
        ("d.webp", WEBP_HEAD, "image/webp"),
        ("misnamed.png", JPEG_HEAD, "image/jpeg"),  # the bytes decide, not the name
    ],
)
def test_images_are_kept_with_the_media_type_of_their_bytes(name, data, media_type):
    attachment = extract_file(name, data)
    assert attachment.kind == "image"
    assert attachment.media_type == media_type
    assert attachment.image_data == data
    assert attachment.sections == ()


def test_a_file_claiming_to_be_an_image_is_checked():
    assert refused("photo.png", b"not an image") == "is not a valid PNG file (its content does not match)"
    assert "not a valid JPEG" in refused("x", b"<svg/>", declared_type="image/jpeg")


@pytest.mark.parametrize(
    ("name", "declared_type"), [("scan.tiff", None), ("photo.heic", None), ("drawing", "image/svg+xml")]
)
def test_other_image_types_are_named_as_unsupported_images(name, declared_type):
    reason = refused(name, b"II*\x00" + b"\x00" * 64, declared_type=declared_type)
    assert reason == "is an image type that is not supported (PNG, JPEG, WebP and GIF are)"


def test_stored_form_has_no_image_bytes():
    dumped = extract_file("dot.png", PNG_1PX).model_dump(mode="json")
    assert "image_data" not in dumped
    assert dumped["media_type"] == "image/png" and dumped["size"] == len(PNG_1PX)


# --------------------------------------------------------------------------- settings


def test_limits_from_settings_use_the_issue_defaults():
    limits = AttachmentLimits.from_settings(Settings(_env_file=None))
    assert limits.max_file_bytes == 20 * 1024 * 1024
    assert limits.max_files == 5
    assert limits.max_chars == 100_000
    assert limits.max_pages == 200
    assert limits.max_total_bytes == 50 * 1024 * 1024
    custom = AttachmentLimits.from_settings(
        Settings(_env_file=None, COUNCIL_ATTACHMENT_MAX_FILE_MB="0.5", COUNCIL_ATTACHMENT_MAX_CHARS="10")
    )
    assert custom.max_file_bytes == 512 * 1024 and custom.max_chars == 10
