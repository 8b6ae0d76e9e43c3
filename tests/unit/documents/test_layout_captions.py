"""A caption attached to the figure or table it describes."""

from documents import structure
from documents.layout.captions import attach

FIGURE = (400, 1400, 1300, 1750)
TABLE = (150, 300, 1550, 700)


def test_each_caption_goes_to_the_nearest_figure_or_table_sharing_its_width():
    kinds = [structure.TABLE, structure.CAPTION, structure.FIGURE, structure.CAPTION]
    boxes = [TABLE, (150, 250, 900, 280), FIGURE, (600, 1765, 1100, 1790)]
    found_kinds, described = attach(kinds, boxes, ["", "Table 1. Types", "", "Figure 1. Flow"], [0, 25, 0, 25])
    assert described == {1: 0, 3: 2}
    assert found_kinds == kinds


def test_a_caption_far_from_everything_stays_alone():
    kinds = [structure.FIGURE, structure.CAPTION]
    _, described = attach(kinds, [FIGURE, (600, 1950, 1100, 1975)], ["", "Figure 1."], [0, 25])
    assert described == {}


def test_a_caption_beside_a_figure_that_shares_no_width_is_not_its():
    kinds = [structure.FIGURE, structure.CAPTION]
    _, described = attach(kinds, [FIGURE, (1350, 1500, 1600, 1530)], ["", "Figure 1."], [0, 25])
    assert described == {}


def test_a_figure_takes_one_caption_the_nearest():
    kinds = [structure.FIGURE, structure.CAPTION, structure.CAPTION]
    boxes = [FIGURE, (600, 1765, 1100, 1790), (600, 1830, 1100, 1855)]
    _, described = attach(kinds, boxes, ["", "a", "b"], [0, 25, 25])
    assert described == {1: 0}


def test_text_that_reads_like_a_caption_under_a_figure_becomes_its_caption():
    kinds = [structure.FIGURE, structure.TEXT, structure.TEXT]
    boxes = [FIGURE, (600, 1765, 1100, 1790), (150, 1800, 1550, 1900)]
    texts = ["", "Fig. 2: How a package reaches the cache", "Figure 2 shows the flow of a package."]
    found_kinds, described = attach(kinds, boxes, texts, [0, 25, 25])
    assert found_kinds == [structure.FIGURE, structure.CAPTION, structure.TEXT]
    assert described == {1: 0}
