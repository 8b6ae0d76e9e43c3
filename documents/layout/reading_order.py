"""The order a person reads a page's blocks in, and a block's lines in.

Blocks are ordered by a recursive XY-cut that knows columns:

1. The blocks are cut into horizontal bands wherever no block spans a gap
   between them (top to bottom).
2. Consecutive bands that agree on their columns are read together: a band
   joins the one above unless one of its blocks crosses a gutter of the
   other (a blank vertical strip between its blocks), or the other way
   round.  A full-width block (a title, a wide table, a paragraph across the
   page) crosses every gutter, so it ends the columns above it and starts a
   new run below it: full-width blocks break the columns.  Two columns whose
   paragraphs happen to end at the same height stay columns, since their
   bands agree.
3. Bands read together are cut into columns at their gutters, and read
   column by column, left to right, each column ordered the same way (it may
   hold columns of its own).  A sidebar is a column like any other: at the
   left of the text it is read first, at its right after it, as a reader
   who goes down the page column by column meets it; so is a table or a
   caption beside a paragraph.
4. Blocks that overlap both ways and cannot be cut are read top to bottom,
   then left to right.

Lines within a block are read top to bottom; lines on one baseline (more than
half of the lower one's height shared) left to right.
"""

from __future__ import annotations

from collections.abc import Sequence

from documents.structure import Box


def block_order(boxes: Sequence[Box]) -> list[int]:
    """The indices of ``boxes`` in reading order."""
    return _order(list(range(len(boxes))), boxes)


def _order(items: list[int], boxes: Sequence[Box]) -> list[int]:
    if len(items) <= 1:
        return items
    bands = _cut(items, boxes, axis=1)
    runs: list[list[int]] = []
    for band in bands:
        if runs and _agree(runs[-1], band, boxes):
            runs[-1] = runs[-1] + band
        else:
            runs.append(band)
    if len(runs) > 1:
        return [i for run in runs for i in _order(run, boxes)]
    columns = _cut(items, boxes, axis=0)
    if len(columns) > 1:
        return [i for column in columns for i in _order(column, boxes)]
    if len(bands) > 1:
        return [i for band in bands for i in _order(band, boxes)]
    return sorted(items, key=lambda i: (boxes[i][1], boxes[i][0]))


def _cut(items: list[int], boxes: Sequence[Box], axis: int) -> list[list[int]]:
    """``items`` split where nothing spans a gap along ``axis`` (0: into columns, 1: into bands), in order."""
    ordered = sorted(items, key=lambda i: (boxes[i][axis], boxes[i][axis + 2]))
    groups: list[list[int]] = []
    reach = None
    for i in ordered:
        start, end = boxes[i][axis], boxes[i][axis + 2]
        if reach is None or start >= reach:
            groups.append([i])
            reach = end
        else:
            groups[-1].append(i)
            reach = max(reach, end)
    return groups


def _gutters(items: list[int], boxes: Sequence[Box]) -> list[tuple[int, int]]:
    """The blank vertical strips between the columns of ``items``."""
    columns = _cut(items, boxes, axis=0)
    edges = [(min(boxes[i][0] for i in c), max(boxes[i][2] for i in c)) for c in columns]
    return [(left[1], right[0]) for left, right in zip(edges, edges[1:], strict=False)]


def _agree(run: list[int], band: list[int], boxes: Sequence[Box]) -> bool:
    """Whether ``band`` continues the columns of ``run``: neither has a block across a gutter of the other,
    and one of them has columns at all."""
    run_gutters, band_gutters = _gutters(run, boxes), _gutters(band, boxes)
    if not run_gutters and not band_gutters:
        return False
    return not _crosses(band, run_gutters, boxes) and not _crosses(run, band_gutters, boxes)


def _crosses(items: list[int], gutters: list[tuple[int, int]], boxes: Sequence[Box]) -> bool:
    return any(boxes[i][0] < left and boxes[i][2] > right for i in items for left, right in gutters)


def line_order(boxes: Sequence[Box]) -> list[int]:
    """The indices of a block's line ``boxes`` top to bottom, those on one baseline left to right."""
    rows: list[list[int]] = []
    for i in sorted(range(len(boxes)), key=lambda i: (boxes[i][1] + boxes[i][3]) / 2):
        if rows and _same_row(boxes[rows[-1][-1]], boxes[i]):
            rows[-1].append(i)
        else:
            rows.append([i])
    return [i for row in rows for i in sorted(row, key=lambda i: boxes[i][0])]


def _same_row(a: Box, b: Box) -> bool:
    shared = min(a[3], b[3]) - max(a[1], b[1])
    return shared > 0.5 * min(a[3] - a[1], b[3] - b[1])
