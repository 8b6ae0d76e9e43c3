"""A heading's level from the size of its type against the page's body text."""

from documents import structure
from documents.layout.headings import is_missed_heading, is_mistaken_heading, level, line_size, word_size


def test_a_words_size_counts_the_letters_it_holds():
    # Tesseract's boxes of 10-point Helvetica at 200 dpi: 'type' 26 pixels (a descender), 'that' 20, 'scans' 15.
    sizes = [word_size("type", (0, 0, 60, 26)), word_size("that", (0, 0, 60, 20)), word_size("scans", (0, 0, 60, 15))]
    assert all(24 <= s <= 27.5 for s in sizes if s is not None), sizes
    assert word_size("a", (0, 0, 10, 15)) is None


def test_a_lines_size_is_the_median_of_its_words():
    assert line_size([("Directory", (0, 0, 1, 31)), ("layout", (0, 0, 1, 31))]) == 31
    assert line_size([("a", (0, 0, 1, 15))]) is None


def test_levels_by_size_against_the_body():
    body = 10.0
    assert level(22, body) == (structure.TITLE, 1)
    assert level(15, body) == (structure.SECTION_HEADER, 2)
    assert level(12, body) == (structure.SECTION_HEADER, 3)
    assert level(10, body) == (structure.SECTION_HEADER, 3)  # bold, the body's size
    assert level(None, body) == (structure.SECTION_HEADER, 2)


def test_a_long_body_sized_region_called_a_heading_is_a_paragraph():
    assert is_mistaken_heading(10.2, 10.0, lines=5)
    assert not is_mistaken_heading(22, 10.0, lines=5)  # a long title set large
    assert not is_mistaken_heading(10.2, 10.0, lines=1)


def test_a_short_large_line_the_model_missed_is_a_heading():
    assert is_missed_heading("Directory layout", 12, 10, lines=1, bold=False)
    assert is_missed_heading("Directory layout", 10, 10, lines=1, bold=True)  # born-digital, bold
    assert not is_missed_heading("It ends a sentence.", 14, 10, lines=1, bold=True)
    assert not is_missed_heading("Directory layout", 10.5, 10, lines=1, bold=False)
    assert not is_missed_heading("Three lines of large type", 14, 10, lines=3, bold=False)
