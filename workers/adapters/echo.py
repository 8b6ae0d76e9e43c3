"""An engine-free adapter: the text/plain payload is its own OCR result.

It exercises the whole job pipeline (queues, progress, failures, latency)
at almost no cost, which is what throughput benchmarks and tests need.

A form feed (``\\f``) separates pages, so a text can stand for a
multi-page document: progress is reported after each page, and a job
cancelled meanwhile stops there.

Options (declared once, as ``jobs.registry.EchoOptions``), all optional,
applied in this order once the first page's ``delay_ms`` has passed:

* ``delay_ms``: sleep this long for each page, like an engine working on it.
* ``crash: true``: end the worker process at once (``os._exit(1)``), the
  way an engine that segfaults takes its process down.  Only honoured when
  the worker runs with ``OCRGW_ECHO_ALLOW_CRASH=1``; refused otherwise.
* ``transient_fail: true``: fail with a transient error (``echo_transient``),
  which the worker retries while attempts remain.
* ``fail: true``: fail with a permanent error (``echo_failed``), never retried.
* ``fail_until: <unix seconds>``: the same, while the clock is before it: a
  document that fails for a while and then goes through (what a redrive is for).
"""

from __future__ import annotations

import json
import logging
import os
import sys
import time
from functools import lru_cache

from marshmallow import ValidationError

from documents.limits import check_pages, configured
from jobs.config import Settings
from jobs.contract import ErrorCode
from jobs.errors import AdapterError, EchoFailed, InvalidDocument
from jobs.registry import MODELS
from workers.adapters.base import Adapter, Line, OcrResult, PageResult, Word, page_indices

log = logging.getLogger(__name__)

_NO_BOX = (0, 0, 0, 0)


class EchoAdapter(Adapter):
    name = "echo"

    def __init__(self, allow_crash: bool | None = None):
        if allow_crash is None:
            allow_crash = bool(Settings.from_env().echo_allow_crash)
        self.allow_crash = allow_crash

    def run(self, document, content_type, options, on_page=None, *, pages=None):
        if content_type.split(";", 1)[0].strip().lower() != "text/plain":
            raise InvalidDocument(f"echo accepts text/plain only, not {content_type!r}")

        options = _read(options)
        delay_ms = options.get("delay_ms", 0)
        crash = options.get("crash", False)
        if crash and not self.allow_crash:
            raise AdapterError("options.crash is not enabled on this worker", code=ErrorCode.INVALID_OPTIONS)
        if delay_ms:
            time.sleep(delay_ms / 1000)
        if crash:
            log.warning("echo asked to crash: ending process %d", os.getpid())
            for stream in (sys.stdout, sys.stderr):
                stream.flush()
            os._exit(1)
        if options.get("transient_fail"):
            raise AdapterError("echo asked to fail transiently", code=ErrorCode.ECHO_TRANSIENT)
        if options.get("fail"):
            raise EchoFailed("echo asked to fail")
        if time.time() < options.get("fail_until", 0):
            raise EchoFailed("echo asked to fail for a while yet")

        # A page is a result entry of its own: a body of form feeds must not make millions of them.
        check_pages(document.count(b"\f") + 1, configured(), "text")
        try:
            text = document.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InvalidDocument(f"the text/plain body is not UTF-8: {exc}") from None

        all_texts = text.split("\f")
        texts = [all_texts[index] for index in page_indices(pages, len(all_texts))]
        results = []
        for number, page_text in enumerate(texts, start=1):
            if number > 1 and delay_ms:
                time.sleep(delay_ms / 1000)
            lines = [
                Line(line, 1.0, _NO_BOX, tuple(Word(word, 1.0, _NO_BOX) for word in line.split()))
                for line in page_text.splitlines()
                if line.strip()
            ]
            results.append(PageResult(page=number, text=page_text, lines=lines))
            if on_page is not None:
                on_page(number, len(texts))
        return OcrResult(pages=results)


def _read(options: dict) -> dict:
    """The options as the registry declares them (typed, defaults absent).

    The gateway refuses bad options at submission with the same schema;
    this only matters for jobs created straight through the store
    (benchmarks, tests), which must fail cleanly, not crash the worker.

    A group's children share their options, and loading them through the
    schema cost more than the rest of a no-op job in the worker: each
    distinct set is loaded once (``_loaded``), and none at all is none.
    """
    if not options:
        return {}
    try:
        canonical = json.dumps(options, sort_keys=True, separators=(",", ":"))
    except (TypeError, ValueError):  # not JSON (a caller outside the store): loaded as it is
        return _load(options)
    return dict(_loaded(canonical))


@lru_cache(maxsize=256)
def _loaded(canonical: str) -> dict:
    # Only a load that succeeded is kept: a refused one raises again at the next job that carries it.
    return _load(json.loads(canonical))


def _load(options: dict) -> dict:
    try:
        return MODELS["echo"].options_schema.load(options)
    except ValidationError as error:
        messages = error.messages if isinstance(error.messages, dict) else {"_schema": error.messages}
        reasons = "; ".join(f"options.{name}: {' '.join(map(str, why))}" for name, why in messages.items())
        raise AdapterError(reasons, code=ErrorCode.INVALID_OPTIONS) from None
