"""What a document's first bytes say it is, so that a declared content type can be held to them.

A client that sends a PDF as ``image/png`` (or a PNG as ``text/plain``)
would otherwise have its job accepted and fail later on a worker, or be read
by the wrong decoder.  The formats have magic numbers, so the gateway checks
the declared type against them at submission (``415 content_type_mismatch``).

Only signatures that text is very unlikely to start with are used: a
``text/plain`` document is refused when its bytes are one of these formats,
not for being in some charset (the engine that reads it says what it takes).
Pure functions over bytes: no decoder is involved.
"""

from __future__ import annotations

PDF = "application/pdf"
PNG = "image/png"
JPEG = "image/jpeg"
TIFF = "image/tiff"
GIF = "image/gif"
WEBP = "image/webp"
BMP = "image/bmp"
TEXT = "text/plain"

#: PDFium (and most readers) find the header anywhere in the first KiB: some producers put junk before it.
PDF_HEADER_WINDOW = 1024
_PDF_HEADER = b"%PDF-"
_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_TIFF_HEADERS = (b"II*\x00", b"MM\x00*", b"II+\x00", b"MM\x00+")  # classic and BigTIFF, both byte orders
# BITMAPINFOHEADER and its relatives, by their sizes: "BM" alone starts too many words.
_BMP_DIB_HEADER_SIZES = frozenset({12, 40, 52, 56, 64, 108, 124})

_NAMES = {
    PDF: "a PDF",
    PNG: "a PNG image",
    JPEG: "a JPEG image",
    TIFF: "a TIFF image",
    GIF: "a GIF image",
    WEBP: "a WebP image",
    BMP: "a BMP image",
}


def sniff(data: bytes) -> str | None:
    """The media type the bytes start like, or None when they are none of the formats above."""
    if data.startswith(_PDF_HEADER):
        return PDF
    if data.startswith(_PNG_SIGNATURE):
        return PNG
    if data.startswith(b"\xff\xd8\xff"):
        return JPEG
    if data[:4] in _TIFF_HEADERS:
        return TIFF
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return GIF
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return WEBP
    if _is_bmp(data):
        return BMP
    return None


def matches(declared: str, data: bytes) -> bool:
    """Whether bytes may be of the ``declared`` media type (parameters already stripped).

    A type with a signature above needs that signature (a PDF's header may
    come late in the first KiB, as PDFium allows); ``text/plain`` needs
    none of them; any other type is not judged here.
    """
    if declared == PDF:
        return _PDF_HEADER in data[:PDF_HEADER_WINDOW]
    if declared in _NAMES:
        return sniff(data) == declared
    if declared == TEXT:
        return sniff(data) is None
    return True


def describe(media_type: str | None) -> str:
    """``a PDF``, ``a PNG image``, ...; for None: what the bytes are not."""
    if media_type is None:
        return "none of the formats ocrgw knows (PDF, PNG, JPEG, TIFF, GIF, WebP, BMP)"
    return _NAMES.get(media_type, media_type)


def _is_bmp(data: bytes) -> bool:
    if len(data) < 18 or not data.startswith(b"BM") or data[6:10] != b"\x00\x00\x00\x00":
        return False
    return int.from_bytes(data[14:18], "little") in _BMP_DIB_HEADER_SIZES
