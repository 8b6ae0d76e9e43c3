"""Pages of a result with layout, made by hand in documents.structure's shape, for what is rendered from them."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from documents.structure import Block, Cell, Table


def line(text: str, top: int, left: int = 100, confidence: float = 0.9) -> dict[str, Any]:
    """A line of words 20 pixels high at ``top``, each word 10 pixels a character and 10 apart."""
    words, x = [], left
    for token in text.split():
        words.append({"text": token, "confidence": confidence, "bbox": [x, top, x + 10 * len(token), top + 20]})
        x += 10 * len(token) + 10
    return {"text": text, "confidence": confidence, "bbox": [left, top, x - 10, top + 20], "words": words}


# A report's page 7: a running header, a title, a section with a paragraph of two lines and a list, a table
# with its caption above it, a figure with words in it and its caption below, a subsection, a formula and a footer.
LINES = [
    line("Annual report 2026", 20, left=900),  # 0 page header
    line("Harbour Traffic", 100),  # 1 title
    line("1 Ships and cargo", 160),  # 2 section header
    line("More ships came in than in any year be-", 200),  # 3 text
    line("fore, and they brought more cargo.", 225),  # 4 text
    line("• containers", 270),  # 5 list item
    line("2. bulk goods", 295),  # 6 list item
    line("Table 1: Ships per quarter", 340),  # 7 caption of the table
    line("Quarter Ships", 370),  # 8 table
    line("Q1 | first 120", 395),  # 9 table
    line("EAST WEST", 470, left=300),  # 10 figure words
    line("Figure 1: The two basins", 560),  # 11 caption of the figure
    line("1.1 Method", 600),  # 12 section header, level 3
    line("x = a + b", 640),  # 13 formula
    line("Page 7", 1500, left=600),  # 14 page footer
]
TABLE = Table(
    rows=2,
    cols=2,
    cells=(
        Cell(0, 0, 1, 1, (100, 370, 300, 390), "Quarter"),
        Cell(0, 1, 1, 1, (300, 370, 500, 390), "Ships"),
        Cell(1, 0, 1, 1, (100, 395, 300, 415), "Q1 | first"),
        Cell(1, 1, 1, 1, (300, 395, 500, 415), "120"),
    ),
    html="<table><tr><td>Quarter</td><td>Ships</td></tr><tr><td>Q1 | first</td><td>120</td></tr></table>",
)
SPANNING = Table(
    rows=2,
    cols=2,
    cells=(
        Cell(0, 0, 1, 2, (100, 370, 500, 390), "Ships per quarter"),
        Cell(1, 0, 1, 1, (100, 395, 300, 415), "Q1"),
        Cell(1, 1, 1, 1, (300, 395, 500, 415), "120"),
    ),
    html='<table><tr><td colspan="2">Ships per quarter</td></tr><tr><td>Q1</td><td>120</td></tr></table>',
)
BLOCKS = [
    Block(0, "page_header", (900, 20, 1080, 40), (0,), "Annual report 2026"),
    Block(1, "title", (100, 100, 250, 120), (1,), "Harbour Traffic", level=1),
    Block(2, "section_header", (100, 160, 270, 180), (2,), "1 Ships and cargo", level=2),
    Block(
        3,
        "text",
        (100, 200, 490, 245),
        (3, 4),
        "More ships came in than in any year before, and they brought more cargo.",
    ),  # fmt: skip
    Block(4, "list_item", (100, 270, 220, 290), (5,), "• containers"),
    Block(5, "list_item", (100, 295, 230, 315), (6,), "2. bulk goods"),
    Block(6, "caption", (100, 340, 350, 360), (7,), "Table 1: Ships per quarter", caption_of=7),
    Block(7, "table", (100, 370, 500, 415), (8, 9), "Quarter\tShips\nQ1 | first\t120", table=TABLE, caption=6),
    Block(8, "figure", (250, 450, 700, 550), (10,), "EAST WEST", caption=9),
    Block(9, "caption", (100, 560, 340, 580), (11,), "Figure 1: The two basins", caption_of=8),
    Block(10, "section_header", (100, 600, 200, 620), (12,), "1.1 Method", level=3),
    Block(11, "formula", (100, 640, 190, 660), (13,), "x = a + b"),
    Block(12, "page_footer", (600, 1500, 650, 1520), (14,), "Page 7"),
]


def structured_page(number: int = 7, *, table: Table = TABLE) -> dict[str, Any]:
    """The report's page, as its result's JSON holds it (numbered ``number``)."""
    blocks = [b if b.table is None else replace(b, table=table) for b in BLOCKS]
    return {
        "page": number,
        "text": "",
        "source": "ocr",
        "width": 1240,
        "height": 1754,
        "dpi": 150.0,
        "lines": [dict(line) for line in LINES],
        "blocks": [b.to_dict() for b in blocks],
    }


def plain_page(number: int, *texts: str) -> dict[str, Any]:
    """A page without layout: its lines alone."""
    lines = [line(text, 100 + 40 * i) for i, text in enumerate(texts)]
    return {"page": number, "text": "\n".join(texts), "source": "ocr", "width": 1240, "height": 1754, "lines": lines}


def figure_without_words_page(number: int = 1) -> dict[str, Any]:
    """A page of a paragraph and a figure in which nothing was read."""
    return {
        "page": number,
        "text": "A paragraph.",
        "source": "ocr",
        "width": 1240,
        "height": 1754,
        "lines": [line("A paragraph.", 100)],
        "blocks": [
            Block(0, "text", (100, 100, 220, 120), (0,), "A paragraph.").to_dict(),
            Block(1, "figure", (100, 200, 600, 500), (), "").to_dict(),
        ],
    }
