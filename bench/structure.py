"""document_structure: a page's layout, reading order, headings and tables, scored against the truth.

The document is the structured-document set (``tests/structured.py``): seven
pages laid out from the GPL's own paragraphs and section names (a title,
sections and subsections, a bulleted list, two columns, a bordered and a
borderless table of counts read from the licence texts, bar charts with
captions, a running header and a numbered footer on every page), three of
them laid out where Tesseract's own page order reads across what stands
side by side (a column of facts beside the text, a table beside a
paragraph, a caption beside its chart).  Each page goes through the whole
stack as a job of its own, one after the other, as:

(s) its scan (200 dpi, grey, a JPEG in an image-only PDF), Tesseract,
    ``layout: true``: ``GET /jobs/{id}/result.md`` and the JSON result;
(t) the same scan, Tesseract, layout off: the job's ``text``, in
    Tesseract's own order (its PSM 3 page layout);
(d) the born-digital page, ``text_layer: "prefer"``, ``layout: true``: no
    OCR, the PDF's own characters and fonts;
(p) context only, when it is installed (``pip install pymupdf4llm``, a
    reference, never a dependency): the born-digital page through
    ``pymupdf4llm.to_markdown``, in this process.

Measured with OmniDocBench's metrics (``bench/structure_scores.py``):

* reading order: the normalised edit distance between the page's true body
  text (no running header or footer, no figure words, tables row by row)
  and the Markdown's text (marks taken out, whitespace collapsed), the mean
  over the pages; (s) beside (t) on the same scans, and the number of pages
  where (s) reads worse than (t);
* headings: F1 over every page's headings, a heading found when its text
  is within 0.2 of a true heading's and its level is the same;
* tables: cell accuracy (the share of true cells whose text is in the right
  row and column of the page's best-matching table, from the JSON's
  ``table.cells``), the mean over the bordered tables and over the
  borderless ones;
* leaks: running header and footer strings, and figure words beyond the
  truth's own, found in the Markdown's body: counted over every page;
* cost: the run time of a scan's job (``finished_at - started_at``, Redis
  times) with layout on over the same scan's with layout off, the median of
  the per-page ratios over the rounds (the two taking turns, page by page);
  the same scan's OCR (layout off) over the born-digital page's structure
  (d), the median of the per-page ratios; and the RSS of the worker's pool
  processes before and after their first layout jobs (the largest growth of
  one process: the layout and table models, loaded once each).

The pages run one at a time so that a job's time is its own.  Before the
clock, every page runs once with layout off (the engines warm) and the pool
is measured, then once with layout on (the models loaded) and the pool is
measured again.
"""

from __future__ import annotations

import base64
import contextlib
import io
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.common import STACK_DB, check, median, micros, print_table, result, wait_parent
from bench.processes import Bench, pool_children, vm_status
from bench.structure_scores import (
    Counts,
    Leaks,
    best_table,
    grid_of,
    heading_counts,
    leaks,
    markdown_headings,
    markdown_tables,
    reading_order,
    truth_grid,
)
from tests.structured import StructuredSet, Truth, structured_set

NAME = "document_structure"
DEADLINE = (1800.0, 600.0)
PHASE_DEADLINE = (600.0, 300.0)
QUICK_PAGES = (0, 2, 5)
MARKDOWN_POLL_SECONDS = 0.05

#: Targets of the issue.
READING_ORDER_SCAN_TARGET = 0.10
READING_ORDER_BORN_DIGITAL_TARGET = 0.05
HEADING_F1_TARGET = 0.9
BORDERED_CELLS_TARGET = 0.9
BORDERLESS_CELLS_TARGET = 0.8
LAYOUT_COST_TARGET = 1.25  # layout on / off, a scanned page with Tesseract
BORN_DIGITAL_SPEED_TARGET = 10.0  # OCR of the scan / the born-digital page's structure

SCAN = "scan_layout"
TESSERACT = "scan_tesseract_order"
BORN_DIGITAL = "born_digital_layout"
BORN_DIGITAL_PLAIN = "born_digital_text_layer_order"
PEER = "born_digital_pymupdf4llm"


@dataclass
class Reading:
    """What one side made of one page."""

    markdown: str
    pages: list[dict[str, Any]] = field(default_factory=list)  # the JSON result's pages (none for a peer)
    seconds: float = float("nan")
    cpu_seconds: float = float("nan")  # the worker's processes' CPU time over the job (its drawing children's too)


@dataclass
class Scores:
    reading_order: list[float] = field(default_factory=list)
    headings: Counts = field(default_factory=lambda: Counts(0, 0, 0))
    bordered: list[float] = field(default_factory=list)
    borderless: list[float] = field(default_factory=list)
    leaks: Leaks = field(default_factory=lambda: Leaks(0, 0))
    layout_errors: int = 0

    def add(self, truth: Truth, reading: Reading, tables: list[dict] | None) -> None:
        self.reading_order.append(reading_order(truth.body_text(), reading.markdown))
        self.headings += heading_counts(truth.headings, markdown_headings(reading.markdown))
        found = tables if tables is not None else markdown_tables(reading.markdown)
        for table in truth.tables:
            score, _ = best_table(truth_grid(table.cells), found)
            (self.bordered if table.bordered else self.borderless).append(score)
        page_leaks = leaks(reading.markdown, truth.body_text(), [truth.header, truth.footer], truth.figure_words)
        self.leaks = Leaks(self.leaks.running + page_leaks.running, self.leaks.figure_words + page_leaks.figure_words)
        self.layout_errors += sum(1 for page in reading.pages if page.get("layout_error"))

    def figures(self) -> dict[str, Any]:
        return {
            "reading_order": _mean(self.reading_order),
            "reading_order_per_page": self.reading_order,
            "heading_f1": self.headings.f1,
            "heading_precision": self.headings.precision,
            "heading_recall": self.headings.recall,
            "bordered_cell_accuracy": _mean(self.bordered),
            "borderless_cell_accuracy": _mean(self.borderless),
            "running_in_body": self.leaks.running,
            "figure_words_in_body": self.leaks.figure_words,
            "layout_errors": self.layout_errors,
        }


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else float("nan")


def json_tables(pages: list[dict[str, Any]]) -> list[dict]:
    """The grids of the tables of a result's pages (``documents.structure``: a table block's ``table.cells``)."""
    return [
        grid_of(block["table"]["cells"])
        for page in pages
        for block in page.get("blocks") or ()
        if block["type"] == "table" and block.get("table")
    ]


# -- the sides -----------------------------------------------------------------------------


def submit(bench: Bench, document: bytes, options: dict[str, Any]) -> tuple[dict[str, Any], float, float]:
    """One job through the stack, to its end: its view, its run time (Redis times of the worker's claim
    and completion: no queueing, no HTTP), and the CPU time the worker's processes spent meanwhile (the
    layout's models look at a page while the engine reads it: the run time alone would hide their cost)."""
    stack = bench.stack()
    cpu_before = pool_cpu_seconds(bench)
    body = {
        "model": "tesseract",
        "content_type": "application/pdf",
        "payload": base64.b64encode(document).decode("ascii"),
        "options": options,
    }
    job = stack.http.post_json("/jobs", json.dumps(body).encode())
    status = wait_parent(bench.client(STACK_DB), job["id"])
    view = stack.http.get_json(f"/jobs/{job['id']}")
    if status != "completed":
        raise AssertionError(f"a page's job ended {status}: {view.get('error')}")
    cpu = pool_cpu_seconds(bench) - cpu_before
    return view, (micros(view["finished_at"]) - micros(view["started_at"])) / 1e6, cpu


def markdown_of(bench: Bench, job_id: str) -> str:
    http = bench.stack().http
    while True:
        code, data = http.request("GET", f"/jobs/{job_id}/result.md")
        if code == 200:
            return data.decode("utf-8")
        if code != 202:
            raise AssertionError(f"result.md answered {code}: {data[:300]!r}")
        time.sleep(MARKDOWN_POLL_SECONDS)


def read_with_layout(bench: Bench, document: bytes, options: dict[str, Any]) -> Reading:
    view, seconds, cpu = submit(bench, document, {**options, "layout": True})
    return Reading(markdown_of(bench, view["id"]), view["result"]["pages"], seconds, cpu)


def read_without_layout(bench: Bench, document: bytes, options: dict[str, Any]) -> Reading:
    view, seconds, cpu = submit(bench, document, options)
    return Reading(view["result"]["text"], view["result"]["pages"], seconds, cpu)


def peer() -> Callable[[bytes], Reading] | None:
    """pymupdf4llm's Markdown of a born-digital page, when it is installed (a reference only)."""
    try:
        with contextlib.redirect_stdout(io.StringIO()):  # it advertises another package of its own on import
            import pymupdf
            import pymupdf4llm
    except ImportError:
        return None

    def read(document: bytes) -> Reading:
        start = time.perf_counter()
        with pymupdf.open(stream=document, filetype="pdf") as pdf, contextlib.redirect_stdout(io.StringIO()):
            markdown = pymupdf4llm.to_markdown(pdf, show_progress=False)
        return Reading(markdown, [], time.perf_counter() - start)

    return read


# -- memory --------------------------------------------------------------------------------


def pool_rss_mib(bench: Bench) -> dict[int, float]:
    return {pid: vm_status(pid)["VmRSS"] / 1024 for pid in pool_children(bench.stack().worker.pid)}


def pool_cpu_seconds(bench: Bench) -> float:
    """The CPU time of the worker's pool processes so far, with that of the children they waited for (each
    page is drawn in a child)."""
    ticks = 0
    for pid in pool_children(bench.stack().worker.pid):
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        ticks += sum(int(v) for v in fields[11:15])  # utime, stime, cutime, cstime
    return ticks / os.sysconf("SC_CLK_TCK")


def growth_mib(before: dict[int, float], after: dict[int, float]) -> float:
    """The largest growth of one pool process that was there before and after."""
    return max((after[pid] - before[pid] for pid in before if pid in after), default=float("nan"))


# -- the benchmark ---------------------------------------------------------------------------


def run(bench: Bench) -> dict:
    options = bench.options
    documents: StructuredSet = structured_set()
    indices = list(QUICK_PAGES if options.quick else range(len(documents.pages)))
    scans = {i: documents.scan(i) for i in indices}
    originals = {i: documents.page_pdf(i) for i in indices}
    born_digital = {"text_layer": "prefer"}
    ocr: dict[str, Any] = {}

    with bench.phase("warm the engines: every scan, layout off", *PHASE_DEADLINE):
        for i in indices:
            read_without_layout(bench, scans[i], ocr)
    before = pool_rss_mib(bench)
    with bench.phase("first layout jobs: every scan and page, layout on", *PHASE_DEADLINE):
        for i in indices:
            read_with_layout(bench, scans[i], ocr)
            read_with_layout(bench, originals[i], born_digital)
    after = pool_rss_mib(bench)

    readings: dict[str, dict[int, Reading]] = {side: {} for side in (SCAN, TESSERACT, BORN_DIGITAL, BORN_DIGITAL_PLAIN)}
    seconds: dict[str, dict[int, list[float]]] = {side: {i: [] for i in indices} for side in readings}
    cpu: dict[str, dict[int, list[float]]] = {side: {i: [] for i in indices} for side in readings}
    sides: dict[str, Callable[[int], Reading]] = {
        SCAN: lambda i: read_with_layout(bench, scans[i], ocr),
        TESSERACT: lambda i: read_without_layout(bench, scans[i], ocr),
        BORN_DIGITAL: lambda i: read_with_layout(bench, originals[i], born_digital),
        BORN_DIGITAL_PLAIN: lambda i: read_without_layout(bench, originals[i], born_digital),
    }
    order = list(sides)
    for rep in range(options.reps):
        with bench.phase(f"round {rep + 1}: {len(indices)} pages, four ways", *PHASE_DEADLINE):
            for i in indices:
                for side in order if (rep + i) % 2 == 0 else reversed(order):
                    reading = sides[side](i)
                    readings[side][i] = reading
                    seconds[side][i].append(reading.seconds)
                    cpu[side][i].append(reading.cpu_seconds)

    reference = peer()
    if reference is not None:
        readings[PEER] = {}
        seconds[PEER] = {i: [] for i in indices}
        with bench.phase("the peer on the born-digital pages", *PHASE_DEADLINE):
            for i in indices:
                reading = reference(originals[i])
                readings[PEER][i] = reading
                seconds[PEER][i].append(reading.seconds)

    scores: dict[str, Scores] = {}
    for side, by_page in readings.items():
        scores[side] = Scores()
        for i, reading in by_page.items():
            tables = None if side == PEER else json_tables(reading.pages)
            scores[side].add(documents.pages[i], reading, tables)

    layout_cost = [
        on / off for i in indices for on, off in zip(seconds[SCAN][i], seconds[TESSERACT][i], strict=True) if off > 0
    ]
    layout_cpu_cost = [
        on / off for i in indices for on, off in zip(cpu[SCAN][i], cpu[TESSERACT][i], strict=True) if off > 0
    ]
    born_digital_speed = [
        ocr_seconds / structure
        for i in indices
        for ocr_seconds, structure in zip(seconds[TESSERACT][i], seconds[BORN_DIGITAL][i], strict=True)
        if structure > 0
    ]
    worse = [
        documents.pages[i].name
        for i, ours, theirs in zip(indices, scores[SCAN].reading_order, scores[TESSERACT].reading_order, strict=True)
        if ours > theirs
    ]
    figures: dict[str, Any] = {
        "pages": [documents.pages[i].name for i in indices],
        "sides": {side: s.figures() for side, s in scores.items()},
        "scan_pages_read_worse_than_tesseract_order": worse,
        "layout_cost_on_over_off": median(layout_cost),
        "layout_cpu_cost_on_over_off": median(layout_cpu_cost),
        "born_digital_speed_ocr_over_structure": median(born_digital_speed),
        "seconds_per_page": {side: median(t for ts in per.values() for t in ts) for side, per in seconds.items()},
        "worker_pool_rss_mib": {"before_layout": before, "after_layout": after},
        "memory_growth_mib": growth_mib(before, after),
        "peer": PEER if reference is not None else None,
    }
    scan, born = scores[SCAN].figures(), scores[BORN_DIGITAL].figures()
    checks = [
        check("reading order, scans (edit distance)", scan["reading_order"], "<=", READING_ORDER_SCAN_TARGET),
        check(
            "reading order, born-digital (edit distance)",
            born["reading_order"],
            "<=",
            READING_ORDER_BORN_DIGITAL_TARGET,
        ),
        check("scan pages read worse than Tesseract's order", len(worse), "<=", 0),
        check("heading F1, scans", scan["heading_f1"], ">=", HEADING_F1_TARGET),
        check("heading F1, born-digital", born["heading_f1"], ">=", HEADING_F1_TARGET),
        check("bordered cell accuracy, scans", scan["bordered_cell_accuracy"], ">=", BORDERED_CELLS_TARGET),
        check("bordered cell accuracy, born-digital", born["bordered_cell_accuracy"], ">=", BORDERED_CELLS_TARGET),
        check("borderless cell accuracy, scans", scan["borderless_cell_accuracy"], ">=", BORDERLESS_CELLS_TARGET),
        check(
            "borderless cell accuracy, born-digital", born["borderless_cell_accuracy"], ">=", BORDERLESS_CELLS_TARGET
        ),
        check(
            "headers, footers, figure words in the body",
            scan["running_in_body"]
            + scan["figure_words_in_body"]
            + born["running_in_body"]
            + born["figure_words_in_body"],
            "<=",
            0,
        ),
        check("layout cost, scan on/off", figures["layout_cost_on_over_off"], "<=", LAYOUT_COST_TARGET),
        check(
            "born-digital speed, OCR/structure",
            figures["born_digital_speed_ocr_over_structure"],
            ">=",
            BORN_DIGITAL_SPEED_TARGET,
        ),
    ]
    headers = ["side", "reading order", "heading F1", "bordered cells", "borderless cells", "in body", "s/page"]
    rows = [
        [
            side,
            s["reading_order"],
            s["heading_f1"],
            s["bordered_cell_accuracy"],
            s["borderless_cell_accuracy"],
            s["running_in_body"] + s["figure_words_in_body"],
            figures["seconds_per_page"][side],
        ]
        for side, s in figures["sides"].items()
    ]
    print_table(f"{NAME}: {len(indices)} pages, {options.reps} round(s)", headers, rows)
    print_table(
        f"{NAME}: reading order per page (normalised edit distance)",
        ["page", *figures["sides"]],
        [
            [documents.pages[i].name, *(s["reading_order_per_page"][k] for s in figures["sides"].values())]
            for k, i in enumerate(indices)
        ],
    )
    print_table(
        f"{NAME}: cost",
        ["figure", "value"],
        [
            ["scan, layout on / off (median of per-page ratios)", figures["layout_cost_on_over_off"]],
            ["scan, layout on / off, the worker's CPU time (no target)", figures["layout_cpu_cost_on_over_off"]],
            ["born-digital: OCR of its scan / its structure", figures["born_digital_speed_ocr_over_structure"]],
            [
                "worker pool process growth over its first layout jobs, MiB (context: memory checks it)",
                figures["memory_growth_mib"],
            ],
        ],
    )
    context = {
        "seconds": {side: {str(i): ts for i, ts in per.items()} for side, per in seconds.items()},
        "cpu_seconds": {side: {str(i): ts for i, ts in per.items()} for side, per in cpu.items()},
        "markdown": {side: {str(i): r.markdown for i, r in per.items()} for side, per in readings.items()},
    }
    return result(NAME, options, figures=figures, checks=checks, context=context, method=__doc__ or "")
