"""A result as hOCR (http://kba.github.io/hocr-spec/1.2/): an XHTML document of pages, lines and words.

Each page is an ``ocr_page`` (``bbox 0 0 W H; ppageno N-1``: the page's
number in the whole document, counted from 0 as the spec counts; and
``scan_res D D``, the resolution it was read at, when the result records
one), holding
one ``ocr_carea`` with one ``ocr_par`` around its lines (a result keeps no
blocks or paragraphs, so a page has one of each, around all its lines), an
``ocr_line`` per line and an ``ocrx_word`` per word (``bbox ...; x_wconf
NN``, the confidence in percent).  Every box is in pixels of the page image
the engine read (the upright, straightened page: ``width`` x ``height``).

The page has no ``textangle``: the spec's is the angle of the text
*relative to the page*, and the page described here is the straightened
one, on which the text stands level: the result's ``skew`` (and
``rotation``) say how that page was made from the scan, which hOCR has no
property for.  Neither has it an ``image``: the gateway keeps no file name.
A page without an image (echo's) is ``bbox 0 0 0 0``, as are its lines.

A page with layout (``blocks``, ``documents.structure``) holds an element
per block instead of its one area, in reading order, each with its block's
box and ``order`` (the spec's reading order), and its lines inside it (an
``ocr_line``'s id is ``line_P_N``, ``N`` the line's place in the page's
``lines``, from 1).  The element is the spec's for what the block is:

====================================  ==============================================
block                                 hOCR
====================================  ==============================================
``page_header``, ``page_footer``      ``ocr_header``, ``ocr_footer`` (floats)
``table``                             ``ocr_table`` (a float), its lines in an ``ocr_par``
``figure``                            ``ocr_float``, the words drawn in it in an ``ocr_par``
``caption``                           ``ocr_carea`` holding an ``ocr_caption``
anything else                         ``ocr_carea`` holding an ``ocr_par``
====================================  ==============================================

A heading is an ``ocr_carea`` like a paragraph: the spec's ``ocr_title`` and
``ocr_section`` are containers of a whole part of the document, which a
page read on its own cannot close.  What kind of block each element is, and
a heading's level, is said by the engine-specific properties ``x_block``
(the block's ``type``) and ``x_level``, as the spec lets an engine add
(``x_`` names).  A table's cells are not drawn: hOCR has no cell, and its
lines hold its words; the cells are in the JSON, the CSV and the Markdown.
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
from documents.structure import CAPTION, FIGURE, PAGE_FOOTER, PAGE_HEADER, TABLE

XHTML = "http://www.w3.org/1999/xhtml"
#: The hOCR classes and properties the documents use (the spec's ``ocr-capabilities``).
CAPABILITIES = ("ocr_page", "ocr_carea", "ocr_par", "ocr_line", "ocrx_word", "ocrp_wconf")
#: The classes a document with layout adds to them.
LAYOUT_CAPABILITIES = ("ocr_header", "ocr_footer", "ocr_table", "ocr_float", "ocr_caption")
#: The element of a block of each type that is not an ``ocr_carea``, and the element around its lines.
_FLOATS = {PAGE_HEADER: "ocr_header", PAGE_FOOTER: "ocr_footer", TABLE: "ocr_table", FIGURE: "ocr_float"}
_PARAGRAPHS = {CAPTION: "ocr_caption"}

_PROLOGUE = (
    '<?xml version="1.0" encoding="UTF-8"?>\n'
    '<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Transitional//EN"'
    ' "http://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional.dtd">\n'
)


def render_hocr(pages: Sequence[Mapping[str, Any]], title: str = SOFTWARE) -> str:
    """The hOCR document of ``pages`` (a result's, in document order); ``title``: the document's title."""
    parts = [
        _PROLOGUE,
        f'<html xmlns="{XHTML}" xml:lang="en" lang="en">\n <head>\n',
        f"  <title>{xml_text(title)}</title>\n",
        '  <meta http-equiv="Content-Type" content="text/html; charset=utf-8" />\n',
        f'  <meta name="ocr-system" content={xml_attr(SOFTWARE)} />\n',
        f'  <meta name="ocr-capabilities" content={xml_attr(" ".join(_capabilities(pages)))} />\n',
        f'  <meta name="ocr-number-of-pages" content="{len(pages)}" />\n',
        " </head>\n <body>\n",
    ]
    for index, page in enumerate(pages, start=1):
        parts.extend(_page(index, page))
    parts.append(" </body>\n</html>\n")
    return "".join(parts)


def _page(index: int, page: Mapping[str, Any]) -> list[str]:
    width, height = page_size(page) or (0, 0)
    title = f"bbox 0 0 {width} {height}; ppageno {int(page['page']) - 1}"
    dpi = page.get("dpi")
    if isinstance(dpi, int | float) and not isinstance(dpi, bool) and dpi > 0:
        title += f"; scan_res {round(dpi)} {round(dpi)}"  # what sizes a page made from it (hocr-pdf, hocrtransform)
    parts = [f"  <div{attributes([('class', 'ocr_page'), ('id', f'page_{index}'), ('title', title)])}>\n"]
    lines = page.get("lines") or []
    if page.get("blocks"):
        parts.extend(_blocks(index, page))
    elif lines:
        area = _bbox(union_box(box_of(line) for line in lines))
        parts.append(f"   <div{attributes([('class', 'ocr_carea'), ('id', f'block_{index}_1'), ('title', area)])}>\n")
        parts.append(f"    <p{attributes([('class', 'ocr_par'), ('id', f'par_{index}_1'), ('title', area)])}>\n")
        word_number = 0
        for line_number, line in enumerate(lines, start=1):
            words = []
            for word in words_of(line):
                word_number += 1
                words.append(_word(f"word_{index}_{word_number}", word))
            line_attributes = attributes([("class", "ocr_line"), ("id", f"line_{index}_{line_number}")])
            parts.append(
                f"     <span{line_attributes} title={xml_attr(_bbox(box_of(line)))}>{' '.join(words)}</span>\n"
            )
        parts.append("    </p>\n   </div>\n")
    parts.append("  </div>\n")
    return parts


def _capabilities(pages: Sequence[Mapping[str, Any]]) -> tuple[str, ...]:
    return CAPABILITIES + LAYOUT_CAPABILITIES if any(page.get("blocks") for page in pages) else CAPABILITIES


def _blocks(index: int, page: Mapping[str, Any]) -> list[str]:
    """The page's blocks in reading order, each its element around its lines."""
    lines = page.get("lines") or []
    parts: list[str] = []
    word_number = 0
    for block in sorted(page["blocks"], key=lambda b: b["order"]):
        number = int(block["order"]) + 1
        title = f"{_bbox(box_of(block))}; order {int(block['order'])}; x_block {block['type']}"
        if block.get("level") is not None:
            title += f"; x_level {int(block['level'])}"
        element = _FLOATS.get(block["type"], "ocr_carea")
        parts.append(
            f"   <div{attributes([('class', element), ('id', f'block_{index}_{number}'), ('title', title)])}>\n"
        )
        mine = [i for i in block.get("lines") or () if 0 <= i < len(lines)]
        if mine:
            paragraph = _PARAGRAPHS.get(block["type"], "ocr_par")
            area = _bbox(union_box(box_of(lines[i]) for i in mine))
            parts.append(
                f"    <p{attributes([('class', paragraph), ('id', f'par_{index}_{number}'), ('title', area)])}>\n"
            )
            for line_index in mine:
                words = []
                for word in words_of(lines[line_index]):
                    word_number += 1
                    words.append(_word(f"word_{index}_{word_number}", word))
                line_attributes = attributes([("class", "ocr_line"), ("id", f"line_{index}_{line_index + 1}")])
                box = xml_attr(_bbox(box_of(lines[line_index])))
                parts.append(f"     <span{line_attributes} title={box}>{' '.join(words)}</span>\n")
            parts.append("    </p>\n")
        parts.append("   </div>\n")
    return parts


def _word(word_id: str, word: Mapping[str, Any]) -> str:
    title = f"{_bbox(box_of(word))}; x_wconf {round(confidence_of(word) * 100)}"
    word_attributes = attributes([("class", "ocrx_word"), ("id", word_id), ("title", title)])
    return f"<span{word_attributes}>{xml_text(str(word['text']))}</span>"


def _bbox(box: Box) -> str:
    return "bbox {} {} {} {}".format(*box)
