"""The one interface between the worker task and an OCR engine.

An adapter turns a document (bytes plus content type) into an ``OcrResult``.
Everything the task stores comes from ``OcrResult.to_dict()``, so engines can
be swapped without the task, the store or the gateway noticing.
"""

from __future__ import annotations

import math
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from PIL import Image

from jobs.errors import AdapterError
from workers.documents import open_document

ProgressCallback = Callable[[int, int], None]  # (pages_done, pages_total)


@dataclass(frozen=True)
class Line:
    text: str
    confidence: float  # 0..1
    bbox: tuple[int, int, int, int]  # x0, y0, x1, y1 in page pixels


@dataclass(frozen=True)
class PageResult:
    page: int  # 1-based
    text: str
    lines: list[Line]


@dataclass(frozen=True)
class OcrResult:
    pages: list[PageResult]

    @property
    def text(self) -> str:
        return "\n\n".join(page.text.rstrip() for page in self.pages)

    def to_dict(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "pages": [
                {
                    "page": page.page,
                    "text": page.text,
                    "lines": [
                        {
                            "text": line.text,
                            "confidence": round(float(line.confidence), 4),
                            "bbox": [int(v) for v in line.bbox],
                        }
                        for line in page.lines
                    ],
                }
                for page in self.pages
            ],
        }


class Adapter(ABC):
    name: str

    @abstractmethod
    def run(
        self,
        document: bytes,
        content_type: str,
        options: dict,
        on_page: ProgressCallback | None = None,
    ) -> OcrResult:
        """OCR ``document``; call ``on_page`` after each page so the job shows progress.

        Exceptions raised by ``on_page`` propagate untouched: that is how the
        caller stops a run early (for instance when the job was cancelled).
        """


class PageAdapter(Adapter):
    """An adapter that renders the document and recognises one page image at a time.

    ``options["timeout_s"]`` bounds the whole document, not each page: a job
    has one time budget however many pages it has.  Subclasses get the
    deadline so an engine that can be interrupted mid-page may honour it.
    """

    dpi = 200

    def run(self, document, content_type, options, on_page=None):
        deadline = _deadline(options.get("timeout_s"))
        results = []
        with open_document(document, content_type, dpi=self.dpi) as doc:
            total = doc.page_count
            for number, image in enumerate(doc.pages(), start=1):
                if deadline is not None and time.monotonic() >= deadline:
                    raise AdapterError(
                        f"{self.name} ran out of time after {number - 1} of {total} pages",
                        code="engine_timeout",
                    )
                results.append(self.recognise(number, image, options, deadline))
                if on_page is not None:
                    on_page(number, total)
        return OcrResult(pages=results)

    @abstractmethod
    def recognise(self, page: int, image: Image.Image, options: dict, deadline: float | None) -> PageResult:
        """Recognise one rendered page (RGB or L); ``deadline`` is a ``time.monotonic()`` value."""


def permanent_error(message: str, code: str) -> AdapterError:
    """An AdapterError that retrying cannot fix (bad options, unknown model)."""
    error = AdapterError(message, code=code)
    error.transient = False
    return error


def _deadline(timeout_s: Any) -> float | None:
    if timeout_s is None:
        return None
    if isinstance(timeout_s, bool) or not isinstance(timeout_s, (int, float)) or not 0 < timeout_s < math.inf:
        raise permanent_error("options.timeout_s must be a positive number", "invalid_options")
    return time.monotonic() + float(timeout_s)


def union_bbox(boxes: list[tuple[int, int, int, int]]) -> tuple[int, int, int, int]:
    return (
        min(b[0] for b in boxes),
        min(b[1] for b in boxes),
        max(b[2] for b in boxes),
        max(b[3] for b in boxes),
    )
