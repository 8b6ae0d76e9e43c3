"""Captions, each attached to the figure or table it describes.

A caption describes the nearest figure or table that shares some of its
width, above or below it: the one with the smallest vertical gap between the
two boxes, at most ``MAX_GAP_LINES`` of the caption's own line heights.
Each figure or table takes one caption, the nearest; a caption with nothing
near stays a caption on its own.

A text block that reads like a caption (``Figure 3.``, ``Fig. 2:``,
``Table 1``) right under or over a figure or table that has none is one the
model took for text, and becomes its caption.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from documents import structure
from documents.structure import Box

#: The furthest a caption stands from what it describes, in the heights of its own lines.
MAX_GAP_LINES = 4.0
_LOOKS_LIKE_CAPTION = re.compile(r"^(fig(ure)?\.?|table|chart|plate|diagram)\s*[\dIVX]+\b", re.IGNORECASE)
_DESCRIBED = frozenset({structure.FIGURE, structure.TABLE})


def attach(
    kinds: Sequence[str], boxes: Sequence[Box], texts: Sequence[str], line_heights: Sequence[float]
) -> tuple[list[str], dict[int, int]]:
    """The blocks' kinds (a text that reads like a caption next to a figure made one) and which block each
    caption describes (caption index -> figure or table index)."""
    kinds = list(kinds)
    taken: dict[int, int] = {}
    for want_text in (False, True):
        candidates = [
            i
            for i, kind in enumerate(kinds)
            if (kind == structure.CAPTION and not want_text)
            or (want_text and kind == structure.TEXT and _LOOKS_LIKE_CAPTION.match(texts[i].strip()))
        ]
        pairs = []
        for c in candidates:
            for t, kind in enumerate(kinds):
                if kind not in _DESCRIBED or t in taken.values() or not _share_width(boxes[c], boxes[t]):
                    continue
                gap = _gap(boxes[c], boxes[t])
                if gap <= MAX_GAP_LINES * max(line_heights[c], 1.0):
                    pairs.append((gap, c, t))
        for _, c, t in sorted(pairs):
            if c in taken or t in taken.values():
                continue
            taken[c] = t
            kinds[c] = structure.CAPTION
    return kinds, taken


def _share_width(a: Box, b: Box) -> bool:
    return min(a[2], b[2]) > max(a[0], b[0])


def _gap(a: Box, b: Box) -> int:
    """The blank height between two boxes one above the other (0 when they overlap)."""
    return max(0, max(a[1], b[1]) - min(a[3], b[3]))
