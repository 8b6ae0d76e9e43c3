"""PDFs that were OCRed before: a scan of the real PDF with an invisible text layer, and a visible legend.

``earlier_ocr_pdf`` scans pages of the real PDF (``tests.scans``), grafts an
invisible text layer on them with this project's own searchable-PDF builder
(the real PDF's words at their boxes, as a good earlier OCR would have read
them, plus the legend's words and a word no page shows, ``STALE_WORD``),
then prints a legend in visible text (Helvetica, as a stamp or a form's
printed label would be) in each page's bottom margin, below the page's own
text, where the earlier OCR layer already has its words.  So the input's
text holds the legend twice and every other word once; a re-OCR that keeps
the old layer finds everything twice.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any

import pikepdf

from documents.pages import open_document
from documents.searchable_pdf import SourceDocument, searchable_pdf
from tests.scans import POINTS_PER_INCH, SCAN_DPI, real_pdf, scanned_pdf

PDF = "application/pdf"
LEGEND = "Archived copy ZEPHYR QUOKKA"
#: A word of the earlier OCR layer that no page shows: it is gone once the layer is replaced.
STALE_WORD = "STALEWORDXQ"
#: The legend's baseline and size, in points from the page's bottom left.
LEGEND_X, LEGEND_Y, LEGEND_SIZE = 72.0, 24.0, 14.0


def earlier_ocr_pdf(page_indices: Sequence[int], legend: str = LEGEND) -> bytes:
    """Pages ``page_indices`` of the real PDF, scanned, OCRed before (an invisible layer), with ``legend`` printed."""
    scan = scanned_pdf(page_indices)
    results = {number: _earlier_result(number, index, legend) for number, index in enumerate(page_indices)}
    layered = searchable_pdf([SourceDocument(scan, PDF, results)])
    return with_visible_text(layered, legend)


def with_visible_text(pdf: bytes, text: str) -> bytes:
    """Every page of ``pdf`` with ``text`` drawn visibly at the legend's place, in its own content stream."""
    with pikepdf.open(io.BytesIO(pdf)) as document:
        font = document.make_indirect(
            pikepdf.Dictionary(Type=pikepdf.Name.Font, Subtype=pikepdf.Name.Type1, BaseFont=pikepdf.Name.Helvetica)
        )
        for page in document.pages:
            if "/Font" not in page.obj.Resources:
                page.obj.Resources.Font = pikepdf.Dictionary()
            page.obj.Resources.Font.Legend = font
            content = f"BT /Legend {LEGEND_SIZE} Tf {LEGEND_X} {LEGEND_Y} Td ({text}) Tj ET".encode("latin-1")
            page.contents_add(pikepdf.Stream(document, content), prepend=False)
        buffer = io.BytesIO()
        document.save(buffer)
        return buffer.getvalue()


def legend_box(width: int, height: int, text: str = LEGEND) -> tuple[int, int, int, int]:
    """Where the legend is drawn, in the pixels of a ``width`` x ``height`` rendering of a letter page."""
    scale = width / (8.5 * POINTS_PER_INCH)
    top = height - (LEGEND_Y + LEGEND_SIZE * 0.75) * scale
    bottom = height - (LEGEND_Y - LEGEND_SIZE * 0.25) * scale
    right = LEGEND_X + 0.55 * LEGEND_SIZE * len(text)  # Helvetica's mean advance, about half an em
    return round(LEGEND_X * scale), round(top), round(right * scale), round(bottom)


def _earlier_result(number: int, index: int, legend: str) -> dict:
    """What an earlier OCR read on page ``index`` of the real PDF: its words at their boxes, the legend, a stray."""
    with open_document(real_pdf(), PDF, dpi=SCAN_DPI) as document:
        layer = document.text_layer(index)
    assert layer is not None
    lines: list[dict[str, Any]] = [
        {
            "text": line.text,
            "confidence": 0.9,
            "bbox": list(line.bbox),
            "words": [{"text": w.text, "confidence": 0.9, "bbox": list(w.bbox)} for w in line.words],
        }
        for line in layer.lines
    ]
    lines.append(_line(legend, legend_box(layer.width, layer.height, legend)))
    lines.append(_line(STALE_WORD, (layer.width - 400, 40, layer.width - 100, 80)))
    return {
        "page": number + 1,
        "text": "\n".join(line["text"] for line in lines),
        "source": "ocr",
        "width": layer.width,
        "height": layer.height,
        "lines": lines,
    }


def _line(text: str, bbox: tuple[int, int, int, int]) -> dict:
    return {"text": text, "confidence": 0.9, "bbox": list(bbox)}
