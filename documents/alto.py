"""A result as ALTO v4 (http://www.loc.gov/standards/alto/): the XML of pages, lines and words.

``Description`` says the unit (``pixel``: every position is in pixels of
the page image the engine read, the upright, straightened page) and the
software (a ``Processing`` step of ocrgw: version 4 of the schema
deprecates ``OCRProcessing`` for it).  ``Layout`` holds a ``Page`` per
page (``PHYSICAL_IMG_NR``: its number in the whole document), its
``PrintSpace`` the whole page, and there one ``TextBlock`` around all the
page's lines (a result keeps no blocks), a ``TextLine`` per line and a
``String`` per word (``WC``: its confidence, 0..1), an ``SP`` between two
words over the gap between them.

A page without an image (echo's) has no ``WIDTH`` and ``HEIGHT``: the
schema lets them out, where a size of 0 would say something false.  The
page's ``ROTATION`` is left out too: the text stands level on the page
described, which is the page after turning and straightening it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from documents.markup import (
    SOFTWARE,
    Box,
    attributes,
    box_of,
    confidence_of,
    page_size,
    union_box,
    words_of,
    xml_attr,
    xml_text,
)

ALTO_NAMESPACE = "http://www.loc.gov/standards/alto/ns-v4#"
SCHEMA_VERSION = "4.4"
_SCHEMA_LOCATION = f"{ALTO_NAMESPACE} http://www.loc.gov/standards/alto/v4/alto-4-4.xsd"
_XSI = "http://www.w3.org/2001/XMLSchema-instance"
_XLINK = "http://www.w3.org/1999/xlink"


def render_alto(pages: Sequence[Mapping[str, Any]], document_id: str | None = None) -> str:
    """The ALTO document of ``pages`` (a result's, in document order: at least one);
    ``document_id``: what identifies the document (a job's id), named in ``sourceImageInformation``."""
    if not pages:
        raise ValueError("an ALTO document holds at least one page")
    root = attributes(
        [("xmlns", ALTO_NAMESPACE), ("xmlns:xlink", _XLINK), ("xmlns:xsi", _XSI),
         ("xsi:schemaLocation", _SCHEMA_LOCATION), ("SCHEMAVERSION", SCHEMA_VERSION)]
    )  # fmt: skip
    parts = ['<?xml version="1.0" encoding="UTF-8"?>\n', f"<alto{root}>\n", *_description(document_id), "  <Layout>\n"]
    for index, page in enumerate(pages, start=1):
        parts.extend(_page(index, page))
    parts.append("  </Layout>\n</alto>\n")
    return "".join(parts)


def _description(document_id: str | None) -> list[str]:
    source = (
        f'      <fileIdentifier fileIdentifierLocation="{SOFTWARE}">{xml_text(document_id)}</fileIdentifier>\n'
        if document_id
        else ""
    )
    return [
        "  <Description>\n",
        "    <MeasurementUnit>pixel</MeasurementUnit>\n",
        f"    <sourceImageInformation>\n{source}    </sourceImageInformation>\n",
        f"    <Processing ID={xml_attr(SOFTWARE)}>\n",
        "      <processingCategory>contentGeneration</processingCategory>\n",
        f"      <processingSoftware>\n        <softwareName>{SOFTWARE}</softwareName>\n      </processingSoftware>\n",
        "    </Processing>\n",
        "  </Description>\n",
    ]


def _page(index: int, page: Mapping[str, Any]) -> list[str]:
    size = page_size(page)
    extent: list[tuple[str, object]] = [("WIDTH", size[0]), ("HEIGHT", size[1])] if size else []
    page_attributes = [("ID", f"page_{index}"), ("PHYSICAL_IMG_NR", int(page["page"])), *extent]
    parts = [f"    <Page{attributes(page_attributes)}>\n"]
    parts.append(f"      <PrintSpace{attributes([('HPOS', 0), ('VPOS', 0), *extent])}>\n")
    lines = page.get("lines") or []
    if lines:
        block = union_box(box_of(line) for line in lines)
        parts.append(f"        <TextBlock{attributes([('ID', f'block_{index}_1'), *_position(block)])}>\n")
        word_number = 0
        for line_number, line in enumerate(lines, start=1):
            line_attributes = [("ID", f"line_{index}_{line_number}"), *_position(box_of(line))]
            parts.append(f"          <TextLine{attributes(line_attributes)}>\n")
            previous: Box | None = None
            for word in words_of(line):
                word_number += 1
                box = box_of(word)
                if previous is not None:
                    parts.append(f"            <SP{attributes(_space(previous, box))} />\n")
                parts.append(f"            <String{attributes(_string(f'string_{index}_{word_number}', word))} />\n")
                previous = box
            parts.append("          </TextLine>\n")
        parts.append("        </TextBlock>\n")
    parts.append("      </PrintSpace>\n    </Page>\n")
    return parts


def _string(string_id: str, word: Mapping[str, Any]) -> list[tuple[str, object]]:
    confidence = f"{round(confidence_of(word), 4):g}"
    return [("ID", string_id), ("CONTENT", str(word["text"])), *_position(box_of(word)), ("WC", confidence)]


def _space(before: Box, after: Box) -> list[tuple[str, object]]:
    """The gap from one word's right edge to the next one's left (none where they touch or overlap)."""
    return [("WIDTH", max(0, after[0] - before[2])), ("HPOS", before[2]), ("VPOS", min(before[1], after[1]))]


def _position(box: Box) -> list[tuple[str, object]]:
    x0, y0, x1, y1 = box
    return [("HPOS", x0), ("VPOS", y0), ("WIDTH", x1 - x0), ("HEIGHT", y1 - y0)]
