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

A page with layout (``blocks``, ``documents.structure``) holds a block
element per block instead of its one ``TextBlock``, in reading order, each
with its block's box and its lines inside it (a ``TextLine``'s id is
``line_P_N``, ``N`` the line's place in the page's ``lines``, from 1):

- a ``table`` is a ``ComposedBlock`` of ``TYPE="table"`` holding one
  ``TextBlock`` of the table's lines (its cells are in the JSON, the CSV and
  the Markdown: ALTO has no cell, and the words of a row's line cross its
  cells);
- a ``figure`` is an ``Illustration`` over its box; where words were read
  inside it, a ``ComposedBlock`` of ``TYPE="figure"`` holds the
  ``Illustration`` and a ``TextBlock`` of them, so that no word is lost and
  none is mistaken for the page's text;
- every other block (headings, paragraphs, list items, captions, formulas,
  running headers and footers) is a ``TextBlock``.

What each is comes from ``Tags``: a ``LayoutTag`` per kind of block the
document holds (``LABEL`` the block's ``type``; a section header's level is
a tag of its own, ``DESCRIPTION`` "level 2"), which each block names in
``TAGREFS``.  A running header or footer stays in the ``PrintSpace`` with
the rest, tagged: ``TopMargin`` and ``BottomMargin`` would need the page's
margins, which a result does not know.
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
from documents.structure import FIGURE, SECTION_HEADER, TABLE

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
    parts = ['<?xml version="1.0" encoding="UTF-8"?>\n', f"<alto{root}>\n", *_description(document_id)]
    parts.extend([*_tags(pages), "  <Layout>\n"])
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
    if page.get("blocks"):
        parts.extend(_blocks(index, page))
    elif lines:
        block = union_box(box_of(line) for line in lines)
        parts.append(f"        <TextBlock{attributes([('ID', f'block_{index}_1'), *_position(block)])}>\n")
        word_number = 0
        for line_number, line in enumerate(lines, start=1):
            parts.extend(_line(index, line_number, line, word_number, "          "))
            word_number += len(words_of(line))
        parts.append("        </TextBlock>\n")
    parts.append("      </PrintSpace>\n    </Page>\n")
    return parts


def _line(index: int, line_number: int, line: Mapping[str, Any], words_before: int, indent: str) -> list[str]:
    """A ``TextLine`` and its ``String``s, numbered after the page's ``words_before`` words."""
    line_attributes = [("ID", f"line_{index}_{line_number}"), *_position(box_of(line))]
    parts = [f"{indent}<TextLine{attributes(line_attributes)}>\n"]
    previous: Box | None = None
    for word_number, word in enumerate(words_of(line), start=words_before + 1):
        box = box_of(word)
        if previous is not None:
            parts.append(f"{indent}  <SP{attributes(_space(previous, box))} />\n")
        parts.append(f"{indent}  <String{attributes(_string(f'string_{index}_{word_number}', word))} />\n")
        previous = box
    parts.append(f"{indent}</TextLine>\n")
    return parts


def _tag_of(block: Mapping[str, Any]) -> tuple[str, str, str | None]:
    """The ``LayoutTag`` a block names: its id, label and description."""
    kind = str(block["type"])
    if kind == SECTION_HEADER and block.get("level") is not None:
        level = int(block["level"])
        return f"layout_{kind}_{level}", kind, f"level {level}"
    return f"layout_{kind}", kind, None


def _tags(pages: Sequence[Mapping[str, Any]]) -> list[str]:
    """``Tags``, with a ``LayoutTag`` per kind of block the pages hold (none without layout: no element)."""
    tags = {_tag_of(block) for page in pages for block in page.get("blocks") or ()}
    if not tags:
        return []
    parts = ["  <Tags>\n"]
    for tag_id, label, description in sorted(tags):
        described = [("DESCRIPTION", description)] if description else []
        parts.append(f"    <LayoutTag{attributes([('ID', tag_id), ('LABEL', label), *described])} />\n")
    parts.append("  </Tags>\n")
    return parts


def _blocks(index: int, page: Mapping[str, Any]) -> list[str]:
    lines = page.get("lines") or []
    parts: list[str] = []
    words_before = 0
    for block in sorted(page["blocks"], key=lambda b: b["order"]):
        block_id = f"block_{index}_{int(block['order']) + 1}"
        head = [("ID", block_id), *_position(box_of(block)), ("TAGREFS", _tag_of(block)[0])]
        mine = [i for i in block.get("lines") or () if 0 <= i < len(lines)]
        nested = block["type"] in (TABLE, FIGURE)  # its lines are in a TextBlock inside a ComposedBlock
        text_lines: list[str] = []
        for line_index in mine:
            indent = " " * (14 if nested else 10)
            text_lines.extend(_line(index, line_index + 1, lines[line_index], words_before, indent))
            words_before += len(words_of(lines[line_index]))
        if block["type"] == FIGURE and not mine:
            parts.append(f"        <Illustration{attributes(head)} />\n")
            continue
        if not nested:
            parts.append(f"        <TextBlock{attributes(head)}>\n")
            parts.extend(text_lines)
            parts.append("        </TextBlock>\n")
            continue
        composed = [("ID", block_id), *_position(box_of(block)), ("TYPE", block["type"]), ("TAGREFS", head[-1][1])]
        parts.append(f"        <ComposedBlock{attributes(composed)}>\n")
        if block["type"] == FIGURE:
            parts.append(f"          <Illustration{attributes([('ID', f'{block_id}_illustration'), *head[1:5]])} />\n")
        if mine:
            area = union_box(box_of(lines[i]) for i in mine)
            parts.append(f"          <TextBlock{attributes([('ID', f'{block_id}_text'), *_position(area)])}>\n")
            parts.extend(text_lines)
            parts.append("          </TextBlock>\n")
        parts.append("        </ComposedBlock>\n")
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
