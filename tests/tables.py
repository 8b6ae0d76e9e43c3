"""Tables for the tests, drawn with fpdf2 from known cells: ruled and borderless, with spans, as PDF and as scans.

A ``DrawnTable`` is the truth a read table is held to: each cell's text at
its row and column.  ``draw`` puts it on a letter page under a line of body
text (Helvetica, fpdf2's own table layout), and answers the PDF with the
table's region in the pixels of the page drawn at ``dpi``; ``page_image``
draws that page, and ``scanned`` stores it as a grey JPEG as a scanner
would.  ``words_of_text_layer`` and ``words_of_tesseract`` are the two ways a
page's words reach a table: from the PDF's text, or from OCR of the image.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pypdfium2 as pdfium
from fpdf import FPDF
from PIL import Image

from documents.text_layer import read_text_layer

DPI = 200
POINTS_PER_INCH = 72

Box = tuple[int, int, int, int]


@dataclass(frozen=True)
class Spanned:
    text: str
    row_span: int = 1
    col_span: int = 1


@dataclass(frozen=True)
class DrawnTable:
    """Rows of cells, as fpdf2 takes them: a cell is its text, or a ``Spanned`` one; the places a span covers
    are left out of the rows that follow."""

    rows: Sequence[Sequence[str | Spanned]]
    borders: str = "ALL"  # fpdf2's borders_layout: "ALL", "NONE", "HORIZONTAL_LINES", ...
    col_widths: Sequence[float] | None = None
    align: str | Sequence[str] = "LEFT"
    font_size: float = 11
    width: float = 440
    options: Mapping[str, Any] = field(default_factory=dict)

    def truth(self) -> dict[tuple[int, int], str]:
        """Each cell's text at its first row and column."""
        taken: set[tuple[int, int]] = set()
        out = {}
        for row, cells in enumerate(self.rows):
            col = 0
            for cell in cells:
                while (row, col) in taken:
                    col += 1
                spanned = cell if isinstance(cell, Spanned) else Spanned(cell)
                out[(row, col)] = spanned.text
                for r in range(row, row + spanned.row_span):
                    for c in range(col, col + spanned.col_span):
                        taken.add((r, c))
                col += spanned.col_span
        return out


COUNTRIES = DrawnTable(
    [
        ["Country", "Capital", "Population", "Area"],
        ["France", "Paris", "68.4", "551695"],
        ["Germany", "Berlin", "84.5", "357588"],
        ["Italy", "Rome", "58.9", "301340"],
        ["Spain", "Madrid", "48.6", "505990"],
    ]
)

ACCOUNTS = DrawnTable(
    [
        ["Item", "2021", "2022", "2023", "Change"],
        ["Revenue from services", "1,204", "1,356", "1,498", "10.5%"],
        ["Cost of sales", "612", "701", "755", "7.7%"],
        ["Gross profit", "592", "655", "743", "13.4%"],
        ["Research & development", "96", "104", "", "-3.1%"],
        ["Operating expenses", "310", "", "352", "4.2%"],
        ["Net income", "282", "317", "391", "23.3%"],
    ],
    borders="NONE",
    col_widths=(3, 1, 1, 1, 1),
    align=("LEFT", "RIGHT", "RIGHT", "RIGHT", "RIGHT"),
    width=460,
)

CLIMATE = DrawnTable(
    [
        [Spanned("City", row_span=2), Spanned("Temperature", col_span=2), Spanned("Rainfall", col_span=2)],
        ["January", "July", "January", "July"],
        ["Oslo", "-4", "17", "49", "81"],
        ["Madrid", "6", "26", "37", "11"],
        ["Cairo", "14", "28", "5", "0"],
    ],
    align="CENTER",
    width=420,
)

#: Twenty cities and their visitors: a long borderless table of names and numbers in a smaller type.
VISITORS = DrawnTable(
    [
        ["City", "Visitors", "Hotels", "Share"],
        *(
            [city, f"{visitors:,}", str(hotels), f"{share:.1f}%"]
            for city, visitors, hotels, share in zip(
                [
                    "Oslo",
                    "Madrid",
                    "Cairo",
                    "Lima",
                    "Quito",
                    "Dakar",
                    "Hanoi",
                    "Perth",
                    "Turin",
                    "Bergen",
                    "Lyon",
                    "Porto",
                    "Accra",
                    "Delhi",
                    "Seoul",
                    "Tokyo",
                    "Osaka",
                    "Kyoto",
                    "Rome",
                    "Milan",
                ],
                range(4127, 99999, 4679),
                range(17, 900, 43),
                (1.5 * n + 0.3 for n in range(20)),
                strict=False,
            )
        ),
    ],
    borders="NONE",
    font_size=9,
    width=360,
)


@dataclass(frozen=True)
class DrawnPage:
    pdf: bytes
    region: Box  # the table's box in the page drawn at ``dpi``, a few pixels around its outer edge
    dpi: int


def draw(table: DrawnTable, *, dpi: int = DPI) -> DrawnPage:
    """A letter page with a line of text and, under it, ``table``."""
    document = FPDF(unit="pt", format=(612, 792))
    document.set_auto_page_break(False)
    document.add_page()
    document.set_font("helvetica", size=11)
    document.set_xy(72, 72)
    document.multi_cell(468, 14, "The figures below are taken from the yearly report of the statistics office.")
    document.set_font("helvetica", size=table.font_size)
    top = 110.0
    document.set_y(top)
    with document.table(
        borders_layout=table.borders,
        width=table.width,
        col_widths=table.col_widths,
        text_align=table.align,
        first_row_as_headings=False,
        **table.options,
    ) as drawn:
        for cells in table.rows:
            row = drawn.row()
            for cell in cells:
                spanned = cell if isinstance(cell, Spanned) else Spanned(cell)
                row.cell(spanned.text, rowspan=spanned.row_span, colspan=spanned.col_span)
    bottom = document.get_y()
    left = (612 - table.width) / 2
    scale = dpi / POINTS_PER_INCH
    margin = 4
    region = (
        int(left * scale) - margin,
        int(top * scale) - margin,
        int((left + table.width) * scale) + margin,
        int(bottom * scale) + margin,
    )
    return DrawnPage(bytes(document.output()), region, dpi)


def page_image(page: DrawnPage) -> Image.Image:
    document = pdfium.PdfDocument(page.pdf)
    try:
        bitmap = document[0].render(scale=page.dpi / POINTS_PER_INCH, grayscale=True)
        return bitmap.to_pil().convert("L")
    finally:
        document.close()


def scanned(page: DrawnPage, quality: int = 80) -> Image.Image:
    """The page as a scanner stores it: grey, a JPEG."""
    buffer = io.BytesIO()
    page_image(page).save(buffer, "JPEG", quality=quality, dpi=(page.dpi, page.dpi))
    image = Image.open(io.BytesIO(buffer.getvalue()))
    image.load()
    return image


def words_of_text_layer(page: DrawnPage) -> list[tuple[str, Box]]:
    document = pdfium.PdfDocument(page.pdf)
    try:
        layer = read_text_layer(document[0], page.dpi / POINTS_PER_INCH)
    finally:
        document.close()
    assert layer is not None
    return [(word.text, word.bbox) for line in layer.lines for word in line.words]


def words_of_tesseract(image: Image.Image) -> list[tuple[str, Box]]:
    from workers.adapters.tesseract import TesseractAdapter

    result = TesseractAdapter().recognise(1, image, {}, None)
    return [(word.text, word.bbox) for line in result.lines for word in line.words]


def cell_accuracy(table: DrawnTable, read: Any) -> float:
    """The share of the drawn table's non-empty cells whose text the read table has at the same row and column
    (OmniDocBench's cell accuracy; spaces aside)."""
    found = {(cell.row, cell.col): cell.text for cell in read.cells}
    expected = {place: text for place, text in table.truth().items() if text}
    right = sum(1 for place, text in expected.items() if _squashed(found.get(place, "")) == _squashed(text))
    return right / len(expected)


def _squashed(text: str) -> str:
    return "".join(text.split())
