"""The searchable PDF: the page images, with each recognized line as invisible text over its box."""

from __future__ import annotations

import io

import pypdfium2 as pdfium
import pytest
from PIL import Image, ImageChops, ImageDraw

from documents.pages import open_document
from documents.searchable_pdf import SourceDocument, searchable_pdf
from jobs.errors import InvalidDocument
from tests.pdfs import text_pdf

POINTS_PER_PIXEL_AT_200_DPI = 72 / 200


def from_result(document: bytes, content_type: str, result: dict) -> SourceDocument:
    """A source of every page of ``document``, its result's pages in page order."""
    return SourceDocument(document, content_type, dict(enumerate(result.get("pages", []))))


def png(size=(800, 300), dpi=None, words=((40, 40, "first"),)) -> bytes:
    image = Image.new("RGB", size, "white")
    draw = ImageDraw.Draw(image)
    for x, y, _label in words:
        draw.rectangle((x, y, x + 100, y + 30), fill="black")
    buffer = io.BytesIO()
    image.save(buffer, "PNG", **({"dpi": (dpi, dpi)} if dpi else {}))
    return buffer.getvalue()


def line(text, bbox):
    return {"text": text, "confidence": 0.9, "bbox": list(bbox)}


def page(*lines, width=800, height=300, number=1):
    return {"page": number, "text": "\n".join(x["text"] for x in lines), "lines": list(lines),
            "width": width, "height": height}  # fmt: skip


def read(data: bytes) -> pdfium.PdfDocument:
    assert data.startswith(b"%PDF-")
    return pdfium.PdfDocument(data)


def page_text(document: pdfium.PdfDocument, index: int) -> str:
    return document[index].get_textpage().get_text_range()


def char_boxes(document: pdfium.PdfDocument, index: int) -> list[tuple[float, float, float, float]]:
    textpage = document[index].get_textpage()
    return [
        textpage.get_charbox(i) for i in range(textpage.count_chars()) if not textpage.get_text_range(i, 1).isspace()
    ]


def test_an_image_becomes_a_page_of_its_size_with_its_lines_as_text_over_their_boxes():
    result = {
        "text": "",
        "pages": [page(line("Invoice 42", (40, 40, 340, 70)), line("Total due", (40, 120, 240, 150)))],
    }

    document = read(searchable_pdf([from_result(png(), "image/png", result)]))

    assert len(document) == 1
    width, height = document[0].get_size()
    assert (width, height) == pytest.approx((800 * POINTS_PER_PIXEL_AT_200_DPI, 300 * POINTS_PER_PIXEL_AT_200_DPI))
    assert page_text(document, 0).split() == ["Invoice", "42", "Total", "due"]
    # PDF space is bottom-up: the first line's box, in points.
    left, right = 40 * POINTS_PER_PIXEL_AT_200_DPI, 340 * POINTS_PER_PIXEL_AT_200_DPI
    top, bottom = height - 40 * POINTS_PER_PIXEL_AT_200_DPI, height - 70 * POINTS_PER_PIXEL_AT_200_DPI
    first_line = char_boxes(document, 0)[:9]  # "Invoice42" without the space
    assert min(b[0] for b in first_line) == pytest.approx(left, abs=0.5)
    assert max(b[2] for b in first_line) == pytest.approx(right, abs=0.5)
    assert all(bottom - 0.5 <= b[1] and b[3] <= top + 0.5 for b in first_line)


def test_the_text_is_invisible_and_the_page_is_the_original_image():
    source = png(words=((40, 40, "x"), (500, 200, "y")))
    result = {"text": "", "pages": [page(line("HIDDEN WORDS", (40, 40, 640, 230)))]}

    document = read(searchable_pdf([from_result(source, "image/png", result)]))
    rendered = document[0].render(scale=200 / 72).to_pil().convert("L")
    original = Image.open(io.BytesIO(source)).convert("L")

    assert rendered.size == original.size
    difference = ImageChops.difference(rendered, original)
    _, brightest = difference.getextrema()
    assert isinstance(brightest, int | float), "one band (L): (min, max) are numbers"
    assert brightest < 64  # the image, and nothing drawn over it


def test_an_image_that_states_its_dpi_keeps_its_physical_size():
    result = {"text": "", "pages": [page(line("a", (40, 40, 140, 70)))]}

    document = read(searchable_pdf([from_result(png(dpi=300), "image/png", result)]))

    assert document[0].get_size() == pytest.approx((800 * 72 / 300, 300 * 72 / 300), abs=0.01)


def test_a_pdf_keeps_its_page_sizes_and_every_page_in_order():
    data = text_pdf("one", "two", "three")
    with open_document(data, "application/pdf") as doc:
        pages = [page(line(layer.lines[0].text, layer.lines[0].bbox), width=layer.width, height=layer.height,
                      number=i + 1) for i in range(3) if (layer := doc.text_layer(i))]  # fmt: skip

    document = read(searchable_pdf([from_result(data, "application/pdf", {"text": "", "pages": pages})]))

    assert len(document) == 3
    assert all(document[i].get_size() == pytest.approx((612, 792), abs=0.5) for i in range(3))
    assert [page_text(document, i) for i in range(3)] == ["one", "two", "three"]


def test_several_documents_follow_each_other():
    first = {"text": "", "pages": [page(line("alpha", (40, 40, 140, 70)))]}
    second = {"text": "", "pages": [page(line("beta", (40, 40, 140, 70)))]}

    document = read(searchable_pdf([from_result(png(), "image/png", first),
                                    from_result(png(), "image/png", second)]))  # fmt: skip

    assert [page_text(document, i) for i in range(2)] == ["alpha", "beta"]


def test_boxes_read_at_another_size_are_scaled_to_the_image():
    # The engine saw the page at half the size: its boxes are scaled up.
    result = {"text": "", "pages": [page(line("half", (20, 20, 170, 35)), width=400, height=150)]}

    document = read(searchable_pdf([from_result(png(), "image/png", result)]))

    boxes = char_boxes(document, 0)
    assert min(b[0] for b in boxes) == pytest.approx(40 * POINTS_PER_PIXEL_AT_200_DPI, abs=0.5)
    assert max(b[2] for b in boxes) == pytest.approx(340 * POINTS_PER_PIXEL_AT_200_DPI, abs=0.5)


def test_any_script_survives_and_control_characters_become_replacement_characters():
    text = "Ελληνικά 中文 ünïcödé 😀 tab\there \x07bell"
    result = {"text": "", "pages": [page(line(text, (40, 40, 760, 70)))]}

    document = read(searchable_pdf([from_result(png(), "image/png", result)]))

    assert page_text(document, 0) == "Ελληνικά 中文 ünïcödé 😀 tab here \ufffdbell"


def test_lines_without_a_box_or_text_and_pages_without_lines_draw_nothing():
    result = {"text": "", "pages": [{"page": 1, "text": "x", "lines": [
        line("no box", (0, 0, 0, 0)), line("", (40, 40, 140, 70)), line("   ", (40, 80, 140, 110)),
        line("kept", (40, 120, 140, 150))]}]}  # fmt: skip

    document = read(searchable_pdf([
        from_result(png(), "image/png", result),
        from_result(png(), "image/png", {"text": "", "pages": []}),
    ]))  # fmt: skip

    assert len(document) == 2
    assert page_text(document, 0) == "kept"
    assert page_text(document, 1) == ""


def test_a_document_that_cannot_be_read_raises_invalid_document():
    with pytest.raises(InvalidDocument):
        searchable_pdf([from_result(b"not a png", "image/png", {"text": "", "pages": []})])
