"""A table of a result as rows of text (the grid its cells fill), and found by its number in the document.

A table block's ``table`` (``documents.structure``) lists its cells, each at
its row and column and spanning ``row_span`` x ``col_span`` positions of the
grid.  As rows of text, a spanning cell's text stands once, at its top-left
position, and the positions it covers beyond that are empty: a reader of the
CSV sees each value once, where the table starts it, as a spreadsheet shows
merged cells (as ``documents.table_csv`` writes it).  A position no cell
covers is empty too.

Tables are numbered from 1 over the whole document, page after page and in
reading order on a page, as ``documents.structure.tables_of`` numbers them:
``table_block(pages, n)`` is the block ``tables_of`` calls ``n``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from documents.structure import TABLE


def grid(table: Mapping[str, Any]) -> list[list[str]]:
    """The table's ``rows`` x ``cols`` texts; a spanning cell's at its top-left position only, the rest of its
    span empty: what a table's Markdown, its CSV and its text are written from."""
    rows, cols = int(table["rows"]), int(table["cols"])
    texts = [["" for _ in range(cols)] for _ in range(rows)]
    for cell in table.get("cells") or ():
        row, col = int(cell["row"]), int(cell["col"])
        if 0 <= row < rows and 0 <= col < cols:
            texts[row][col] = str(cell.get("text") or "")
    return texts


def has_span(table: Mapping[str, Any]) -> bool:
    """Whether a cell of the table covers more than one position of its grid."""
    return any(int(c.get("row_span", 1)) > 1 or int(c.get("col_span", 1)) > 1 for c in table.get("cells") or ())


def table_blocks(pages: Sequence[Mapping[str, Any]]) -> Iterator[Mapping[str, Any]]:
    """The table blocks of a result's pages that carry a structure, in the order ``tables_of`` numbers them."""
    for page in pages:
        for block in sorted(page.get("blocks") or (), key=lambda b: b["order"]):
            if block["type"] == TABLE and block.get("table"):
                yield block


def table_block(pages: Sequence[Mapping[str, Any]], number: int) -> Mapping[str, Any] | None:
    """The document's table ``number`` (from 1), or None when it has fewer."""
    if number < 1:
        return None
    for found, block in enumerate(table_blocks(pages), start=1):
        if found == number:
            return block
    return None
