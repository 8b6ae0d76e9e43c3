"""resolution_vs_ocrmypdf: pages at resolutions other than a scanner's 200 or 300 dpi, read by ocrgw and by OCRmyPDF.

Four documents, made from the real PDF behind ``tests/scans.py`` (the
freedesktop shared-mime-info specification, born-digital, so each region's
text layer is the truth):

``slide_2400dpi``
    a 2 x 1.5 inch PDF page holding one 4800 x 3500 pixel image: 6 x 4.5
    inches of page 5's text column reduced three times, as a slide or a
    microfilm holds a page (``high_resolution_page``);
``region_2400dpi``
    the same page size and resolution holding 2 x 1.5 inches of page 5 at
    its own size, its type as large as on the page, its right edge cutting
    words (``high_resolution_page(reduction=1)``);
``png_no_dpi_letter``, ``png_no_dpi_a4``
    page 2 scanned at 300 dpi onto a Letter and an A4 sheet, in grey, saved
    as a PNG without a pHYs chunk: an image that states no resolution
    (``unstated_png``).

Each is made searchable by (a) ``ocrmypdf --output-type pdf`` (its
defaults otherwise), which refuses an image without a resolution: it is
given the true one, ``--image-dpi 300``; and (b) ocrgw, ``POST /jobs``
with Tesseract and no options, until ``GET /jobs/{id}/result.pdf`` gives
the searchable PDF: the slide drawn at its image's 2400 dpi, the PNGs'
resolution estimated from their text.  And, as context, (p) each PDF read
in this process by the Tesseract adapter drawing its page at the fixed 200
dpi every page was drawn at before.

Figures, per document: the accuracy of each output's text layer against
the source region's text (1 - edit distance / source length, whitespace
runs made one space, read back with PDFium), b minus a in points; the
output's page size against the true size of what was scanned (for (b)
only: (a) was told); the resolution ocrgw recorded; the seconds of each
side, as context only (one run each: the sides are compared on accuracy,
not time).
"""

from __future__ import annotations

import base64
import io
import json
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import pikepdf

from bench.common import STACK_DB, check, print_table, result, wait_parent
from bench.processes import Bench
from bench.scan import PDF_POLL_SECONDS, SIDE_DEADLINE, ocrmypdf_command
from tests.scans import ResolutionCase, high_resolution_page, page_accuracy, page_texts, unstated_png

NAME = "resolution_vs_ocrmypdf"
DEADLINE = (1800.0, 900.0)
#: ocrgw's accuracy may be this many points below OCRmyPDF's (the scan benchmark's margin).
ACCURACY_MARGIN = 0.5
#: How far a page may be from the true size of what was scanned.
SIZE_TOLERANCE = 0.10
#: The resolution every PDF page was drawn at before it was each page's own.
FORMER_DPI = 200


def cases() -> dict[str, ResolutionCase]:
    return {
        "slide_2400dpi": high_resolution_page(),
        "region_2400dpi": high_resolution_page(reduction=1.0),
        "png_no_dpi_letter": unstated_png(sheet="letter"),
        "png_no_dpi_a4": unstated_png(sheet="a4"),
    }


def run_ocrmypdf(case: ResolutionCase, work: Path, name: str) -> tuple[float, bytes]:
    source = work / (f"{name}.pdf" if case.content_type == "application/pdf" else f"{name}.png")
    source.write_bytes(case.document)
    out = work / f"{name}-ocrmypdf.pdf"
    argv = [*ocrmypdf_command(), "--output-type", "pdf", "-q"]
    if case.content_type != "application/pdf":
        argv += ["--image-dpi", f"{case.dpi:g}"]  # it refuses an image without one: the truth
    start = time.perf_counter()
    subprocess.run([*argv, str(source), str(out)], check=True, capture_output=True, timeout=SIDE_DEADLINE[0])
    return time.perf_counter() - start, out.read_bytes()


def run_ocrgw(bench: Bench, case: ResolutionCase) -> tuple[float, bytes, dict[str, Any]]:
    stack = bench.stack()
    client = bench.client(STACK_DB)
    body = {
        "model": "tesseract",
        "content_type": case.content_type,
        "payload": base64.b64encode(case.document).decode("ascii"),
    }
    start = time.perf_counter()
    job = stack.http.post_json("/jobs", json.dumps(body).encode())
    status = wait_parent(client, job["id"])
    if status != "completed":
        view = stack.http.get_json(f"/jobs/{job['id']}")
        raise AssertionError(f"the job ended {status}: {view.get('error')}")
    while True:
        code, pdf = stack.http.request("GET", f"/jobs/{job['id']}/result.pdf")
        if code == 200:
            break
        if code != 202:
            raise AssertionError(f"result.pdf answered {code}: {pdf[:300]!r}")
        time.sleep(PDF_POLL_SECONDS)
    seconds = time.perf_counter() - start
    (page,) = stack.http.get_json(f"/jobs/{job['id']}")["result"]["pages"]
    return seconds, pdf, page


def former_accuracy(case: ResolutionCase) -> float:
    """The PDF read as before: its page drawn at ``FORMER_DPI``, whatever its content."""
    from workers.adapters.tesseract import TesseractAdapter

    class FixedDpi(TesseractAdapter):
        dpi = FORMER_DPI
        isolate_pages = False

    (page,) = FixedDpi().run(case.document, case.content_type, {}).pages
    return page_accuracy(case.reference, page.text)


def page_inches(pdf: bytes) -> tuple[float, float]:
    with pikepdf.open(io.BytesIO(pdf)) as document:
        left, bottom, right, top = (float(v) for v in document.pages[0].mediabox)
    return (right - left) / 72, (top - bottom) / 72


def run(bench: Bench) -> dict:
    options = bench.options
    work = Path(tempfile.mkdtemp(prefix="ocrgw-bench-resolution-"))
    made = cases()
    with bench.phase("warm ocrgw's worker on a page", *SIDE_DEADLINE):
        run_ocrgw(bench, made["png_no_dpi_letter"])
    figures: dict[str, Any] = {}
    checks = []
    rows = []
    for name, case in made.items():
        with bench.phase(f"{name}: ocrmypdf", *SIDE_DEADLINE):
            a_seconds, a_pdf = run_ocrmypdf(case, work, name)
        with bench.phase(f"{name}: ocrgw", *SIDE_DEADLINE):
            b_seconds, b_pdf, page = run_ocrgw(bench, case)
        (work / f"{name}-ocrgw.pdf").write_bytes(b_pdf)
        accuracy = {
            "a_ocrmypdf": page_accuracy(case.reference, page_texts(a_pdf)[0]),
            "b_ocrgw": page_accuracy(case.reference, page_texts(b_pdf)[0]),
        }
        width, height = page_inches(b_pdf)
        size_error = max(abs(width / case.width_in - 1), abs(height / case.height_in - 1))
        figure: dict[str, Any] = {
            "true_dpi": case.dpi,
            "true_inches": [round(case.width_in, 3), round(case.height_in, 3)],
            "accuracy": accuracy,
            "accuracy_b_minus_a_points": 100 * (accuracy["b_ocrgw"] - accuracy["a_ocrmypdf"]),
            "ocrgw_dpi": page.get("dpi"),
            "ocrgw_dpi_source": page.get("dpi_source"),
            "ocrgw_inches": [round(width, 3), round(height, 3)],
            "ocrgw_size_error": size_error,
            "seconds": {"a_ocrmypdf": a_seconds, "b_ocrgw": b_seconds},
        }
        if case.content_type == "application/pdf":
            with bench.phase(f"{name}: the former fixed {FORMER_DPI} dpi", *SIDE_DEADLINE):
                figure["accuracy_at_former_200_dpi"] = former_accuracy(case)
        figures[name] = figure
        margin = figure["accuracy_b_minus_a_points"]
        checks.append(check(f"{name} accuracy b-a (points)", margin, ">=", -ACCURACY_MARGIN))
        checks.append(check(f"{name} page size error", size_error, "<=", SIZE_TOLERANCE))
        rows.append(
            [
                name,
                accuracy["a_ocrmypdf"],
                accuracy["b_ocrgw"],
                figure.get("accuracy_at_former_200_dpi", ""),
                f"{page.get('dpi')} {page.get('dpi_source')}",
                f"{width:.2f} x {height:.2f}",
                f"{case.width_in:.2f} x {case.height_in:.2f}",
            ]
        )
    print_table(
        f"{NAME}: accuracy against the source text (OCRmyPDF given --image-dpi {made['png_no_dpi_a4'].dpi:g} "
        "for the PNGs)",
        ["document", "ocrmypdf", "ocrgw", "ocrgw at 200 dpi", "ocrgw dpi", "ocrgw inches", "true inches"],
        rows,
    )
    context = {"work_dir": str(work), "quick_is_full": options.quick}
    return result(NAME, options, figures=figures, checks=checks, context=context, method=__doc__ or "")
