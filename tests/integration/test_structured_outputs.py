"""A scanned two-column report with tables, through ``ocrgw ocr --markdown``, and its hOCR and ALTO with blocks.

The real stack of this module's own (gunicorn gateway, Celery worker with
Tesseract and the layout and table models, coordinator, beat, Redis) reads
two pages of the structured-document set (``tests/structured.py``): the
two-column page and the page of a bordered and a borderless table, scanned
at 200 dpi into an image-only PDF.  The command runs as a process, as a user
runs it: a searchable PDF to OUTPUT and the Markdown to FILE.

The Markdown is read as a person would: its headings at their levels, the
body's paragraphs in the truth's reading order, the tables as GitHub tables
whose cells are in their rows and columns, and no running header or page
number.  Then the same job's hOCR and ALTO are held to its JSON: every block
an element of its kind, in reading order, holding exactly the block's lines
and their words.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from typing import Any

import pytest

from tests.harness import Stack
from tests.integration.fanout_support import Gateway
from tests.integration.test_cli import ocrgw
from tests.structured import RUNNING_HEADER, StructuredSet, TableTruth, scanned, structured_set
from tests.unit.documents.markup_support import ALTO, alto_pages, hocr_pages, hocr_properties, of_class

pytestmark = pytest.mark.integration

#: The pages of the set the report is made of, in its order.
PAGES = ("two_columns", "tables")
#: How many of a table's cells the Markdown must hold in their row and column (the issue's targets).
BORDERED_CELL_ACCURACY, BORDERLESS_CELL_ACCURACY = 0.9, 0.8
#: How many words of a paragraph find it in the Markdown.
SNIPPET_WORDS = 5
HOCR_ELEMENTS = {"page_header": "ocr_header", "page_footer": "ocr_footer", "table": "ocr_table",
                 "figure": "ocr_float"}  # fmt: skip


def plain(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


@pytest.fixture(scope="module")
def deployment(stack_factory) -> Stack:
    return stack_factory(concurrency=2)


@pytest.fixture(scope="module")
def the_set() -> StructuredSet:
    return structured_set()


@pytest.fixture(scope="module")
def report(deployment: Stack, the_set: StructuredSet, tmp_path_factory) -> dict[str, Any]:
    """``ocrgw ocr scan.pdf out.pdf --markdown out.md`` run once: the job's id, the files it wrote."""
    names = [truth.name for truth in the_set.pages]
    folder = tmp_path_factory.mktemp("report")
    scan, out, markdown = folder / "scan.pdf", folder / "out.pdf", folder / "out.md"
    scan.write_bytes(scanned(the_set.pdf, [names.index(name) for name in PAGES]))

    done = ocrgw(deployment.web().base_url, "ocr", str(scan), str(out), "--markdown", str(markdown), "-j", "2")

    assert done.returncode == 0, done.stderr
    found = re.search(r"job (\S+)", done.stderr)
    assert found is not None, done.stderr
    return {"id": found.group(1), "pdf": out.read_bytes(), "markdown": markdown.read_text(encoding="utf-8")}


@pytest.fixture(scope="module")
def gateway(deployment: Stack):
    with Gateway(deployment.web().base_url) as client:
        yield client


def fetch(gateway: Gateway, path: str):
    response = gateway.http.get(f"{gateway.base_url}{path}", timeout=gateway.timeout)
    assert response.status_code == 200, f"GET {path}: {response.status_code} {response.text[:300]}"
    return response


def markdown_tables(markdown: str) -> list[list[list[str]]]:
    """The GitHub tables of the Markdown, each its rows of cells (the rule under the header left out)."""
    tables, rows = [], []
    for line in [*markdown.splitlines(), ""]:
        if line.startswith("|"):
            cells = [cell.strip().replace("\\|", "|") for cell in re.split(r"(?<!\\)\|", line)[1:-1]]
            if not all(re.fullmatch(r"-+", cell) for cell in cells):
                rows.append(cells)
        elif rows:
            tables.append(rows)
            rows = []
    return tables


def cell_accuracy(rows: list[list[str]], truth: TableTruth) -> float:
    right = sum(
        r < len(rows) and c < len(rows[r]) and plain(rows[r][c]) == plain(text)
        for r, row in enumerate(truth.cells)
        for c, text in enumerate(row)
    )
    return right / (truth.rows * truth.cols)


# -- the Markdown -----------------------------------------------------------------------------------------------


def test_the_markdown_file_is_the_jobs_markdown_and_the_pdf_is_written(report, gateway):
    assert report["markdown"] == fetch(gateway, f"/jobs/{report['id']}/result.md").text
    assert report["pdf"].startswith(b"%PDF-")
    assert [int(n) for n in re.findall(r"<!-- page (\d+) -->", report["markdown"])] == [1, 2]


def test_the_markdown_has_the_headings_at_their_levels(report, the_set):
    truths = [next(t for t in the_set.pages if t.name == name) for name in PAGES]

    headings = [(len(marks), plain(text)) for marks, text in re.findall(r"(?m)^(#{1,3}) (.+)$", report["markdown"])]

    assert headings == [(level, plain(text)) for truth in truths for level, text in truth.headings]


def test_the_paragraphs_follow_the_columns_in_reading_order(report, the_set):
    truth = next(t for t in the_set.pages if t.name == "two_columns")
    text = plain(report["markdown"])

    places = [text.find(" ".join(plain(paragraph).split()[:SNIPPET_WORDS])) for kind, paragraph in truth.blocks
              if kind == "text"]  # fmt: skip

    assert all(place >= 0 for place in places), places
    assert places == sorted(places)


def test_the_tables_are_tables_with_their_cells_in_their_rows_and_columns(report, the_set):
    bordered, borderless = next(t for t in the_set.pages if t.name == "tables").tables

    tables = markdown_tables(report["markdown"])

    assert len(tables) == 2, tables
    assert cell_accuracy(tables[0], bordered) >= BORDERED_CELL_ACCURACY, tables[0]
    assert cell_accuracy(tables[1], borderless) >= BORDERLESS_CELL_ACCURACY, tables[1]
    captions = [plain(text) for text in re.findall(r"(?m)^\*(.+)\*$", report["markdown"])]
    assert [plain(bordered.caption), plain(borderless.caption)] == captions


def test_no_running_header_or_page_number_is_in_the_markdown(report):
    assert plain(RUNNING_HEADER) not in plain(report["markdown"])
    assert not re.search(r"(?i)page \d+ of \d+", report["markdown"])


# -- hOCR and ALTO against the JSON -----------------------------------------------------------------------------


def words_in_reading_order(page: dict[str, Any]) -> list[str]:
    lines = page["lines"]
    return [w["text"] for b in page["blocks"] for i in b["lines"] for w in lines[i].get("words") or [lines[i]]]


def alto_element(block: dict[str, Any]) -> str:
    if block["type"] == "table" or (block["type"] == "figure" and block["lines"]):
        return "ComposedBlock"
    return "Illustration" if block["type"] == "figure" else "TextBlock"


def line_number(element: ET.Element) -> int:
    return int((element.get("id") or element.get("ID") or "").rsplit("_", 1)[1]) - 1


def test_the_hocr_has_each_block_in_reading_order_holding_exactly_its_lines(report, gateway):
    result = fetch(gateway, f"/jobs/{report['id']}/result").json()
    pages = hocr_pages(fetch(gateway, f"/jobs/{report['id']}/result.hocr").text)

    assert len(pages) == len(result["pages"])
    for index, (element, page) in enumerate(zip(pages, result["pages"], strict=True), start=1):
        assert page["blocks"], f"page {index} has no blocks"
        blocks = [e for e in element if e.get("id", "").startswith("block_")]
        assert len(blocks) == len(page["blocks"])
        for drawn, block in zip(blocks, page["blocks"], strict=True):
            assert drawn.get("id") == f"block_{index}_{block['order'] + 1}"
            assert drawn.get("class") == HOCR_ELEMENTS.get(block["type"], "ocr_carea")
            assert hocr_properties(drawn)["x_block"] == [block["type"]]
            assert [line_number(line) for line in of_class(drawn, "ocr_line")] == block["lines"]
        words = ["".join(w.itertext()) for w in of_class(element, "ocrx_word")]
        assert words == words_in_reading_order(page)


def test_the_alto_has_each_block_tagged_in_reading_order_holding_exactly_its_lines(report, gateway):
    result = fetch(gateway, f"/jobs/{report['id']}/result").json()
    document = fetch(gateway, f"/jobs/{report['id']}/result.alto").text
    tags = {t.get("ID"): t.get("LABEL") for t in ET.fromstring(document).iter(f"{ALTO}LayoutTag")}

    for index, (element, page) in enumerate(zip(alto_pages(document), result["pages"], strict=True), start=1):
        (space,) = element.findall(f"{ALTO}PrintSpace")
        assert len(space) == len(page["blocks"])
        for drawn, block in zip(space, page["blocks"], strict=True):
            assert drawn.get("ID") == f"block_{index}_{block['order'] + 1}"
            assert drawn.tag == ALTO + alto_element(block)
            assert tags[drawn.get("TAGREFS")] == block["type"]
            assert [line_number(line) for line in drawn.iter(f"{ALTO}TextLine")] == block["lines"]
        strings = [s.get("CONTENT") for s in space.iter(f"{ALTO}String")]
        assert strings == words_in_reading_order(page)
