"""The worst documents we can make, built byte by byte in a blink: bombs, floods of pages, corrupt files.

Each would cost a careless reader gigabytes or minutes; none costs more
than a few megabytes to hold.  A deflate "bomb" is built from one
compressed megabyte of zeros repeated: with a full flush after it, the
segment stands on its own, so copies of it make a valid stream of any
length (the Adler-32 of zeros is known in closed form).
"""

from __future__ import annotations

import io
import struct
import zlib
from collections.abc import Sequence

from PIL import Image

_SEGMENT_BYTES = 1 << 20


def zlib_zeros(length: int, prefix: bytes = b"") -> bytes:
    """A zlib stream that inflates to ``prefix`` and then ``length`` zero bytes, at about 1/1000 of that."""
    whole, rest = divmod(length, _SEGMENT_BYTES)
    stream = [b"\x78\xda"]
    if prefix:
        stream.append(_raw_deflate(prefix))
    if whole:
        stream.append(_raw_deflate(bytes(_SEGMENT_BYTES)) * whole)
    if rest:
        stream.append(_raw_deflate(bytes(rest)))
    stream.append(b"\x03\x00")  # a final, empty fixed-Huffman block
    # Adler-32: zeros leave its sum a as the prefix left it, and add a to its sum b once per byte.
    checksum = zlib.adler32(prefix)
    a, b = checksum & 0xFFFF, checksum >> 16
    stream.append(struct.pack(">I", (b + length * a) % 65521 << 16 | a))
    return b"".join(stream)


def _raw_deflate(data: bytes) -> bytes:
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    return compressor.compress(data) + compressor.flush(zlib.Z_FULL_FLUSH)


# -- PNG -------------------------------------------------------------------------------------------


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def png(width: int, height: int, idat: bytes | None = None, extra_chunks: Sequence[bytes] = ()) -> bytes:
    """An 8-bit grey PNG of that size; by default its pixels are all there (zeros, deflated)."""
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    if idat is None:
        idat = zlib_zeros((width + 1) * height)  # a filter byte, then the row
    return b"".join(
        [b"\x89PNG\r\n\x1a\n", _chunk(b"IHDR", header), *extra_chunks, _chunk(b"IDAT", idat), _chunk(b"IEND", b"")]
    )


def png_bomb(side: int = 100_000) -> bytes:
    """``side`` x ``side`` pixels, complete: 10 GB to decode at the default side, about 10 MB to hold."""
    return png(side, side)


def png_text_bomb() -> bytes:
    """A small image whose compressed text chunk inflates to 1 GB."""
    text = _chunk(b"zTXt", b"Comment\x00\x00" + zlib_zeros(1 << 30))
    return png(16, 16, extra_chunks=[text])


def real_png(width: int = 64, height: int = 32) -> bytes:
    return _saved(Image.new("L", (width, height), 255), "PNG")


# -- JPEG ------------------------------------------------------------------------------------------


def real_jpeg(width: int = 64, height: int = 32) -> bytes:
    return _saved(Image.new("RGB", (width, height), "white"), "JPEG")


def jpeg_bomb(width: int = 65_535, height: int = 65_535) -> bytes:
    """A real JPEG whose frame header is made to declare ``width`` x ``height`` (12 GB as RGB)."""
    data = bytearray(real_jpeg(16, 16))
    sof = data.index(b"\xff\xc0")
    data[sof + 5 : sof + 9] = struct.pack(">HH", height, width)
    return bytes(data)


# -- TIFF ------------------------------------------------------------------------------------------


def tiff(sizes: Sequence[tuple[int, int]], *, loop: bool = False) -> bytes:
    """A little-endian TIFF of 8-bit grey pages, one per size, each a single strip (of one byte: the rest
    is missing, as in a bomb whose pixels were never sent); ``loop``: the last directory points at the first."""
    entries_per_page = 8
    ifd_size = 2 + entries_per_page * 12 + 4
    out = bytearray(b"II*\x00" + struct.pack("<I", 8))
    strip_at = 8 + ifd_size * len(sizes)
    for index, (width, height) in enumerate(sizes):
        last = index == len(sizes) - 1
        next_ifd = (8 if loop else 0) if last else 8 + ifd_size * (index + 1)
        entries = [
            (256, 4, 1, width),  # ImageWidth
            (257, 4, 1, height),  # ImageLength
            (258, 3, 1, 8),  # BitsPerSample
            (259, 3, 1, 1),  # Compression: none
            (262, 3, 1, 1),  # PhotometricInterpretation: black is zero
            (273, 4, 1, strip_at),  # StripOffsets
            (278, 4, 1, height),  # RowsPerStrip
            (279, 4, 1, min(width * height, 0xFFFFFFFF)),  # StripByteCounts
        ]
        out += struct.pack("<H", len(entries))
        for tag, kind, count, value in entries:
            # Little-endian, a SHORT sits in the first two bytes of the value field, as "<I" puts it.
            out += struct.pack("<HHII", tag, kind, count, value)
        out += struct.pack("<I", next_ifd)
    out += b"\xff"
    return bytes(out)


def tiff_pages(count: int) -> bytes:
    """``count`` pages of 1 x 1 pixel: complete, tiny, and a page flood."""
    return tiff([(1, 1)] * count)


def real_tiff(pages: int = 2) -> bytes:
    images = [Image.new("L", (32, 16), 255) for _ in range(pages)]
    buffer = io.BytesIO()
    images[0].save(buffer, "TIFF", save_all=True, append_images=images[1:])
    return buffer.getvalue()


# -- PDF -------------------------------------------------------------------------------------------


def pdf(objects: Sequence[bytes]) -> bytes:
    """A PDF of these objects (numbered from 1; 1 is the catalog), with a correct cross-reference table."""
    out = bytearray(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref_at = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref_at)
    return bytes(out)


def _stream(dictionary: bytes, data: bytes) -> bytes:
    return b"<< " + dictionary + b" /Length %d >>\nstream\n" % len(data) + data + b"\nendstream"


def pdf_pages(count: int, width_pt: float = 612, height_pt: float = 792) -> bytes:
    """``count`` empty pages of that size (points), in one flat page tree."""
    kids = b" ".join(b"%d 0 R" % (3 + index) for index in range(count))
    page = b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %g %g] >>" % (width_pt, height_pt)
    return pdf([b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, count),
                *[page] * count])  # fmt: skip


def pdf_huge_page(inches: float = 200) -> bytes:
    """One page of ``inches`` x ``inches`` (200 is the largest PDF allows without UserUnit): 1.6 Gpx at 200 dpi."""
    return pdf_pages(1, inches * 72, inches * 72)


def pdf_with_content(content: bytes, *, filters: bytes = b"") -> bytes:
    """One letter-size page whose content stream is ``content`` (already encoded by ``filters``)."""
    return pdf(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>",
            _stream(filters, content),
        ]
    )


def pdf_flate_bomb(inflated: int = 2 << 30) -> bytes:
    """A page whose content stream inflates to ``inflated`` zero bytes (PDF whitespace), twice deflated."""
    once = zlib_zeros(inflated)
    return pdf_with_content(zlib.compress(once, 9), filters=b"/Filter [/FlateDecode /FlateDecode]")


def pdf_image_bomb(side: int = 100_000) -> bytes:
    """A letter-size page drawing one ``side`` x ``side`` grey image (10 GB decoded), its pixels deflated."""
    image = _stream(
        b"/Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceGray /BitsPerComponent 8 "
        b"/Filter /FlateDecode" % (side, side),
        zlib_zeros(side * side),
    )
    return pdf(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
            b"/Resources << /XObject << /Im 5 0 R >> >> >>",
            _stream(b"", b"q 612 0 0 792 0 0 cm /Im Do Q"),
            image,
        ]
    )


def pdf_nested_objects(depth: int = 100_000) -> bytes:
    """A page dictionary holding an array nested ``depth`` deep, and a page tree nested 2,000 deep."""
    nested = b"[" * depth + b"]" * depth
    levels = 2000
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>"]
    for level in range(levels):  # objects 2 .. levels + 1: each Pages node holds the next
        number = 2 + level
        parent = b"/Parent %d 0 R " % (number - 1) if level else b""
        objects.append(b"<< /Type /Pages %s/Kids [%d 0 R] /Count 1 >>" % (parent, number + 1))
    objects.append(b"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 612 792] /Deep %s >>" % (levels + 1, nested))
    return pdf(objects)


def pdf_object_stream_bomb(inflated: int = 1 << 30) -> bytes:
    """A 3 KB PDF whose page tree is in an object stream, deflated twice, that inflates to ``inflated`` bytes:
    a reader must inflate it all to count the pages."""
    objects = [
        b"<< /Type /Catalog /Pages 3 0 R >>",
        b"<< /Type /Pages /Kids [4 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 3 0 R /MediaBox [0 0 612 792] >>",
    ]
    header, body = b"", b""
    for index, text in enumerate(objects):
        header += b"%d %d " % (2 + index, len(body))
        body += text + b" "
    first = 64  # where the first object starts in the decoded stream
    decoded = header.ljust(first) + body
    data = zlib.compress(zlib_zeros(inflated - len(decoded), prefix=decoded), 9)
    out = bytearray(b"%PDF-1.7\n")
    stream_at = len(out)
    out += b"1 0 obj\n<< /Type /ObjStm /N 3 /First %d /Filter [/FlateDecode /FlateDecode] /Length %d >>\n" % (
        first,
        len(data),
    )
    out += b"stream\n" + data + b"\nendstream\nendobj\n"
    xref_at = len(out)
    # A cross-reference stream: object 1 at its offset, 2 to 4 in object stream 1, 5 (itself) at its offset.
    rows = [(0, 0, 65535), (1, stream_at, 0), (2, 1, 0), (2, 1, 1), (2, 1, 2), (1, xref_at, 0)]
    table = b"".join(struct.pack(">BIH", *row) for row in rows)
    out += b"5 0 obj\n<< /Type /XRef /W [1 4 2] /Size 6 /Root 2 0 R /Length %d >>\n" % len(table)
    out += b"stream\n" + table + b"\nendstream\nendobj\nstartxref\n%d\n%%%%EOF\n" % xref_at
    return bytes(out)


def pdf_xref_stream_bomb(inflated: int = 200 << 20, tag: int = 0) -> bytes:
    """A PDF under 1 KB whose cross-reference stream, deflated twice, inflates to ``inflated`` bytes: a reader
    must inflate it all (and holds it twice) to find any object.  ``tag`` makes copies that differ by a byte."""
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>",
    ]
    out = bytearray(b"%%PDF-1.7\n%%%d\n" % tag)
    offsets = []
    for number, text in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, text)
    xref_at = len(out)
    # Object 0 free, 1 to 3 at their offsets, 4 (the stream itself) at its own; zeros after the rows.
    rows = [(0, 0, 65535), *((1, offset, 0) for offset in offsets), (1, xref_at, 0)]
    table = b"".join(struct.pack(">BIH", *row) for row in rows)
    twice = zlib.compress(zlib_zeros(inflated - len(table), prefix=table), 9)
    out += b"4 0 obj\n<< /Type /XRef /W [1 4 2] /Size 5 /Root 1 0 R /Filter [/FlateDecode /FlateDecode] "
    out += b"/Length %d >>\nstream\n" % len(twice)
    out += twice + b"\nendstream\nendobj\nstartxref\n%d\n%%%%EOF\n" % xref_at
    return bytes(out)


def pdf_without_xref(size: int, tag: int = 0) -> bytes:
    """A PDF of about ``size`` bytes of small objects and no cross-reference table: a reader rebuilds one by
    scanning every byte, slow (about a second for 8 MB) but in little memory.  ``tag`` as above."""
    head = (
        b"%%PDF-1.7\n%%%d\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n"
        b"2 0 obj\n<< /Type /Pages /Kids [3 0 R] /Count 1 >>\nendobj\n"
        b"3 0 obj\n<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>\nendobj\n" % tag
    )
    filler = b"".join(b"%d 0 obj\n[1 2 3]\nendobj\n" % number for number in range(4, 4 + size // 24))
    return head + filler + b"trailer\n<< /Root 1 0 R >>\n%%EOF\n"


def real_pdf(pages: int = 1) -> bytes:
    images = [Image.new("RGB", (200, 100), "white") for _ in range(pages)]
    return _saved(images[0], "PDF", save_all=True, append_images=images[1:], resolution=200)


# -- corrupt files ---------------------------------------------------------------------------------


def truncated(data: bytes, keep: float = 0.5) -> bytes:
    """The first ``keep`` of the file: headers intact, the data cut off."""
    return data[: max(1, int(len(data) * keep))]


def _saved(image: Image.Image, fmt: str, **params) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, fmt, **params)
    return buffer.getvalue()
