"""Blocks read as a person reads them: columns in turn, full-width blocks breaking them, asides after."""

from documents.layout.reading_order import block_order, line_order

# A letter page at 200 dpi: 1700 x 2200, text from x=150 to x=1550, columns 150-810 and 890-1550.
TITLE = (150, 100, 1000, 160)
INTRO = (150, 200, 1550, 300)
LEFT_1 = (150, 340, 810, 500)
LEFT_2 = (150, 540, 810, 700)
RIGHT_1 = (890, 340, 1550, 500)
RIGHT_2 = (890, 540, 1550, 900)
WIDE_TABLE = (150, 950, 1550, 1200)
LEFT_3 = (150, 1250, 810, 1400)
RIGHT_3 = (890, 1250, 1550, 1400)


def read(*boxes):
    return [boxes[i] for i in block_order(boxes)]


def test_two_columns_are_read_one_after_the_other_even_when_their_paragraphs_end_at_the_same_height():
    # Given two columns whose paragraphs are aligned (a horizontal cut alone would read them row by row)
    # When they are ordered, given shuffled
    # Then the left column comes whole before the right one, under the title and the full-width introduction
    assert read(RIGHT_2, LEFT_1, INTRO, RIGHT_1, TITLE, LEFT_2) == [TITLE, INTRO, LEFT_1, LEFT_2, RIGHT_1, RIGHT_2]


def test_a_full_width_table_breaks_the_columns():
    assert read(LEFT_3, RIGHT_1, WIDE_TABLE, LEFT_1, RIGHT_3, LEFT_2, RIGHT_2) == [
        LEFT_1,
        LEFT_2,
        RIGHT_1,
        RIGHT_2,
        WIDE_TABLE,
        LEFT_3,
        RIGHT_3,
    ]


def test_a_column_continues_below_where_the_other_column_ended():
    # The left column runs on alone below the right one's end: still read before the right column.
    left_long = (150, 900, 810, 1100)
    assert read(RIGHT_1, left_long, LEFT_1, LEFT_2) == [LEFT_1, LEFT_2, left_long, RIGHT_1]


def test_a_narrow_sidebar_is_read_after_the_main_column_on_either_side():
    main_1, main_2 = (500, 300, 1550, 700), (500, 740, 1550, 1200)
    sidebar = (150, 300, 420, 800)
    assert read(sidebar, main_2, main_1) == [main_1, main_2, sidebar]
    right_sidebar = (1300, 300, 1550, 800)
    main_left_1, main_left_2 = (150, 300, 1200, 700), (150, 740, 1200, 1200)
    assert read(right_sidebar, main_left_2, main_left_1) == [main_left_1, main_left_2, right_sidebar]


def test_blocks_that_cannot_be_cut_are_read_top_to_bottom_then_left_to_right():
    # Overlapping both ways: no gap to cut at.
    a, b, c = (100, 100, 600, 400), (500, 300, 1000, 600), (50, 350, 550, 700)
    assert read(c, b, a) == [a, b, c]


def test_a_single_block_and_none():
    assert block_order([]) == []
    assert block_order([TITLE]) == [0]


def test_lines_are_read_top_to_bottom_and_along_one_baseline_left_to_right():
    lines = [(600, 200, 900, 230), (100, 100, 500, 130), (100, 198, 500, 232), (100, 150, 900, 180)]
    assert line_order(lines) == [1, 3, 2, 0]
