"""Structured pages for the layout's tests, made from the real text of the shared-mime-info specification.

A page has a running header and a page number, a title, a section with
paragraphs, a subsection, a part set in two columns, and a figure (boxes and
arrows with words in them) with its caption below.  Each is drawn with fpdf2
in Helvetica, so the page is born-digital, and ``scan`` draws it at 200 dpi
as a grey JPEG, which is what a scanner hands in.  ``Drawn`` keeps what was
put where: the test's truth.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass, field

import pypdfium2 as pdfium
from fpdf import FPDF
from PIL import Image

from tests.scans import source_text

POINTS_PER_INCH = 72
SCAN_DPI = 200
HEADER = "Shared MIME-info Database"
TITLE = "The Shared MIME Database"
SECTION = "Unified system"
SUBSECTION = "Directory layout"
COLUMNS_SECTION = "Recommended checking order"
FIGURE_WORDS = ("Packages", "Update", "Cache")
CAPTION = "Figure 1. How a package reaches the cache."


@dataclass
class Drawn:
    """What a page holds, in reading order, each part's text as drawn (paragraphs one string each)."""

    header: str = HEADER
    page_number: str = ""
    title: str = TITLE
    paragraphs: list[str] = field(default_factory=list)  # the body's paragraphs in reading order
    left_column: list[str] = field(default_factory=list)
    right_column: list[str] = field(default_factory=list)
    figure_words: tuple[str, ...] = FIGURE_WORDS
    caption: str = CAPTION


def sentences() -> list[str]:
    """The specification's sentences, in Latin-1 (Helvetica's), long enough to be prose."""
    text = " ".join(source_text(i) for i in range(1, 6))
    text = text.replace("\u2019", "'").replace("\u201c", '"').replace("\u201d", '"').replace("\u2022", "")
    text = text.encode("latin-1", "ignore").decode("latin-1")
    text = re.sub(r"\s+", " ", text)
    found = [s.strip() for s in re.split(r"(?<=[a-z]\.) (?=[A-Z])", text)]
    return [s for s in found if 60 <= len(s) <= 260 and "<" not in s and "http" not in s]


def paragraphs(count: int, per: int = 2, start: int = 0) -> list[str]:
    chosen = sentences()[start:]
    return [" ".join(chosen[i * per : (i + 1) * per]) for i in range(count)]


def structured_pdf(page_number: int = 3) -> tuple[bytes, Drawn]:
    """A letter page: header, title, a section of two paragraphs, a subsection of one, two columns, a figure."""
    drawn = Drawn(page_number=str(page_number))
    body = paragraphs(7)
    pdf = FPDF(unit="pt", format="letter")
    pdf.set_auto_page_break(False)
    pdf.set_margins(54, 54, 54)
    pdf.add_page()
    width = 612 - 2 * 54

    pdf.set_font("Helvetica", "I", 9)
    pdf.set_xy(54, 30)
    pdf.cell(width, 12, HEADER, align="L")

    pdf.set_xy(54, 64)
    pdf.set_font("Helvetica", "B", 22)
    pdf.cell(width, 28, TITLE, align="L")

    y: float = 104
    pdf.set_font("Helvetica", "B", 15)
    pdf.set_xy(54, y)
    pdf.cell(width, 18, SECTION)
    y += 26
    pdf.set_font("Helvetica", "", 10)
    drawn.paragraphs.append(SECTION)
    for text in body[:2]:
        pdf.set_xy(54, y)
        pdf.multi_cell(width, 12.5, text)
        y = pdf.get_y() + 8
        drawn.paragraphs.append(text)

    pdf.set_font("Helvetica", "B", 12)
    pdf.set_xy(54, y + 2)
    pdf.cell(width, 15, SUBSECTION)
    drawn.paragraphs.append(SUBSECTION)
    y += 22
    pdf.set_font("Helvetica", "", 10)
    pdf.set_xy(54, y)
    pdf.multi_cell(width, 12.5, body[2])
    drawn.paragraphs.append(body[2])
    y = pdf.get_y() + 10

    pdf.set_font("Helvetica", "B", 12)
    pdf.set_xy(54, y)
    pdf.cell(width, 15, COLUMNS_SECTION)
    drawn.paragraphs.append(COLUMNS_SECTION)
    y += 22
    gutter = 24
    column = (width - gutter) / 2
    pdf.set_font("Helvetica", "", 10)
    bottom = y
    for x, texts, into in ((54, body[3:5], drawn.left_column), (54 + column + gutter, body[5:7], drawn.right_column)):
        column_y = y
        for text in texts:
            pdf.set_xy(x, column_y)
            pdf.multi_cell(column, 12.5, text)
            column_y = pdf.get_y() + 8
            into.append(text)
        bottom = max(bottom, column_y)
    drawn.paragraphs.extend(drawn.left_column + drawn.right_column)

    # The figure: three labelled boxes joined by arrows, framed, its caption under it.
    top = bottom + 14
    pdf.set_line_width(1.2)
    pdf.rect(150, top, 312, 110)
    pdf.set_font("Helvetica", "B", 11)
    for i, word in enumerate(FIGURE_WORDS):
        x = 170 + i * 100
        pdf.rect(x, top + 35, 72, 40)
        pdf.set_xy(x, top + 47)
        pdf.cell(72, 16, word, align="C")
        if i:
            pdf.line(x - 28, top + 55, x, top + 55)
            pdf.line(x - 8, top + 50, x, top + 55)
            pdf.line(x - 8, top + 60, x, top + 55)
    pdf.set_font("Helvetica", "I", 9)
    pdf.set_xy(150, top + 116)
    pdf.cell(312, 12, CAPTION, align="C")

    pdf.set_font("Helvetica", "", 9)
    pdf.set_xy(54, 750)
    pdf.cell(width, 12, str(page_number), align="C")
    return bytes(pdf.output()), drawn


def scan(data: bytes, dpi: int = SCAN_DPI) -> Image.Image:
    """The first page of ``data`` drawn at ``dpi`` in grey and passed through JPEG, as a scanner hands it in."""
    document = pdfium.PdfDocument(data)
    try:
        bitmap = document[0].render(scale=dpi / POINTS_PER_INCH, grayscale=True)
        image = bitmap.to_pil().convert("L")
    finally:
        document.close()
    buffer = io.BytesIO()
    image.save(buffer, "JPEG", quality=80)
    return Image.open(io.BytesIO(buffer.getvalue()))


LIST_HEADING = "Files created"
LIST_INTRO = "The files created by update-mime-database are:"
BULLETS = (
    "globs, which maps names to MIME types and is kept for older readers of the database that do not know the "
    "weights",
    "magic, which maps the contents of a file to MIME types",
    "aliases, which maps aliases to MIME types",
)
STEPS = ("1. Install the package file.", "2. Run update-mime-database on the directory.")
#: A paragraph set line by line, its first line ending in a word cut by a hyphen.
HYPHENATED = (
    "Each application that wishes to contribute to the MIME data-",
    "base will install a single XML file, named after the application.",
)
HYPHENATED_TEXT = (
    "Each application that wishes to contribute to the MIME database will install a single XML file, "
    "named after the application."
)


def list_pdf() -> bytes:
    """A letter page: a heading, a sentence, three bullets (one of two lines, at a hanging indent), two numbered
    steps, and a paragraph whose first line ends in a hyphenated word."""
    pdf = FPDF(unit="pt", format="letter")
    pdf.set_auto_page_break(False)
    pdf.add_page()
    pdf.set_font("Helvetica", "B", 15)
    pdf.set_xy(54, 64)
    pdf.cell(400, 18, LIST_HEADING)
    pdf.set_font("Helvetica", "", 10)
    pdf.set_xy(54, 96)
    pdf.cell(400, 12.5, LIST_INTRO)
    y = 116.0
    for item in BULLETS:
        pdf.set_xy(64, y)
        pdf.cell(10, 12.5, "\x95")  # the bullet in Helvetica's encoding (WinAnsi)
        pdf.set_xy(78, y)
        pdf.multi_cell(300, 12.5, item)
        y = pdf.get_y() + 3
    y += 10
    for step in STEPS:
        pdf.set_xy(54, y)
        pdf.cell(400, 12.5, step)
        y += 15.5
    y += 12
    for line in HYPHENATED:
        pdf.set_xy(54, y)
        pdf.cell(400, 12.5, line)
        y += 12.5
    return bytes(pdf.output())
