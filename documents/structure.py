"""A page's structure: its blocks in reading order, and the tables among them.

With ``options.layout`` a result's page carries ``blocks``: what a person
sees on the page (a title, a paragraph, a table, a figure, the running
header), in the order a person reads them.  This module is the shape of
that answer, shared by what makes it (``documents.layout``) and what is
made from it (Markdown, hOCR, ALTO, a table's CSV), which read the stored
JSON of a result's pages.

A page's JSON with layout on::

    {"page": 1, ..., "lines": [...],            # the lines in reading order, block by block
     "blocks": [
       {"order": 0, "type": "title", "bbox": [x0, y0, x1, y1], "lines": [0], "text": "...", "level": 1},
       {"order": 1, "type": "text", "bbox": [...], "lines": [1, 2, 3], "text": "one paragraph"},
       {"order": 2, "type": "table", ..., "caption": 3,
        "table": {"rows": 5, "cols": 4, "cells": [{"row": 0, "col": 0, "row_span": 1, "col_span": 1,
                                                    "bbox": [...], "text": "..."}, ...],
                  "html": "<table>...</table>"}},
       {"order": 3, "type": "caption", ..., "caption_of": 2},
       ...],
     "layout_error": "..."}                      # only when the layout failed: the page keeps its plain lines

``lines`` of a block are indices into the page's ``lines``; every line is in
exactly one block.  ``bbox`` is in the pixels of the page image (the space
of the lines' boxes).  ``level`` is a heading's: 1 for a ``title``, 2 or 3
for a ``section_header``.  A ``caption`` names the block it describes
(``caption_of``), and that block names its caption (``caption``).
``text`` is the block's lines as one paragraph (a word hyphenated at a line's
end joined back); a table's text is its rows, one a line, its cells apart by
tabs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

TITLE = "title"
SECTION_HEADER = "section_header"
TEXT = "text"
LIST_ITEM = "list_item"
TABLE = "table"
FIGURE = "figure"
CAPTION = "caption"
FORMULA = "formula"
PAGE_HEADER = "page_header"
PAGE_FOOTER = "page_footer"

BLOCK_TYPES = (TITLE, SECTION_HEADER, TEXT, LIST_ITEM, TABLE, FIGURE, CAPTION, FORMULA, PAGE_HEADER, PAGE_FOOTER)
HEADINGS = frozenset({TITLE, SECTION_HEADER})
#: What is not the page's body: its running header and footer, and the words drawn inside a figure.
NOT_BODY = frozenset({PAGE_HEADER, PAGE_FOOTER, FIGURE})
#: The heading levels: a title is 1, a section header 2 or 3.
TITLE_LEVEL, MAX_LEVEL = 1, 3

Box = tuple[int, int, int, int]


@dataclass(frozen=True)
class Cell:
    row: int  # 0-based
    col: int
    row_span: int
    col_span: int
    bbox: Box
    text: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "row": self.row,
            "col": self.col,
            "row_span": self.row_span,
            "col_span": self.col_span,
            "bbox": [int(v) for v in self.bbox],
            "text": self.text,
        }


@dataclass(frozen=True)
class Table:
    rows: int
    cols: int
    cells: tuple[Cell, ...]
    html: str

    def to_dict(self) -> dict[str, Any]:
        return {"rows": self.rows, "cols": self.cols, "cells": [c.to_dict() for c in self.cells], "html": self.html}


@dataclass(frozen=True)
class Block:
    order: int
    type: str
    bbox: Box
    lines: tuple[int, ...]
    text: str
    level: int | None = None  # headings only
    table: Table | None = None  # tables only
    caption: int | None = None  # the order of this figure's or table's caption
    caption_of: int | None = None  # the order of the figure or table this caption describes
    extra: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "order": self.order,
            "type": self.type,
            "bbox": [int(v) for v in self.bbox],
            "lines": list(self.lines),
            "text": self.text,
        }
        if self.level is not None:
            out["level"] = self.level
        if self.table is not None:
            out["table"] = self.table.to_dict()
        if self.caption is not None:
            out["caption"] = self.caption
        if self.caption_of is not None:
            out["caption_of"] = self.caption_of
        return out


def body_blocks(page: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The blocks of a page's JSON that are its body, in reading order."""
    return [b for b in sorted(page.get("blocks") or (), key=lambda b: b["order"]) if b["type"] not in NOT_BODY]


def body_text(blocks: Iterable[Mapping[str, Any]]) -> str:
    """A page's text with layout on: its body blocks' texts in reading order, a blank line between two."""
    return "\n\n".join(b["text"] for b in blocks if b["type"] not in NOT_BODY and b["text"])


def tables_of(pages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The tables of a result's pages (in document order), numbered from 1 as ``GET /jobs/{id}/tables/{n}.csv``
    numbers them: each with its page, its block's order, its size and its caption's text."""
    found: list[dict[str, Any]] = []
    for page in pages:
        blocks = {b["order"]: b for b in page.get("blocks") or ()}
        for block in sorted(blocks.values(), key=lambda b: b["order"]):
            if block["type"] != TABLE or not block.get("table"):
                continue
            caption = blocks.get(block["caption"]) if block.get("caption") is not None else None
            found.append(
                {
                    "number": len(found) + 1,
                    "page": page["page"],
                    "block": block["order"],
                    "rows": block["table"]["rows"],
                    "cols": block["table"]["cols"],
                    "caption": caption["text"] if caption else None,
                }
            )
    return found
