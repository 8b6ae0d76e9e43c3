"""hOCR and ALTO of a page with layout: an element per block, in reading order, holding exactly its lines."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from documents.alto import render_alto
from documents.hocr import CAPABILITIES, LAYOUT_CAPABILITIES, render_hocr

from .markup_support import (
    ALTO,
    XHTML,
    alto_box,
    alto_pages,
    alto_words,
    expected_words,
    hocr_box,
    hocr_pages,
    hocr_properties,
    hocr_words,
    in_percent,
    of_class,
    to_places,
)
from .structured_pages import figure_without_words_page, plain_page, structured_page

PAGE = structured_page()
HOCR_ELEMENTS = {"page_header": "ocr_header", "page_footer": "ocr_footer", "table": "ocr_table",
                 "figure": "ocr_float"}  # fmt: skip


def line_number(element: ET.Element) -> int:
    """The line's place in the page's ``lines``, from its id (``line_P_N``)."""
    return int((element.get("id") or element.get("ID") or "").rsplit("_", 1)[1]) - 1


def in_reading_order(page: dict) -> list[list]:
    """The page's lines of words, block after block, as the blocks list them."""
    words = expected_words(page)
    return [words[i] for block in sorted(page["blocks"], key=lambda b: b["order"]) for i in block["lines"]]


# -- hOCR --------------------------------------------------------------------------------------------------------


def hocr_blocks(page_element: ET.Element) -> list[ET.Element]:
    return [e for e in page_element if e.get("id", "").startswith("block_")]


def test_hocr_has_an_element_per_block_in_reading_order_of_the_class_for_its_type():
    (page,) = hocr_pages(render_hocr([PAGE]))

    elements = hocr_blocks(page)

    assert len(elements) == len(PAGE["blocks"])
    for element, block in zip(elements, PAGE["blocks"], strict=True):
        properties = hocr_properties(element)
        assert element.get("class") == HOCR_ELEMENTS.get(block["type"], "ocr_carea")
        assert hocr_box(element) == tuple(block["bbox"])
        assert properties["order"] == [str(block["order"])]
        assert properties["x_block"] == [block["type"]]
        assert properties.get("x_level") == ([str(block["level"])] if "level" in block else None)


def test_every_hocr_block_holds_exactly_its_lines_with_their_words():
    (page,) = hocr_pages(render_hocr([PAGE]))

    for element, block in zip(hocr_blocks(page), PAGE["blocks"], strict=True):
        assert [line_number(line) for line in of_class(element, "ocr_line")] == block["lines"]
    assert hocr_words(page) == in_percent(in_reading_order(PAGE))


def test_an_hocr_caption_is_an_ocr_caption_and_other_lines_an_ocr_par():
    (page,) = hocr_pages(render_hocr([PAGE]))

    paragraphs = [(e.get("class"), block["type"]) for e, block in zip(hocr_blocks(page), PAGE["blocks"], strict=True)
                  for e in e.iter() if e.tag == f"{XHTML}p"]  # fmt: skip
    assert {cls for cls, kind in paragraphs if kind == "caption"} == {"ocr_caption"}
    assert {cls for cls, kind in paragraphs if kind != "caption"} == {"ocr_par"}


def test_hocr_with_layout_names_the_classes_it_uses_and_ids_stay_unique():
    root = ET.fromstring(render_hocr([PAGE, plain_page(8, "after")]))

    meta = {m.get("name"): m.get("content", "") for m in root.iter(f"{XHTML}meta") if m.get("name")}
    assert meta["ocr-capabilities"].split() == [*CAPABILITIES, *LAYOUT_CAPABILITIES]
    assert {e.get("class") for e in root.iter() if e.get("class")} <= {*CAPABILITIES, *LAYOUT_CAPABILITIES}
    ids = [e.get("id") for e in root.iter() if e.get("id")]
    assert len(ids) == len(set(ids))


def test_an_hocr_figure_without_words_is_its_float_alone():
    (page,) = hocr_pages(render_hocr([figure_without_words_page()]))

    (figure,) = of_class(page, "ocr_float")
    assert list(figure) == [] and hocr_box(figure) == (100, 200, 600, 500)


# -- ALTO --------------------------------------------------------------------------------------------------------


def alto_tags(document: str) -> dict[str, tuple[str, str | None]]:
    root = ET.fromstring(document)
    return {t.get("ID", ""): (t.get("LABEL", ""), t.get("DESCRIPTION")) for t in root.iter(f"{ALTO}LayoutTag")}


def test_alto_has_a_tag_per_kind_of_block_before_its_layout():
    document = render_alto([PAGE])

    root = ET.fromstring(document)
    assert [child.tag.removeprefix(ALTO) for child in root] == ["Description", "Tags", "Layout"]
    tags = alto_tags(document)
    assert {label for label, _ in tags.values()} == {b["type"] for b in PAGE["blocks"]}
    assert tags["layout_section_header_2"] == ("section_header", "level 2")
    assert tags["layout_section_header_3"] == ("section_header", "level 3")


def test_alto_has_a_block_per_block_in_reading_order_tagged_with_its_type():
    document = render_alto([PAGE])
    (page,) = alto_pages(document)
    tags = alto_tags(document)

    (space,) = page.findall(f"{ALTO}PrintSpace")
    elements = list(space)

    assert len(elements) == len(PAGE["blocks"])
    for element, block in zip(elements, PAGE["blocks"], strict=True):
        expected_tag = {"table": "ComposedBlock", "figure": "ComposedBlock"}.get(block["type"], "TextBlock")
        assert element.tag == f"{ALTO}{expected_tag}"
        assert alto_box(element) == tuple(block["bbox"])
        assert tags[element.get("TAGREFS", "")][0] == block["type"]
        assert [line_number(line) for line in element.iter(f"{ALTO}TextLine")] == block["lines"]
    assert alto_words(page) == to_places(in_reading_order(PAGE))


def test_an_alto_table_is_a_composed_block_and_a_figure_an_illustration_beside_its_words():
    (page,) = alto_pages(render_alto([PAGE]))
    table, figure = (e for e in page.iter(f"{ALTO}ComposedBlock"))

    assert table.get("TYPE") == "table"
    assert [child.tag.removeprefix(ALTO) for child in table] == ["TextBlock"]
    assert figure.get("TYPE") == "figure"
    assert [child.tag.removeprefix(ALTO) for child in figure] == ["Illustration", "TextBlock"]
    assert alto_box(figure[0]) == (250, 450, 700, 550)


def test_an_alto_figure_without_words_is_an_illustration_alone():
    (page,) = alto_pages(render_alto([figure_without_words_page()]))

    (illustration,) = page.iter(f"{ALTO}Illustration")
    assert illustration.get("TAGREFS") == "layout_figure" and list(illustration) == []
    assert page.find(f".//{ALTO}ComposedBlock") is None


def test_alto_ids_stay_unique_across_pages_with_and_without_layout():
    root = ET.fromstring(render_alto([PAGE, plain_page(8, "after"), structured_page(9)]))

    ids = [e.get("ID") for e in root.iter() if e.get("ID")]
    assert len(ids) == len(set(ids))


def test_without_layout_there_are_no_tags():
    assert "<Tags>" not in render_alto([plain_page(1, "plain")])


# -- both --------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("render", [render_hocr, render_alto], ids=["hocr", "alto"])
def test_a_block_naming_a_line_the_page_does_not_have_does_not_break_the_document(render):
    page = structured_page()
    page["blocks"][3]["lines"] = [3, 4, 99]

    ET.fromstring(render([page]))  # well-formed, the lines it has drawn
