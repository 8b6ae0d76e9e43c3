"""Scanned documents made from a real PDF, as a scanner would make them.

The source is a real, born-digital PDF that Debian ships (the freedesktop
shared-mime-info specification, 17 pages of text): its text layer is the
truth a scan's OCR is held to.  ``scanned_pdf`` draws chosen pages at a
scanner's resolution, turns some a quarter or half turn (a sheet fed
sideways or upside down), skews others by a few degrees (a sheet fed
crooked), stores each as a JPEG and wraps them in an image-only PDF, one
page per image, each JPEG's bytes as they are (``DCTDecode``), the page
sized from the resolution, as img2pdf and scanners do.
"""

from __future__ import annotations

import io
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pikepdf
import pypdfium2 as pdfium
from PIL import Image

#: Debian's shared-mime-info package ships it; scripts/setup.sh --tests makes sure it is there.
REAL_PDF = Path("/usr/share/doc/shared-mime-info/shared-mime-info-spec.pdf")
SCAN_DPI = 200
POINTS_PER_INCH = 72


def real_pdf() -> bytes:
    """The real PDF's bytes."""
    return REAL_PDF.read_bytes()


def source_text(page_index: int, pdf: bytes | None = None) -> str:
    """The text layer of page ``page_index`` (0-based) of the real PDF (or ``pdf``): what a page's OCR is held to."""
    document = pdfium.PdfDocument(pdf or real_pdf())
    try:
        page = document[page_index]
        text_page = page.get_textpage()
        try:
            return text_page.get_text_range()
        finally:
            text_page.close()
            page.close()
    finally:
        document.close()


@dataclass(frozen=True)
class ScannedPage:
    """One page as scanned: its JPEG and what was done to it."""

    source_index: int  # 0-based page of the source PDF
    turned: int  # degrees clockwise the sheet was fed turned (0, 90, 180 or 270)
    skewed: float  # degrees counter-clockwise the sheet was fed crooked
    jpeg: bytes


def scan_page(
    source: pdfium.PdfDocument,
    index: int,
    *,
    turned: int = 0,
    skewed: float = 0.0,
    dpi: int = SCAN_DPI,
    quality: int = 80,
) -> ScannedPage:
    """Page ``index`` of ``source`` drawn at ``dpi``, in grey, turned and skewed, as a JPEG."""
    if turned not in (0, 90, 180, 270):
        raise ValueError("a sheet is turned 0, 90, 180 or 270 degrees")
    page = source[index]
    try:
        bitmap = page.render(scale=dpi / POINTS_PER_INCH, grayscale=True)
        try:
            image = bitmap.to_pil().convert("L")
        finally:
            bitmap.close()
    finally:
        page.close()
    if skewed:
        image = image.rotate(skewed, resample=Image.Resampling.BICUBIC, expand=False, fillcolor=255)
    if turned:
        image = image.rotate(-turned, expand=True)  # PIL turns counter-clockwise
    buffer = io.BytesIO()
    image.save(buffer, "JPEG", quality=quality, dpi=(dpi, dpi))
    return ScannedPage(index, turned, skewed, buffer.getvalue())


def scanned_pages(
    page_indices: Sequence[int],
    *,
    turned: Mapping[int, int] | None = None,
    skewed: Mapping[int, float] | None = None,
    pdf: bytes | None = None,
    dpi: int = SCAN_DPI,
) -> list[ScannedPage]:
    """The pages of the real PDF (or ``pdf``) at ``page_indices``, scanned; ``turned``, ``skewed``: by source index."""
    turned, skewed = turned or {}, skewed or {}
    source = pdfium.PdfDocument(pdf or real_pdf())
    try:
        return [
            scan_page(source, index, turned=turned.get(index, 0), skewed=skewed.get(index, 0.0), dpi=dpi)
            for index in page_indices
        ]
    finally:
        source.close()


def image_only_pdf(pages: Sequence[ScannedPage], dpi: int = SCAN_DPI) -> bytes:
    """An image-only PDF, one page per scanned page, each JPEG embedded byte for byte."""
    document = pikepdf.Pdf.new()
    for scanned in pages:
        with Image.open(io.BytesIO(scanned.jpeg)) as image:
            width, height = image.size
            colour_space = pikepdf.Name.DeviceGray if image.mode == "L" else pikepdf.Name.DeviceRGB
        image_object = pikepdf.Stream(document, scanned.jpeg)
        image_object.Type, image_object.Subtype = pikepdf.Name.XObject, pikepdf.Name.Image
        image_object.Width, image_object.Height = width, height
        image_object.ColorSpace, image_object.BitsPerComponent = colour_space, 8
        image_object.Filter = pikepdf.Name.DCTDecode
        points_wide, points_high = width * POINTS_PER_INCH / dpi, height * POINTS_PER_INCH / dpi
        content = f"q {points_wide:.4f} 0 0 {points_high:.4f} 0 0 cm /Scan Do Q".encode()
        page = pikepdf.Page(
            pikepdf.Dictionary(
                Type=pikepdf.Name.Page,
                MediaBox=[0, 0, points_wide, points_high],
                Resources=pikepdf.Dictionary(XObject=pikepdf.Dictionary(Scan=image_object)),
                Contents=pikepdf.Stream(document, content),
            )
        )
        document.pages.append(page)
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def scanned_pdf(
    page_indices: Sequence[int],
    *,
    turned: Mapping[int, int] | None = None,
    skewed: Mapping[int, float] | None = None,
    pdf: bytes | None = None,
    dpi: int = SCAN_DPI,
) -> bytes:
    """``scanned_pages`` as one image-only PDF."""
    return image_only_pdf(scanned_pages(page_indices, turned=turned, skewed=skewed, pdf=pdf, dpi=dpi), dpi)


# -- how well a text is read back --------------------------------------------------------


def page_texts(pdf: bytes) -> list[str]:
    """The text PDFium extracts from each page of ``pdf``: a searchable PDF's text layer."""
    document = pdfium.PdfDocument(pdf)
    try:
        texts = []
        for page in document:
            text_page = page.get_textpage()
            texts.append(text_page.get_text_range())
            text_page.close()
            page.close()
        return texts
    finally:
        document.close()


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def levenshtein(a: str, b: str) -> int:
    """Edit distance, bit-parallel (Myers, as Hyyrö formulates it): a page of 3,000 characters in milliseconds."""
    if not a:
        return len(b)
    m = len(a)
    mask, high = (1 << m) - 1, 1 << (m - 1)
    peq: dict[str, int] = {}
    for i, c in enumerate(a):
        peq[c] = peq.get(c, 0) | (1 << i)
    pv, mv, score = mask, 0, m
    for c in b:
        eq = peq.get(c, 0)
        xv = eq | mv
        xh = (((eq & pv) + pv) ^ pv) | eq
        ph = mv | (~(xh | pv) & mask)
        mh = pv & xh
        if ph & high:
            score += 1
        elif mh & high:
            score -= 1
        ph = ((ph << 1) | 1) & mask
        mh = (mh << 1) & mask
        pv = mh | (~(xv | ph) & mask)
        mv = ph & xv
    return score


def page_accuracy(reference: str, text: str) -> float:
    """1 - edit distance / reference length, on whitespace-normalised texts (at least 0)."""
    reference, text = _norm(reference), _norm(text)
    if not reference:
        return 1.0 if not text else 0.0
    return max(0.0, 1 - levenshtein(reference, text) / len(reference))


# -- pages at other resolutions ----------------------------------------------------------


@dataclass(frozen=True)
class ResolutionCase:
    """A document made from a region of a real page, and the text of that region: what its OCR is held to."""

    document: bytes
    content_type: str
    reference: str
    width_in: float  # the true size of what was scanned, in inches
    height_in: float
    dpi: float  # the true resolution of its pixels


def _rendered_region(
    source: pdfium.PdfDocument, index: int, dpi: float, region: tuple[float, float, float, float]
) -> Image.Image:
    """``region`` (left, bottom, right, top, in points) of page ``index``, drawn at ``dpi`` in grey."""
    page = source[index]
    try:
        width, height = page.get_size()
        left, bottom, right, top = region
        bitmap = page.render(
            scale=dpi / POINTS_PER_INCH, grayscale=True, crop=(left, bottom, width - right, height - top)
        )
        try:
            return bitmap.to_pil().convert("L")
        finally:
            bitmap.close()
    finally:
        page.close()


def _region_text(source: pdfium.PdfDocument, index: int, region: tuple[float, float, float, float]) -> str:
    page = source[index]
    try:
        text_page = page.get_textpage()
        try:
            return text_page.get_text_bounded(*region)
        finally:
            text_page.close()
    finally:
        page.close()


def _between_lines(source: pdfium.PdfDocument, index: int, y: float, upwards: bool) -> float:
    """The nearest height to ``y`` (in points, searching up or down) that crosses no character of the page."""
    page = source[index]
    try:
        text_page = page.get_textpage()
        try:
            boxes = [text_page.get_charbox(i) for i in range(text_page.count_chars())]
        finally:
            text_page.close()
    finally:
        page.close()
    step = 1.0 if upwards else -1.0
    while any(bottom < y < top for _, bottom, _, top in boxes):
        y += step
    return y


def high_resolution_page(
    *,
    dpi: float = 2400,
    width_in: float = 2.0,
    height_in: float = 1.5,
    reduction: float = 3.0,
    page_index: int = 4,
    corner: tuple[float, float] = (106.0, 120.0),
    pdf: bytes | None = None,
) -> ResolutionCase:
    """A ``width_in`` x ``height_in`` inch PDF page holding one image of ``dpi`` on it, of a real page's text.

    What a microfilm or a slide holds: a region ``reduction`` times the page's size, of a real page's text
    (by default 6 x 4.5 inches of page 5's text column, some 25 lines), scanned so finely that its type,
    three times smaller on the page, still has all its detail.  The region's top left ``corner`` is in points
    from the real page's top left; its top and bottom fall between two lines.  The image is a lossless grey
    PNG's data (``FlateDecode``) placed to fill the page.
    """
    source = pdfium.PdfDocument(pdf or real_pdf())
    try:
        _, page_height = source[page_index].get_size()
        left = corner[0]
        top = _between_lines(source, page_index, page_height - corner[1], upwards=True)
        bottom = _between_lines(source, page_index, top - height_in * reduction * POINTS_PER_INCH, upwards=True)
        region = (left, bottom, left + width_in * reduction * POINTS_PER_INCH, top)
        image = _rendered_region(source, page_index, dpi / reduction, region)
        reference = _region_text(source, page_index, region)
    finally:
        source.close()
    document = pikepdf.Pdf.new()
    stream = pikepdf.Stream(document, image.tobytes())
    stream.Type, stream.Subtype = pikepdf.Name.XObject, pikepdf.Name.Image
    stream.Width, stream.Height = image.size
    stream.ColorSpace, stream.BitsPerComponent = pikepdf.Name.DeviceGray, 8
    points_wide, points_high = image.width * POINTS_PER_INCH / dpi, image.height * POINTS_PER_INCH / dpi
    content = f"q {points_wide:.4f} 0 0 {points_high:.4f} 0 0 cm /Im0 Do Q".encode()
    document.pages.append(
        pikepdf.Page(
            pikepdf.Dictionary(
                Type=pikepdf.Name.Page,
                MediaBox=[0, 0, points_wide, points_high],
                Resources=pikepdf.Dictionary(XObject=pikepdf.Dictionary(Im0=stream)),
                Contents=pikepdf.Stream(document, content),
            )
        )
    )
    buffer = io.BytesIO()
    document.save(buffer, compress_streams=True)
    return ResolutionCase(buffer.getvalue(), "application/pdf", reference, points_wide / 72, points_high / 72, dpi)


#: Sheets a page is scanned on: (width, height) in inches.
SHEETS = {"letter": (8.5, 11.0), "a4": (210 / 25.4, 297 / 25.4)}


def unstated_png(
    *, sheet: str = "letter", dpi: int = 300, page_index: int = 1, pdf: bytes | None = None
) -> ResolutionCase:
    """A real page scanned on a ``sheet`` at ``dpi`` in grey, saved as a PNG that states no resolution (no pHYs).

    The real page is about US Letter: on A4 it is centred, its sides cut by the narrower sheet.
    """
    sheet_w, sheet_h = SHEETS[sheet]
    source = pdfium.PdfDocument(pdf or real_pdf())
    try:
        width, height = source[page_index].get_size()
        rendered = _rendered_region(source, page_index, dpi, (0.0, 0.0, width, height))
        # What lands on the sheet: the page centred on it.
        left = (width - sheet_w * POINTS_PER_INCH) / 2
        bottom = (height - sheet_h * POINTS_PER_INCH) / 2
        region = (max(left, 0.0), max(bottom, 0.0), width - max(left, 0.0), height - max(bottom, 0.0))
        reference = _region_text(source, page_index, region)
    finally:
        source.close()
    scan = Image.new("L", (round(sheet_w * dpi), round(sheet_h * dpi)), 255)
    scan.paste(rendered, ((scan.width - rendered.width) // 2, (scan.height - rendered.height) // 2))
    buffer = io.BytesIO()
    scan.save(buffer, "PNG")  # Pillow writes a pHYs chunk only when asked to (dpi=...)
    return ResolutionCase(buffer.getvalue(), "image/png", reference, sheet_w, sheet_h, dpi)
