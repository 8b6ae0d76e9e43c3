"""Documents as data end to end: layout, reading order, tables, Markdown, with real processes and engines.

A real gunicorn gateway, Celery worker (Tesseract, and the layout and table
models on ONNX Runtime in its pool processes), coordinator, beat and Redis.
The pages are the structured-document set (``tests/structured.py``): pages
of real text drawn as reports are, with a title and headings at two levels,
two columns, a bordered and a borderless table, a chart with its caption,
and a running header and footer; scanned at 200 dpi as a JPEG in an
image-only PDF, or sent as the born-digital PDF itself.

Text is compared as a reader would: lower case, only letters and digits, the
words apart by one space, so that a line break, a joined hyphen or a comma
read as a full stop does not count.  A block of the truth is found in a page's
text by its first words (its last ones when OCR slipped at its start).
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from tests.harness import Stack
from tests.integration.fanout_support import Gateway
from tests.integration.live import OCR_TIMEOUT, assert_problem, b64, ocrgw_keyspace
from tests.integration.polling import wait_for_job
from tests.structured import RUNNING_HEADER, StructuredSet, Truth, scanned, structured_set

pytestmark = pytest.mark.integration

#: The pages of the set scanned for these tests, by name, in the order of the scanned document.
SCANNED = ("report", "two_columns", "tables", "figure", "sidebar", "table_beside_text")
#: Those of them that Tesseract's own page layout reads across: a sidebar beside the text, a table beside it.
ACROSS = ("sidebar", "table_beside_text")
#: How many of a table's cells must be read into their row and column.
BORDERED_CELL_ACCURACY, BORDERLESS_CELL_ACCURACY = 0.9, 0.8
#: The F1 of the headings found (their page, level and text) against the truth's, born-digital.
HEADING_F1 = 0.9
#: How many letters and digits of a block find it in a page's text read by PP-OCRv4.
SQUASHED_CHARS = 25
#: How many words of a block find it in a page's text.
SNIPPET_WORDS = 5


def plain(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


def where(text: str, block: str) -> int:
    """Where ``block`` starts in ``text`` (both plain), by its first words or, failing those, its last ones
    (the start less their length); -1 when neither is there."""
    words = block.split()
    for snippet, back in ((words[:SNIPPET_WORDS], 0), (words[-SNIPPET_WORDS:], len(block) - 1)):
        at = text.find(" ".join(snippet))
        if at >= 0:
            return max(at - back, 0)
    return -1


def read_in_order(text: str, blocks: list[str]) -> list[int]:
    """The place of each block in ``text``; in reading order when they are found and ascending."""
    return [where(plain(text), plain(block)) for block in blocks]


def by_name(truths: tuple[Truth, ...], name: str) -> Truth:
    return next(truth for truth in truths if truth.name == name)


def accepted(response) -> str:
    assert response.status_code == 202, f"{response.status_code}: {response.text}"
    return response.json()["id"]


def fetch(gateway: Gateway, path: str) -> Any:
    response = gateway.http.get(f"{gateway.base_url}{path}", timeout=gateway.timeout)
    assert response.status_code == 200, f"GET {path}: {response.status_code} {response.text[:300]}"
    return response


# -- the stack, and the documents read once for the module's tests ------------------------------------


@pytest.fixture(scope="module")
def deployment(stack_factory) -> Stack:
    """A stack of this module's own: its tests read the results of jobs its fixtures submitted once."""
    return stack_factory(concurrency=2)


@pytest.fixture(scope="module")
def module_gateway(deployment: Stack) -> Iterator[Gateway]:
    with Gateway(deployment.web().base_url) as client:
        yield client


@pytest.fixture(scope="module")
def the_set() -> StructuredSet:
    return structured_set()


@pytest.fixture(scope="module")
def scanned_group(module_gateway: Gateway, the_set: StructuredSet) -> Mapping[str, Any]:
    """The scanned pages, laid out by Tesseract's worker: a group of one page a child, read in parallel."""
    indices = [[truth.name for truth in the_set.pages].index(name) for name in SCANNED]
    document = scanned(the_set.pdf, indices)
    job = accepted(
        module_gateway.post_json(
            {
                "model": "tesseract",
                "content_type": "application/pdf",
                "payload": b64(document),
                "options": {"layout": True},
                "split_pages": 1,
                "max_parallel": 2,
            }
        )
    )
    view = wait_for_job(module_gateway.job, job, timeout=4 * OCR_TIMEOUT)
    assert view["status"] == "completed", view
    return view


def scanned_page(group: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    return group["result"]["pages"][SCANNED.index(name)]


# -- reading order ----------------------------------------------------------------------------------


def test_a_two_column_page_is_read_column_by_column(scanned_group, the_set):
    # Given the scan of a page with a full-width section, two columns of two paragraphs, and a closing section
    truth = by_name(the_set.pages, "two_columns")
    page = scanned_page(scanned_group, "two_columns")

    # Then its text reads every block of the truth, in the truth's order: down the first column, then the second
    places = read_in_order(page["text"], truth.body)
    assert -1 not in places, (places, page["text"][:2000])
    assert places == sorted(places), (places, page["text"][:2000])
    # And its blocks are numbered in that order, every line in exactly one of them
    assert [block["order"] for block in page["blocks"]] == list(range(len(page["blocks"])))
    owned = sorted(line for block in page["blocks"] for line in block["lines"])
    assert owned == list(range(len(page["lines"])))
    # And the lines of the page come block by block
    assert [line for block in page["blocks"] for line in block["lines"]] == list(range(len(page["lines"])))


def test_a_sidebar_and_a_table_beside_text_are_read_in_order_where_tesseracts_own_layout_is_not(
    scanned_group, the_set, module_gateway
):
    # Given the same pages read without layout: Tesseract's own page layout (PSM 3) reads across them
    indices = [[truth.name for truth in the_set.pages].index(name) for name in ACROSS]
    plain_job = accepted(
        module_gateway.post_json(
            {"model": "tesseract", "content_type": "application/pdf", "payload": b64(scanned(the_set.pdf, indices))}
        )
    )
    tesseract = wait_for_job(module_gateway.job, plain_job, timeout=OCR_TIMEOUT)
    assert tesseract["status"] == "completed", tesseract

    for name, tesseract_page in zip(ACROSS, tesseract["result"]["pages"], strict=True):
        truth = by_name(the_set.pages, name)
        own = read_in_order(tesseract_page["text"], truth.body)
        assert -1 in own or own != sorted(own), (name, own)
        # Then with layout every block of the page is read, in the truth's order
        places = read_in_order(scanned_page(scanned_group, name)["text"], truth.body)
        assert -1 not in places and places == sorted(places), (name, places)


def test_running_headers_and_footers_are_blocks_outside_the_body(scanned_group, the_set):
    for name in SCANNED:
        truth = by_name(the_set.pages, name)
        page = scanned_page(scanned_group, name)
        kinds = {block["type"]: block for block in page["blocks"]}

        assert plain(RUNNING_HEADER) not in plain(page["text"]), name
        assert not re.search(rf"\bpage {truth.number} of\b", plain(page["text"])), (name, page["text"][-300:])
        assert plain(kinds["page_header"]["text"]) == plain(RUNNING_HEADER), name
        assert plain(kinds["page_footer"]["text"]) == plain(truth.footer), name
    # And the merged text of the group holds none of them either
    assert plain(RUNNING_HEADER) not in plain(scanned_group["result"]["text"])


def test_a_figures_words_stay_on_the_figure_and_out_of_the_body(scanned_group, the_set):
    truth = by_name(the_set.pages, "figure")
    page = scanned_page(scanned_group, "figure")
    (figure,) = [block for block in page["blocks"] if block["type"] == "figure"]

    body_words = set(plain(page["text"]).split())
    drawn = {word for word in plain(" ".join(truth.figure_words)).split() if not word.isdigit() or len(word) > 2}
    # The chart's title, labels and values are read, and kept on the figure block in the JSON
    assert len(drawn & set(plain(figure["text"]).split())) >= 0.8 * len(drawn), figure["text"]
    # The chart's own words (its numbers: the labels are licence names the body also says) are not in the body
    numbers = {word for word in drawn if any(ch.isdigit() for ch in word)}
    assert not numbers & body_words, numbers & body_words
    # Its caption is a caption, attached to the figure, and part of the body
    (caption,) = [block for block in page["blocks"] if block["type"] == "caption"]
    assert caption["caption_of"] == figure["order"] and figure["caption"] == caption["order"]
    assert plain("Figure 1. How long each licence text is") in plain(page["text"])


# -- tables ----------------------------------------------------------------------------------------


def cell_accuracy(cells: list[dict[str, Any]], truth: tuple[tuple[str, ...], ...]) -> float:
    """The share of the truth's cells whose text was read into their row and column."""
    read = {(cell["row"], cell["col"]): plain(cell["text"]) for cell in cells}
    right = sum(1 for r, row in enumerate(truth) for c, text in enumerate(row) if read.get((r, c)) == plain(text))
    return right / sum(len(row) for row in truth)


def test_a_tables_cells_are_in_their_rows_and_columns_and_come_as_csv(scanned_group, the_set, module_gateway):
    truth = by_name(the_set.pages, "tables")
    page = scanned_page(scanned_group, "tables")
    tables = [block for block in page["blocks"] if block["type"] == "table"]
    bordered, borderless = truth.tables

    # Then the page has its two tables, each with the truth's rows and columns and the cells in them
    assert len(tables) == 2, [block["type"] for block in page["blocks"]]
    first, second = (block["table"] for block in tables)
    assert (first["rows"], first["cols"]) == (bordered.rows, bordered.cols)
    assert cell_accuracy(first["cells"], bordered.cells) >= BORDERED_CELL_ACCURACY, first["cells"]
    assert cell_accuracy(second["cells"], borderless.cells) >= BORDERLESS_CELL_ACCURACY, second["cells"]
    assert first["html"].startswith("<table") and "<td" in first["html"]
    # And each table's caption is attached to it
    captions = {block["order"]: block for block in page["blocks"] if block["type"] == "caption"}
    assert plain(captions[tables[0]["caption"]]["text"]) == plain(bordered.caption)
    # And the group's result lists its tables, numbered through the document
    listed = scanned_group["result"]["tables"]
    assert [(t["number"], t["page"]) for t in listed] == [(1, 3), (2, 3), (3, 6)]
    # And the first table is a CSV of its rows
    response = fetch(module_gateway, f"/jobs/{scanned_group['id']}/tables/1.csv")
    assert response.headers["Content-Type"].startswith("text/csv")
    rows = list(csv.reader(io.StringIO(response.text)))
    assert len(rows) == bordered.rows and all(len(row) == bordered.cols for row in rows)
    right = sum(plain(rows[r][c]) == plain(text) for r, row in enumerate(bordered.cells) for c, text in enumerate(row))
    assert right >= BORDERED_CELL_ACCURACY * bordered.rows * bordered.cols, rows


# -- Markdown ------------------------------------------------------------------------------------


def test_a_groups_markdown_holds_its_pages_in_order_with_their_headings(scanned_group, the_set, module_gateway):
    response = fetch(module_gateway, f"/jobs/{scanned_group['id']}/result.md")
    markdown = response.text

    assert response.headers["Content-Type"].startswith("text/markdown")
    starts = [int(n) for n in re.findall(r"<!-- page (\d+) -->", markdown)]
    assert starts == list(range(1, len(SCANNED) + 1))
    # The title is the one first-level heading, and the report's sections come after it, in order
    report = by_name(the_set.pages, "report")
    headings = [(len(hashes), plain(text)) for hashes, text in re.findall(r"(?m)^(#{1,3}) (.+)$", markdown)]
    assert headings[: len(report.headings)] == [(level, plain(text)) for level, text in report.headings]
    # No running header or page number in it
    assert plain(RUNNING_HEADER) not in plain(markdown)
    assert not re.search(r"(?i)page \d of \d", markdown)


# -- PP-OCRv4 --------------------------------------------------------------------------------------


def squashed(text: str) -> str:
    """Only the letters and digits: PP-OCRv4's recogniser drops most spaces between words."""
    return re.sub(r"[^a-z0-9]", "", text.lower())


def test_paddleocrs_pages_are_laid_out_as_tesseracts_are(module_gateway, the_set):
    # Given the two-column page and the tables page, scanned, read by PP-OCRv4 with layout
    names = [truth.name for truth in the_set.pages]
    indices = [names.index("two_columns"), names.index("tables")]
    job = accepted(
        module_gateway.post_json(
            {
                "model": "paddleocr",
                "content_type": "application/pdf",
                "payload": b64(scanned(the_set.pdf, indices)),
                "options": {"layout": True},
            }
        )
    )
    view = wait_for_job(module_gateway.job, job, timeout=OCR_TIMEOUT)
    assert view["status"] == "completed", view
    columns, tables = view["result"]["pages"]

    # Then the columns are read one after the other, every block of the truth in its order
    text = squashed(columns["text"])
    places = [text.find(squashed(block)[:SQUASHED_CHARS]) for block in by_name(the_set.pages, "two_columns").body]
    assert -1 not in places and places == sorted(places), places
    # And the bordered table's cells are in their rows and columns
    truth = by_name(the_set.pages, "tables").tables[0]
    first = next(block["table"] for block in tables["blocks"] if block["type"] == "table")
    read = {(cell["row"], cell["col"]): squashed(cell["text"]) for cell in first["cells"]}
    right = sum(read.get((r, c)) == squashed(text) for r, row in enumerate(truth.cells) for c, text in enumerate(row))
    assert right >= BORDERED_CELL_ACCURACY * truth.rows * truth.cols, first["cells"]


# -- born-digital pages -----------------------------------------------------------------------------


def test_a_born_digital_pdf_is_laid_out_from_its_text_and_fonts_without_ocr(module_gateway, the_set):
    # Given the set as the born-digital PDF it is, read preferring its text layer
    job = accepted(
        module_gateway.post_json(
            {
                "model": "tesseract",
                "content_type": "application/pdf",
                "payload": b64(the_set.pdf),
                "options": {"layout": True, "text_layer": "prefer"},
            }
        )
    )
    view = wait_for_job(module_gateway.job, job, timeout=OCR_TIMEOUT)
    assert view["status"] == "completed", view

    pages = view["result"]["pages"]
    # Then no page was OCRed, and every page has its blocks
    assert [page["source"] for page in pages] == ["text_layer"] * len(the_set.pages)
    assert all(page["blocks"] and "layout_error" not in page for page in pages)
    # And its headings, with their levels, are those its fonts say: the title 22 pt, sections 15, subsections 12.5
    found = [(page["page"], block["level"], plain(block["text"])) for page in pages for block in page["blocks"]
             if "level" in block]  # fmt: skip
    truth = [(page.number, level, plain(text)) for page in the_set.pages for level, text in page.headings]
    report = by_name(the_set.pages, "report").number
    assert [h for h in found if h[0] == report] == [h for h in truth if h[0] == report]
    right = len(set(found) & set(truth))
    assert 2 * right / (len(found) + len(truth)) >= HEADING_F1, (found, truth)
    for page, truth_page in zip(pages, the_set.pages, strict=True):
        assert plain(RUNNING_HEADER) not in plain(page["text"])
        # And its body is the truth's, in order: across columns, beside a sidebar, a table or a figure
        places = read_in_order(page["text"], truth_page.body)
        assert -1 not in places and places == sorted(places), (truth_page.name, places)


# -- refused, and failing ------------------------------------------------------------------------


def test_layout_on_echo_is_refused_at_submission_and_stores_nothing(module_gateway, deployment):
    with deployment.store_client() as db:
        before = ocrgw_keyspace(db)

        response = module_gateway.post_json(
            {"model": "echo", "content_type": "text/plain", "payload": b64("hello"), "options": {"layout": True}}
        )

        problem = assert_problem(response, 422, "invalid_options")
        assert problem["options"] == ["layout"]
        assert ocrgw_keyspace(db) == before


@pytest.fixture(scope="module")
def broken_model(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("models") / "layout.onnx"
    path.write_bytes(b"not an ONNX model" * 64)
    return path


def test_a_page_whose_layout_model_fails_keeps_its_lines_and_the_job_completes(stack_factory, the_set, broken_model):
    # Given a worker whose layout model cannot be loaded
    broken = stack_factory(env={"OCRGW_LAYOUT_MODEL": str(broken_model)}, concurrency=1)
    document = scanned(the_set.pdf, [0])

    with Gateway(broken.web().base_url) as gateway:
        job = accepted(
            gateway.post_json(
                {
                    "model": "tesseract",
                    "content_type": "application/pdf",
                    "payload": b64(document),
                    "options": {"layout": True},
                }
            )
        )
        view = wait_for_job(gateway.job, job, timeout=OCR_TIMEOUT)

    # Then the job completes, its page read as OCR read it, saying why it has no blocks
    assert view["status"] == "completed", view
    (page,) = view["result"]["pages"]
    assert "blocks" not in page
    assert page["layout_error"]
    assert page["lines"] and plain(RUNNING_HEADER) in plain(page["text"])
    assert plain(the_set.pages[0].headings[0][1]) in plain(page["text"])


def test_a_table_model_that_fails_fails_only_the_pages_with_tables(stack_factory, the_set, broken_model):
    # Given a worker whose table model cannot be loaded, and a report page (no table) before the tables page
    broken = stack_factory(env={"OCRGW_TABLE_MODEL": str(broken_model)}, concurrency=1)
    names = [truth.name for truth in the_set.pages]
    document = scanned(the_set.pdf, [names.index("report"), names.index("tables")])

    with Gateway(broken.web().base_url) as gateway:
        job = accepted(
            gateway.post_json(
                {
                    "model": "tesseract",
                    "content_type": "application/pdf",
                    "payload": b64(document),
                    "options": {"layout": True},
                }
            )
        )
        view = wait_for_job(gateway.job, job, timeout=OCR_TIMEOUT)

    # Then the job completes: the page without a table is laid out, the tables page keeps its plain lines
    assert view["status"] == "completed", view
    report, tables = view["result"]["pages"]
    assert report["blocks"] and "layout_error" not in report
    assert plain(RUNNING_HEADER) not in plain(report["text"])
    assert "blocks" not in tables and "table structure model" in tables["layout_error"]
    assert plain("Table 1. The licence texts Debian ships") in plain(tables["text"])
    assert view["result"]["tables"] == []
