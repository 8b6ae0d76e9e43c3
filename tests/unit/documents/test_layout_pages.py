"""The layout of real pages: the packaged model and Tesseract on a scan, and the PDF's own text on the original.

The page (tests/unit/documents/layout_pages.py) is made from the real text of
the shared-mime-info specification: a running header and a page number, a
title, two levels of headings, paragraphs, a part in two columns, a figure
with words inside it and its caption.
"""

from __future__ import annotations

import difflib
import statistics
from collections.abc import Sequence

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
import pytest

from documents import structure
from documents.layout import LineLike, PageLayout, analyse, regions
from documents.orientation import LoadedOnce
from documents.text_layer import read_text_layer
from tests.unit.documents import layout_pages
from tests.unit.documents.layout_pages import POINTS_PER_INCH, SCAN_DPI, Drawn, scan, structured_pdf
from workers.adapters.base import Line
from workers.adapters.tesseract import TesseractAdapter


def similar(a: str, b: str) -> float:
    return difflib.SequenceMatcher(None, " ".join(a.split()), " ".join(b.split())).ratio()


def of_type(layout: PageLayout, kind: str) -> list[structure.Block]:
    return [b for b in layout.blocks if b.type == kind]


def body(layout: PageLayout) -> str:
    return structure.body_text(b.to_dict() for b in layout.blocks)


@pytest.fixture(scope="module")
def scanned() -> tuple[PageLayout, list[Line], Drawn]:
    data, drawn = structured_pdf()
    image = scan(data)
    image.info["dpi"] = (SCAN_DPI, SCAN_DPI)
    page = TesseractAdapter().recognise(1, image, {}, None)
    layout = analyse(image, page.lines, width=image.width, height=image.height, dpi=SCAN_DPI)
    return layout, page.lines, drawn


def test_every_line_of_the_scan_is_in_exactly_one_block_and_the_blocks_are_numbered_in_order(scanned):
    layout, lines, _ = scanned
    assert [b.order for b in layout.blocks] == list(range(len(layout.blocks)))
    held = sorted(i for b in layout.blocks for i in b.lines)
    assert held == list(range(len(layout.pieces)))
    # No line was cut on this page (no region edge crosses one): each is one piece, all of them there.
    assert sorted(p.line for p in layout.pieces) == list(range(len(lines)))


def test_the_scans_headings_have_their_types_and_levels(scanned):
    layout, _, drawn = scanned
    headings = [(b.type, b.level, b.text) for b in layout.blocks if b.type in structure.HEADINGS]
    assert headings == [
        (structure.TITLE, 1, drawn.title),
        (structure.SECTION_HEADER, 2, layout_pages.SECTION),
        (structure.SECTION_HEADER, 3, layout_pages.SUBSECTION),
        (structure.SECTION_HEADER, 3, layout_pages.COLUMNS_SECTION),
    ]


def test_the_scans_body_is_its_paragraphs_in_reading_order_across_the_columns(scanned):
    layout, _, drawn = scanned
    texts = [b.text for b in layout.blocks if b.type not in structure.NOT_BODY and b.type != structure.CAPTION]
    assert len(texts) == 1 + len(drawn.paragraphs), texts
    for found, expected in zip(texts, [drawn.title, *drawn.paragraphs], strict=True):
        assert similar(found, expected) > 0.97, (found, expected)
    # The whole body against the page as drawn, in order: a reader's text.
    expected = "\n\n".join([drawn.title, *drawn.paragraphs, drawn.caption])
    assert similar(body(layout), expected) > 0.97


def test_the_running_header_is_first_and_out_of_the_body(scanned):
    layout, _, drawn = scanned
    first = layout.blocks[0]
    assert (first.type, first.text) == (structure.PAGE_HEADER, drawn.header)
    assert drawn.header not in body(layout)


def test_the_figures_words_stay_on_the_figure_out_of_the_body_and_its_caption_is_attached(scanned):
    layout, _, drawn = scanned
    [figure] = of_type(layout, structure.FIGURE)
    [caption] = of_type(layout, structure.CAPTION)
    for word in drawn.figure_words:
        assert word in figure.text
        assert word not in body(layout).replace(drawn.caption, "")
    assert similar(caption.text, drawn.caption) > 0.97
    assert (figure.caption, caption.caption_of) == (caption.order, figure.order)


def test_a_blocks_box_holds_its_lines(scanned):
    layout, lines, _ = scanned
    for block in layout.blocks:
        for i in block.lines:
            box = lines[layout.pieces[i].line].bbox
            assert regions.contains(block.bbox, box, 1.0), (block, box)


def font_sizes(page: pdfium.PdfPage, lines: Sequence[LineLike], scale: float) -> list[float | None]:
    """Each line's font size in points, as the PDF says it: the median over the characters inside its box."""
    text_page = page.get_textpage()
    try:
        sized = []
        for index in range(text_page.count_chars()):
            left, bottom, right, top = text_page.get_charbox(index)
            height_pt = page.get_height()
            centre = ((left + right) / 2 * scale, (height_pt - (bottom + top) / 2) * scale)
            sized.append((centre, pdfium_c.FPDFText_GetFontSize(text_page, index)))
    finally:
        text_page.close()
    out: list[float | None] = []
    for line in lines:
        x0, y0, x1, y1 = line.bbox
        inside = [s for (x, y), s in sized if x0 <= x <= x1 and y0 <= y <= y1 and s > 0]
        out.append(statistics.median(inside) if inside else None)
    return out


def test_a_born_digital_page_gets_the_same_blocks_from_its_own_text_and_headings_from_its_fonts():
    # Given the original page's text layer at 200 dpi and the page drawn small (72 dpi) for the model alone
    data, drawn = structured_pdf()
    document = pdfium.PdfDocument(data)
    try:
        page = document[0]
        scale = SCAN_DPI / POINTS_PER_INCH
        layer = read_text_layer(page, scale)
        assert layer is not None
        sizes = font_sizes(page, layer.lines, scale)
        image = page.render(scale=1.0, grayscale=True).to_pil().convert("L")
    finally:
        document.close()
    # When it is laid out
    layout = analyse(image, layer.lines, width=layer.width, height=layer.height, dpi=SCAN_DPI, font_sizes=sizes)
    # Then the headings come from the font sizes, the body reads in order, header and figure words outside it
    headings = [(b.type, b.level, b.text) for b in layout.blocks if b.type in structure.HEADINGS]
    assert headings == [
        (structure.TITLE, 1, drawn.title),
        (structure.SECTION_HEADER, 2, layout_pages.SECTION),
        (structure.SECTION_HEADER, 3, layout_pages.SUBSECTION),
        (structure.SECTION_HEADER, 3, layout_pages.COLUMNS_SECTION),
    ]
    expected = "\n\n".join([drawn.title, *drawn.paragraphs, drawn.caption])
    assert similar(body(layout), expected) > 0.99
    assert layout.blocks[0].type == structure.PAGE_HEADER
    assert [b.text for b in of_type(layout, structure.PAGE_FOOTER)] == [drawn.page_number]
    assert all(word not in body(layout) for word in drawn.figure_words)


def test_a_page_without_lines_has_no_blocks_and_runs_no_model(monkeypatch: pytest.MonkeyPatch):
    def no_model():
        raise AssertionError("the model ran on a page without lines")

    monkeypatch.setattr(regions, "detector", no_model)
    data, _ = structured_pdf()
    assert analyse(scan(data), [], width=1700, height=2200, dpi=SCAN_DPI) == PageLayout([], [])


def test_a_model_that_cannot_load_raises_to_the_caller(monkeypatch: pytest.MonkeyPatch, tmp_path):
    # A corrupt model file named by OCRGW_LAYOUT_MODEL, loaded by a fresh process-wide loader.
    corrupt = tmp_path / "layout.onnx"
    corrupt.write_bytes(b"not an onnx model")
    monkeypatch.setenv(regions.MODEL_OVERRIDE, str(corrupt))
    monkeypatch.setattr(regions, "detector", LoadedOnce(regions._load))
    assert regions.model_path() == corrupt
    data, _ = structured_pdf()
    image = scan(data)
    lines = [Line("Shared MIME-info Database", 0.9, (160, 90, 473, 108))]
    with pytest.raises(Exception):  # noqa: B017 - whatever ONNX Runtime raises, the caller records it
        analyse(image, lines, width=image.width, height=image.height, dpi=SCAN_DPI)


def test_a_scanned_lists_items_and_a_hyphenated_word_joined_back():
    # Given a scanned page of bullets, numbered steps, and a paragraph with "data-" at a line's end
    image = scan(layout_pages.list_pdf())
    image.info["dpi"] = (SCAN_DPI, SCAN_DPI)
    page = TesseractAdapter().recognise(1, image, {}, None)
    # When it is laid out
    layout = analyse(image, page.lines, width=image.width, height=image.height, dpi=SCAN_DPI)
    # Then each bullet is an item without its bullet, each step an item with its number, and "database" is whole
    items = [b.text for b in of_type(layout, structure.LIST_ITEM)]
    expected = [*layout_pages.BULLETS, *layout_pages.STEPS]
    assert len(items) == len(expected), items
    for found, wanted in zip(items, expected, strict=True):
        assert similar(found, wanted) > 0.97, (found, wanted)
    texts = [b.text for b in of_type(layout, structure.TEXT)]
    assert any(similar(t, layout_pages.HYPHENATED_TEXT) > 0.97 and "database" in t for t in texts), texts
    assert any(similar(t, layout_pages.LIST_INTRO) > 0.95 for t in texts), texts
