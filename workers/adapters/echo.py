"""An engine-free adapter: the text/plain payload is its own OCR result.

It exercises the whole job pipeline (queues, progress, failures, latency)
at almost no cost, which is what throughput benchmarks and tests need.
"""

from __future__ import annotations

import math
import time

from jobs.errors import EchoFailed, InvalidDocument
from workers.adapters.base import Adapter, Line, OcrResult, PageResult, permanent_error

_NO_BOX = (0, 0, 0, 0)


class EchoAdapter(Adapter):
    name = "echo"

    def run(self, document, content_type, options, on_page=None):
        if content_type.split(";", 1)[0].strip().lower() != "text/plain":
            raise InvalidDocument(f"echo accepts text/plain only, not {content_type!r}")

        delay_ms = options.get("delay_ms")
        if delay_ms is None:
            delay_ms = 0
        if isinstance(delay_ms, bool) or not isinstance(delay_ms, (int, float)) or not 0 <= delay_ms < math.inf:
            raise permanent_error("options.delay_ms must be a number >= 0", "invalid_options")
        if delay_ms:
            time.sleep(delay_ms / 1000)
        if options.get("fail") is True:
            raise EchoFailed("echo asked to fail")

        try:
            text = document.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InvalidDocument(f"the text/plain body is not UTF-8: {exc}") from None

        lines = [Line(line, 1.0, _NO_BOX) for line in text.splitlines() if line.strip()]
        result = OcrResult(pages=[PageResult(page=1, text=text, lines=lines)])
        if on_page is not None:
            on_page(1, 1)
        return result
