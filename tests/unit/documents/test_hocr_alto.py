"""hOCR and ALTO drawn from a result's pages: the structure each standard asks for, every word as the result has it."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from documents.alto import render_alto
from documents.hocr import CAPABILITIES, render_hocr

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


def word(text: str, confidence: float, bbox: list[int]) -> dict:
    return {"text": text, "confidence": confidence, "bbox": bbox}


# A split PDF's pages 3 and 4 (numbered in the whole document): page 3 has words, and a line of an
# older result without them; page 4 was read upright after a turn and a skew, and found nothing.
PAGES = [
    {"page": 3, "text": "Invoice <42> & \"Co\"\nold line", "source": "ocr", "width": 800, "height": 300,
     "rotation": 0, "skew": 0.0,
     "lines": [
         {"text": 'Invoice <42> & "Co"', "confidence": 0.8733, "bbox": [40, 40, 400, 80],
          "words": [word("Invoice", 0.9512, [40, 40, 200, 80]), word("<42>", 0.8, [210, 42, 300, 78]),
                    word("&", 0.5, [305, 45, 320, 75]), word('"Co"', 1.0, [330, 40, 400, 80])]},
         {"text": "old line", "confidence": 0.6667, "bbox": [40, 100, 300, 140]},
     ]},
    {"page": 4, "text": "", "source": "ocr", "width": 1200, "height": 900, "rotation": 90, "skew": -1.5,
     "lines": []},
]  # fmt: skip
# Echo's page: no image, so no size, and its line's box is empty.
ECHO_PAGE = {"page": 1, "text": "hello echo", "source": "ocr", "lines": [
    {"text": "hello echo", "confidence": 1.0, "bbox": [0, 0, 0, 0]}]}  # fmt: skip


# -- hOCR --------------------------------------------------------------------------------------------------------


def test_hocr_is_an_xhtml_document_naming_its_system_and_capabilities():
    root = ET.fromstring(render_hocr(PAGES, title="job-7"))

    assert root.tag == f"{XHTML}html"
    assert root.findtext(f"{XHTML}head/{XHTML}title") == "job-7"
    meta = {m.get("name"): m.get("content", "") for m in root.iter(f"{XHTML}meta") if m.get("name")}
    assert meta["ocr-system"] == "ocrgw"
    assert meta["ocr-capabilities"].split() == list(CAPABILITIES)
    assert meta["ocr-number-of-pages"] == "2"
    used = {e.get("class") for e in root.iter() if e.get("class")}
    assert used <= set(CAPABILITIES)


def test_each_hocr_page_has_its_size_and_its_number_from_zero():
    pages = hocr_pages(render_hocr(PAGES))

    assert [p.get("title") for p in pages] == ["bbox 0 0 800 300; ppageno 2", "bbox 0 0 1200 900; ppageno 3"]
    ids = [e.get("id") for e in ET.fromstring(render_hocr(PAGES)).iter() if e.get("id")]
    assert len(ids) == len(set(ids)) == 2 + 1 + 1 + 2 + 5  # pages, area, paragraph, lines, words: each its own


def test_hocr_nests_lines_in_one_area_and_paragraph_around_them():
    page = hocr_pages(render_hocr(PAGES))[0]

    (area,) = of_class(page, "ocr_carea")
    (paragraph,) = of_class(area, "ocr_par")
    lines = of_class(paragraph, "ocr_line")
    assert hocr_box(area) == hocr_box(paragraph) == (40, 40, 400, 140)
    assert [hocr_box(line) for line in lines] == [(40, 40, 400, 80), (40, 100, 300, 140)]
    assert [set(hocr_properties(line)) for line in lines] == [{"bbox"}, {"bbox"}]
    assert "textangle" not in ET.tostring(page, encoding="unicode")  # the text stands level on this page


def test_every_hocr_word_has_the_results_text_box_and_confidence_in_percent():
    document = render_hocr(PAGES)

    found = [hocr_words(page) for page in hocr_pages(document)]

    assert found == [in_percent(expected_words(page)) for page in PAGES]
    assert found[0][0][3].confidence == 1.0 and found[0][1][0].text == "old line"
    # Words are apart in the text too: an HTML reader gets the line's text
    line = of_class(hocr_pages(document)[0], "ocr_line")[0]
    assert "".join(line.itertext()) == 'Invoice <42> & "Co"'


def test_hocr_of_echos_page_has_an_empty_box_and_the_line_as_one_word():
    (page,) = hocr_pages(render_hocr([ECHO_PAGE]))

    assert page.get("title") == "bbox 0 0 0 0; ppageno 0"
    assert hocr_words(page) == in_percent(expected_words(ECHO_PAGE))


# -- ALTO --------------------------------------------------------------------------------------------------------


def test_alto_describes_pixels_and_the_software():
    root = ET.fromstring(render_alto(PAGES, document_id="job-7"))

    assert root.tag == f"{ALTO}alto"
    assert root.get("SCHEMAVERSION") == "4.4"
    description = root.find(f"{ALTO}Description")
    assert description is not None
    assert [child.tag.removeprefix(ALTO) for child in description] == [
        "MeasurementUnit", "sourceImageInformation", "Processing"]  # fmt: skip
    assert description.findtext(f"{ALTO}MeasurementUnit") == "pixel"
    assert description.findtext(f"{ALTO}sourceImageInformation/{ALTO}fileIdentifier") == "job-7"
    assert description.findtext(f"{ALTO}Processing/{ALTO}processingSoftware/{ALTO}softwareName") == "ocrgw"


def test_each_alto_page_has_its_number_size_and_a_print_space_over_it():
    pages = alto_pages(render_alto(PAGES))

    assert [(p.get("ID"), p.get("PHYSICAL_IMG_NR"), p.get("WIDTH"), p.get("HEIGHT")) for p in pages] == [
        ("page_1", "3", "800", "300"), ("page_2", "4", "1200", "900")]  # fmt: skip
    assert [alto_box(space) for space in pages[0].iter(f"{ALTO}PrintSpace")] == [(0, 0, 800, 300)]
    assert [alto_box(space) for space in pages[1].iter(f"{ALTO}PrintSpace")] == [(0, 0, 1200, 900)]
    assert pages[1].find(f"{ALTO}PrintSpace/{ALTO}TextBlock") is None


def test_alto_holds_the_lines_in_one_block_with_a_space_between_words():
    (block,) = alto_pages(render_alto(PAGES))[0].iter(f"{ALTO}TextBlock")

    lines = block.findall(f"{ALTO}TextLine")
    assert alto_box(block) == (40, 40, 400, 140)
    assert [(line.get("ID"), alto_box(line)) for line in lines] == [
        ("line_1_1", (40, 40, 400, 80)), ("line_1_2", (40, 100, 300, 140))]  # fmt: skip
    first = [(child.tag.removeprefix(ALTO), child.get("HPOS"), child.get("WIDTH")) for child in lines[0]]
    assert first == [("String", "40", "160"), ("SP", "200", "10"), ("String", "210", "90"), ("SP", "300", "5"),
                     ("String", "305", "15"), ("SP", "320", "10"), ("String", "330", "70")]  # fmt: skip


def test_every_alto_string_has_the_results_text_box_and_confidence():
    document = render_alto(PAGES)

    found = [alto_words(page) for page in alto_pages(document)]

    assert found == [to_places(expected_words(page)) for page in PAGES]
    ids = [s.get("ID") for s in ET.fromstring(document).iter(f"{ALTO}String")]
    assert ids == ["string_1_1", "string_1_2", "string_1_3", "string_1_4", "string_1_5"]


def test_alto_of_echos_page_has_no_size_and_the_line_as_one_string():
    (page,) = alto_pages(render_alto([ECHO_PAGE]))

    assert page.get("WIDTH") is None and page.get("HEIGHT") is None
    assert alto_words(page) == to_places(expected_words(ECHO_PAGE))


def test_alto_needs_a_page():
    with pytest.raises(ValueError, match="at least one page"):
        render_alto([])


# -- both --------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("render", [render_hocr, render_alto], ids=["hocr", "alto"])
def test_text_that_xml_cannot_hold_does_not_break_the_document(render):
    text = "tab\there <b>&amp; \x00\x0c\x1b \ud800 end"
    page = {**ECHO_PAGE, "lines": [{"text": text, "confidence": 0.5, "bbox": [0, 0, 0, 0]}]}

    document = render([page])

    root = ET.fromstring(document)  # well-formed
    words = of_class(root, "ocrx_word")
    shown = ["".join(w.itertext()) for w in words] or [s.get("CONTENT", "") for s in root.iter(f"{ALTO}String")]
    assert shown == ["tab\there <b>&amp; \ufffd\ufffd\ufffd \ufffd end"]


def test_a_confidence_out_of_range_is_held_to_it():
    page = {**ECHO_PAGE, "lines": [word("hi", 1.7, [1, 2, 3, 4]), word("lo", -0.2, [5, 6, 7, 8])]}

    hocr = ET.fromstring(render_hocr([page]))
    alto = ET.fromstring(render_alto([page]))

    assert [hocr_properties(w)["x_wconf"] for w in of_class(hocr, "ocrx_word")] == [["100"], ["0"]]
    assert [s.get("WC") for s in alto.iter(f"{ALTO}String")] == ["1", "0"]


def test_an_hocr_page_says_the_resolution_its_result_recorded():
    pages = [dict(PAGES[0]) | {"dpi": 300.0, "dpi_source": "estimated"}, PAGES[1]]

    titles = [p.get("title") for p in hocr_pages(render_hocr(pages))]

    assert titles == ["bbox 0 0 800 300; ppageno 2; scan_res 300 300", "bbox 0 0 1200 900; ppageno 3"]
