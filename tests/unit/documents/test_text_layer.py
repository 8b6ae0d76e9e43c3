"""A PDF page's own text, read as lines whose boxes are in the pixels of the page's rendering."""

from __future__ import annotations

import io

import pytest
from PIL import Image, ImageChops

from documents.pages import open_document
from tests.pdfs import pdf, rotated


def ink_box(image: Image.Image) -> tuple[int, int, int, int]:
    """The box around every non-white pixel of a page image."""
    grey = image.convert("L")
    box = ImageChops.invert(grey).point(lambda v: 255 if v > 64 else 0).getbbox()
    assert box is not None, "the page is blank"
    return box


def covers(outer, inner, slack: int = 4) -> bool:
    return (outer[0] - slack <= inner[0] and outer[1] - slack <= inner[1]
            and inner[2] <= outer[2] + slack and inner[3] <= outer[3] + slack)  # fmt: skip


def union(boxes):
    return (min(b[0] for b in boxes), min(b[1] for b in boxes), max(b[2] for b in boxes), max(b[3] for b in boxes))


def test_a_text_page_is_read_as_its_lines_in_order():
    data = pdf([("text", "Invoice Total 1234\nSecond   line here")])

    with open_document(data, "application/pdf") as doc:
        layer = doc.text_layer(0)

    assert layer is not None
    assert [line.text for line in layer.lines] == ["Invoice Total 1234", "Second line here"]
    assert layer.text == "Invoice Total 1234\nSecond line here"


@pytest.mark.parametrize("rotation", [0, 90, 180, 270])
def test_the_boxes_are_where_the_rendering_shows_the_words(rotation):
    data = rotated(pdf([("text", "Invoice Total 1234\nSecond line")]), rotation)

    with open_document(data, "application/pdf") as doc:
        layer = doc.text_layer(0)
        image = doc.page(0)

    assert layer is not None and (layer.width, layer.height) == image.size
    boxes = [line.bbox for line in layer.lines]
    # Every line's box holds ink, and together they hold all the ink of the page.
    for box in boxes:
        assert ink_box(image.crop(box)), box
    assert covers(union(boxes), ink_box(image))
    assert all(b[2] - b[0] > 0 and b[3] - b[1] > 0 for b in boxes)


@pytest.mark.parametrize("rotation", [0, 90])
def test_each_line_holds_its_words_each_boxed_where_the_rendering_shows_it(rotation):
    data = rotated(pdf([("text", "Invoice Total 1234\nSecond   line here")]), rotation)

    with open_document(data, "application/pdf") as doc:
        layer = doc.text_layer(0)
        image = doc.page(0)

    assert layer is not None
    assert sorted([word.text for word in line.words] for line in layer.lines) == [
        ["Invoice", "Total", "1234"],
        ["Second", "line", "here"],
    ]
    for line in layer.lines:
        assert line.bbox == union([word.bbox for word in line.words])
        for word in line.words:
            assert ink_box(image.crop(word.bbox)), word
    # Words of a line do not overlap (along the line, across the rendering or down it): each box is its word's.
    for line in layer.lines:
        for left, right in zip(line.words, line.words[1:], strict=False):
            a, b = left.bbox, right.bbox
            assert a[2] <= b[0] or b[2] <= a[0] or a[3] <= b[1] or b[3] <= a[1], (left, right)


def test_image_pages_blank_pages_and_images_have_no_text_layer():
    data = pdf([("image", "ONLY PIXELS"), ("text", "   \n  ")])

    with open_document(data, "application/pdf") as doc:
        assert doc.text_layer(0) is None
        assert doc.text_layer(1) is None
    png = _png()
    with open_document(png, "image/png") as doc:
        assert doc.text_layer(0) is None


def test_the_layer_is_sized_like_the_rendering_at_the_requested_dpi():
    data = pdf([("text", "Hello")])

    with open_document(data, "application/pdf", dpi=100) as doc:
        layer = doc.text_layer(0)
        image = doc.page(0)

    assert layer is not None
    assert (layer.width, layer.height) == image.size == (850, 1100)  # US Letter at 100 dpi


def _png() -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (40, 20), "white").save(buffer, "PNG")
    return buffer.getvalue()


# --- visible text, and a layer on the page as an engine read it ---------------------------------------


def test_visible_only_leaves_out_an_earlier_invisible_ocr_layer():
    from tests.ocr_layers import LEGEND, earlier_ocr_pdf

    data = earlier_ocr_pdf([0])

    with open_document(data, "application/pdf") as doc:
        everything, visible = doc.text_layer(0), doc.text_layer(0, visible_only=True)
        assert doc.own_text(0) == (visible, True)
    with open_document(pdf([("text", "only visible words")]), "application/pdf") as doc:
        assert doc.own_text(0) == (doc.text_layer(0), False)

    assert everything is not None and visible is not None
    assert visible.text == LEGEND
    assert everything.text.count("ZEPHYR") == 2 and len(everything.text) > 1000
    assert (visible.width, visible.height) == (everything.width, everything.height)


def test_a_scan_with_only_an_invisible_layer_has_no_visible_text():
    from documents.searchable_pdf import SourceDocument, searchable_pdf

    image_page = pdf([("image", "HELLO WORLD")])
    with open_document(image_page, "application/pdf") as doc:
        width, height = doc.page(0).size
    result = {"source": "ocr", "width": width, "height": height,
              "lines": [{"text": "HELLO WORLD", "bbox": [10, 10, 300, 60]}]}  # fmt: skip
    layered = searchable_pdf([SourceDocument(image_page, "application/pdf", {0: result})])

    with open_document(layered, "application/pdf") as doc:
        assert doc.text_layer(0) is not None
        assert doc.text_layer(0, visible_only=True) is None
        assert doc.own_text(0) == (None, True)


@pytest.mark.parametrize(("rotation", "skew"), [(0, 0.0), (90, 0.0), (180, 0.0), (270, 0.0), (0, 4.0), (90, -3.0)])
def test_in_frame_carries_the_boxes_onto_the_page_turned_and_straightened_as_an_engine_reads_it(rotation, skew):
    from documents.geometry import straighten, turn_upright
    from documents.text_layer import in_frame

    data = pdf([("text", "Invoice Total 1234")])
    with open_document(data, "application/pdf") as doc:
        image, layer = doc.page(0), doc.text_layer(0)
    assert layer is not None
    read = straighten(turn_upright(image, rotation), skew)

    framed = in_frame(layer, read.width, read.height, rotation, skew)

    (line,) = framed.lines
    assert (framed.width, framed.height) == read.size
    assert covers(line.bbox, ink_box(read), slack=6)
    assert covers(union([w.bbox for w in line.words]), ink_box(read), slack=6)
    # Turned, not stretched: a turned box is as large as the line's, give or take what the skew adds.
    (original,) = layer.lines
    sides = sorted((original.bbox[2] - original.bbox[0], original.bbox[3] - original.bbox[1]))
    assert sorted((line.bbox[2] - line.bbox[0], line.bbox[3] - line.bbox[1]))[1] == pytest.approx(sides[1], rel=0.05)


def test_a_word_is_covered_when_the_pages_own_words_cover_half_of_it():
    from documents.text_layer import OwnWords

    own = OwnWords([(100, 100, 200, 130), (210, 100, 300, 130), (100, 2000, 300, 2030)])

    assert own.cover((102, 98, 198, 132))  # the same word, boxed a little differently
    assert own.cover((100, 100, 300, 130))  # two of them read as one
    assert own.cover((110, 1990, 290, 2040))  # far down the page
    assert own.cover((100, 120, 200, 140)) and not own.cover((100, 125, 200, 160))  # across a band's edge
    assert not own.cover((100, 200, 200, 230))  # a line below
    assert not OwnWords([(100, 100, 120, 130)]).cover((180, 100, 260, 130))
    assert not own.cover((5, 5, 5, 9))  # no area
    assert not OwnWords(()) and not OwnWords(()).cover((0, 0, 10, 10))


def styled_pdf() -> bytes:
    """A title in Helvetica-Bold 20 pt, a line of Times 11 pt, and a line in Times 14 pt, mostly bold.  PDFium
    gives the standard fonts no weight: their names say Bold."""
    from fpdf import FPDF

    document = FPDF()
    document.add_page()
    document.set_font("Helvetica", "B", 20)
    document.cell(text="Annual report")
    document.ln(12)
    document.set_font("Times", "", 11)
    document.cell(text="Body text of the report")
    document.ln(8)
    document.set_font("Times", "B", 14)
    document.cell(text="Mostly bold words ")
    document.set_font("Times", "", 14)
    document.cell(text="then")
    document.ln(8)
    return bytes(document.output())


def test_a_lines_font_size_in_points_and_boldness_come_with_it():
    with open_document(styled_pdf(), "application/pdf") as doc:
        layer = doc.text_layer(0)

    assert layer is not None
    assert [(line.text, line.font_size, line.bold) for line in layer.lines] == [
        ("Annual report", 20.0, True),
        ("Body text of the report", 11.0, False),
        ("Mostly bold words then", 14.0, True),
    ]


def test_a_pages_drawing_for_its_layout_is_small_whatever_it_is_drawn_at_for_ocr():
    with open_document(styled_pdf(), "application/pdf") as doc:
        small = doc.layout_image(0)
        full = doc.page(0)

    # A4 just covering the layout model's 608x800 input, and at the 300 dpi vector text is drawn at for OCR.
    assert small.size == (608, 860)
    assert full.size == (2481, 3508)
    assert ink_box(small) == pytest.approx(tuple(v * 608 / 2481 for v in ink_box(full)), abs=3)
