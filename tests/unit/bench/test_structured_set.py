"""The structured-document set: its pages hold what their truth says, drawn from real text, the same on every run."""

from __future__ import annotations

import io
import re

import pypdfium2 as pdfium
from PIL import Image

from bench.structure_scores import plain, reading_order, words
from tests.scans import SCAN_DPI, page_texts
from tests.structured import GPL, LAYOUTS, SEED, structured_set

SET = structured_set()


def test_the_set_is_the_same_on_every_build() -> None:
    again = structured_set.__wrapped__(SEED)
    assert again.pdf == SET.pdf
    assert again.pages == SET.pages


def test_every_page_is_drawn_with_its_running_header_and_numbered_footer() -> None:
    texts = page_texts(SET.pdf)
    assert len(texts) == len(SET.pages) == len(LAYOUTS)
    for truth, text in zip(SET.pages, texts, strict=True):
        assert truth.footer == f"Page {truth.number} of {len(LAYOUTS)}"
        assert truth.header in text and truth.footer in text
        body = plain(truth.body_text())
        assert truth.header not in body and truth.footer not in body


def test_the_truth_is_what_is_drawn_every_word_of_the_body_and_of_the_figures_on_its_page() -> None:
    for truth, text in zip(SET.pages, page_texts(SET.pdf), strict=True):
        drawn = words(text)
        wanted = words(truth.body_text()) + words(" ".join(truth.figure_words))
        missing = {w: n for w, n in wanted.items() if drawn[w] < n}
        assert not missing, f"page {truth.number} ({truth.name}) lacks {missing}"
        extra = drawn - wanted - words(f"{truth.header} {truth.footer}")
        assert not extra, f"page {truth.number} ({truth.name}) draws {extra} beyond its truth"


def test_the_paragraphs_are_the_gpls_own() -> None:
    gpl = re.sub(r"\s+", " ", GPL.read_text(encoding="utf-8"))
    paragraphs = [text for truth in SET.pages for kind, text in truth.blocks if kind == "text" and len(text) > 150]
    assert len(paragraphs) >= 15
    assert all(p in gpl for p in paragraphs)


def test_the_set_holds_each_kind_of_structure_the_benchmark_scores() -> None:
    kinds = {kind for truth in SET.pages for kind, _ in truth.blocks}
    assert {"title", "section_header", "text", "list_item", "table", "caption"} <= kinds
    levels = {level for truth in SET.pages for level, _ in truth.headings}
    assert levels == {1, 2, 3}
    tables = [table for truth in SET.pages for table in truth.tables]
    assert {table.bordered for table in tables} == {True, False}
    assert all(len(row) == table.cols for table in tables for row in table.cells)
    assert sum(bool(truth.figure_words) for truth in SET.pages) == 2


def test_a_page_alone_and_a_page_scanned() -> None:
    alone = SET.page_pdf(2)
    assert page_texts(alone) == [page_texts(SET.pdf)[2]]
    scan = pdfium.PdfDocument(SET.scan(2))
    assert len(scan) == 1
    assert scan[0].get_textpage().count_chars() == 0  # an image only: OCR must read it
    (image,) = (obj for obj in scan[0].get_objects() if obj.type == pdfium.raw.FPDF_PAGEOBJ_IMAGE)
    data = image.get_data(decode_simple=True)
    with Image.open(io.BytesIO(data)) as jpeg:
        assert jpeg.format == "JPEG" and jpeg.mode == "L"
        assert jpeg.size == (round(612 * SCAN_DPI / 72), round(792 * SCAN_DPI / 72))


def test_tesseract_reads_across_what_stands_side_by_side_and_in_order_elsewhere() -> None:
    """The set keeps pages where Tesseract's own page order (PSM 3) is wrong, for the layout to be held against."""
    from workers.adapters import get_adapter

    tesseract = get_adapter("tesseract")
    names = [truth.name for truth in SET.pages]
    distance = {}
    for name in ("report", "sidebar", "table_beside_text"):
        index = names.index(name)
        (page,) = tesseract.run(SET.scan(index), "application/pdf", {}).pages
        distance[name] = reading_order(SET.pages[index].body_text(), page.text)
    assert distance["report"] < 0.05, distance  # its running header and footer, and a slip or two
    assert distance["sidebar"] > 0.15 and distance["table_beside_text"] > 0.15, distance
