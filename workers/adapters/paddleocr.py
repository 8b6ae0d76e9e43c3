"""PP-OCRv4 (detection, angle classification, recognition) on ONNX Runtime.

rapidocr-onnxruntime ships the PP-OCRv4 ONNX models inside the wheel, so
nothing is fetched at run time.  The engine is built lazily, once per
process and after any fork: its three ONNX Runtime sessions hold the models
in memory and run noticeably slower on their first pages while they warm up.

The sessions run on the ONNX Runtime execution providers of
``OCRGW_PADDLEOCR_PROVIDERS`` (the CPU by default); the log says once per
worker process which providers they actually use.

Words: RapidOCR's ``return_word_box`` gives a box per recognised character
(read off the recogniser's CTC columns); a word is a run of characters
between spaces, its box their union and its confidence their mean.  A
detection that comes without character boxes has its box cut across its
words in proportion to their characters' counts.
"""

from __future__ import annotations

import logging
import os
import threading
from typing import Any

import numpy as np
from billiard.exceptions import SoftTimeLimitExceeded

from jobs.config import Settings
from jobs.errors import AdapterError, EngineUnavailable
from workers.adapters.base import Line, PageAdapter, PageResult, Word, union_bbox

log = logging.getLogger(__name__)
DEFAULT_PROVIDERS = ("CPUExecutionProvider",)


def engine_threads(requested: int) -> int:
    """ONNX Runtime intra-op threads per worker process (``OCRGW_ENGINE_THREADS``).

    RapidOCR silently ignores a value above the core count (and then lets
    ONNX Runtime take every core), hence the clamp.
    """
    return max(1, min(requested, os.cpu_count() or 1))


class PaddleOcrAdapter(PageAdapter):
    name = "paddleocr"
    #: Its detector's boxes hold a margin round each line: measured on real pages scanned at 300 dpi, a
    #: quarter taller than Tesseract's lines.
    line_height_points = 11.8

    def __init__(self, threads: int | None = None, providers: tuple[str, ...] | None = None) -> None:
        if threads is None or providers is None:
            settings = Settings.from_env()
            threads = settings.engine_threads if threads is None else threads
            providers = settings.paddleocr_providers if providers is None else providers
        self.threads = engine_threads(threads)
        self.providers = available_providers(providers)
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
                items, _elapsed = engine(pixels, return_word_box=True)
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
                engine = RapidOCR(intra_op_num_threads=self.threads, inter_op_num_threads=1)
                sessions = _sessions(engine)
                if self.providers != DEFAULT_PROVIDERS:
                    # RapidOCR's constructor knows only its CUDA and DirectML switches: the sessions are
                    # rebuilt with the providers asked for (their options, threads included, kept).
                    for session in sessions.values():
                        session.set_providers(list(self.providers))
            except Exception as exc:
                raise EngineUnavailable(f"cannot load PP-OCRv4: {exc!r}") from None
            log.info(
                "PP-OCRv4 loaded; its ONNX Runtime sessions use %s",
                ", ".join(f"{name}: {'+'.join(session.get_providers())}" for name, session in sessions.items()),
            )
            self._engine = engine
        return self._engine


def available_providers(providers: tuple[str, ...]) -> tuple[str, ...]:
    """``providers`` if this host's ONNX Runtime has them all: ONNX Runtime would quietly fall back to the CPU."""
    import onnxruntime

    missing = [name for name in providers if name not in onnxruntime.get_available_providers()]
    if missing:
        raise EngineUnavailable(
            f"OCRGW_PADDLEOCR_PROVIDERS names {', '.join(missing)}, which this worker's ONNX Runtime lacks "
            f"(it has {', '.join(onnxruntime.get_available_providers())})"
        )
    return providers


def _sessions(engine) -> dict[str, Any]:
    """RapidOCR's three ONNX Runtime sessions, by stage."""
    return {
        "detection": engine.text_det.infer.session,
        "classification": engine.text_cls.infer.session,
        "recognition": engine.text_rec.session.session,
    }


def _page_result(page: int, items: list) -> PageResult:
    """A page of RapidOCR's detections, each ``[points, text, score, char_boxes, chars, char_scores]``."""
    boxes = []
    for points, text, score, *characters in items:
        words = _words(characters, _bbox(points), str(text), float(score))
        if words:
            bbox = union_bbox([_bbox(points), *(word.bbox for word in words)])
            boxes.append((bbox, " ".join(word.text for word in words), float(score), words))
    lines = [_merge(row) for row in _rows(boxes)]
    return PageResult(page=page, text="\n".join(line.text for line in lines), lines=lines)


def _bbox(points) -> tuple[int, int, int, int]:
    xs = [p[0] for p in points]
    ys = [p[1] for p in points]
    return (int(min(xs)), int(min(ys)), int(round(max(xs))), int(round(max(ys))))


def _words(characters: list, bbox: tuple[int, int, int, int], text: str, score: float) -> list[Word]:
    """A detection's words: from the engine's character boxes, or its box split by character counts without them."""
    if len(characters) == 3 and characters[0] and len(characters[0]) == len(characters[1]) == len(characters[2]):
        char_boxes, chars, scores = characters
        return _words_from_characters(
            [(str(c), _bbox(b), float(s)) for c, b, s in zip(chars, char_boxes, scores, strict=True)]
        )
    return _words_by_share(bbox, text, score)


def _words_from_characters(characters: list[tuple[str, tuple[int, int, int, int], float]]) -> list[Word]:
    """Runs of characters between spaces, each with its characters' union box and mean score."""
    words: list[Word] = []
    run: list[tuple[str, tuple[int, int, int, int], float]] = []
    for character in [*characters, (" ", (0, 0, 0, 0), 0.0)]:
        if not character[0].isspace():
            run.append(character)
        elif run:
            text = "".join(c[0] for c in run)
            words.append(Word(text, sum(c[2] for c in run) / len(run), union_bbox([c[1] for c in run])))
            run = []
    return words


def _words_by_share(bbox: tuple[int, int, int, int], text: str, score: float) -> list[Word]:
    """The detection's box cut across its words in proportion to their characters (spaces count as one)."""
    text = text.strip()
    if not text:
        return []
    x0, y0, x1, y1 = bbox
    per_char = (x1 - x0) / len(text)
    words, start = [], 0
    for token in text.split(" "):
        if token:
            left = x0 + round(start * per_char)
            right = x0 + round((start + len(token)) * per_char)
            words.append(Word(token, score, (left, y0, max(right, left + 1), y1)))
        start += len(token) + 1
    return words


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
        words=tuple(word for box in row for word in box[3]),
    )
