"""tesseract_engine: a page read by Tesseract resident in the process, and by the ``tesseract`` binary.

The pages are the scan benchmark's (``scan_vs_ocrmypdf``: the real PDF's
pages scanned at 200 dpi in grey, each a JPEG), upright and straight, since
only the engine is measured here, each drawn as a worker draws it.  One
process reads each page two ways, taking turns page by page (which side
goes first alternates):

(a) ``pytesseract.image_to_data`` with ``--dpi <the page's>``: the page
    written to a PNG, a ``tesseract`` process started, its traineddata
    loaded, its TSV parsed back; as the worker read pages before;
(b) ``TesseractAdapter.recognise``: the same image handed to the resident
    engine (tesserocr), the resolution set with ``SetSourceResolution``.

Both with ``OMP_THREAD_LIMIT=1``, as a worker runs them.  The engine of (b)
is loaded before the clock starts (a worker loads it once per process).
Figures: seconds a page on each side (medians), the median of the per-page
ratios b/a, and each side's mean page accuracy against the source's text
(``tests/scans.page_accuracy``); the two libtesseracts are not the same
release (Debian's binary, the wheel's library), so the accuracies are
compared, not the texts.
"""

from __future__ import annotations

import os
import time
from typing import Any

import pypdfium2 as pdfium

from bench.common import check, median, print_table, result
from bench.processes import Bench
from tests.scans import page_accuracy, real_pdf, scanned_pdf, source_text

NAME = "tesseract_engine"
DEADLINE = (1800.0, 600.0)
PAGES_DEADLINE = (1200.0, 300.0)
QUICK_PAGES = (0, 4)
#: The resident engine must be clearly faster to be worth keeping, at the same accuracy.
TIME_TARGET = 0.85
ACCURACY_MARGIN = 0.5  # points of per cent


def run(bench: Bench) -> dict:
    os.environ.setdefault("OMP_THREAD_LIMIT", "1")
    # Imported here: the bench process loads libtesseract only when this benchmark runs.
    import pytesseract

    from documents.pages import open_document
    from workers.adapters.tesseract import TesseractAdapter, _page_result

    options = bench.options
    pdf = real_pdf()
    indices = list(QUICK_PAGES if options.quick else range(len(pdfium.PdfDocument(pdf))))
    references = [source_text(i, pdf) for i in indices]
    with open_document(scanned_pdf(indices, pdf=pdf), "application/pdf") as doc:
        pages = [doc.page(i) for i in range(doc.page_count)]
    adapter = TesseractAdapter()

    def binary(page) -> str:
        dpi = round(page.info["dpi"][0])
        data = pytesseract.image_to_data(page.convert("L"), config=f"--dpi {dpi}", output_type=pytesseract.Output.DICT)
        return _page_result(1, data).text

    def resident(page) -> str:
        return adapter.recognise(1, page, {}, None).text

    sides = {"a_binary": binary, "b_resident": resident}
    resident(pages[0])  # the engine loaded, as a worker's is after its first page
    seconds: dict[str, list[float]] = {side: [] for side in sides}
    texts: dict[str, list[str]] = {side: [] for side in sides}
    with bench.phase(f"{len(pages)} pages, {options.reps} times, both ways", *PAGES_DEADLINE):
        for rep in range(options.reps):
            for number, page in enumerate(pages):
                order = list(sides) if (number + rep) % 2 == 0 else list(reversed(sides))
                for side in order:
                    start = time.perf_counter()
                    text = sides[side](page)
                    seconds[side].append(time.perf_counter() - start)
                    if rep == 0:
                        texts[side].append(text)
    ratios = [b / a for a, b in zip(seconds["a_binary"], seconds["b_resident"], strict=True)]
    accuracy = {
        side: sum(page_accuracy(r, t) for r, t in zip(references, texts[side], strict=True)) / len(references)
        for side in sides
    }
    figures: dict[str, Any] = {
        "pages": len(pages),
        "seconds_per_page": {side: median(values) for side, values in seconds.items()},
        "time_b_over_a": median(ratios),
        "mean_page_accuracy": accuracy,
        "accuracy_b_minus_a_points": 100 * (accuracy["b_resident"] - accuracy["a_binary"]),
    }
    checks = [
        check("time b/a", figures["time_b_over_a"], "<=", TIME_TARGET),
        check("accuracy b-a (points)", figures["accuracy_b_minus_a_points"], ">=", -ACCURACY_MARGIN),
    ]
    print_table(
        f"{NAME}: {len(pages)} scanned pages (200 dpi), {options.reps} rounds (medians)",
        ["side", "seconds a page", "mean page accuracy"],
        [[side, figures["seconds_per_page"][side], accuracy[side]] for side in sides],
    )
    context = {"seconds": seconds, "ratios": ratios}
    return result(NAME, options, figures=figures, checks=checks, context=context, method=__doc__ or "")
