"""A declared content type is held to the document's magic bytes."""

from __future__ import annotations

import pytest

from documents import sniffing
from documents.sniffing import BMP, GIF, JPEG, PDF, PNG, TEXT, TIFF, WEBP
from tests import bad_documents as bad

SAMPLES = {
    PDF: bad.real_pdf(),
    PNG: bad.real_png(),
    JPEG: bad.real_jpeg(),
    TIFF: bad.real_tiff(),
    GIF: b"GIF89a\x01\x00\x01\x00\x00\x00\x00;",
    WEBP: b"RIFF\x1a\x00\x00\x00WEBPVP8L\x0d\x00\x00\x00/\x00\x00\x00\x10\x07\x10\x11\x11\x88\x88\xfe\x07\x00",
    BMP: b"BM" + (70).to_bytes(4, "little") + b"\0\0\0\0" + (54).to_bytes(4, "little") + (40).to_bytes(4, "little"),
}


@pytest.mark.parametrize("media_type", sorted(SAMPLES))
def test_each_format_is_told_by_its_first_bytes(media_type):
    assert sniffing.sniff(SAMPLES[media_type]) == media_type


@pytest.mark.parametrize("media_type", sorted(SAMPLES))
def test_a_document_matches_its_own_type_and_no_other(media_type):
    data = SAMPLES[media_type]

    assert sniffing.matches(media_type, data)
    assert [other for other in SAMPLES if other != media_type and sniffing.matches(other, data)] == []
    assert not sniffing.matches(TEXT, data)


def test_big_tiff_of_either_byte_order_is_a_tiff():
    assert sniffing.sniff(b"II+\x00\x08\x00\x00\x00") == TIFF
    assert sniffing.sniff(b"MM\x00+\x00\x08\x00\x00") == TIFF


def test_a_pdf_header_may_come_late_in_the_first_kib_as_pdfium_allows():
    late = b"\r\n" * 100 + SAMPLES[PDF]

    assert sniffing.matches(PDF, late)
    assert not sniffing.matches(PDF, b" " * 1024 + SAMPLES[PDF])
    # Not at the very start, it is not sniffed as one: a text may talk about "%PDF-".
    assert sniffing.sniff(late) is None


@pytest.mark.parametrize(
    "text",
    [b"hello", b"BMW 320d, 2019", b"", "G\u00fcnter".encode("latin-1"), b"\xff\xfe\xfd\x00", b"RIFF but not webp"],
)
def test_text_that_is_none_of_the_formats_is_text_plain_whatever_its_charset(text):
    assert sniffing.sniff(text) is None
    assert sniffing.matches(TEXT, text)


@pytest.mark.parametrize("media_type", [PDF, PNG, JPEG, TIFF])
def test_a_document_of_no_known_format_matches_no_image_type(media_type):
    assert not sniffing.matches(media_type, b"just some words")
    assert not sniffing.matches(media_type, b"")


def test_a_type_with_no_signature_is_not_judged():
    assert sniffing.matches("application/x-unknown", b"anything")


def test_describe_names_the_format_or_says_none_was_found():
    assert sniffing.describe(PDF) == "a PDF"
    assert sniffing.describe(PNG) == "a PNG image"
    assert "none of the formats" in sniffing.describe(None)
