"""pdf_split: one PDF split into one-page children over every worker process, against one process reading it.

A 40-page PDF of known text (``ocr_efficiency``'s pages, placed at 200 dpi
so that both sides render them back at their own pixels) is read by
Tesseract twice, the two sides taking turns:

(a) ``workers.adapters.get_adapter("tesseract").run(pdf)`` in one process
    (a one-process ``multiprocessing`` pool, forked like Celery's prefork):
    the pages one after another, each rendered and read, as a single job
    of the whole PDF would be.
(b) ``POST /jobs?model=tesseract&split_pages=1&max_parallel=<pool>`` with
    the PDF as the body, to the parent's terminal event: the gateway reads
    the page count and stores 40 one-page children, which the worker's pool
    processes read, at most one per process at a time.

Both sides are warmed first: (a) reads a warm-up page in its process, (b)
splits a warm-up PDF of one page per pool process.  Tesseract runs with
one thread on both sides (the worker's ``OMP_THREAD_LIMIT=1``, which the
adapter sets in its own process too), so the comparison is of processes.

Speed-up is a / b (seconds, medians of the pairs); parallel efficiency is
speed-up / worker processes, the figure with a target.  The texts of the
two sides are compared page by page: the split must not change them.

Two figures say where time goes when the efficiency falls short: the
worker slots' utilization in (b), the children's run times (``started_at``
to ``finished_at``, Redis times) over the workers times the span from the
first start to the last finish, which is 1 when no slot ever waits for
work; and the seconds a page takes on each side (a: the run over the
pages; b: a child's mean run time).  With full utilization, a child
slower than a page of (a) means the worker processes did not get a core
each (another load on the machine), not that the split costs time.
"""

from __future__ import annotations

import io
import json
import time
from typing import Any

from PIL import Image

from bench.common import STACK_DB, check, median, micros, print_table, result, rotations, wait_parent
from bench.ocr import page_texts, render
from bench.processes import HELPERS, Bench

NAME = "pdf_split"
ENGINE = "tesseract"
PAGE_DPI = 200
SEED = 20261
# (full, --quick) seconds: hang detectors, not speed checks (see bench/deadline.py).
DEADLINE = (3600.0, 900.0)
SIDE_DEADLINE = (1200.0, 300.0)
WARM_DEADLINE = (600.0, 300.0)


def make_pdf(texts: list[str]) -> bytes:
    pages = [Image.open(io.BytesIO(render(text))) for text in texts]
    buffer = io.BytesIO()
    pages[0].save(buffer, "PDF", save_all=True, append_images=pages[1:], resolution=PAGE_DPI)
    return buffer.getvalue()


# -- (a): the engine in one process ------------------------------------------------------


def _pool_init(warm_pdf: bytes) -> None:
    from workers.adapters import get_adapter

    get_adapter(ENGINE).run(warm_pdf, "application/pdf", {})


def _read_pdf(document: bytes) -> tuple[float, list[str]]:
    from workers.adapters import get_adapter

    start = time.perf_counter()
    pages = get_adapter(ENGINE).run(document, "application/pdf", {}).pages
    return time.perf_counter() - start, [page.text for page in pages]


# -- (b): split through the stack --------------------------------------------------------


def _split_through_stack(
    stack, client, document: bytes, workers: int, runs: list[tuple[int, int]] | None = None
) -> tuple[float, list[str]]:
    path = f"/jobs?model={ENGINE}&split_pages=1&max_parallel={workers}"
    start = time.perf_counter()
    status, body = stack.http.request("POST", path, document, "application/pdf")
    if status != 202:
        raise AssertionError(f"POST {path} answered {status}: {body[:300]!r}")
    parent_id = json.loads(body)["id"]
    ended = wait_parent(client, parent_id)
    seconds = time.perf_counter() - start
    if ended != "completed":
        raise AssertionError(f"the split group ended {ended}")
    merged = stack.http.get_json(f"/jobs/{parent_id}/result")
    if runs is not None:
        children = stack.http.get_json(f"/jobs/{parent_id}/children?limit=200")["children"]
        runs += [(micros(c["started_at"]), micros(c["finished_at"])) for c in children]
    return seconds, [page["text"] for page in merged["pages"]]


def utilization(runs: list[tuple[int, int]], workers: int) -> float:
    """The children's run time over what ``workers`` slots offer from the first start to the last finish."""
    span = max(end for _, end in runs) - min(start for start, _ in runs)
    return sum(end - start for start, end in runs) / (span * workers) if span else float("nan")


def _new(runs: list[list[tuple[int, int]]]) -> list[tuple[int, int]]:
    runs.append([])
    return runs[-1]


def run(bench: Bench) -> dict:
    options = bench.options
    n = 4 if options.quick else 40
    workers = bench.concurrency
    stack = bench.stack()
    client = bench.client(STACK_DB)
    document = make_pdf(page_texts(n, seed=SEED))
    warm = make_pdf(page_texts(workers, seed=SEED + 1))

    with bench.phase("warm the stack", *WARM_DEADLINE):
        _split_through_stack(stack, client, warm, workers)  # every pool process reads a page first (most likely)
    times: dict[str, list[float]] = {"a_one_process": [], "b_split": []}
    texts: dict[str, list[str]] = {}
    runs: list[list[tuple[int, int]]] = []
    with bench.phase("start and warm the one-process pool", *WARM_DEADLINE):
        pool = HELPERS.Pool(1, initializer=_pool_init, initargs=(warm,))
    try:
        sides = {
            "a_one_process": lambda: pool.apply(_read_pdf, (document,)),
            "b_split": lambda: _split_through_stack(stack, client, document, workers, _new(runs)),
        }
        for order in rotations(list(sides), options.reps):
            for side in order:
                with bench.phase(f"{side}, {n} pages", *SIDE_DEADLINE):
                    seconds, out = sides[side]()
                times[side].append(seconds)
                texts[side] = out
        with bench.phase("stop the one-process pool", *WARM_DEADLINE):
            pool.close()
            pool.join()
    finally:
        pool.terminate()

    speedups = [a / b for a, b in zip(times["a_one_process"], times["b_split"], strict=True)]
    speedup = median(speedups)
    figures: dict[str, Any] = {
        "pages": n,
        "workers": workers,
        "median_seconds": {side: median(t) for side, t in times.items()},
        "pages_per_s": {side: n / median(t) for side, t in times.items()},
        "speedup": speedup,
        "efficiency": speedup / workers,
        "same_text_both_sides": texts["a_one_process"] == texts["b_split"],
        "worker_utilization": median(utilization(r, workers) for r in runs),
        "seconds_per_page": {
            "a_one_process": median(t / n for t in times["a_one_process"]),
            "b_child_run": median(sum(e - s for s, e in r) / len(r) / 1e6 for r in runs),
        },
    }
    print_table(
        f"{NAME}: a {n}-page PDF, {ENGINE}, {workers} worker processes, {options.reps} alternations (medians)",
        ["side", "seconds", "pages/s"],
        [[side, figures["median_seconds"][side], figures["pages_per_s"][side]] for side in times],
    )
    print_table(
        f"{NAME}: split over {workers} worker processes vs one process",
        ["speed-up", "efficiency", "target", "same text", "slot utilization", "s/page a", "s/child run b"],
        [
            [
                speedup,
                figures["efficiency"],
                ">= 0.9",
                figures["same_text_both_sides"],
                figures["worker_utilization"],
                figures["seconds_per_page"]["a_one_process"],
                figures["seconds_per_page"]["b_child_run"],
            ]
        ],
    )
    checks = [check("parallel efficiency (speed-up / worker processes)", figures["efficiency"], ">=", 0.90)]
    context = {"seconds": times, "speedup_per_rep": speedups}
    return result(NAME, options, figures=figures, checks=checks, context=context, method=__doc__)
