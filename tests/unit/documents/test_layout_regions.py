"""The model's overlapping boxes made one set, and each line put in the region that holds it."""

from documents import structure
from documents.layout.placement import place
from documents.layout.regions import Region, reconcile

PARAGRAPH_1 = (157, 365, 1383, 427)
PARAGRAPH_2 = (226, 457, 1473, 553)


def kinds(regions):
    return sorted((r.kind, r.box) for r in regions)


def test_a_box_around_two_paragraphs_is_dropped_for_the_paragraphs():
    found = [
        Region(structure.TEXT, PARAGRAPH_1, 0.84),
        Region(structure.TEXT, PARAGRAPH_2, 0.84),
        Region(structure.TEXT, (158, 362, 1542, 549), 0.6),
    ]
    assert kinds(reconcile(found)) == kinds(found[:2])


def test_a_box_inside_one_larger_of_its_kind_is_merged_into_it():
    found = [Region(structure.TEXT, (100, 100, 900, 400), 0.9), Region(structure.TEXT, (120, 300, 920, 410), 0.7)]
    assert kinds(reconcile(found)) == [(structure.TEXT, (100, 100, 920, 410))]


def test_the_specific_kind_wins_over_text_on_the_same_lines():
    heading = (158, 296, 453, 334)
    found = [Region(structure.TEXT, heading, 0.84), Region(structure.TITLE, heading, 0.79)]
    assert kinds(reconcile(found)) == [(structure.TITLE, heading)]
    caption = (602, 1765, 1096, 1790)
    found = [Region(structure.TEXT, caption, 0.8), Region(structure.CAPTION, (602, 1765, 1094, 1790), 0.61)]
    assert [r.kind for r in reconcile(found)] == [structure.CAPTION]


def test_a_table_keeps_the_text_inside_it_and_its_caption_stays():
    table = (150, 300, 1550, 700)
    found = [
        Region(structure.TABLE, table, 0.9),
        Region(structure.TEXT, (160, 320, 700, 360), 0.95),
        Region(structure.CAPTION, (160, 660, 700, 690), 0.7),
    ]
    assert kinds(reconcile(found)) == kinds([found[0], found[2]])


def test_unsure_boxes_are_dropped_and_of_two_other_kinds_the_surer_wins():
    box = (100, 100, 900, 400)
    found = [Region(structure.FIGURE, box, 0.7), Region(structure.TABLE, box, 0.8), Region(structure.TEXT, box, 0.3)]
    assert kinds(reconcile(found)) == [(structure.TABLE, box)]


def words(y, *spans):
    """Words at ``y``, each ``(text, x0, x1)``."""
    return [(text, (x0, y, x1, y + 26)) for text, x0, x1 in spans]


def test_a_line_across_two_regions_is_cut_into_two_pieces():
    # A table row read as one line with the text beside it.
    regions = [Region(structure.TABLE, (100, 100, 700, 500), 0.9), Region(structure.TEXT, (800, 100, 1500, 500), 0.9)]
    line = words(200, ("globs", 120, 200), ("12", 400, 440), ("Each", 820, 900), ("element", 910, 1050))
    groups = place([line], regions, height=2200)
    assert [(g.kind, [(p.line, p.words, p.text) for p in g.pieces]) for g in groups] == [
        (structure.TABLE, [(0, (0, 1), "globs 12")]),
        (structure.TEXT, [(0, (2, 3), "Each element")]),
    ]


def test_a_word_just_past_a_regions_edge_stays_with_its_line():
    regions = [Region(structure.TEXT, (100, 100, 1380, 500), 0.9)]
    line = words(200, ("a", 120, 140), ("standard", 1300, 1370), ("way", 1400, 1540))
    [group] = place([line], regions, height=2200)
    assert [(p.line, p.words) for p in group.pieces] == [(0, None)]


def test_lines_in_no_region_are_grouped_by_position_and_lone_lines_in_the_margins_are_header_and_footer():
    lines = [
        words(90, ("Shared", 160, 260), ("MIME-info", 270, 400)),
        words(300, ("Each", 160, 240), ("element", 250, 400)),
        words(335, ("has", 160, 220), ("a", 230, 250), ("type", 260, 330)),
        words(700, ("Any", 160, 220), ("file", 230, 290)),
        words(2090, ("3", 843, 861)),
    ]
    groups = place(lines, [], height=2200)
    assert [(g.kind, [p.line for p in g.pieces]) for g in groups] == [
        (structure.PAGE_HEADER, [0]),
        (structure.TEXT, [1, 2]),
        (structure.TEXT, [3]),
        (structure.PAGE_FOOTER, [4]),
    ]


def test_a_figure_without_words_is_kept_and_an_empty_text_region_is_not():
    regions = [Region(structure.FIGURE, (100, 100, 900, 400), 0.9), Region(structure.TEXT, (100, 500, 900, 600), 0.9)]
    assert [g.kind for g in place([], regions, height=2200)] == [structure.FIGURE]
