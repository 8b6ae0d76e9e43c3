"""The state diagram draws the table: one arrow per (source, target) pair of ``EDGES``, named by its pair and
labelled with every transition that makes the move, and a box for every status; a status with no place in
the layout stops the drawing with an error that names it; the same table draws the same bytes."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest

from jobs.contract import JobKind, JobStatus
from jobs.state_diagram import LAYOUT, LayoutError, Status, name_of, svg
from jobs.state_machine import EDGES, MOVING_TRANSITIONS, NEW, Edge

ROOT = Path(__file__).resolve().parents[3]
SVG = "{http://www.w3.org/2000/svg}"


def drawn_groups(kind: str) -> list[ElementTree.Element]:
    return [g for g in ElementTree.fromstring(svg()).iter(f"{SVG}g") if g.get("class") == kind]


def test_every_pair_of_statuses_the_table_moves_between_is_one_arrow_naming_its_transitions():
    expected: dict[tuple[str, str], set[str]] = {}
    for edge in EDGES:
        expected.setdefault((name_of(edge.source), name_of(edge.target)), set()).add(edge.transition)

    arrows = drawn_groups("state-move")
    drawn = {(g.get("data-source"), g.get("data-target")): g for g in arrows}

    assert len(arrows) == len(drawn) == len(expected)
    assert set(drawn) == set(expected)
    for (source, target), transitions in expected.items():
        group = drawn[(source, target)]
        assert set(group.get("data-transitions", "").split()) == transitions
        in_order = ", ".join(sorted(transitions, key=MOVING_TRANSITIONS.index))
        title = group.find(f"{SVG}title")
        assert title is not None and title.text == f"{source} → {target}: {in_order}"
        label = group.find(f"{SVG}text")
        assert label is not None and re.sub(r"\s+", " ", " ".join(label.itertext())) == in_order
        assert group.find(f"{SVG}path") is not None


def test_every_status_and_the_job_not_created_yet_has_its_box():
    boxes = {g.get("data-status") for g in drawn_groups("state-status")}
    assert boxes == {"(new)"} | {status.value for status in JobStatus}


def test_a_status_with_no_place_stops_the_drawing_and_says_where_to_give_it_one():
    layout: dict[Status, tuple[float, float]] = {
        status: place for status, place in LAYOUT.items() if status is not JobStatus.CANCELLED
    }

    with pytest.raises(LayoutError, match=r"no place for the status `cancelled`.*LAYOUT, jobs/state_diagram\.py"):
        svg(layout)


def test_two_statuses_in_one_place_stop_the_drawing():
    layout = {**LAYOUT, JobStatus.CANCELLED: LAYOUT[NEW]}

    with pytest.raises(LayoutError, match=r"`\(new\)` and `cancelled` share the place"):
        svg(layout)


def test_a_move_from_a_status_to_itself_stops_the_drawing_and_says_so():
    loop = Edge("retry", JobKind.SINGLE, JobStatus.PROCESSING, JobStatus.PROCESSING)

    with pytest.raises(LayoutError, match=r"no move from a status to itself \(processing → processing: retry\)"):
        svg(edges=EDGES | {loop})


def test_the_same_table_draws_the_same_bytes_whatever_the_hash_seed():
    """``EDGES`` is a frozenset, whose order follows the process's string hashing."""
    drawings = {
        subprocess.run(
            [sys.executable, "-c", "import sys; from jobs.state_diagram import svg; sys.stdout.write(svg())"],
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT), "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in ("1", "2", "3")
    }
    assert drawings == {svg()}


def test_the_drawing_is_one_html_block_with_no_script():
    drawing = svg()
    assert "\n\n" not in drawing and "<script" not in drawing
    assert drawing.startswith("<svg ") and drawing.endswith("</svg>")
