"""Page sizes read from the headers alone, with bounded work, whatever the file claims."""

from __future__ import annotations

import io
import struct

import pytest
from PIL import Image

from documents import headers
from documents.sniffing import JPEG, PNG, TIFF
from jobs.errors import InvalidDocument
from tests import bad_documents as bad


def test_a_png_size_is_its_image_header_s():
    assert headers.png_size(bad.real_png(64, 32)) == (64, 32)
    assert headers.png_size(bad.png_bomb()) == (100_000, 100_000)


def test_a_jpeg_size_is_its_frame_header_s_whatever_comes_before_it():
    image = Image.new("RGB", (70, 30), "white")
    buffer = io.BytesIO()
    image.save(buffer, "JPEG", exif=Image.Exif(), icc_profile=b"\0" * 4000, progressive=True, comment=b"x" * 300)

    assert headers.jpeg_size(buffer.getvalue()) == (70, 30)
    assert headers.jpeg_size(bad.jpeg_bomb()) == (65_535, 65_535)


@pytest.mark.parametrize(("mode", "byte_order"), [("L", b"II"), ("I;16B", b"MM")])
def test_tiff_sizes_are_every_page_s_in_either_byte_order(mode, byte_order):
    pages = [Image.new(mode, size) for size in ((30, 20), (10, 40), (5, 5))]
    buffer = io.BytesIO()
    pages[0].save(buffer, "TIFF", save_all=True, append_images=pages[1:])
    data = buffer.getvalue()
    assert data[:2] == byte_order  # Pillow writes 16-bit big-endian greys as MM

    assert headers.tiff_sizes(data, 10) == ([(30, 20), (10, 40), (5, 5)], False)


def test_a_tiff_walk_stops_one_page_past_the_limit():
    flood = bad.tiff_pages(5000)

    assert headers.tiff_sizes(flood, 100) == ([(1, 1)] * 100, True)
    assert headers.tiff_sizes(flood, 5000) == ([(1, 1)] * 5000, False)


def test_a_tiff_whose_directories_loop_ends_where_the_loop_starts():
    assert headers.tiff_sizes(bad.tiff([(3, 4), (5, 6)], loop=True), 10) == ([(3, 4), (5, 6)], False)


def test_a_big_tiff_is_read_too():
    # Header, then one directory at 16: two LONG8 entries and no next directory.
    directory = struct.pack("<Q", 2)
    directory += struct.pack("<HHQQ", 256, 16, 1, 123) + struct.pack("<HHQQ", 257, 16, 1, 45)
    data = b"II+\x00" + struct.pack("<HHQ", 8, 0, 16) + directory + struct.pack("<Q", 0)

    assert headers.tiff_sizes(data, 10) == ([(123, 45)], False)


def test_a_tiff_with_absurdly_many_directory_entries_is_refused_without_reading_them_all(monkeypatch):
    monkeypatch.setattr(headers, "MAX_TIFF_ENTRIES", 50)

    with pytest.raises(InvalidDocument, match="more than 50 entries"):
        headers.tiff_sizes(bad.tiff_pages(10), 100)  # 8 entries a page


def test_a_jpeg_with_endless_segments_before_its_frame_header_is_refused():
    padding = b"\xff\xfe\x00\x02" * (headers.MAX_JPEG_SEGMENTS + 1)  # empty comments
    data = b"\xff\xd8" + padding + bad.real_jpeg()[2:]

    with pytest.raises(InvalidDocument, match="segments"):
        headers.jpeg_size(data)


@pytest.mark.parametrize(
    ("data", "media_type", "message"),
    [
        (b"\x89PNG\r\n\x1a\n", PNG, "IHDR"),
        (b"\x89PNG\r\n\x1a\n" + b"\0" * 16, PNG, "IHDR"),
        (b"\xff\xd8\xff", JPEG, "frame header"),
        (b"\xff\xd8\xff\xda\x00\x02", JPEG, "frame header"),  # scan data before any frame header
        (bad.truncated(bad.real_jpeg(), 0.05), JPEG, "frame header"),
        (bad.jpeg_bomb(height=0), JPEG, "no height"),
        (b"II*\x00", TIFF, "too short"),
        (b"II*\x00" + struct.pack("<I", 1 << 30), TIFF, "past its end"),
        (b"II*\x00" + struct.pack("<IH", 8, 500), TIFF, "runs past its end"),
        (b"II*\x00" + struct.pack("<I", 0), TIFF, "no image directory"),
        (b"II\x2b\x01\x08\x00\x00\x00", TIFF, "version"),
        (bad.tiff([(0, 5)]), TIFF, "no width or height"),
    ],
    ids=[
        "png signature only",
        "png without IHDR",
        "jpeg marker only",
        "jpeg scan first",
        "jpeg truncated",
        "jpeg height 0",
        "tiff header cut",
        "tiff directory past the end",
        "tiff directory runs past the end",
        "tiff without directory",
        "tiff bad version",
        "tiff zero width",
    ],
)
def test_headers_that_cannot_be_read_are_an_invalid_document(data, media_type, message):
    with pytest.raises(InvalidDocument, match=message):
        headers.frame_sizes(data, media_type, 10)


def test_only_a_tiff_has_several_pages():
    animated = io.BytesIO()
    frames = [Image.new("L", (8, 8), shade) for shade in (0, 255)]
    frames[0].save(animated, "PNG", save_all=True, append_images=frames[1:])

    assert headers.frame_sizes(animated.getvalue(), PNG, 10) == ([(8, 8)], False)
