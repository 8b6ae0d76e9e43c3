"""``analyse`` on hand-made lines and regions (the model's answer given): blocks, pieces and their order."""

from __future__ import annotations

import pytest
from PIL import Image

from documents import structure
from documents.layout import Piece, analyse, regions
from documents.layout.regions import Region
from workers.adapters.base import Line, Word

WIDTH, HEIGHT = 1700, 2200
PAGE = Image.new("L", (WIDTH, HEIGHT), 255)


def line(y: int, x: int, *words: str, height: int = 26) -> Line:
    placed, at = [], x
    for word in words:
        placed.append(Word(word, 0.95, (at, y, at + 14 * len(word), y + height)))
        at += 14 * len(word) + 12
    return Line(" ".join(words), 0.95, (x, y, at - 12, y + height), tuple(placed))


@pytest.fixture
def model_answers(monkeypatch: pytest.MonkeyPatch):
    def answer(found: list[Region]) -> None:
        monkeypatch.setattr(regions, "find", lambda image, *, width, height: regions.reconcile(found))

    return answer


def texts(layout) -> list[tuple[str, str]]:
    return [(b.type, b.text) for b in layout.blocks]


def test_a_text_region_round_two_columns_is_read_column_by_column(model_answers):
    # Given one text region the model drew round two columns whose lines stand side by side
    model_answers([Region(structure.TEXT, (150, 100, 1550, 400), 0.6)])
    lines = [
        line(100, 150, "left", "one", "begins"),
        line(100, 900, "right", "one", "begins"),
        line(135, 150, "and", "ends."),
        line(135, 900, "and", "ends", "too."),
        line(200, 150, "left", "two."),
        line(200, 900, "right", "two."),
    ]
    # When it is laid out
    layout = analyse(PAGE, lines, width=WIDTH, height=HEIGHT, dpi=200)
    # Then each column's paragraphs come in turn
    assert texts(layout) == [
        (structure.TEXT, "left one begins and ends."),
        (structure.TEXT, "left two."),
        (structure.TEXT, "right one begins and ends too."),
        (structure.TEXT, "right two."),
    ]
    assert [p.line for p in layout.pieces] == [0, 2, 4, 1, 3, 5]


def test_a_line_two_regions_share_is_cut_and_every_piece_is_in_one_block(model_answers):
    # A sidebar's heading that the engine read as one line with the main text's first line.
    model_answers(
        [Region(structure.TEXT, (140, 290, 560, 500), 0.95), Region(structure.TEXT, (600, 290, 1550, 500), 0.95)]
    )
    lines = [
        Line(
            "At glance You may convey",
            0.9,
            (150, 296, 1100, 338),
            (
                Word("At", 0.9, (150, 296, 180, 330)),
                Word("glance", 0.9, (190, 296, 300, 338)),
                Word("You", 0.9, (620, 304, 670, 330)),
                Word("may", 0.9, (680, 304, 740, 330)),
                Word("convey", 0.9, (750, 304, 850, 330)),
            ),
        ),
        line(340, 150, "Version", "3"),
        line(375, 150, "674", "lines"),
        line(340, 620, "a", "covered", "work", "in", "object", "code."),
    ]
    layout = analyse(PAGE, lines, width=WIDTH, height=HEIGHT, dpi=200)
    assert texts(layout) == [
        (structure.SECTION_HEADER, "At glance"),
        (structure.TEXT, "Version 3 674 lines"),
        (structure.TEXT, "You may convey a covered work in object code."),
    ]
    assert layout.pieces[0] == Piece(0, (0, 1))
    assert Piece(0, (2, 3, 4)) in layout.pieces
    assert sorted(i for b in layout.blocks for i in b.lines) == list(range(len(layout.pieces)))
    assert [b.order for b in layout.blocks] == [0, 1, 2]


def test_a_figures_words_and_its_caption(model_answers):
    model_answers(
        [
            Region(structure.FIGURE, (400, 500, 1300, 900), 0.9),
            Region(structure.TEXT, (150, 300, 1550, 400), 0.9),
            Region(structure.CAPTION, (500, 920, 1200, 950), 0.7),
        ]
    )
    lines = [
        line(300, 150, "Body", "text", "of", "the", "page."),
        line(600, 500, "Packages"),
        line(600, 900, "Cache"),
        line(920, 500, "Figure", "1.", "The", "flow."),
    ]
    layout = analyse(PAGE, lines, width=WIDTH, height=HEIGHT, dpi=200)
    assert texts(layout) == [
        (structure.TEXT, "Body text of the page."),
        (structure.FIGURE, "Packages Cache"),
        (structure.CAPTION, "Figure 1. The flow."),
    ]
    figure, caption = layout.blocks[1], layout.blocks[2]
    assert (figure.caption, caption.caption_of) == (2, 1)
    assert structure.body_text(b.to_dict() for b in layout.blocks) == "Body text of the page.\n\nFigure 1. The flow."


def test_a_page_number_the_model_framed_as_text_is_the_footer(model_answers):
    model_answers(
        [Region(structure.TEXT, (150, 300, 1550, 400), 0.9), Region(structure.TEXT, (780, 2075, 920, 2110), 0.8)]
    )
    lines = [line(300, 150, "Body", "text", "of", "the", "page."), line(2080, 786, "Page", "2", "of", "7")]
    layout = analyse(PAGE, lines, width=WIDTH, height=HEIGHT, dpi=200)
    assert texts(layout) == [(structure.TEXT, "Body text of the page."), (structure.PAGE_FOOTER, "Page 2 of 7")]


def test_a_short_paragraph_above_the_margin_is_not_a_footer(model_answers):
    model_answers([Region(structure.TEXT, (150, 1900, 1550, 1940), 0.9)])
    layout = analyse(PAGE, [line(1900, 150, "The", "end.")], width=WIDTH, height=HEIGHT, dpi=200)
    assert texts(layout) == [(structure.TEXT, "The end.")]


def test_a_list_the_model_cut_between_an_item_and_its_next_line_is_one_list(model_answers):
    # Given three items with bullets Tesseract read as '=', and two regions that cut the second item
    model_answers(
        [Region(structure.TEXT, (200, 880, 1500, 965), 0.9), Region(structure.TEXT, (200, 970, 1500, 1090), 0.9)]
    )
    lines = [
        line(886, 219, "=", "The", "first", "item."),
        line(933, 219, "=", "The", "second", "item", "goes"),
        line(973, 260, "on", "here."),
        line(1021, 219, "=", "The", "third", "item"),
        line(1061, 260, "ends."),
    ]
    # When it is laid out
    layout = analyse(PAGE, lines, width=WIDTH, height=HEIGHT, dpi=200)
    # Then each item is one list item, the second with the line that continues it
    assert texts(layout) == [
        (structure.LIST_ITEM, "The first item."),
        (structure.LIST_ITEM, "The second item goes on here."),
        (structure.LIST_ITEM, "The third item ends."),
    ]


def test_two_text_regions_a_paragraphs_gap_apart_stay_two_paragraphs(model_answers):
    model_answers(
        [Region(structure.TEXT, (200, 100, 1500, 170), 0.9), Region(structure.TEXT, (200, 200, 1500, 270), 0.9)]
    )
    lines = [
        line(100, 210, "One", "paragraph", "begins"),
        line(140, 210, "and", "ends."),
        line(205, 210, "Another", "begins"),
        line(245, 210, "and", "ends."),
    ]

    layout = analyse(PAGE, lines, width=WIDTH, height=HEIGHT, dpi=200)

    assert texts(layout) == [
        (structure.TEXT, "One paragraph begins and ends."),
        (structure.TEXT, "Another begins and ends."),
    ]


def test_a_bold_caption_under_a_figure_on_a_born_digital_page_is_its_caption_not_a_heading(model_answers):
    model_answers(
        [
            Region(structure.FIGURE, (200, 100, 1400, 700), 0.9),
            Region(structure.TEXT, (200, 720, 1400, 750), 0.9),
            Region(structure.TEXT, (200, 800, 1500, 900), 0.9),
        ]
    )
    lines = [
        line(722, 200, "Figure", "3", "Revenue", "by", "region"),
        line(800, 210, "The", "body", "of", "the", "page", "goes", "on", "here"),
        line(840, 210, "and", "ends."),
    ]

    layout = analyse(
        PAGE, lines, width=WIDTH, height=HEIGHT, dpi=200, font_sizes=[10.5, 10.5, 10.5], bold=[True, False, False]
    )

    figure, caption = layout.blocks[0], layout.blocks[1]
    assert (figure.type, caption.type, caption.text) == (
        structure.FIGURE,
        structure.CAPTION,
        "Figure 3 Revenue by region",
    )
    assert figure.caption == caption.order and caption.caption_of == figure.order
