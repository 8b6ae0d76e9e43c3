"""A table as rows of text, and the document's tables by their numbers."""

from __future__ import annotations

from documents.structure import tables_of
from documents.table_export import grid, table_block

from .structured_pages import SPANNING, TABLE, figure_without_words_page, plain_page, structured_page


def test_the_grid_holds_each_cell_at_its_row_and_column():
    assert grid(TABLE.to_dict()) == [["Quarter", "Ships"], ["Q1 | first", "120"]]


def test_a_spanning_cells_text_stands_once_at_its_top_left_position():
    assert grid(SPANNING.to_dict()) == [["Ships per quarter", ""], ["Q1", "120"]]


def test_a_position_no_cell_covers_is_empty():
    table = {**TABLE.to_dict(), "rows": 3}

    assert grid(table)[2] == ["", ""]


def test_tables_are_found_by_the_numbers_tables_of_gives_them():
    pages = [structured_page(1), plain_page(2, "no table"), figure_without_words_page(3),
             structured_page(4, table=SPANNING)]  # fmt: skip

    numbered = tables_of(pages)

    assert [(t["number"], t["page"]) for t in numbered] == [(1, 1), (2, 4)]
    for entry in numbered:
        block = table_block(pages, entry["number"])
        assert block is not None and block["order"] == entry["block"]
    spanning = table_block(pages, 2)
    assert spanning is not None and spanning["table"]["cells"][0]["col_span"] == 2
    assert table_block(pages, 0) is None and table_block(pages, 3) is None
