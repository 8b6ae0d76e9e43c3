"""A page's layout: its regions found by a learned model, its lines put in them, in reading order.

``analyse`` is the one door: the worker calls it once per page, after the
page was read (OCR) or its text layer taken (a born-digital page), with the
page's image as the layout model should see it.  It answers the page's
blocks (``documents.structure``) and the order of its lines.

A page is laid out in steps, each in its own module:

1. ``regions``: the layout model's boxes on the page, reconciled so that
   none contradicts another, each of a block's kind.
2. ``placement``: every line put in the region holding it, cut in pieces
   where a region's edge runs through it; lines in no region grouped by
   position, lone lines in the page's margins taken for its running header
   and footer.  The model's regions decide what the blocks are and of which
   kind; the engine's lines are kept, never read again.
3. Within a block, lines top to bottom (``reading_order.line_order``); a
   text block cut into list items (``lists``) or else into paragraphs, where
   the gap between two lines is wider than ``PARAGRAPH_PITCH`` times the
   page's line spacing or a line is indented as a paragraph's first.
4. ``headings``: a heading's level from the size of its type; ``captions``:
   each caption attached to its figure or table; ``tables``: a table's rows,
   columns and cells, from the words inside it.
5. ``reading_order.block_order``: the blocks in the order a person reads
   them, the running header first and the footer last.
6. ``paragraphs``: each block's lines joined into its text.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from PIL import Image

from documents import structure
from documents.layout import captions, headings, lists, paragraphs, placement, regions
from documents.layout.reading_order import block_order, line_order
from documents.structure import Block, Box, Table


class WordLike(Protocol):
    @property
    def text(self) -> str: ...
    @property
    def bbox(self) -> Box: ...


class LineLike(Protocol):
    """An engine's line (``workers.adapters.base.Line``) or a PDF's (``documents.text_layer.TextLine``)."""

    @property
    def text(self) -> str: ...
    @property
    def bbox(self) -> Box: ...
    @property
    def words(self) -> Sequence[WordLike]: ...


@dataclass(frozen=True)
class Piece:
    """A line of the page as laid out: the page's line ``line`` (an index into the lines given), whole
    (``words`` None) or only the words ``words`` of it (indices into its words): a line the layout's regions
    cut in two (a table's row read as one line with the text beside it) is two pieces."""

    line: int
    words: tuple[int, ...] | None = None


@dataclass(frozen=True)
class PageLayout:
    pieces: list[Piece]  # the page's lines in reading order; each block's ``lines`` index into this list
    blocks: list[Block]  # in reading order: ``blocks[i].order == i``


def analyse(
    image: Image.Image,
    lines: Sequence[LineLike],
    *,
    width: int,
    height: int,
    dpi: float,
    font_sizes: Sequence[float | None] | None = None,
    bold: Sequence[bool | None] | None = None,
    known_words: frozenset[str] = frozenset(),
) -> PageLayout:
    """The layout of a page of ``width`` x ``height`` pixels (the space of the lines' boxes, read at ``dpi``)
    whose lines are ``lines`` (in the engine's order).

    ``image`` is the page as drawn; it may be smaller than ``width`` x ``height`` (a born-digital page is
    drawn small for the model alone): regions are scaled to the lines' space.  ``font_sizes`` and ``bold``,
    one per line when the page's text came from the PDF, are its font's size in points and weight.
    ``known_words`` are words (lower case) the rest of the document holds: a word hyphenated at a line's end
    is joined back when it, or the dictionary, knows the whole word.  A page without lines has no blocks.
    Raises on a model failure; the caller keeps the page's plain lines and records the error.
    """
    if not lines:
        return PageLayout([], [])
    words = [_words(line) for line in lines]
    found = regions.find(image, width=width, height=height)
    groups = placement.place(words, found, height=height)
    sizes = _sizes(words, font_sizes)
    drafts = [d for group in groups for d in _drafts(group)]
    body = _body_size(drafts, sizes)
    for draft in drafts:
        _decide_heading(draft, sizes, bold, body)
    kinds, described = captions.attach(
        [d.kind for d in drafts],
        [d.box for d in drafts],
        [" ".join(p.text for p in d.pieces) for d in drafts],
        [_line_height(d) for d in drafts],
    )
    for draft, kind in zip(drafts, kinds, strict=True):
        draft.kind = kind
    order = _block_order(drafts)
    position = {d: o for o, d in enumerate(order)}
    pieces: list[Piece] = []
    blocks: list[Block] = []
    for number, d in enumerate(order):
        draft = drafts[d]
        first = len(pieces)
        pieces.extend(Piece(p.line, p.words) for p in draft.pieces)
        table = None
        if draft.kind == structure.TABLE:
            table = _table(image, draft, width=width)
            text = "\n".join(_rows(table))
        else:
            text = paragraphs.join(draft.texts or [p.text for p in draft.pieces], known_words)
        caption_of = described.get(d)
        caption = next((position[c] for c, t in described.items() if t == d), None)
        blocks.append(
            Block(
                order=number,
                type=draft.kind,
                bbox=draft.box,
                lines=tuple(range(first, len(pieces))),
                text=text,
                level=draft.level,
                table=table,
                caption=caption,
                caption_of=position[caption_of] if caption_of is not None else None,
            )
        )
    return PageLayout(pieces, blocks)


#: A gap between two lines' tops wider than this many times the page's line spacing starts a new paragraph.
PARAGRAPH_PITCH = 1.4
#: A line indented by more than this many of its heights, with the next back at the margin, opens a paragraph.
PARAGRAPH_INDENT = 1.2


@dataclass(eq=False)
class _Draft:
    """A block before it has its place in the page's order."""

    kind: str
    region: Box | None
    pieces: list[placement.PlacedPiece]
    texts: list[str] | None = None  # the pieces' texts when they differ from their words (a list's bullet left out)
    level: int | None = None

    @property
    def box(self) -> Box:
        boxes = [p.box for p in self.pieces] + ([self.region] if self.region else [])
        return regions.union(boxes)


def _words(line: LineLike) -> list[tuple[str, Box]]:
    """A line's words with their boxes; a line given without words is one word."""
    found = [(w.text, w.bbox) for w in line.words if w.text.strip()]
    return found or [(line.text, line.bbox)]


def _sizes(words: Sequence[Sequence[tuple[str, Box]]], font_sizes: Sequence[float | None] | None) -> list[float | None]:
    """Each line's type size: its font's in points when the PDF gave it, else estimated from its words' heights."""
    if font_sizes is not None:
        return list(font_sizes)
    return [headings.line_size(w) for w in words]


def _drafts(group: placement.Group) -> list[_Draft]:
    """A group as blocks: its pieces in line order, a text group cut into list items or paragraphs."""
    ordered = [group.pieces[i] for i in line_order([p.box for p in group.pieces])]
    if group.kind != structure.TEXT or len(ordered) < 2:
        return [_Draft(group.kind, group.region, ordered)]
    pitch = _line_pitch(ordered)
    height = statistics.median(p.box[3] - p.box[1] for p in ordered)
    found = lists.items([lists.ListLine(list(zip(p.texts, p.boxes, strict=True))) for p in ordered], height)
    if found is None:
        parts = _paragraphs(ordered, pitch, indents=True)
        return [_Draft(structure.TEXT, group.region if i == 0 else None, part) for i, part in enumerate(parts)]
    drafts = []
    for item in found:
        pieces = [ordered[i] for i in item.lines]
        texts = dict(zip(item.lines, item.texts, strict=True))
        # An item ends where a paragraph would: the text after a list's last item is not part of it.
        for n, part in enumerate(_paragraphs(pieces, pitch, indents=not item.is_item)):
            kind = structure.LIST_ITEM if item.is_item and n == 0 else structure.TEXT
            drafts.append(_Draft(kind, None, part, [texts[ordered.index(p)] for p in part]))
    return drafts


def _line_pitch(ordered: list[placement.PlacedPiece]) -> float | None:
    """The distance from one line's top to the next's in a block: the tightest there is (a paragraph's gap is
    wider), None for a block of one row."""
    tops = [p.box[1] for p in ordered]
    least = 0.5 * statistics.median(p.box[3] - p.box[1] for p in ordered)
    pitches = [b - a for a, b in zip(tops, tops[1:], strict=False) if b - a > least]
    return min(pitches) if pitches else None


def _paragraphs(
    ordered: list[placement.PlacedPiece], pitch: float | None, *, indents: bool
) -> list[list[placement.PlacedPiece]]:
    """A block's lines cut where a paragraph ends: a gap wider than ``pitch`` allows, or (``indents``) an
    indented first line."""
    if pitch is None:
        return [ordered]
    left = min(p.box[0] for p in ordered)
    parts: list[list[placement.PlacedPiece]] = [[ordered[0]]]
    for i in range(1, len(ordered)):
        piece, previous = ordered[i], ordered[i - 1]
        gap = piece.box[1] - previous.box[1]
        height = piece.box[3] - piece.box[1]
        indented = (
            indents
            and piece.box[0] - left > PARAGRAPH_INDENT * height
            and (i + 1 < len(ordered) and ordered[i + 1].box[0] - left < 0.5 * height)
        )
        if gap > PARAGRAPH_PITCH * pitch or indented:
            parts.append([piece])
        else:
            parts[-1].append(piece)
    return parts


def _body_size(drafts: Sequence[_Draft], sizes: Sequence[float | None]) -> float | None:
    """The type size of the page's body: the median over the lines of its text and list blocks (of all its
    lines when it has none)."""
    body = [sizes[p.line] for d in drafts if d.kind in (structure.TEXT, structure.LIST_ITEM) for p in d.pieces]
    found = [s for s in body if s] or [s for s in sizes if s]
    return statistics.median(found) if found else None


def _decide_heading(
    draft: _Draft, sizes: Sequence[float | None], bold: Sequence[bool | None] | None, body: float | None
):
    """A heading's type and level; a paragraph the model took for a heading made text, and the reverse."""
    if not draft.pieces:
        return
    found = [s for p in draft.pieces if (s := sizes[p.line])]
    size = statistics.median(found) if found else None
    if draft.kind == structure.TITLE:
        if headings.is_mistaken_heading(size, body, len(draft.pieces)):
            draft.kind = structure.TEXT
            return
        draft.kind, draft.level = headings.level(size, body)
    elif draft.kind == structure.TEXT:
        is_bold = bold is not None and all(bold[p.line] for p in draft.pieces)
        text = " ".join(p.text for p in draft.pieces)
        if headings.is_missed_heading(text, size, body, len(draft.pieces), is_bold):
            draft.kind, draft.level = headings.level(size, body)


def _line_height(draft: _Draft) -> float:
    return statistics.median(p.box[3] - p.box[1] for p in draft.pieces) if draft.pieces else 0.0


def _block_order(drafts: Sequence[_Draft]) -> list[int]:
    """The drafts in reading order: the running header first, the body by ``block_order``, the footer last."""

    def top_left(i: int) -> tuple[int, int]:
        return drafts[i].box[1], drafts[i].box[0]

    headers = sorted((i for i, d in enumerate(drafts) if d.kind == structure.PAGE_HEADER), key=top_left)
    footers = sorted((i for i, d in enumerate(drafts) if d.kind == structure.PAGE_FOOTER), key=top_left)
    rest = [i for i, d in enumerate(drafts) if d.kind not in (structure.PAGE_HEADER, structure.PAGE_FOOTER)]
    return headers + [rest[i] for i in block_order([drafts[i].box for i in rest])] + footers


def _table(image: Image.Image, draft: _Draft, *, width: int) -> Table:
    """The table's structure, its cells filled with the words inside it (no second reading)."""
    from documents.layout.tables import read_table

    words = [(t, b) for p in draft.pieces for t, b in zip(p.texts, p.boxes, strict=True)]
    return read_table(image, draft.box, words, scale=image.size[0] / width)


def _rows(table: Table) -> list[str]:
    """A table's text: a line per row, its cells apart by tabs."""
    rows: dict[int, list[tuple[int, str]]] = {}
    for cell in table.cells:
        rows.setdefault(cell.row, []).append((cell.col, cell.text))
    return ["\t".join(text for _, text in sorted(rows[r])) for r in sorted(rows)]
