"""ocr_efficiency: what the whole stack costs on top of the OCR engines themselves.

Pages of known text (drawn with Pillow's bundled font, so the same pixels
come out on any machine) go through each engine twice, taking turns:

(a) ``workers.adapters.get_adapter(engine).run`` called directly, in a
    ``multiprocessing`` pool of the worker's pool size (from the bench's
    forkserver, as every helper process: see ``bench/processes.py``); each
    process loads the engine once, as a Celery pool process does.
(b) the same pages as one fan-out group, POST /jobs to the parent's terminal
    event, max_parallel = the pool size, on a worker started with
    OCRGW_PRELOAD_MODELS.

Both sides are warmed before the clock starts: every pool process of (a)
loads the engine and reads warm-up pages, and (b) reads the same number of
warm-up pages through the stack (ONNX Runtime gets faster over a process's
first few pages, as it meets new input shapes).

Pages/s b/a is the figure.  Character accuracy is 1 - (edit distance) /
(reference length), summed over the pages, both texts with every run of
whitespace made one space, for each side: the two must agree, since the
stack must not change the text.
"""

from __future__ import annotations

import io
import random
import re
import time
from functools import partial
from multiprocessing.pool import Pool
from typing import Any

from PIL import Image, ImageDraw, ImageFont

from bench.common import STACK_DB, check, fanout_body, median, print_table, result, rotations, wait_parent
from bench.processes import HELPERS, Bench

NAME = "ocr_efficiency"
#: The benchmark as a whole, full and quick (hang detectors: see bench/deadline.py).
DEADLINE = (3600.0, 900.0)
#: One side's pages, and a warm-up, full and quick: paddleocr's 40 pages take
#: 15 s on 2 idle cores, and have taken 80 s on 2 cores busy with other work.
SIDE_DEADLINE = (1200.0, 300.0)
WARM_DEADLINE = (600.0, 300.0)
ENGINES = ("tesseract", "paddleocr")
PAGE_SIZE = (600, 600)
FONT_SIZE = 24
LINES = 8
WORDS_PER_LINE = 5
SEED = 20260
WARM_PAGES_PER_PROCESS = 3

# A paragraph of words reads better than a literal of 49 strings.
_VOCABULARY = (  # noqa: SIM905
    "Invoice Total Amount Paid Date Order Number Customer Account Balance Shipping Address "
    "Reference Payment Due Tax Net Gross Quantity Price Item Description Delivery Notes Bank "
    "Transfer Credit Debit Statement Period Summary Contact Phone Email Street City Country "
    "the of and to for with from on by at per each"
).split()


def page_texts(count: int, seed: int = SEED) -> list[str]:
    rng = random.Random(seed)
    texts = []
    for _ in range(count):
        lines = []
        for _ in range(LINES):
            words = [rng.choice(_VOCABULARY) for _ in range(WORDS_PER_LINE - 1)]
            words.insert(rng.randrange(WORDS_PER_LINE), str(rng.randrange(10, 99999)))
            lines.append(" ".join(words))
        texts.append("\n".join(lines))
    return texts


def render(text: str) -> bytes:
    font = ImageFont.load_default(size=FONT_SIZE)
    image = Image.new("L", PAGE_SIZE, 255)
    ImageDraw.Draw(image).multiline_text((30, 30), text, font=font, fill=0, spacing=FONT_SIZE // 2)
    buf = io.BytesIO()
    image.save(buf, "PNG")
    return buf.getvalue()


def levenshtein(a: str, b: str) -> int:
    if len(a) < len(b):
        a, b = b, a
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        current = [i]
        for j, cb in enumerate(b, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def accuracy(references: list[str], texts: list[str]) -> float:
    """Over all pages: 1 - (sum of edit distances) / (sum of reference lengths)."""
    pairs = [(_norm(r), _norm(t)) for r, t in zip(references, texts, strict=True)]
    return 1 - sum(levenshtein(r, t) for r, t in pairs) / sum(len(r) for r, _ in pairs)


# -- the direct side: a multiprocessing pool --------------------------------------------

_engine_name: str | None = None


def _pool_init(engine: str, warm_page: bytes) -> None:
    global _engine_name
    from workers.adapters import get_adapter

    _engine_name = engine
    get_adapter(engine).run(warm_page, "image/png", {})


def _pool_ocr(page: bytes) -> str:
    from workers.adapters import get_adapter

    assert _engine_name is not None, "set by _pool_init"
    return get_adapter(_engine_name).run(page, "image/png", {}).text


def run(bench: Bench) -> dict:
    options = bench.options
    n = 4 if options.quick else 40
    stack = bench.stack()
    client = bench.client(STACK_DB)
    conc = bench.concurrency
    texts = page_texts(n)
    pages = [render(t) for t in texts]
    per_process = 1 if options.quick else WARM_PAGES_PER_PROCESS
    warm = [render(t) for t in page_texts(per_process * conc, seed=SEED + 1)]

    def through_stack(engine: str, batch: list[bytes]) -> tuple[float, list[str]]:
        body = fanout_body(batch, conc, model=engine, content_type="image/png")
        start = time.perf_counter()
        parent = stack.http.post_json("/jobs", body)
        status = wait_parent(client, parent["id"])
        seconds = time.perf_counter() - start
        if status != "completed":
            view = stack.http.get_json(f"/jobs/{parent['id']}?children=none")
            raise AssertionError(f"the {engine} group ended {status}: {view['counts']}")
        merged = stack.http.get_json(f"/jobs/{parent['id']}/result")
        return seconds, [c["text"] for c in merged["children"]]

    figures: dict = {"pages": n, "page_size": list(PAGE_SIZE), "pool": conc}
    context: dict = {}
    checks = []
    rows = []
    for engine in ENGINES:
        with bench.phase(f"{engine}: warm the stack", *WARM_DEADLINE):
            through_stack(engine, warm)  # warms every pool process (most likely) and the code path
        times: dict[str, list[float]] = {"a_direct": [], "b_stack": []}
        texts_out: dict[str, list[str]] = {}
        pool = HELPERS.Pool(conc, initializer=_pool_init, initargs=(engine, warm[0]))
        try:
            with bench.phase(f"{engine}: start and warm the direct pool", *WARM_DEADLINE):
                pool.map(_pool_ocr, warm, chunksize=1)

            def direct(pool: Pool) -> tuple[float, list[str]]:
                start = time.perf_counter()
                out = pool.map(_pool_ocr, pages, chunksize=1)
                return time.perf_counter() - start, out

            sides = {"a_direct": partial(direct, pool), "b_stack": partial(through_stack, engine, pages)}
            for order in rotations(list(sides), options.reps):
                for side in order:
                    with bench.phase(f"{engine}: {side}, {n} pages", *SIDE_DEADLINE):
                        seconds, out = sides[side]()
                    times[side].append(seconds)
                    texts_out[side] = out
            with bench.phase(f"{engine}: stop the direct pool", 120):
                pool.close()  # let the processes exit on their own, engines and all
                pool.join()
        finally:
            pool.terminate()
        ratio = [a / b for a, b in zip(times["a_direct"], times["b_stack"], strict=True)]
        acc = {side: accuracy(texts, out) for side, out in texts_out.items()}
        fig: dict[str, Any] = {
            "pages_per_s": {side: n / median(t) for side, t in times.items()},
            "b_over_a": median(ratio),
            "char_accuracy": acc,
            "same_text_both_sides": texts_out["a_direct"] == texts_out["b_stack"],
        }
        figures[engine] = fig
        context[engine] = {"seconds": times, "b_over_a_per_rep": ratio}
        checks.append(check(f"{engine} pages/s b/a", fig["b_over_a"], ">=", 0.90))
        rows.append(
            [
                engine,
                fig["pages_per_s"]["a_direct"],
                fig["pages_per_s"]["b_stack"],
                fig["b_over_a"],
                acc["a_direct"],
                acc["b_stack"],
                fig["same_text_both_sides"],
            ]
        )
    print_table(
        f"{NAME}: {n} pages {PAGE_SIZE[0]}x{PAGE_SIZE[1]}, pool {conc}, {options.reps} alternations (medians)",
        ["engine", "a pages/s", "b pages/s", "b/a", "a char acc", "b char acc", "same text"],
        rows,
    )
    return result(NAME, options, figures=figures, checks=checks, context=context, method=__doc__)
