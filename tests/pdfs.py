"""PDFs for the tests, made on the spot: pages that carry their text, and pages that are only an image.

A text page has its words as PDF text (Helvetica, no font embedded), so
PDFium reads them back without OCR; an image page is the picture of its
words (``scripts/make_sample.py``'s page, drawn with Pillow's bundled font),
which only OCR can read.  Sizes are in points; an image page is placed at
200 dpi, and the workers draw it at its image's resolution: its pixels back 1:1.
"""

from __future__ import annotations

import io
import tempfile
from collections.abc import Sequence
from pathlib import Path

import pypdfium2 as pdfium
from fpdf import FPDF
from PIL import Image

from tests.harness import make_sample

TEXT_FONT_SIZE = 24
IMAGE_DPI = 200
POINTS_PER_INCH = 72


def pdf(pages: Sequence[tuple[str, str]], *, compress: bool = True) -> bytes:
    """One page per ``(kind, text)``: kind ``"text"`` (a text layer) or ``"image"`` (a picture of the text)."""
    document = FPDF(unit="pt")
    document.set_compression(compress)
    document.set_auto_page_break(False)
    for kind, text in pages:
        if kind == "text":
            _text_page(document, text)
        elif kind == "image":
            _image_page(document, _picture(text))
        else:
            raise ValueError(f"a page is 'text' or 'image', not {kind!r}")
    return bytes(document.output())


def text_pdf(*texts: str) -> bytes:
    return pdf([("text", t) for t in texts])


def image_pdf(*texts: str) -> bytes:
    return pdf([("image", t) for t in texts])


def rotated(data: bytes, degrees: int) -> bytes:
    """The PDF with every page's /Rotate set to ``degrees`` (clockwise, as viewers show it)."""
    document = pdfium.PdfDocument(data)
    try:
        for page in document:
            page.set_rotation(degrees)
        buffer = io.BytesIO()
        document.save(buffer)
        return buffer.getvalue()
    finally:
        document.close()


def _text_page(document: FPDF, text: str) -> None:
    document.add_page(format=(612, 792))
    document.set_font("helvetica", size=TEXT_FONT_SIZE)
    y = 100.0
    for line in text.splitlines():
        document.text(72, y, line)
        y += TEXT_FONT_SIZE * 1.6


def _picture(text: str) -> Image.Image:
    with tempfile.TemporaryDirectory() as directory:
        path = make_sample(Path(directory) / "page.png", text)
        with Image.open(path) as image:
            return image.convert("RGB")


def _image_page(document: FPDF, image: Image.Image) -> None:
    width, height = (side * POINTS_PER_INCH / IMAGE_DPI for side in image.size)
    document.add_page(format=(width, height))
    document.image(image, x=0, y=0, w=width, h=height)
