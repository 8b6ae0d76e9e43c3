"""PP-OCRv4 (detection, angle classification, recognition) on ONNX Runtime.

rapidocr-onnxruntime ships the PP-OCRv4 ONNX models inside the wheel, so
nothing is fetched at run time.  The engine is built lazily, once per
process and after any fork: its three ONNX Runtime sessions hold the models
in memory and run noticeably slower on their first pages while they warm up.
"""

from __future__ import annotations

import os
import threading

import numpy as np
from billiard.exceptions import SoftTimeLimitExceeded

from jobs.config import Settings
from jobs.errors import AdapterError, EngineUnavailable
from workers.adapters.base import Line, PageAdapter, PageResult, union_bbox


def engine_threads(requested: int) -> int:
    """ONNX Runtime intra-op threads per worker process (``OCRGW_ENGINE_THREADS``).

    RapidOCR silently ignores a value above the core count (and then lets
    ONNX Runtime take every core), hence the clamp.
    """
    return max(1, min(requested, os.cpu_count() or 1))


class PaddleOcrAdapter(PageAdapter):
    name = "paddleocr"

    def __init__(self, threads: int | None = None) -> None:
        if threads is None:
            threads = Settings.from_env().engine_threads
        self.threads = engine_threads(threads)
        self._engine = None
        # RapidOCR keeps per-call state on the instance; one page at a time.
        self._lock = threading.Lock()

    def recognise(self, page, image, options, deadline):
        # RapidOCR takes a 3-channel array as OpenCV's BGR; greys it converts itself.
        pixels = np.asarray(image)
        if pixels.ndim == 3:
            pixels = np.ascontiguousarray(pixels[:, :, ::-1])
        with self._lock:
            engine = self._load()
            try:
                items, _elapsed = engine(pixels)
            except (SoftTimeLimitExceeded, MemoryError):
                raise  # the job's time limit, or the process's memory: not PP-OCRv4's failure to retry
            except Exception as exc:  # ONNX Runtime and OpenCV raise a zoo of types
                raise AdapterError(f"PP-OCRv4 failed on page {page}: {exc!r}") from None
        return _page_result(page, items or [])

    def _load(self):
        if self._engine is None:
            try:
                from rapidocr_onnxruntime import RapidOCR

                # Global thread settings are copied into the Det, Cls and Rec sessions.
                self._engine = RapidOCR(intra_op_num_threads=self.threads, inter_op_num_threads=1)
            except Exception as exc:
                raise EngineUnavailable(f"cannot load PP-OCRv4: {exc!r}") from None
        return self._engine


def _page_result(page: int, items: list) -> PageResult:
    boxes = []
    for points, text, score in items:
        text = str(text).strip()
        if not text:
            continue
        xs = [p[0] for p in points]
        ys = [p[1] for p in points]
        bbox = (int(min(xs)), int(min(ys)), int(round(max(xs))), int(round(max(ys))))
        boxes.append((bbox, text, float(score)))
    lines = [_merge(row) for row in _rows(boxes)]
    return PageResult(page=page, text="\n".join(line.text for line in lines), lines=lines)


def _rows(boxes: list) -> list[list]:
    """Group detections into visual lines, top to bottom.

    PP-OCR's detector often splits one printed line into several boxes (at
    wide gaps, or where the font size changes).  A box joins a row when its
    vertical centre is within half a line height of the row's centre.
    """
    rows: list[dict] = []
    for box in sorted(boxes, key=lambda b: b[0][1] + b[0][3]):
        _, top, _, bottom = box[0]
        centre, height = (top + bottom) / 2, bottom - top
        row = rows[-1] if rows else None
        if row is not None and abs(centre - row["centre"]) <= min(height, row["height"]) / 2:
            row["boxes"].append(box)
            n = len(row["boxes"])
            row["centre"] += (centre - row["centre"]) / n
            row["height"] += (height - row["height"]) / n
        else:
            rows.append({"boxes": [box], "centre": centre, "height": height})
    return [sorted(row["boxes"], key=lambda b: b[0][0]) for row in rows]


def _merge(row: list) -> Line:
    return Line(
        text=" ".join(box[1] for box in row),
        confidence=sum(box[2] for box in row) / len(row),
        bbox=union_bbox([box[0] for box in row]),
    )
