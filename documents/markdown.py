"""A result as Markdown: GET /jobs/{id}/result.md, what a search index or a language model reads.

Drawn from the pages of a result (``documents.structure``'s JSON), in
document order, with no engine.  Each page starts with a comment naming its
number in the whole document (``<!-- page 3 -->``: a split's pages keep
theirs), then its body blocks in reading order, a blank line between two:

- a ``title`` is a ``#`` heading, a ``section_header`` ``##`` or ``###`` by
  its level;
- a ``text`` block is a paragraph: its lines joined into one, as the layout
  joined them;
- a ``list_item`` is ``- item``; an item that starts with its own number or
  letter (``1.``, ``2)``, ``a)``) keeps it as a numbered item, one that
  starts with a bullet (``•``, ``-``, ``*``, ``o``...) has it replaced by
  ``-``; the items that follow one another form one list, a bulleted or a
  numbered one (where they change from one to the other, a new list
  starts);
- a ``table`` is a GitHub table, its first row the header, where every cell
  holds one position of the grid; a table with a cell spanning several rows
  or columns, which a GitHub table cannot draw, is given as its HTML, which
  Markdown carries as it is; a table whose structure could not be read
  gives its lines;
- a ``caption`` is an italic paragraph where the reading order puts it:
  beside the figure or table it describes (the layout reads a caption next to
  what it describes), above a table, as is usual, or below; moving every
  caption after its table would put a table's title under it;
- a ``figure`` shows as its caption alone: the words drawn inside it (the
  labels of a chart, the text of a photographed sign) are not the
  document's text, and stay in the JSON on the figure's block;
- a ``formula`` is a paragraph of its OCR text, not ``$$ ... $$``: that text
  is what the engine read of the symbols, not LaTeX, and a Markdown viewer
  would try to typeset it;
- a ``page_header`` or ``page_footer`` (running titles, page numbers) is
  left out: in the body it breaks the text that runs from one page to the
  next.

A page without blocks (a job without ``layout``, or a page whose layout
failed: ``layout_error``) gives each of its lines as a paragraph, so a
result always has its Markdown.

Text is escaped only where Markdown would read it as structure: a line that
would start a heading, a quote, a list item or a numbered item, a ``<`` that
would open HTML, and a ``|`` in a table's cell.  Emphasis characters
(``*``, ``_``) are left as read: a ``snake_case`` word stays as it is for
the reader, and an unmatched one shows as itself.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from documents.structure import (
    CAPTION,
    FIGURE,
    LIST_ITEM,
    MAX_LEVEL,
    NOT_BODY,
    SECTION_HEADER,
    TABLE,
    TITLE,
    TITLE_LEVEL,
)
from documents.table_export import grid, has_span

#: A section header's level when its block names none.
_DEFAULT_SECTION_LEVEL = 2
#: What starts a list item that says its own number: ``1.``, ``12)``, ``a)``, ``(iv)``.
_NUMBERED = re.compile(r"^\s*(\(?(?:\d{1,3}|[a-zA-Z]|[ivxlcdm]{1,5})[.)])\s+(.*)$", re.DOTALL)
#: A bullet a list item was printed with, read as a character of its text (``=``: how Tesseract often reads a
#: round bullet).
_BULLET = re.compile(r"^\s*[-•·◦▪▫■□●○*+>o»–—=]\s+(.*)$", re.DOTALL)
#: What Markdown takes for the optional closing sequence of a heading: a run of ``#`` after a space, at its end.
_CLOSING_HASHES = re.compile(r"(\s)(#+)$")
#: A line start Markdown reads as structure: a heading, a quote, a list item, a numbered item, a rule (``---``,
#: ``***``, ``___``: a form's signature line), a fence.
_BLOCK_START = re.compile(
    r"^(\s*)(#{1,6}(?=\s|$)|>|[-+*](?=\s|$)|\d{1,9}[.)](?=\s|$)|={3,}|-{3,}|`{3,}|~{3,}|[*_](?:\s*[*_]){2,})"
)


def render_markdown(pages: Sequence[Mapping[str, Any]]) -> str:
    """The Markdown of ``pages`` (a result's, in document order)."""
    parts = []
    for page in pages:
        parts.append(f"<!-- page {int(page['page'])} -->")
        parts.extend(_page(page))
    return "\n\n".join(parts) + "\n"


def _page(page: Mapping[str, Any]) -> Iterator[str]:
    blocks = sorted(page.get("blocks") or (), key=lambda b: b["order"])
    if not blocks:
        for line in page.get("lines") or ():
            text = _one_line(str(line.get("text") or ""))
            if text:
                yield _escape(text)
        return
    items: list[str] = []  # the list being drawn: its items stand one under another
    for block in blocks:
        kind = block["type"]
        if kind in NOT_BODY - {FIGURE}:
            continue  # a running header or footer between two list items does not end the list
        if kind == LIST_ITEM:
            item = _list_item(str(block.get("text") or ""))
            if item and items and _ordered(item) != _ordered(items[-1]):
                # A numbered item right under a bulleted one would be read as that item's text: a list of its own
                yield "\n".join(items)
                items = []
            if item:
                items.append(item)
            continue
        if items:
            yield "\n".join(items)
            items = []
        yield from _block(block)
    if items:
        yield "\n".join(items)


def _block(block: Mapping[str, Any]) -> Iterator[str]:
    kind = block["type"]
    text = str(block.get("text") or "")
    if kind == FIGURE:
        return
    if kind == TABLE:
        yield from _table(block)
        return
    if not text.strip():
        return
    if kind == TITLE:
        yield "#" * TITLE_LEVEL + " " + _heading(text)
    elif kind == SECTION_HEADER:
        level = block.get("level") or _DEFAULT_SECTION_LEVEL
        level = min(max(int(level), TITLE_LEVEL + 1), MAX_LEVEL)
        yield "#" * level + " " + _heading(text)
    elif kind == CAPTION:
        # A ``*`` of its own would end the emphasis early
        yield "*" + _escape_inline(_one_line(text)).replace("*", "\\*") + "*"
    else:  # text, formula, and a type this renderer does not know: a paragraph
        yield _escape(_one_line(text))


def _ordered(item: str) -> bool:
    return not item.startswith("- ")


def _list_item(text: str) -> str:
    text = _one_line(text)
    if not text:
        return ""
    numbered = _NUMBERED.match(text)
    if numbered:
        marker, rest = numbered.groups()
        if marker[-1] == "." and marker[:-1].isdigit():
            return f"{marker} {_escape_inline(rest)}"
        # a) or (iv): not a Markdown list marker; kept as the item's own words
        return f"- {_escape_inline(marker)} {_escape_inline(rest)}"
    bulleted = _BULLET.match(text)
    return f"- {_escape_inline(bulleted.group(1) if bulleted else text)}"


def _table(block: Mapping[str, Any]) -> Iterator[str]:
    table = block.get("table")
    if not table or not int(table.get("rows") or 0) or not int(table.get("cols") or 0):
        # No structure: its lines, one under another, as they were read
        rows = [_escape(" ".join(row.split())) for row in str(block.get("text") or "").splitlines() if row.strip()]
        if rows:
            yield "  \n".join(rows)
        return
    if has_span(table) and table.get("html"):
        yield str(table["html"]).strip()
        return
    header, *body = grid(table)
    drawn = [_row(header), "|" + "|".join(" --- " for _ in header) + "|"]
    drawn.extend(_row(row) for row in body)
    yield "\n".join(drawn)


def _row(cells: Sequence[str]) -> str:
    return "|" + "|".join(f" {_cell(text)} " for text in cells) + "|"


def _cell(text: str) -> str:
    return _escape_inline(" ".join(text.split())).replace("|", "\\|")  # a line break would end the row


def _heading(text: str) -> str:
    """A heading's text; a ``#`` run at its end escaped, which Markdown would take for the heading's closing."""
    return _CLOSING_HASHES.sub(lambda m: m.group(1) + "\\" + m.group(2), _escape_inline(_one_line(text)))


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _escape(text: str) -> str:
    """A paragraph's text, so that Markdown reads it as a paragraph and nothing else."""
    return _BLOCK_START.sub(_escaped_start, _escape_inline(text), count=1)


def _escaped_start(found: re.Match[str]) -> str:
    """The marker with a backslash before its punctuation (only punctuation can be escaped: ``1\\.``, not ``\\1.``)."""
    indent, marker = found.groups()
    if marker[0].isdigit():
        return indent + marker[:-1] + "\\" + marker[-1]
    return indent + "\\" + marker


def _escape_inline(text: str) -> str:
    """Text that Markdown would not read as HTML: a ``<`` as its entity (a ``&`` stays: alone it is itself)."""
    return text.replace("<", "&lt;")
