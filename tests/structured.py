"""A structured-document set made from real text, with the truth of each page's structure.

Each page is laid out the way reports are: a title, section headers and
subsections (22, 15 and 12.5 point bold against a 10.5 point body),
paragraphs, a bulleted list, a two-column section, a bordered and a
borderless table, a drawn chart with words inside it and its caption, and a
running header and footer with the page's number.  Three pages are laid out
where a reader's order is not the order of the lines across the page: a
sidebar beside the text, a table beside a paragraph, a caption beside its
figure.

The words are real: paragraphs and section names of the GNU GPL version 3
that Debian ships (``/usr/share/common-licenses/GPL-3``), the tables' figures
counted from the licence texts beside it, MIME types named by the
shared-mime-info specification.  The pages are drawn with fpdf2 as a
born-digital PDF (Helvetica, not embedded), so the truth is what was placed
and where, not what some reader made of it.  ``scan`` draws a page as a
scanner would (``tests/scans.py``: 200 dpi, grey, a JPEG in an image-only
PDF).  Everything is seeded: the same set on every run.

The truth of a page (``Truth``): its body in reading order, one block a
paragraph, heading, list item, caption or table (a table's rows, its cells
apart by a space); its headings with their levels; its tables' cells; its
running header and footer; the words drawn inside its figures.  The body
holds no running header or footer and no figure's words.
"""

from __future__ import annotations

import datetime
import io
import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import pypdfium2 as pdfium
from fpdf import FPDF

from documents.structure import CAPTION, LIST_ITEM, SECTION_HEADER, TABLE, TEXT, TITLE
from tests.scans import SCAN_DPI, image_only_pdf, scan_page

LICENCES = Path("/usr/share/common-licenses")
GPL = LICENCES / "GPL-3"

PAGE_WIDTH, PAGE_HEIGHT = 612.0, 792.0  # US Letter, in points
MARGIN = 72.0
TEXT_WIDTH = PAGE_WIDTH - 2 * MARGIN
#: Type sizes in points: the title, a section, a subsection, the body, a sidebar's, the running header's.
TITLE_SIZE, SECTION_SIZE, SUBSECTION_SIZE, BODY_SIZE, SMALL_SIZE, RUNNING_SIZE = 22.0, 15.0, 12.5, 10.5, 9.0, 9.0
LEADING = 1.35  # line height over type size
#: Between the text and what stands beside it (a sidebar, a table): as narrow as a column gap may be.
SIDEBAR_GAP = 16.0
BESIDE_TEXT_TABLE_WIDTHS = (100.0, 60.0, 60.0)
RUNNING_HEADER = "Notes on Free Software Licences"
SEED = 32

TITLE_LEVEL, SECTION_LEVEL, SUBSECTION_LEVEL = 1, 2, 3


@dataclass(frozen=True)
class TableTruth:
    caption: str
    bordered: bool
    cells: tuple[tuple[str, ...], ...]  # rows of cells; the first row is the header

    @property
    def rows(self) -> int:
        return len(self.cells)

    @property
    def cols(self) -> int:
        return len(self.cells[0])

    def text(self) -> str:
        return "\n".join(" ".join(row) for row in self.cells)


@dataclass
class Truth:
    """What a reader of page ``number`` sees, and in what order."""

    name: str
    number: int
    blocks: list[tuple[str, str]] = field(default_factory=list)  # (type, text) of the body, in reading order
    headings: list[tuple[int, str]] = field(default_factory=list)  # (level, text) in reading order
    tables: list[TableTruth] = field(default_factory=list)
    header: str = RUNNING_HEADER
    footer: str = ""
    figure_words: list[str] = field(default_factory=list)

    @property
    def body(self) -> list[str]:
        return [text for _, text in self.blocks]

    def body_text(self) -> str:
        return "\n\n".join(self.body)

    def markdown(self) -> str:
        """The page as a person would write it in Markdown: what a perfect reading of it gives."""
        out = [f"<!-- page {self.number} -->"]
        tables = iter(self.tables)
        levels = dict((text, level) for level, text in self.headings)
        for kind, text in self.blocks:
            if kind in (TITLE, SECTION_HEADER):
                out.append("#" * levels[text] + " " + text)
            elif kind == LIST_ITEM:
                out.append(f"- {text}")
            elif kind == TABLE:
                cells = next(tables).cells
                rule = "|" + "---|" * len(cells[0])
                out.append(
                    "\n".join(
                        ["| " + " | ".join(cells[0]) + " |", rule, *("| " + " | ".join(r) + " |" for r in cells[1:])]
                    )
                )
            else:
                out.append(text)
        return "\n\n".join(out) + "\n"


@dataclass(frozen=True)
class StructuredSet:
    pdf: bytes  # the born-digital document, every page
    pages: tuple[Truth, ...]

    def page_pdf(self, index: int) -> bytes:
        """Page ``index`` (0-based) alone, as the born-digital PDF it is in the document."""
        return single_page(self.pdf, index)

    def scan(self, index: int, dpi: int = SCAN_DPI) -> bytes:
        """Page ``index`` scanned: drawn at ``dpi`` in grey, a JPEG in an image-only PDF."""
        return scanned(self.pdf, [index], dpi)

    def scans(self, dpi: int = SCAN_DPI) -> bytes:
        """Every page scanned, one image-only PDF."""
        return scanned(self.pdf, range(len(self.pages)), dpi)


# -- the real text ------------------------------------------------------------------------


@dataclass(frozen=True)
class Section:
    title: str
    paragraphs: tuple[str, ...]


def _squash(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


@cache
def gpl_sections() -> tuple[Section, ...]:
    """The GPL's numbered sections: their names and their prose paragraphs (lettered clauses left out)."""
    text = GPL.read_text(encoding="utf-8")
    parts = re.split(r"^\s{2}(\d+)\. (.+?)\.\n", text, flags=re.M)
    sections = []
    for i in range(1, len(parts) - 2, 3):
        name, body = parts[i + 1], parts[i + 2]
        paragraphs = tuple(
            p
            for p in (_squash(chunk) for chunk in re.split(r"\n\s*\n", body))
            if 180 <= len(p) <= 620 and not re.match(r"[a-z0-9]\) ", p) and p.isascii() and "END OF" not in p
        )
        if paragraphs:
            sections.append(Section(name.strip(), paragraphs))
    return tuple(sections)


def sentences(rng: random.Random, count: int) -> list[str]:
    """Short whole sentences of the GPL, for list items."""
    found = [
        s
        for section in gpl_sections()
        for p in section.paragraphs
        for s in re.split(r"(?<=\.) ", p)
        if 50 <= len(s) <= 110 and s[0].isupper()
    ]
    return rng.sample(found, count)


def licence_counts() -> list[tuple[str, int, int, int]]:
    """Real figures of the licence texts on this machine: (name, lines, words, paragraphs)."""
    rows = []
    for name in ("Apache-2.0", "GPL-3", "LGPL-3", "MPL-2.0"):
        text = (LICENCES / name).read_text(encoding="utf-8")
        paragraphs = len([p for p in re.split(r"\n\s*\n", text) if p.strip()])
        rows.append((name, len(text.splitlines()), len(text.split()), paragraphs))
    return rows


#: MIME types the shared-mime-info specification names, with their usual extension and description.
MIME_TYPES = (
    ("text/plain", "txt", "plain text document"),
    ("image/png", "png", "PNG image"),
    ("application/pdf", "pdf", "PDF document"),
    ("text/html", "html", "HTML document"),
)


# -- drawing ------------------------------------------------------------------------------


class Page:
    """One page being drawn, and its truth being written beside it."""

    def __init__(self, document: FPDF, truth: Truth, total: int):
        self.document, self.truth = document, truth
        document.add_page(format=(PAGE_WIDTH, PAGE_HEIGHT))
        truth.footer = f"Page {truth.number} of {total}"
        document.set_font("helvetica", "", RUNNING_SIZE)
        document.set_xy(MARGIN, 34)
        document.cell(TEXT_WIDTH, RUNNING_SIZE * LEADING, truth.header)
        document.set_line_width(0.5)
        document.line(MARGIN, 48, PAGE_WIDTH - MARGIN, 48)
        document.set_xy(MARGIN, PAGE_HEIGHT - 44)
        document.cell(TEXT_WIDTH, RUNNING_SIZE * LEADING, truth.footer, align="C")
        self.y = 76.0

    def text(
        self,
        text: str,
        *,
        size: float = BODY_SIZE,
        style: str = "",
        x: float = MARGIN,
        width: float = TEXT_WIDTH,
        y: float | None = None,
        after: float = 8.0,
        kind: str = TEXT,
    ) -> float:
        """Draws ``text`` wrapped in ``width``; answers the height it took."""
        top = self.y if y is None else y
        self.document.set_font("helvetica", style, size)
        self.document.set_xy(x, top)
        self.document.multi_cell(width, size * LEADING, text, align="L")
        height = self.document.get_y() - top
        if y is None:
            self.y = top + height + after
        self.truth.blocks.append((kind, text))
        return height + after

    def heading(self, text: str, level: int, **where: float) -> float:
        size = {TITLE_LEVEL: TITLE_SIZE, SECTION_LEVEL: SECTION_SIZE, SUBSECTION_LEVEL: SUBSECTION_SIZE}[level]
        self.truth.headings.append((level, text))
        kind = TITLE if level == TITLE_LEVEL else SECTION_HEADER
        return self.text(text, size=size, style="B", after=6.0 if level > 1 else 10.0, kind=kind, **where)

    def bullets(self, items: Sequence[str]) -> None:
        for item in items:
            # A drawn square, not a glyph: Helvetica's Latin-1 has no bullet.
            self.document.set_fill_color(0, 0, 0)
            self.document.rect(MARGIN + 7, self.y + BODY_SIZE * LEADING / 2 - 1.8, 3.6, 3.6, style="F")
            self.text(item, x=MARGIN + 18, width=TEXT_WIDTH - 18, after=3.0, kind=LIST_ITEM)
        self.y += 5

    def table(
        self,
        truth: TableTruth,
        *,
        x: float = MARGIN,
        widths: Sequence[float],
        y: float | None = None,
        row_height: float = BODY_SIZE * LEADING + 6,
    ) -> float:
        """Draws a table: every cell ruled when ``bordered``, else three rules (top, under the header, bottom)."""
        top = self.y if y is None else y
        document = self.document
        numeric = [all(row[c].replace(",", "").isdigit() for row in truth.cells[1:]) for c in range(truth.cols)]
        for r, row in enumerate(truth.cells):
            document.set_font("helvetica", "B" if r == 0 else "", BODY_SIZE)
            left = x
            for c, (cell, width) in enumerate(zip(row, widths, strict=True)):
                document.set_xy(left, top + r * row_height)
                align = "R" if numeric[c] else "L"
                document.cell(width, row_height, cell, border=1 if truth.bordered else 0, align=align)
                left += width
        bottom = top + len(truth.cells) * row_height
        if not truth.bordered:
            right = x + sum(widths)
            document.set_line_width(0.8)
            document.line(x, top, right, top)
            document.line(x, bottom, right, bottom)
            document.set_line_width(0.4)
            document.line(x, top + row_height, right, top + row_height)
        self.truth.tables.append(truth)
        self.truth.blocks.append((TABLE, truth.text()))
        if y is None:
            self.y = bottom + 12
        return bottom - top + 12

    def bar_chart(self, bars: Sequence[tuple[str, int]], title: str, *, x: float, y: float, w: float, h: float) -> None:
        """A framed bar chart: its title, a bar per value, each labelled under it and its value over it."""
        document = self.document
        document.set_line_width(0.6)
        document.rect(x, y, w, h)
        document.set_font("helvetica", "B", 9)
        document.set_xy(x, y + 6)
        document.cell(w, 12, title, align="C")
        base, top = y + h - 22, y + 30
        peak = max(v for _, v in bars)
        slot = (w - 20) / len(bars)
        document.set_font("helvetica", "", 8)
        for i, (label, value) in enumerate(bars):
            left = x + 10 + i * slot + slot * 0.2
            bar_height = (base - top - 12) * value / peak
            document.set_fill_color(150, 150, 150)
            document.rect(left, base - bar_height, slot * 0.6, bar_height, style="F")
            document.set_xy(left - slot * 0.2, base + 3)
            document.cell(slot, 10, label, align="C")
            document.set_xy(left - slot * 0.2, base - bar_height - 12)
            document.cell(slot, 10, f"{value:,}", align="C")
        self.truth.figure_words += title.split() + [label for label, _ in bars] + [f"{v:,}" for _, v in bars]


# -- the pages ------------------------------------------------------------------------------


class Material:
    """The real text handed out to the pages: sections in a seeded order, each paragraph at most once."""

    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        self.sections = list(gpl_sections())
        self.rng.shuffle(self.sections)
        self.used: set[str] = set()
        self.titles: list[str] = [s.title for s in self.sections]
        self.turn = 0

    def title(self, wanted: str = "") -> str:
        """A section name no heading has had yet: ``wanted`` when it is still free."""
        name = wanted if wanted in self.titles else self.titles[0]
        self.titles.remove(name)
        return name

    def section(self) -> Section:
        section = self.sections[self.turn % len(self.sections)]
        self.turn += 1
        return section

    def paragraphs(self, count: int, longest: int = 620) -> tuple[str, list[str]]:
        """A section's name and ``count`` of its paragraphs (from the next sections when it runs short)."""
        name, out = "", list[str]()
        for _ in range(4 * len(self.sections)):
            section = self.section()
            fresh = [p for p in section.paragraphs if len(p) <= longest and p not in self.used][: count - len(out)]
            if not fresh:
                continue
            name = name or section.title
            self.used.update(fresh)
            out += fresh
            if len(out) == count:
                return self.title(name), out
        raise ValueError(f"the GPL has not {count} more paragraphs of at most {longest} characters")


def report_page(page: Page, material: Material) -> None:
    name, paragraphs = material.paragraphs(2, longest=420)
    page.heading("GNU General Public License", TITLE_LEVEL)
    page.text(paragraphs[0])
    page.heading(name, SECTION_LEVEL)
    page.text(paragraphs[1])
    name, paragraphs = material.paragraphs(2, longest=420)
    page.heading(name, SUBSECTION_LEVEL)
    page.text(paragraphs[0])
    page.bullets(sentences(material.rng, 3))
    page.heading(material.title(), SUBSECTION_LEVEL)
    page.text(paragraphs[1])


def two_column_page(page: Page, material: Material) -> None:
    name, (intro,) = material.paragraphs(1, longest=360)
    page.heading(name, SECTION_LEVEL)
    page.text(intro)
    gap = 24.0
    width = (TEXT_WIDTH - gap) / 2
    top, bottoms = page.y, []
    for column in range(2):
        name, paragraphs = material.paragraphs(2, longest=380)
        x, y = MARGIN + column * (width + gap), top
        y += page.heading(name, SUBSECTION_LEVEL, x=x, width=width, y=y)
        for paragraph in paragraphs:
            y += page.text(paragraph, x=x, width=width, y=y)
        bottoms.append(y)
    page.y = max(bottoms) + 6
    name, (closing,) = material.paragraphs(1, longest=360)
    page.heading(name, SECTION_LEVEL)
    page.text(closing)


def tables_page(page: Page, material: Material) -> None:
    name, paragraphs = material.paragraphs(3, longest=330)
    page.heading(name, SECTION_LEVEL)
    page.text(paragraphs[0])
    counts = licence_counts()
    bordered = TableTruth(
        "Table 1. The licence texts Debian ships, counted.",
        True,
        (("Licence", "Lines", "Words", "Paragraphs"), *((n, f"{a:,}", f"{b:,}", f"{c:,}") for n, a, b, c in counts)),
    )
    page.text(bordered.caption, style="I", kind=CAPTION)
    page.table(bordered, x=MARGIN + 44, widths=(120, 70, 70, 100))
    page.text(paragraphs[1])
    borderless = TableTruth(
        "Table 2. Some MIME types and their usual extensions.",
        False,
        (("MIME type", "Extension", "Description"), *MIME_TYPES),
    )
    page.text(borderless.caption, style="I", kind=CAPTION)
    page.table(borderless, x=MARGIN + 44, widths=(140, 80, 160))
    page.text(paragraphs[2])


def figure_page(page: Page, material: Material) -> None:
    name, paragraphs = material.paragraphs(3, longest=420)
    page.heading(name, SECTION_LEVEL)
    page.text(paragraphs[0])
    x, w, h = MARGIN + 84, 300.0, 170.0
    page.bar_chart([(n, words) for n, _, words, _ in licence_counts()], "Words per licence", x=x, y=page.y, w=w, h=h)
    page.y += h + 8
    page.text("Figure 1. How long each licence text is, in words.", style="I", kind=CAPTION, x=x, width=w)
    page.text(paragraphs[1])
    page.heading(material.title(), SUBSECTION_LEVEL)
    page.text(paragraphs[2])


def glance_facts() -> list[str]:
    """Short facts of the GPL, read from its text: what a sidebar's box holds."""
    text = GPL.read_text(encoding="utf-8")
    version = re.search(r"Version (\d+), (\d+ \w+ \d+)", text)
    assert version is not None, "the GPL names its version and date"
    return [
        f"Version {version.group(1)}",
        f"Dated {version.group(2)}",
        f"{len(gpl_sections())} sections of prose",
        f"{len(text.splitlines()):,} lines",
        f"{len(text.split()):,} words",
        "Free Software Foundation",
    ]


def sidebar_page(page: Page, material: Material) -> None:
    """A column of short facts at the left of the text, its lines as far apart as the text's: read across
    the page, each fact runs on into a line of the text.  Read column by column, the facts come first."""
    name, paragraphs = material.paragraphs(2, longest=520)
    page.heading(name, SECTION_LEVEL)
    side_width = 120.0
    main_x = MARGIN + side_width + SIDEBAR_GAP
    main_width = PAGE_WIDTH - MARGIN - main_x
    top = page.y
    facts = glance_facts()
    line = BODY_SIZE * LEADING
    page.heading("At a glance", SUBSECTION_LEVEL, x=MARGIN, width=side_width, y=top - 2)
    page.document.set_font("helvetica", "", BODY_SIZE)
    for i, fact in enumerate(facts, start=1):
        page.document.set_xy(MARGIN, top + i * line)
        page.document.cell(side_width, line, fact)
    page.truth.blocks.append((TEXT, " ".join(facts)))
    y = top
    for paragraph in paragraphs:
        y += page.text(paragraph, x=main_x, width=main_width, y=y, after=line)
    page.y = max(y, top + (len(facts) + 2) * line) + 6
    name, (closing,) = material.paragraphs(1, longest=360)
    page.text(closing)


def table_beside_text_page(page: Page, material: Material) -> None:
    """A borderless table beside a paragraph, its rows as far apart as the paragraph's lines: read across
    the page, each row runs on into a line of the paragraph."""
    name, paragraphs = material.paragraphs(3, longest=420)
    page.heading(name, SECTION_LEVEL)
    page.text(paragraphs[0])
    table = TableTruth(
        "Table 3. Lines of each licence.",
        False,
        (("Licence", "Lines", "Words"), *((n, f"{a:,}", f"{b:,}") for n, a, b, _ in licence_counts())),
    )
    top = page.y
    height = page.text(table.caption, style="I", kind=CAPTION, width=200, y=top, after=0)
    widths = BESIDE_TEXT_TABLE_WIDTHS
    height += page.table(table, widths=widths, y=top + height, row_height=BODY_SIZE * LEADING)
    left = MARGIN + sum(widths) + SIDEBAR_GAP
    page.text(paragraphs[1], x=left, width=PAGE_WIDTH - MARGIN - left, y=top)
    page.y = top + max(height, 150)
    page.text(paragraphs[2])


def caption_beside_figure_page(page: Page, material: Material) -> None:
    name, paragraphs = material.paragraphs(2, longest=420)
    page.heading(name, SECTION_LEVEL)
    page.text(paragraphs[0])
    top, w, h = page.y, 250.0, 150.0
    page.bar_chart(
        [(n, paras) for n, _, _, paras in licence_counts()], "Paragraphs per licence", x=MARGIN, y=top, w=w, h=h
    )
    page.text(
        "Figure 2. How many paragraphs each licence text has: the Apache licence's are long, the GPL's many.",
        style="I",
        kind=CAPTION,
        x=MARGIN + w + 20,
        width=TEXT_WIDTH - w - 20,
        y=top + h - 60,
    )
    page.y = top + h + 14
    page.text(paragraphs[1])


LAYOUTS: tuple[tuple[str, Callable[[Page, Material], None]], ...] = (
    ("report", report_page),
    ("two_columns", two_column_page),
    ("tables", tables_page),
    ("figure", figure_page),
    ("sidebar", sidebar_page),
    ("table_beside_text", table_beside_text_page),
    ("caption_beside_figure", caption_beside_figure_page),
)


FIXED_DATE = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)


@cache
def structured_set(seed: int = SEED) -> StructuredSet:
    """The set's pages drawn as one born-digital PDF, and their truth."""
    document = FPDF(unit="pt")
    document.set_creation_date(FIXED_DATE)  # else two builds a second apart differ in their dates
    document.set_auto_page_break(False)
    document.set_margins(MARGIN, MARGIN)
    material = Material(seed)
    pages = []
    for number, (name, draw) in enumerate(LAYOUTS, start=1):
        truth = Truth(name, number)
        draw(Page(document, truth, len(LAYOUTS)), material)
        pages.append(truth)
    return StructuredSet(bytes(document.output()), tuple(pages))


# -- one page, scanned or alone -----------------------------------------------------------


def single_page(pdf: bytes, index: int) -> bytes:
    source = pdfium.PdfDocument(pdf)
    target = pdfium.PdfDocument.new()
    try:
        target.import_pages(source, [index])
        buffer = io.BytesIO()
        target.save(buffer)
        return buffer.getvalue()
    finally:
        target.close()
        source.close()


def scanned(pdf: bytes, indices: Sequence[int] | range, dpi: int = SCAN_DPI) -> bytes:
    source = pdfium.PdfDocument(pdf)
    try:
        return image_only_pdf([scan_page(source, index, dpi=dpi) for index in indices], dpi)
    finally:
        source.close()
