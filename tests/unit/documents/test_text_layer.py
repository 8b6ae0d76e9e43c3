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
