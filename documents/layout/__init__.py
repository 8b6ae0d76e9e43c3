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
from collections.abc import Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from PIL import Image

from documents import structure
from documents.layout import captions, headings, lists, paragraphs, placement, regions
from documents.layout.reading_order import block_order, line_order

if TYPE_CHECKING:  # the table model's module is imported when a page has a table, not before
    from documents.layout.tables import SeenTable
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
    words: tuple[int, ...] | None = None  # places among the line's words that are not blank


@dataclass(frozen=True)
class Sight:
    """What the models see of a page before its words are known: the layout model's regions and the structure
    model's answer on each table region.  Neither needs the words, so ``look`` may run while the engine reads
    the page (``look_ahead``), and ``analyse`` only puts the words in."""

    regions: list[regions.Region]
    tables: list[SeenTable]


def look(image: Image.Image, *, width: int, height: int) -> Sight:
    """The models' sight of the page ``image`` (drawn at ``image.width / width`` of the lines' space)."""
    from documents.layout.tables import see_table

    found = regions.find(image, width=width, height=height)
    scale = image.size[0] / width
    return Sight(found, [see_table(image, r.box, scale=scale) for r in found if r.kind == structure.TABLE])


_looking: ThreadPoolExecutor | None = None


def look_ahead(image: Image.Image, *, width: int, height: int) -> Future[Sight]:
    """``look`` on a thread of its own, started now: the engine reads the page meanwhile, and a page's
    layout then costs little more than its reading while a core is free.  ONNX Runtime lets go of the GIL
    while a model runs, as Tesseract and PP-OCRv4 do while they read.  One thread per process: a worker
    process reads one page at a time."""
    global _looking
    if _looking is None:
        _looking = ThreadPoolExecutor(max_workers=1, thread_name_prefix="layout")
    return _looking.submit(look, image, width=width, height=height)


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
    sight: Sight | None = None,
) -> PageLayout:
    """The layout of a page of ``width`` x ``height`` pixels (the space of the lines' boxes, read at ``dpi``)
    whose lines are ``lines`` (in the engine's order).

    ``image`` is the page as drawn; it may be smaller than ``width`` x ``height`` (a born-digital page is
    drawn small for the model alone): regions are scaled to the lines' space.  ``font_sizes`` and ``bold``,
    one per line when the page's text came from the PDF, are its font's size in points and weight.
    ``known_words`` are words (lower case) the rest of the document holds: a word hyphenated at a line's end
    is joined back when it, or the dictionary, knows the whole word.  A page without lines has no blocks.
    ``sight``: what the models saw of ``image`` already (``look``); without it they look now.
    Raises on a model failure; the caller keeps the page's plain lines and records the error.
    """
    if not lines:
        return PageLayout([], [])
    words = [_words(line) for line in lines]
    if sight is None:
        sight = look(image, width=width, height=height)
    found = sight.regions
    groups = _rejoined(placement.place(words, found, height=height))
    sizes = _sizes(groups, font_sizes)
    drafts = [d for group in groups for d in _drafts(group, sizes, bold)]
    body = _body_size(drafts, sizes)
    for draft in drafts:
        _running(draft, height, sizes, body)
    for draft in drafts:
        _decide_heading(draft, sizes, bold, body)
    kinds, described = captions.attach(
        [d.kind for d in drafts],
        [d.box for d in drafts],
        [" ".join(p.text for p in d.pieces) for d in drafts],
        [_line_height(d) for d in drafts],
        [len(d.pieces) for d in drafts],
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
            from documents.layout.tables import text_of

            table = _table(image, draft, width=width, seen=sight.tables)
            text = text_of(table)
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


#: The most words a running header or footer the model framed as text may have (``Page 3 of 7``, a short title).
RUNNING_WORDS = 6
#: A gap between two lines' tops wider than this many times the page's line spacing starts a new paragraph.
PARAGRAPH_PITCH = 1.4
#: A line indented by more than this many of its heights, with the next back at the margin, opens a paragraph.
PARAGRAPH_INDENT = 1.2


#: The type size of each piece of a page's lines.
Sizes = Mapping[placement.PlacedPiece, float | None]


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


def _sizes(groups: Sequence[placement.Group], font_sizes: Sequence[float | None] | None) -> Sizes:
    """Each piece's type size: its line's font size in points when the PDF gave it, else estimated from the
    piece's own words (a line the engine read across a sidebar and the text beside it has two sizes)."""
    pieces = [p for group in groups for p in group.pieces]
    if font_sizes is not None:
        return {p: font_sizes[p.line] for p in pieces}
    return {p: headings.line_size(list(zip(p.texts, p.boxes, strict=True))) for p in pieces}


def _drafts(group: placement.Group, sizes: Sizes, bold: Sequence[bool | None] | None) -> list[_Draft]:
    """A group as blocks: its pieces in line order, a text group cut into list items or paragraphs.

    A text group's lines are put in reading order as blocks are (``block_order``), not merely top to bottom:
    the model sometimes frames two columns as one text region, and its lines must still be read column by
    column; a paragraph then ends where the reading goes back up or across to the next column.
    """
    boxes = [p.box for p in group.pieces]
    if group.kind != structure.TEXT or len(boxes) < 2:
        return [_Draft(group.kind, group.region, [group.pieces[i] for i in line_order(boxes)])]
    ordered = [group.pieces[i] for i in block_order(boxes)]
    if headings.leads(
        ordered[0].text,
        sizes[ordered[0]],
        [sizes[p] for p in ordered[1:]],
        bold[ordered[0].line] if bold is not None else None,
        [bold[p.line] for p in ordered[1:]] if bold is not None else None,
    ):
        # A heading the model framed with the text under it (the title of a sidebar's box): a block of its own.
        return [
            _Draft(structure.TEXT, None, ordered[:1]),
            *_drafts(placement.Group(group.kind, None, ordered[1:]), sizes, bold),
        ]
    pitch = _line_pitch(ordered)
    height = statistics.median(p.box[3] - p.box[1] for p in ordered)
    found = lists.items([lists.ListLine(list(zip(p.texts, p.boxes, strict=True))) for p in ordered], height)
    if found is None:
        parts = _paragraphs(ordered, pitch, indents=True)
        # The region's box is a paragraph's only when it is one: it may frame several, or two columns.
        return [_Draft(structure.TEXT, group.region if len(parts) == 1 else None, part) for part in parts]
    drafts = []
    for item in found:
        pieces = [ordered[i] for i in item.lines]
        texts = dict(zip(item.lines, item.texts, strict=True))
        # An item ends where a paragraph would: the text after a list's last item is not part of it.
        for n, part in enumerate(_paragraphs(pieces, pitch, indents=not item.is_item)):
            kind = structure.LIST_ITEM if item.is_item and n == 0 else structure.TEXT
            drafts.append(_Draft(kind, None, part, [texts[ordered.index(p)] for p in part]))
    return drafts


def _rejoined(groups: list[placement.Group]) -> list[placement.Group]:
    """The page's groups with two text regions the model drew one under the other, in one column and a line's
    pitch apart, made one: the model cuts a paragraph or a list where nothing ends (a bulleted list cut
    between an item and the line that continues it), and the paragraphs and items of the group are found
    again from its lines (``_drafts``).  Regions a paragraph's gap apart stay two."""
    texts = sorted(
        (g for g in groups if g.kind == structure.TEXT and g.region is not None and g.pieces),
        key=lambda g: regions.union([p.box for p in g.pieces])[1],
    )
    merged: dict[int, placement.Group] = {}  # id of a group taken in -> the group it went into
    for upper, lower in zip(texts, texts[1:], strict=False):
        into = merged.get(id(upper), upper)
        if _continues(into, lower, groups):
            into.pieces.extend(lower.pieces)
            into.region = regions.union([into.region, lower.region]) if into.region and lower.region else None
            merged[id(lower)] = into
    return [g for g in groups if id(g) not in merged]


def _continues(upper: placement.Group, lower: placement.Group, groups: Sequence[placement.Group]) -> bool:
    above, below = regions.union([p.box for p in upper.pieces]), regions.union([p.box for p in lower.pieces])
    narrower = min(above[2] - above[0], below[2] - below[0])
    shared = min(above[2], below[2]) - max(above[0], below[0])
    if narrower <= 0 or shared < 0.5 * narrower or below[1] < above[3]:
        return False
    if any(  # another block between the two: they are not one run of lines
        g is not upper
        and g is not lower
        and g.pieces
        and _between(regions.union([p.box for p in g.pieces]), above, below)
        for g in groups
    ):
        return False
    last = max(upper.pieces, key=lambda p: p.box[1])
    first = min(lower.pieces, key=lambda p: p.box[1])
    pitches = [p for p in (_line_pitch(_by_top(upper.pieces)), _line_pitch(_by_top(lower.pieces))) if p]
    if not pitches:
        return False
    return first.box[1] - last.box[1] <= PARAGRAPH_PITCH * min(pitches)


def _by_top(pieces: Sequence[placement.PlacedPiece]) -> list[placement.PlacedPiece]:
    return sorted(pieces, key=lambda p: p.box[1])


def _between(box: Box, above: Box, below: Box) -> bool:
    return (
        box[1] >= above[3] - 1
        and box[3] <= below[1] + 1
        and box[0] < min(above[2], below[2])
        and box[2] > max(above[0], below[0])
    )


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
    """A block's lines cut where a paragraph ends: a gap wider than ``pitch`` allows, a move to another column,
    or (``indents``) an indented first line."""
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
        next_column = gap < 0 or piece.box[0] >= previous.box[2]  # back up, or across: the reading moved on
        if gap > PARAGRAPH_PITCH * pitch or indented or next_column:
            parts.append([piece])
        else:
            parts[-1].append(piece)
    return parts


def _body_size(drafts: Sequence[_Draft], sizes: Sizes) -> float | None:
    """The type size of the page's body: the median over the lines of its text and list blocks (of all its
    lines when it has none)."""
    body = [sizes[p] for d in drafts if d.kind in (structure.TEXT, structure.LIST_ITEM) for p in d.pieces]
    found = [s for s in body if s] or [s for s in sizes.values() if s]
    return statistics.median(found) if found else None


def _decide_heading(draft: _Draft, sizes: Sizes, bold: Sequence[bool | None] | None, body: float | None):
    """A heading's type and level; a paragraph the model took for a heading made text, and the reverse."""
    if not draft.pieces:
        return
    found = [s for p in draft.pieces if (s := sizes[p])]
    size = statistics.median(found) if found else None
    if draft.kind == structure.TITLE:
        text = " ".join(p.text for p in draft.pieces)
        if headings.is_mistaken_heading(size, body, len(draft.pieces), text):
            draft.kind = structure.TEXT
            return
        draft.kind, draft.level = headings.level(size, body)
    elif draft.kind == structure.TEXT:
        is_bold = bold is not None and all(bold[p.line] for p in draft.pieces)
        text = " ".join(p.text for p in draft.pieces)
        if headings.is_missed_heading(text, size, body, len(draft.pieces), is_bold) and not captions.reads_like_caption(
            text
        ):
            # A bold line under a figure ("Figure 3 Revenue by region") is its caption, which ``captions``
            # attaches next, not a heading.
            draft.kind, draft.level = headings.level(size, body)


def _running(draft: _Draft, height: int, sizes: Sizes, body: float | None) -> None:
    """A text block of one short line in the page's top or bottom margin, not set larger than the body (a
    heading), is its running header or footer (a page number the model framed as text)."""
    if draft.kind != structure.TEXT or len(draft.pieces) != 1 or len(draft.pieces[0].texts) > RUNNING_WORDS:
        return
    size = sizes[draft.pieces[0]]
    if size is not None and body is not None and size >= headings.MISSED_RATIO * body:
        return
    box = draft.pieces[0].box
    if box[3] <= placement.MARGIN * height:
        draft.kind = structure.PAGE_HEADER
    elif box[1] >= (1 - placement.MARGIN) * height:
        draft.kind = structure.PAGE_FOOTER


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


def _table(image: Image.Image, draft: _Draft, *, width: int, seen: Sequence[SeenTable]) -> Table:
    """The table's structure, its cells filled with the words inside it (no second reading)."""
    from documents.layout.tables import read_table

    words = [(t, b) for p in draft.pieces for t, b in zip(p.texts, p.boxes, strict=True)]
    its = next((table for table in seen if table.region == draft.region), None)
    return read_table(image, draft.box, words, scale=image.size[0] / width, seen=its)
