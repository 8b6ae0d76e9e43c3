"""The page sizes an image declares in its headers, read without decoding a pixel.

A PNG of 100,000 x 100,000 pixels compresses to a few megabytes and decodes
to 30 GB: the sizes must be known, and refused, before a decoder runs.  These
readers walk the headers only (PNG's IHDR, JPEG's markers up to the frame
header, TIFF's chain of image file directories) with a bounded amount of
work, however the file is built: a TIFF walk stops one frame past the page
limit and after a fixed number of directory entries, a JPEG walk after a
fixed number of segments.  Malformed headers raise ``InvalidDocument``.
"""

from __future__ import annotations

import struct

from documents.sniffing import JPEG, PNG, TIFF
from jobs.errors import InvalidDocument

#: JPEG segments before the frame header: a real file has a dozen or two (APPn, DQT, DHT, COM).
MAX_JPEG_SEGMENTS = 4096
#: Directory entries read over a whole TIFF: a real page has 10 to 30; 10,000 pages of them fit.
MAX_TIFF_ENTRIES = 1_000_000

_JPEG_FRAME_MARKERS = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}  # SOF0..SOF15 but DHT, JPG, DAC
_JPEG_STANDALONE = frozenset({0x01, *range(0xD0, 0xD8)})  # TEM, RST0..7: no length follows
_TIFF_WIDTH, _TIFF_LENGTH = 256, 257
_TIFF_SHORT, _TIFF_LONG, _TIFF_LONG8 = 3, 4, 16


def frame_sizes(data: bytes, media_type: str, max_frames: int) -> tuple[list[tuple[int, int]], bool]:
    """The (width, height) of each page of the image, at most ``max_frames``; and whether more follow.

    Only TIFF has several pages: a PNG's animation frames and the previews
    of a JPEG are not pages.
    """
    if media_type == PNG:
        return [png_size(data)], False
    if media_type == JPEG:
        return [jpeg_size(data)], False
    if media_type == TIFF:
        return tiff_sizes(data, max_frames)
    raise InvalidDocument(f"no header reader for {media_type}")


def png_size(data: bytes) -> tuple[int, int]:
    # The signature, then IHDR must come first: length 13, type, width, height.
    if len(data) < 24 or data[12:16] != b"IHDR":
        raise InvalidDocument("the PNG has no image header (IHDR)")
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def jpeg_size(data: bytes) -> tuple[int, int]:
    position = 2  # past SOI
    for _ in range(MAX_JPEG_SEGMENTS):
        # A marker is 0xFF and a code, after any number of 0xFF fill bytes.
        if position >= len(data) or data[position] != 0xFF:
            break
        while position < len(data) and data[position] == 0xFF:
            position += 1
        if position >= len(data):
            break
        marker = data[position]
        position += 1
        if marker in _JPEG_STANDALONE:
            continue
        if marker in (0xD9, 0xDA):  # EOI, SOS: no frame header before the data
            break
        if position + 2 > len(data):
            break
        (length,) = struct.unpack(">H", data[position : position + 2])
        if marker in _JPEG_FRAME_MARKERS:
            if length < 8 or position + 7 > len(data):
                break
            height, width = struct.unpack(">HH", data[position + 3 : position + 7])
            if height == 0:
                # Allowed by the standard (a DNL marker says it later), and a decoder must then read
                # the whole scan to learn the size: refused, it is never met in documents.
                raise InvalidDocument("the JPEG declares no height in its frame header")
            return width, height
        if length < 2:
            break
        position += length
    else:
        raise InvalidDocument(f"the JPEG has more than {MAX_JPEG_SEGMENTS} segments before its frame header")
    raise InvalidDocument("the JPEG has no readable frame header (SOF)")


def tiff_sizes(data: bytes, max_frames: int) -> tuple[list[tuple[int, int]], bool]:
    """The sizes of the first ``max_frames`` pages; and whether the chain goes on past them."""
    if len(data) < 8:
        raise InvalidDocument("the TIFF is too short for its header")
    order = {b"II": "<", b"MM": ">"}.get(data[:2])
    if order is None:
        raise InvalidDocument("the TIFF's byte order is neither II nor MM")
    (version,) = struct.unpack(order + "H", data[2:4])
    big = version == 43
    if big:
        if len(data) < 16:
            raise InvalidDocument("the BigTIFF is too short for its header")
        (offset,) = struct.unpack(order + "Q", data[8:16])
        count_format, entry_size, next_format = "Q", 20, "Q"
    elif version == 42:
        (offset,) = struct.unpack(order + "I", data[4:8])
        count_format, entry_size, next_format = "H", 12, "I"
    else:
        raise InvalidDocument(f"the TIFF's version is {version}, not 42 (TIFF) or 43 (BigTIFF)")
    count_size, next_size = struct.calcsize(count_format), struct.calcsize(next_format)

    sizes: list[tuple[int, int]] = []
    seen: set[int] = set()
    entries_read = 0
    while offset and offset not in seen:  # a directory met again ends the chain, as in Pillow
        if len(sizes) == max_frames:
            return sizes, True
        seen.add(offset)
        page = len(sizes) + 1
        if offset + count_size > len(data):
            raise InvalidDocument(f"the TIFF's directory of page {page} lies past its end")
        (count,) = struct.unpack(order + count_format, data[offset : offset + count_size])
        start = offset + count_size
        end = start + count * entry_size
        if end + next_size > len(data):
            raise InvalidDocument(f"the TIFF's directory of page {page} runs past its end")
        entries_read += count
        if entries_read > MAX_TIFF_ENTRIES:
            raise InvalidDocument(f"the TIFF's directories hold more than {MAX_TIFF_ENTRIES} entries")
        width = height = 0
        for entry in range(start, end, entry_size):
            tag, kind = struct.unpack(order + "HH", data[entry : entry + 4])
            if tag in (_TIFF_WIDTH, _TIFF_LENGTH):
                value = _tiff_value(data, order, entry, kind, big)
                if tag == _TIFF_WIDTH:
                    width = value
                else:
                    height = value
        if not width or not height:
            raise InvalidDocument(f"the TIFF's page {page} declares no width or height")
        sizes.append((width, height))
        (offset,) = struct.unpack(order + next_format, data[end : end + next_size])
    if not sizes:
        raise InvalidDocument("the TIFF has no image directory")
    return sizes, False


def _tiff_value(data: bytes, order: str, entry: int, kind: int, big: bool) -> int:
    """A SHORT, LONG or LONG8 held in the entry itself (a size is one value, so it always fits there)."""
    value_at = entry + (12 if big else 8)
    formats = {_TIFF_SHORT: "H", _TIFF_LONG: "I", _TIFF_LONG8: "Q"}
    if kind not in formats or (kind == _TIFF_LONG8 and not big):
        raise InvalidDocument(f"the TIFF gives a page size as field type {kind}")
    (value,) = struct.unpack_from(order + formats[kind], data, value_at)
    return value
