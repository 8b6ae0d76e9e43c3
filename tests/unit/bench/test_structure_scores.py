"""The structure benchmark's measures: each gives its perfect score to the truth, and loses what a reading loses."""

from __future__ import annotations

import pytest

from bench.structure_scores import (
    Counts,
    best_table,
    cell_accuracy,
    edit_distance,
    grid_of,
    heading_counts,
    leaks,
    markdown_headings,
    markdown_tables,
    plain,
    reading_order,
    truth_grid,
)
from tests.structured import structured_set

PAGES = structured_set().pages


def test_plain_takes_out_the_marks_of_markdown_and_keeps_the_words_in_order() -> None:
    markdown = (
        "<!-- page 3 -->\n\n# A **bold** title\n\n- first item\n* second item\n\n"
        "| Licence | Lines |\n|---|---:|\n| GPL-3 | 674 |\n\n"
        "<table><tr><td colspan=2>spanned</td></tr></table>\n\n![figure](x.png)\n\nA &amp; B"
    )
    assert plain(markdown) == "A bold title first item second item Licence Lines GPL-3 674 spanned A & B"


def test_edit_distance_is_zero_for_the_same_text_and_one_for_nothing_shared() -> None:
    assert edit_distance("reading order", "reading order") == 0.0
    assert edit_distance("abc", "xyz") == 1.0
    assert edit_distance("", "") == 0.0
    assert edit_distance("abcd", "abcx") == pytest.approx(0.25)


@pytest.mark.parametrize("truth", PAGES, ids=[p.name for p in PAGES])
def test_the_truth_read_as_markdown_scores_perfectly(truth) -> None:
    markdown = truth.markdown()
    assert reading_order(truth.body_text(), markdown) == 0.0
    assert heading_counts(truth.headings, markdown_headings(markdown)).f1 == 1.0
    found = markdown_tables(markdown)
    for table in truth.tables:
        assert best_table(truth_grid(table.cells), found)[0] == 1.0
    assert leaks(markdown, truth.body_text(), [truth.header, truth.footer], truth.figure_words).total == 0


def test_columns_read_across_the_page_are_far_from_the_truth() -> None:
    left = "the first column speaks of freedom to share and change the works"
    right = "the second column speaks of copies conveyed with the source code"
    across = " ".join(a + " " + b for a, b in zip(left.split(" ", 5), right.split(" ", 5), strict=True))
    assert reading_order(f"{left}\n\n{right}", f"{left} {right}") == 0.0
    assert reading_order(f"{left}\n\n{right}", across) > 0.3


def test_a_heading_counts_at_its_own_level_and_despite_a_slip_in_its_text() -> None:
    truth = [(1, "GNU General Public License"), (2, "Source Code"), (3, "Patents")]
    found = [(1, "GNU General Pub1ic License"), (3, "Source Code"), (3, "Patents"), (2, "Page 1 of 7")]
    counts = heading_counts(truth, found)
    assert counts == Counts(true_positive=2, found=4, wanted=3)
    assert counts.precision == 0.5 and counts.recall == pytest.approx(2 / 3)
    assert heading_counts(truth, [(1, "GNU General Public License")] * 2).true_positive == 1  # each truth once


def test_cell_accuracy_counts_each_true_cell_in_its_row_and_column() -> None:
    truth = truth_grid([["Licence", "Lines"], ["GPL-3", "674"], ["MPL-2.0", "373"]])
    exact = grid_of(
        {"row": r, "col": c, "row_span": 1, "col_span": 1, "text": t}
        for r, row in enumerate([["Licence", "Lines"], ["GPL-3", "674"], ["MPL-2.0", "373"]])
        for c, t in enumerate(row)
    )
    assert cell_accuracy(truth, exact) == 1.0
    moved = {(r + 1, c): t for (r, c), t in exact.items()}  # a caption read as the table's first row
    assert cell_accuracy(truth, moved) == 0.0
    swapped = {**exact, (1, 1): "373", (2, 1): "674"}
    assert cell_accuracy(truth, swapped) == pytest.approx(4 / 6)
    assert best_table(truth, [moved, swapped, exact]) == (1.0, 2)
    assert best_table(truth, []) == (0.0, None)


def test_a_spanning_cell_covers_every_row_and_column_it_spans() -> None:
    grid = grid_of([{"row": 0, "col": 0, "row_span": 1, "col_span": 2, "text": "Counts"}])
    assert grid == {(0, 0): "Counts", (0, 1): "Counts"}


def test_markdown_tables_are_read_row_by_row_without_their_rule() -> None:
    markdown = "text\n\n| a | b |\n|:--|--:|\n| 1 | 2 |\n\nmore\n\n| x |\n|---|\n| y |\n"
    assert markdown_tables(markdown) == [
        {(0, 0): "a", (0, 1): "b", (1, 0): "1", (1, 1): "2"},
        {(0, 0): "x", (1, 0): "y"},
    ]


def test_leaks_count_the_running_header_and_footer_and_figure_words_beyond_the_body() -> None:
    truth = PAGES[3]  # the figure page: its caption says "licence" too
    body = truth.markdown()
    assert leaks(body, truth.body_text(), [truth.header, truth.footer], truth.figure_words).total == 0
    noisy = f"{truth.header}\n\n{body}\n\nWords per licence GPL-3 5,644\n\n{truth.footer}"
    found = leaks(noisy, truth.body_text(), [truth.header, truth.footer], truth.figure_words)
    assert found.running == 2
    assert found.figure_words == 5  # "words", "per", "licence", "gpl-3", "5,644": each once more than the body
