"""Captions, each attached to the figure or table it describes.

A caption describes the nearest figure or table beside it: under or over
it, sharing some of its width, or at its side, sharing some of its height
(a caption set beside a chart); the nearer the better, at most
``MAX_GAP_LINES`` of the caption's own line heights away.  Each figure or
table takes one caption.

The model's word is weighed against the caption's: captions that read like
one (``Figure 3.``, ``Fig. 2:``, ``Table 1``) are attached first, whether the
model called them captions or text, then the model's other captions.  A
model's caption that does not read like one, attaches to nothing and runs
over ``MAX_LOOSE_CAPTION_LINES`` lines is a paragraph it mistook (the text
under a chart), and is text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from documents import structure
from documents.structure import Box

#: The furthest a caption stands from what it describes, in the heights of its own lines.
MAX_GAP_LINES = 4.0
#: A caption of more lines than this that reads like no caption and describes nothing is a paragraph.
MAX_LOOSE_CAPTION_LINES = 2
_LOOKS_LIKE_CAPTION = re.compile(r"^(fig(ure)?\.?|table|chart|plate|diagram)\s*[\dIVX]+\b", re.IGNORECASE)
_DESCRIBED = frozenset({structure.FIGURE, structure.TABLE})


def reads_like_caption(text: str) -> bool:
    """Whether ``text`` opens as a caption does: "Figure 2.", "Table 1", "Fig. 3"."""
    return bool(_LOOKS_LIKE_CAPTION.match(text.strip()))


def attach(
    kinds: Sequence[str],
    boxes: Sequence[Box],
    texts: Sequence[str],
    line_heights: Sequence[float],
    line_counts: Sequence[int],
) -> tuple[list[str], dict[int, int]]:
    """The blocks' kinds (a text that reads like a caption next to a figure made one, a long caption that
    does not and describes nothing made text) and which block each caption describes (caption index -> figure
    or table index)."""
    kinds = list(kinds)
    reads_like = [bool(_LOOKS_LIKE_CAPTION.match(t.strip())) for t in texts]
    taken: dict[int, int] = {}
    passes = (
        lambda i: kinds[i] == structure.CAPTION and reads_like[i],
        lambda i: kinds[i] == structure.TEXT and reads_like[i],
        lambda i: kinds[i] == structure.CAPTION and not reads_like[i],
    )
    for wanted in passes:
        pairs = []
        for c in (i for i in range(len(kinds)) if wanted(i)):
            for t, kind in enumerate(kinds):
                if kind not in _DESCRIBED or t in taken.values():
                    continue
                gap = _gap(boxes[c], boxes[t])
                if gap is not None and gap <= MAX_GAP_LINES * max(line_heights[c], 1.0):
                    pairs.append((gap, c, t))
        for _, c, t in sorted(pairs):
            if c in taken or t in taken.values():
                continue
            taken[c] = t
            kinds[c] = structure.CAPTION
    for i, kind in enumerate(kinds):
        if (
            kind == structure.CAPTION
            and i not in taken
            and not reads_like[i]
            and line_counts[i] > MAX_LOOSE_CAPTION_LINES
        ):
            kinds[i] = structure.TEXT
    return kinds, taken


def _gap(a: Box, b: Box) -> int | None:
    """The blank between two boxes one over the other (sharing some width) or side by side (sharing some
    height), 0 when they overlap; None when they share neither."""
    width = min(a[2], b[2]) - max(a[0], b[0])
    height = min(a[3], b[3]) - max(a[1], b[1])
    if width > 0 and height > 0:
        return 0
    if width > 0:
        return -height
    if height > 0:
        return -width
    return None
