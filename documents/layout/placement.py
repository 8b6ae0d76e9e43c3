"""Each of a page's lines put in the region that holds it, cut where a region's edge runs through it.

The regions decide what a block is; the lines are the OCR engine's (or the
PDF's), kept as they are.  Where the two disagree:

- A word belongs to the region holding at least half of it (the smallest,
  when regions nest: a caption drawn inside a figure's frame).  A word in no
  region goes with the region that holds most of its line: the model's boxes
  are often a little narrower than the text they frame.
- A line whose words fall in two regions (a table's row that the engine read
  as one line with the paragraph beside it; two columns set close together)
  is cut into pieces, one per region.
- Lines in no region are grouped by position (a line joins the group just
  above it when it shares some of its width and stands less than a line's
  height under it) into ``text``.  A group in the top or bottom
  ``MARGIN`` of the page, of one line, is a running header or footer the model
  missed: ``page_header`` or ``page_footer`` (a page number, a running title).
- A region that holds no line is dropped, unless it is a figure or a table
  (a drawing without words is still a figure).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from documents import structure
from documents.layout.regions import Region, area, overlap, union
from documents.structure import Box

#: The share of the page's height at its top and at its bottom where a lone line is a running header or footer.
MARGIN = 0.08
#: The share of a word that must lie in a region for the word to be in it.
WORD_IN_REGION = 0.5


@dataclass(frozen=True)
class PlacedPiece:
    line: int
    words: tuple[int, ...] | None  # None: the whole line
    texts: tuple[str, ...]  # its words' texts
    boxes: tuple[Box, ...]  # its words' boxes

    @property
    def box(self) -> Box:
        return union(self.boxes)

    @property
    def text(self) -> str:
        return " ".join(self.texts)


@dataclass
class Group:
    kind: str
    region: Box | None
    pieces: list[PlacedPiece] = field(default_factory=list)


def place(
    words_of_lines: Sequence[Sequence[tuple[str, Box]]], regions: Sequence[Region], *, height: int
) -> list[Group]:
    """The page's groups of pieces: one per region that holds any (or is a figure or table), then the groups
    of the lines in no region."""
    held: list[list[PlacedPiece]] = [[] for _ in regions]
    loose: list[PlacedPiece] = []
    for line, words in enumerate(words_of_lines):
        for region, piece in _pieces(line, words, regions):
            (loose if region is None else held[region]).append(piece)
    groups = [
        Group(r.kind, r.box, pieces)
        for r, pieces in zip(regions, held, strict=True)
        if pieces or r.kind in (structure.FIGURE, structure.TABLE)
    ]
    return groups + _loose_groups(loose, height)


def _pieces(
    line: int, words: Sequence[tuple[str, Box]], regions: Sequence[Region]
) -> list[tuple[int | None, PlacedPiece]]:
    homes = [_home(box, regions) for _, box in words]
    weight: dict[int, int] = {}
    for home, (_, box) in zip(homes, words, strict=True):
        if home is not None:
            weight[home] = weight.get(home, 0) + max(area(box), 1)
    majority = max(weight, key=lambda r: weight[r]) if weight else None
    homes = [majority if h is None else h for h in homes]
    order = list(dict.fromkeys(homes))
    if len(order) == 1:
        return [(order[0], PlacedPiece(line, None, tuple(t for t, _ in words), tuple(b for _, b in words)))]
    out = []
    for region in order:
        chosen = tuple(i for i, h in enumerate(homes) if h == region)
        out.append(
            (
                region,
                PlacedPiece(line, chosen, tuple(words[i][0] for i in chosen), tuple(words[i][1] for i in chosen)),
            )
        )
    return out


def _home(box: Box, regions: Sequence[Region]) -> int | None:
    best, best_key = None, None
    size = max(area(box), 1)
    for i, region in enumerate(regions):
        share = overlap(box, region.box) / size
        if share < WORD_IN_REGION:
            continue
        key = (round(share, 2), -area(region.box))
        if best_key is None or key > best_key:
            best, best_key = i, key
    return best


def _loose_groups(pieces: Sequence[PlacedPiece], height: int) -> list[Group]:
    groups: list[Group] = []
    for piece in sorted(pieces, key=lambda p: (p.box[1], p.box[0])):
        box = piece.box
        for group in groups:
            last = group.pieces[-1].box
            line_height = max(last[3] - last[1], box[3] - box[1], 1)
            shares_width = min(last[2], box[2]) > max(last[0], box[0])
            if shares_width and 0 <= box[1] - last[3] < line_height:
                group.pieces.append(piece)
                break
        else:
            groups.append(Group(structure.TEXT, None, [piece]))
    for group in groups:
        if len(group.pieces) == 1:
            box = group.pieces[0].box
            if box[3] <= MARGIN * height:
                group.kind = structure.PAGE_HEADER
            elif box[1] >= (1 - MARGIN) * height:
                group.kind = structure.PAGE_FOOTER
    return groups
