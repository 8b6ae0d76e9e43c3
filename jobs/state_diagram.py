"""The state machine's diagram, drawn from its table (``jobs.state_machine.EDGES``) as an inline SVG.

The manual shows it on the transitions page (docs/hooks/state_diagram.py puts it there at every build).
It is drawn in Python when the manual is built, with no script: the gateway serves the manual under a
policy that runs only the theme's own scripts, and the manual must read the same with no network.

Where each status stands is declared here, in ``LAYOUT``, not worked out by a layout engine: the picture
stays the same from build to build, and a status the table gains goes where someone decided it reads
best.  A status with no place stops the build with an error that names it (``LayoutError``), so adding a
status to ``JobStatus`` says to give it one.

Each (source, target) pair of the table is one arrow, labelled with the transitions that make the move,
in the table's order; a pair that also runs the other way bends to its own side, so the two arrows and
their labels stay apart.  Every arrow is a group carrying ``data-source``, ``data-target`` and
``data-transitions`` and a ``<title>`` (``queued → processing: claim, claim_next, complete``), which a
browser shows on hover and tests/unit/docs/test_docs_build.py reads.  The lines and text are drawn in
``currentColor``, so the diagram takes the page's text colour in a light or a dark scheme; the label's
halo is the page's background (mkdocs-material's ``--md-default-bg-color``, white without the theme).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from html import escape

from jobs.contract import JobStatus
from jobs.state_machine import EDGES, MOVING_TRANSITIONS, NEW, Edge

Status = JobStatus | None  # NEW: a job not created yet

#: How far a pair's two arrows (one each way) bow apart.
PAIR_BEND = 34

#: Where each status stands: (column, row), in cells of ``CELL_WIDTH`` by ``CELL_HEIGHT``.  A job's run goes
#: left to right along the middle row; the endings stand above and below the statuses that reach them, so
#: that only two pairs of arrows cross (with these moves, no layout of three rows does with fewer).
LAYOUT: dict[Status, tuple[float, float]] = {
    NEW: (0, 0),
    JobStatus.FAILED: (1, 0),
    JobStatus.COMPLETED: (2, 0),
    JobStatus.HELD: (0, 1),
    JobStatus.QUEUED: (1, 1),
    JobStatus.PROCESSING: (2, 1),
    JobStatus.CANCELLED: (1, 2),
}

#: How far, and to which side, an arrow bows when not as a pair's usual (``PAIR_BEND`` to the left of its
#: direction) or not at all (an arrow with no arrow back): a pair swaps sides to put its long label where
#: there is room.  Positive bends to the left.
BENDS: dict[tuple[Status, Status], float] = {
    (JobStatus.HELD, JobStatus.CANCELLED): -PAIR_BEND,
    (JobStatus.CANCELLED, JobStatus.HELD): -PAIR_BEND,
    (JobStatus.PROCESSING, JobStatus.FAILED): -PAIR_BEND,
    (JobStatus.FAILED, JobStatus.PROCESSING): -PAIR_BEND,
    (JobStatus.PROCESSING, JobStatus.COMPLETED): -PAIR_BEND,
    (JobStatus.COMPLETED, JobStatus.PROCESSING): -PAIR_BEND,
}
#: Where along its arrow a label sits (from 0, the source, to 1, the target) when not halfway: arrows that
#: cross keep their labels apart.
LABELS_AT: dict[tuple[Status, Status], float] = {
    (NEW, JobStatus.QUEUED): 0.3,
    (JobStatus.FAILED, JobStatus.HELD): 0.3,
    (JobStatus.QUEUED, JobStatus.COMPLETED): 0.3,
    (JobStatus.FAILED, JobStatus.PROCESSING): 0.35,
}

CELL_WIDTH, CELL_HEIGHT = 260, 190
BOX_WIDTH, BOX_HEIGHT = 124, 40
MARGIN = 24
FONT_SIZE, LABEL_FONT_SIZE = 14, 11
#: A label wraps after this many characters, between transition names.
LABEL_WIDTH = 20
#: The width of one character of a label, for its extent: an estimate (the font is the page's).
CHARACTER_WIDTH = 0.6 * LABEL_FONT_SIZE
LINE_HEIGHT = 1.25 * LABEL_FONT_SIZE
BACKGROUND = "var(--md-default-bg-color, #fff)"


class LayoutError(ValueError):
    """Raised when a status has no place in ``LAYOUT``, or two share one, or a move would need an arrow the
    drawing cannot make."""


def name_of(status: Status) -> str:
    return "(new)" if status is NEW else status.value


@dataclass(frozen=True)
class Arrow:
    """The arrow of one (source, target) pair, with the transitions that make the move."""

    source: Status
    target: Status
    transitions: tuple[str, ...]

    @property
    def title(self) -> str:
        return f"{name_of(self.source)} → {name_of(self.target)}: {', '.join(self.transitions)}"


def arrows(edges: frozenset[Edge] = EDGES) -> list[Arrow]:
    """One arrow per (source, target) pair of ``edges``, in the statuses' order, its transitions in the
    table's."""
    pairs: dict[tuple[Status, Status], set[str]] = {}
    for edge in edges:
        pairs.setdefault((edge.source, edge.target), set()).add(edge.transition)
    order = {status: position for position, status in enumerate((NEW, *JobStatus))}
    return [
        Arrow(source, target, tuple(sorted(names, key=MOVING_TRANSITIONS.index)))
        for (source, target), names in sorted(pairs.items(), key=lambda pair: (order[pair[0][0]], order[pair[0][1]]))
    ]


def check_layout(layout: dict[Status, tuple[float, float]]) -> None:
    for status in (NEW, *JobStatus):
        if status not in layout:
            raise LayoutError(
                f"the state diagram has no place for the status `{name_of(status)}`: give it a (column, row) "
                "in LAYOUT, jobs/state_diagram.py"
            )
    places: dict[tuple[float, float], Status] = {}
    for status, place in layout.items():
        if place in places:
            raise LayoutError(
                f"the statuses `{name_of(places[place])}` and `{name_of(status)}` share the place {place} in "
                "LAYOUT, jobs/state_diagram.py"
            )
        places[place] = status


def svg(layout: dict[Status, tuple[float, float]] = LAYOUT, edges: frozenset[Edge] = EDGES) -> str:
    """The diagram, one line per element and no blank line (Markdown passes it through as one HTML block)."""
    check_layout(layout)
    centres = {status: (column * CELL_WIDTH, row * CELL_HEIGHT) for status, (column, row) in layout.items()}
    drawn = arrows(edges)
    pairs = {(arrow.source, arrow.target) for arrow in drawn}
    corners = [(dx * BOX_WIDTH / 2, dy * BOX_HEIGHT / 2) for dx in (-1, 1) for dy in (-1, 1)]
    extent = [(x + dx, y + dy) for x, y in centres.values() for dx, dy in corners]
    body = [_arrow(arrow, centres, (arrow.target, arrow.source) in pairs, extent) for arrow in drawn]
    body += [_box(status, centres[status]) for status in (NEW, *JobStatus)]
    left, top = min(x for x, _ in extent) - MARGIN, min(y for _, y in extent) - MARGIN
    width, height = max(x for x, _ in extent) + MARGIN - left, max(y for _, y in extent) + MARGIN - top
    head = (
        f'<svg class="state-diagram" xmlns="http://www.w3.org/2000/svg" viewBox="{_n(left)} {_n(top)} '
        f'{_n(width)} {_n(height)}" width="{_n(width)}" height="{_n(height)}" role="img" '
        'aria-labelledby="state-diagram-title" style="max-width: 100%; height: auto" '
        f'font-family="inherit" font-size="{FONT_SIZE}" fill="currentColor">'
    )
    return "\n".join(
        [
            head,
            '<title id="state-diagram-title">The statuses of a job and the transitions that move it</title>',
            '<defs><marker id="state-diagram-head" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="8" '
            'markerHeight="8" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="currentColor"/>'
            "</marker></defs>",
            *body,
            "</svg>",
        ]
    )


def _arrow(
    arrow: Arrow, centres: dict[Status, tuple[float, float]], paired: bool, extent: list[tuple[float, float]]
) -> str:
    """The arrow's group; the corners of what it draws are added to ``extent``, which the view box holds."""
    pair = (arrow.source, arrow.target)
    (x0, y0), (x1, y1) = centres[arrow.source], centres[arrow.target]
    length = math.hypot(x1 - x0, y1 - y0)
    if arrow.source == arrow.target:
        raise LayoutError(
            f"the state diagram draws no move from a status to itself ({arrow.title}): teach _arrow a loop"
        )
    # The left-hand normal of the arrow's direction (y grows downwards).
    nx, ny = (y1 - y0) / length, -(x1 - x0) / length
    bend = BENDS.get(pair, PAIR_BEND if paired else 0)
    cx, cy = (x0 + x1) / 2 + nx * bend, (y0 + y1) / 2 + ny * bend
    start, end = _border((x0, y0), (cx, cy)), _border((x1, y1), (cx, cy))
    if bend:
        path = f"M{_n(start[0])},{_n(start[1])} Q{_n(cx)},{_n(cy)} {_n(end[0])},{_n(end[1])}"
    else:
        path = f"M{_n(start[0])},{_n(start[1])} L{_n(end[0])},{_n(end[1])}"
        cx, cy = (start[0] + end[0]) / 2, (start[1] + end[1]) / 2
    t = LABELS_AT.get(pair, 0.5)
    on_curve = (
        (1 - t) ** 2 * start[0] + 2 * t * (1 - t) * cx + t**2 * end[0],
        (1 - t) ** 2 * start[1] + 2 * t * (1 - t) * cy + t**2 * end[1],
    )
    lines = _wrap(arrow.transitions)
    label_width = max(len(line) for line in lines) * CHARACTER_WIDTH
    label_height = len(lines) * LINE_HEIGHT
    # A bent arrow's label sits outside its bow, clear of the line; a straight one's sits across it.
    side = math.copysign(1, bend) if bend else 0
    reach = abs(nx) * label_width / 2 + abs(ny) * label_height / 2 + 3
    lx, ly = on_curve[0] + side * nx * reach, on_curve[1] + side * ny * reach
    extent += [(lx - label_width / 2, ly - label_height / 2), (lx + label_width / 2, ly + label_height / 2)]
    extent.append(((start[0] + 2 * cx + end[0]) / 4, (start[1] + 2 * cy + end[1]) / 4))
    first = ly - label_height / 2 + LINE_HEIGHT * 0.8
    spans = "".join(
        f'<tspan x="{_n(lx)}" y="{_n(first + index * LINE_HEIGHT)}">{escape(line)}</tspan>'
        for index, line in enumerate(lines)
    )
    return (
        f'<g class="state-move" data-source="{escape(name_of(arrow.source))}" '
        f'data-target="{escape(name_of(arrow.target))}" data-transitions="{escape(" ".join(arrow.transitions))}">'
        f"<title>{escape(arrow.title)}</title>"
        f'<path d="{path}" fill="none" stroke="currentColor" stroke-width="1.4" '
        'marker-end="url(#state-diagram-head)"/>'
        f'<text font-size="{LABEL_FONT_SIZE}" text-anchor="middle" stroke-width="4" stroke-linejoin="round" '
        f'paint-order="stroke" style="stroke: {BACKGROUND}">{spans}</text></g>'
    )


def _box(status: Status, centre: tuple[float, float]) -> str:
    x, y = centre[0] - BOX_WIDTH / 2, centre[1] - BOX_HEIGHT / 2
    ending = status is not NEW and status.terminal
    # An ending has a double edge; a job not created yet, a dashed one.
    outline = ' stroke-dasharray="5 4"' if status is NEW else ""
    inner = (
        f'<rect x="{_n(x + 4)}" y="{_n(y + 4)}" width="{BOX_WIDTH - 8}" height="{BOX_HEIGHT - 8}" rx="5" '
        'fill="none" stroke="currentColor"/>'
        if ending
        else ""
    )
    return (
        f'<g class="state-status" data-status="{escape(name_of(status))}"><title>{escape(name_of(status))}</title>'
        f'<rect x="{_n(x)}" y="{_n(y)}" width="{BOX_WIDTH}" height="{BOX_HEIGHT}" rx="8" '
        f'style="fill: {BACKGROUND}" stroke="currentColor" stroke-width="1.6"{outline}/>{inner}'
        f'<text x="{_n(centre[0])}" y="{_n(centre[1])}" text-anchor="middle" dominant-baseline="central">'
        f"{escape(name_of(status))}</text></g>"
    )


def _border(centre: tuple[float, float], toward: tuple[float, float]) -> tuple[float, float]:
    """Where the ray from a box's centre toward a point leaves the box, a little outside it."""
    dx, dy = toward[0] - centre[0], toward[1] - centre[1]
    scale = min(
        (BOX_WIDTH / 2 + 3) / abs(dx) if dx else math.inf,
        (BOX_HEIGHT / 2 + 3) / abs(dy) if dy else math.inf,
    )
    return centre[0] + dx * scale, centre[1] + dy * scale


def _wrap(names: tuple[str, ...]) -> list[str]:
    lines = [names[0]]
    for name in names[1:]:
        if len(lines[-1]) + 2 + len(name) <= LABEL_WIDTH:
            lines[-1] += f", {name}"
        else:
            lines[-1] += ","
            lines.append(name)
    return lines


def _n(value: float) -> str:
    """A coordinate, to a tenth: the same table draws the same bytes."""
    return f"{round(value, 1):g}"
