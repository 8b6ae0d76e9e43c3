"""Reading hOCR and ALTO documents back into words, to hold them to the result they were made from."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass
from typing import Any

XHTML = "{http://www.w3.org/1999/xhtml}"
ALTO = "{http://www.loc.gov/standards/alto/ns-v4#}"


@dataclass(frozen=True)
class Word:
    text: str
    bbox: tuple[int, int, int, int]
    confidence: float  # 0..1, as far as the document keeps it


def expected_words(page: dict[str, Any]) -> list[list[Word]]:
    """Each line's words as the result gives them: its ``words``, or the line itself as one word."""
    return [
        [Word(w["text"], tuple(w["bbox"]), w["confidence"]) for w in (line.get("words") or [line])]
        for line in page.get("lines", [])
    ]


def hocr_properties(element: ET.Element) -> dict[str, list[str]]:
    """The element's ``title`` properties: ``bbox 1 2 3 4; x_wconf 90`` -> {"bbox": [...], "x_wconf": [...]}."""
    properties = {}
    for part in element.get("title", "").split(";"):
        name, *values = part.split()
        properties[name] = values
    return properties


def hocr_box(element: ET.Element) -> tuple[int, int, int, int]:
    x0, y0, x1, y1 = (int(v) for v in hocr_properties(element)["bbox"])
    return x0, y0, x1, y1


def of_class(element: ET.Element, name: str) -> list[ET.Element]:
    return [e for e in element.iter() if e.get("class") == name]


def hocr_pages(document: str) -> list[ET.Element]:
    root = ET.fromstring(document)
    assert root.tag == f"{XHTML}html"
    return of_class(root, "ocr_page")


def hocr_words(page: ET.Element) -> list[list[Word]]:
    """Each ``ocr_line``'s words; a word's confidence is its ``x_wconf`` (percent) over 100."""
    return [
        [
            Word("".join(word.itertext()), hocr_box(word), int(hocr_properties(word)["x_wconf"][0]) / 100)
            for word in of_class(line, "ocrx_word")
        ]
        for line in of_class(page, "ocr_line")
    ]


def alto_pages(document: str) -> list[ET.Element]:
    root = ET.fromstring(document)
    assert root.tag == f"{ALTO}alto"
    return root.findall(f"{ALTO}Layout/{ALTO}Page")


def alto_box(element: ET.Element) -> tuple[int, int, int, int]:
    x, y, width, height = (int(element.get(name, "")) for name in ("HPOS", "VPOS", "WIDTH", "HEIGHT"))
    return x, y, x + width, y + height


def alto_words(page: ET.Element) -> list[list[Word]]:
    return [
        [Word(s.get("CONTENT", ""), alto_box(s), float(s.get("WC", ""))) for s in line.findall(f"{ALTO}String")]
        for line in page.iter(f"{ALTO}TextLine")
    ]


def in_percent(lines: list[list[Word]]) -> list[list[Word]]:
    """The words with their confidence as hOCR's ``x_wconf`` holds it: whole percents, over 100."""
    return [[Word(w.text, w.bbox, round(w.confidence * 100) / 100) for w in line] for line in lines]


def to_places(lines: list[list[Word]], places: int = 4) -> list[list[Word]]:
    """The words with their confidence rounded as ALTO's ``WC`` holds it (a result keeps 4 decimals)."""
    return [[Word(w.text, w.bbox, round(w.confidence, places)) for w in line] for line in lines]
