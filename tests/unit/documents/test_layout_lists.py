"""A text block whose lines open with bullets or numbers, cut into one item per bullet or number."""

from documents.layout.lists import ListLine, items

HEIGHT = 26  # a 10-point line at 200 dpi


def line(y: int, *words: str, x: int = 160) -> ListLine:
    """Words side by side from ``x`` on the line at ``y``, a glyph's width apart per letter."""
    placed = []
    for word in words:
        width = 14 * len(word)
        placed.append((word, (x, y, x + width, y + HEIGHT)))
        x += width + 12
    return ListLine(placed)


def texts(found):
    return [(item.is_item, " ".join(item.texts)) for item in found]


def test_bulleted_lines_are_items_with_their_continuations_and_without_their_bullets():
    block = [
        line(100, "The", "files", "created", "are:"),
        line(140, "•", "<MIME>/globs", "(contains", "a", "mapping"),
        line(175, "from", "names", "to", "types)", x=200),
        line(210, "•", "<MIME>/magic", "(contents", "to", "types)"),
    ]
    assert texts(items(block, HEIGHT)) == [
        (False, "The files created are:"),
        (True, "<MIME>/globs (contains a mapping from names to types)"),
        (True, "<MIME>/magic (contents to types)"),
    ]


def test_a_bullet_glued_to_its_word_is_taken_off():
    block = [line(100, "•globs2", "(names", "and", "weights)"), line(140, "•magic", "(contents)")]
    assert texts(items(block, HEIGHT)) == [(True, "globs2 (names and weights)"), (True, "magic (contents)")]


def test_numbers_open_items_and_are_kept():
    block = [line(100, "1.", "Read", "the", "packages."), line(140, "2.", "Write", "the", "cache.")]
    assert texts(items(block, HEIGHT)) == [(True, "1. Read the packages."), (True, "2. Write the cache.")]
    lettered = [line(100, "(a)", "globs"), line(140, "(b)", "magic"), line(180, "(iv)", "aliases")]
    assert [t for _, t in texts(items(lettered, HEIGHT))] == ["(a) globs", "(b) magic", "(iv) aliases"]


def test_one_line_opening_with_a_number_is_a_sentence_not_a_list():
    block = [line(100, "2.", "Is", "the", "second", "step"), line(140, "of", "the", "update", "of", "the", "cache.")]
    assert items(block, HEIGHT) is None


def test_what_tesseract_reads_a_bullet_as_counts_at_a_hanging_indent():
    # "e" alone, the text after it starting where the item's next line starts.
    block = [line(100, "e", "<MIME>/globs", "(contains", "a"), line(140, "mapping", "to", "types)", x=186)]
    assert texts(items(block, HEIGHT)) == [(True, "<MIME>/globs (contains a mapping to types)")]
    twice = [line(100, "«", "globs"), line(140, "«", "magic")]
    assert texts(items(twice, HEIGHT)) == [(True, "globs"), (True, "magic")]


def test_a_lone_letter_without_a_hanging_indent_is_a_word():
    block = [line(100, "e", "is", "a", "constant"), line(140, "of", "the", "natural", "logarithm.")]
    assert items(block, HEIGHT) is None


def test_a_paragraph_is_not_a_list():
    assert items([line(100, "Each", "element"), line(140, "has", "a", "type")], HEIGHT) is None
    assert items([], HEIGHT) is None
