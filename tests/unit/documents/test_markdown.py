"""A result's Markdown: headings, paragraphs, lists, tables and captions in reading order, and nothing else."""

from __future__ import annotations

import pytest
from markdown_it import MarkdownIt

from documents.markdown import render_markdown

from .structured_pages import SPANNING, figure_without_words_page, plain_page, structured_page


def chunks(markdown: str) -> list[str]:
    """The Markdown's blocks: what stands between blank lines."""
    return [chunk.strip("\n") for chunk in markdown.split("\n\n") if chunk.strip()]


def test_a_page_reads_as_its_body_in_reading_order():
    markdown = render_markdown([structured_page()])

    assert chunks(markdown) == [
        "<!-- page 7 -->",
        "# Harbour Traffic",
        "## 1 Ships and cargo",
        "More ships came in than in any year before, and they brought more cargo.",
        "- containers",
        "2. bulk goods",
        "*Table 1: Ships per quarter*",
        "| Quarter | Ships |\n| --- | --- |\n| Q1 \\| first | 120 |",
        "*Figure 1: The two basins*",
        "### 1.1 Method",
        "x = a + b",
    ]
    assert markdown.endswith("x = a + b\n")


def test_running_headers_footers_and_the_words_of_a_figure_are_not_in_the_body():
    markdown = render_markdown([structured_page()])

    for left_out in ("Annual report", "Page 7", "EAST", "WEST"):
        assert left_out not in markdown


def test_a_caption_stands_where_the_reading_order_puts_it_above_its_table():
    markdown = render_markdown([structured_page()])

    assert markdown.index("*Table 1") < markdown.index("| Quarter |") < markdown.index("*Figure 1")


def test_a_table_with_a_spanning_cell_is_given_as_its_html():
    markdown = render_markdown([structured_page(table=SPANNING)])

    assert '<table><tr><td colspan="2">Ships per quarter</td></tr>' in markdown
    assert "| --- |" not in markdown


def test_a_table_without_a_structure_gives_its_rows_as_lines():
    page = structured_page()
    (table,) = [b for b in page["blocks"] if b["type"] == "table"]
    del table["table"]

    assert "Quarter Ships  \nQ1 | first 120" in render_markdown([page])


def test_a_page_without_blocks_gives_each_line_as_a_paragraph():
    markdown = render_markdown([plain_page(3, "First line", "# not a heading", "- not an item", "a <b> tag")])

    assert chunks(markdown) == ["<!-- page 3 -->", "First line", "\\# not a heading", "\\- not an item",
                                "a &lt;b> tag"]  # fmt: skip


def test_pages_follow_each_other_each_with_its_number():
    markdown = render_markdown([plain_page(1, "one"), structured_page(2), plain_page(5, "five")])

    starts = [chunk for chunk in chunks(markdown) if chunk.startswith("<!-- page")]
    assert starts == ["<!-- page 1 -->", "<!-- page 2 -->", "<!-- page 5 -->"]
    assert markdown.index("one") < markdown.index("# Harbour") < markdown.index("five")


def test_a_page_that_found_nothing_is_its_number_alone():
    assert render_markdown([plain_page(4)]) == "<!-- page 4 -->\n"


def test_a_figure_without_a_caption_shows_nothing():
    assert chunks(render_markdown([figure_without_words_page()])) == ["<!-- page 1 -->", "A paragraph."]


@pytest.mark.parametrize(
    ("text", "item"),
    [
        ("• first", "- first"),
        ("- first", "- first"),
        ("o first", "- first"),
        ("= first", "- first"),
        ("3. third", "3. third"),
        ("b) second", "- b) second"),
        ("plain item", "- plain item"),
    ],
)
def test_a_list_items_printed_marker_becomes_markdowns(text, item):
    page = structured_page()
    page["blocks"][4]["text"] = text

    assert f"\n{item}\n" in render_markdown([page])


def test_a_heading_without_a_level_is_a_section():
    page = structured_page()
    del page["blocks"][2]["level"]

    assert "\n## 1 Ships and cargo\n" in render_markdown([page])


def test_a_heading_ending_in_hashes_and_a_caption_with_a_star_keep_their_text():
    page = structured_page()
    page["blocks"][2]["text"] = "Ships by pier #"
    page["blocks"][6]["text"] = "Table 1: ships* per quarter"

    found = chunks(render_markdown([page]))

    assert "## Ships by pier \\#" in found
    assert "*Table 1: ships\\* per quarter*" in found


def test_items_of_one_kind_form_one_list():
    page = structured_page()
    page["blocks"][5]["text"] = "• bulk goods"

    assert "\n- containers\n- bulk goods\n" in render_markdown([page])


def read_by_commonmark(markdown: str) -> list[tuple[str, str]]:
    """What a CommonMark reader with GitHub's tables (markdown-it) makes of the Markdown: each block it opens
    (its tag) and the inline text in it; a list, where it opens."""
    found, opened = [], ""
    for token in MarkdownIt("commonmark").enable("table").parse(markdown):
        if token.type == "inline":
            found.append((opened, token.content))
        elif token.type.endswith("_open"):
            opened = token.tag
            if opened in ("ul", "ol"):
                found.append((opened, ""))
        elif token.type == "html_block":
            found.append(("html", token.content.strip()))
    return found


def test_a_commonmark_reader_sees_the_pages_structure():
    read = read_by_commonmark(render_markdown([structured_page(), plain_page(8, "# not a heading", "1. not an item")]))

    assert read == [
        ("html", "<!-- page 7 -->"),
        ("h1", "Harbour Traffic"),
        ("h2", "1 Ships and cargo"),
        ("p", "More ships came in than in any year before, and they brought more cargo."),
        ("ul", ""),
        ("p", "containers"),  # a tight list's item is a hidden paragraph
        ("ol", ""),
        ("p", "bulk goods"),
        ("p", "*Table 1: Ships per quarter*"),
        ("th", "Quarter"),
        ("th", "Ships"),
        ("td", "Q1 | first"),
        ("td", "120"),
        ("p", "*Figure 1: The two basins*"),
        ("h3", "1.1 Method"),
        ("p", "x = a + b"),
        ("html", "<!-- page 8 -->"),
        ("p", "\\# not a heading"),
        ("p", "1\\. not an item"),
    ]


def test_a_line_of_underscores_or_stars_keeps_its_text_and_is_no_rule():
    read = read_by_commonmark(render_markdown([plain_page(3, "__________", "***", "_ _ _")]))

    assert read == [("html", "<!-- page 3 -->"), ("p", "\\__________"), ("p", "\\***"), ("p", "\\_ _ _")]
