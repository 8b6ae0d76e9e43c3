"""Tesseract 5 through pytesseract, one ``tesseract`` subprocess per page."""

from __future__ import annotations

import os
import re
import threading
import time

import pytesseract
from pytesseract import Output

from jobs.contract import ErrorCode
from jobs.errors import AdapterError, EngineUnavailable
from jobs.registry import DEFAULT_LANGUAGE
from workers.adapters.base import Line, PageAdapter, PageResult, Word, union_bbox

_LANG = re.compile(r"[A-Za-z0-9_/]+(\+[A-Za-z0-9_/]+)*")  # eng, chi_sim, script/Latin, eng+deu
_WORD_LEVEL = 5
# How Leptonica and the C++ runtime say an allocation failed.
_OUT_OF_MEMORY = re.compile(r"malloc fail|bad_alloc|[Cc]annot allocate memory|[Oo]ut of memory")


class TesseractAdapter(PageAdapter):
    name = "tesseract"

    def __init__(self) -> None:
        # Tesseract's OpenMP threads oversubscribe the cores as soon as two
        # worker processes run it at once; one thread per process is faster
        # overall.  This writes the environment the tesseract subprocess
        # inherits rather than reading ocrgw's configuration: OMP_THREAD_LIMIT
        # is OpenMP's own variable, pytesseract has no other way to hand it to
        # the subprocess, and a value the operator set is left alone.
        os.environ.setdefault("OMP_THREAD_LIMIT", "1")
        self._languages: frozenset[str] | None = None
        self._languages_lock = threading.Lock()

    def recognise(self, page, image, options, deadline):
        lang = self._lang(options)
        config = _config(options, image)
        timeout = 0  # pytesseract: no limit
        if deadline is not None:
            # pytesseract treats 0 as "no limit"; never let rounding get there.
            timeout = max(deadline - time.monotonic(), 0.001)
        try:
            data = pytesseract.image_to_data(
                image.convert("L"), lang=lang, config=config, output_type=Output.DICT, timeout=timeout
            )
        except pytesseract.TesseractNotFoundError:
            raise EngineUnavailable("the tesseract binary is not installed on this worker") from None
        except pytesseract.TesseractError as exc:
            reason = exc.message or str(exc.status)
            if _OUT_OF_MEMORY.search(reason):
                # It inherits the worker process's address-space limit; the same page would fail again.
                raise AdapterError(
                    f"tesseract ran out of memory on page {page}: {reason}", code=ErrorCode.RESOURCE_LIMIT
                ) from None
            raise AdapterError(f"tesseract failed on page {page}: {reason}") from None
        except RuntimeError as exc:  # pytesseract's only signal of its timeout
            if "timeout" not in str(exc).lower():
                raise AdapterError(f"tesseract failed on page {page}: {exc}") from None
            raise AdapterError(f"tesseract timed out on page {page}", code=ErrorCode.ENGINE_TIMEOUT) from None
        return _page_result(page, data)

    def _lang(self, options: dict) -> str:
        lang = options.get("lang", DEFAULT_LANGUAGE)
        if not isinstance(lang, str) or not _LANG.fullmatch(lang):
            raise AdapterError("options.lang must look like 'eng' or 'eng+deu'", code=ErrorCode.INVALID_OPTIONS)
        missing = set(lang.split("+")) - self._installed_languages()
        if missing:
            # Tesseract would fail on every retry; say so once, clearly.
            raise AdapterError(
                f"tesseract language(s) not installed: {', '.join(sorted(missing))}",
                code=ErrorCode.UNSUPPORTED_LANGUAGE,
            )
        return lang

    def _installed_languages(self) -> frozenset[str]:
        with self._languages_lock:
            if self._languages is None:
                try:
                    self._languages = frozenset(pytesseract.get_languages())
                except pytesseract.TesseractNotFoundError:
                    raise EngineUnavailable("the tesseract binary is not installed on this worker") from None
            return self._languages


def _config(options: dict, image) -> str:
    args = []
    psm = options.get("psm")
    if psm is not None:
        if isinstance(psm, bool) or not isinstance(psm, int) or not 0 <= psm <= 13:
            raise AdapterError("options.psm must be an integer from 0 to 13", code=ErrorCode.INVALID_OPTIONS)
        args.append(f"--psm {psm}")
    dpi = image.info.get("dpi")
    if dpi and dpi[0] >= 70:
        # The rendering (or scanning) resolution; without it Tesseract guesses
        # from glyph sizes.  Below 70 Tesseract ignores the value anyway.
        args.append(f"--dpi {round(dpi[0])}")
    return " ".join(args)


def _page_result(page: int, data: dict) -> PageResult:
    """Group Tesseract's words into lines, and lines into paragraphs."""
    lines: dict[tuple[int, int, int], list[Word]] = {}
    for i, level in enumerate(data["level"]):
        text = str(data["text"][i]).strip()
        conf = data["conf"][i]
        if level != _WORD_LEVEL or not text or not isinstance(conf, (int, float)) or conf < 0:
            continue
        x, y, w, h = data["left"][i], data["top"][i], data["width"][i], data["height"][i]
        key = (data["block_num"][i], data["par_num"][i], data["line_num"][i])
        lines.setdefault(key, []).append(Word(text, conf / 100, (x, y, x + w, y + h)))

    result: list[Line] = []
    text_parts: list[str] = []
    previous_paragraph = None
    for (block, par, _), words in lines.items():
        line = Line(
            text=" ".join(word.text for word in words),
            confidence=sum(word.confidence for word in words) / len(words),
            bbox=union_bbox([word.bbox for word in words]),
            words=tuple(words),
        )
        if previous_paragraph is not None and previous_paragraph != (block, par):
            text_parts.append("")
        previous_paragraph = (block, par)
        result.append(line)
        text_parts.append(line.text)
    return PageResult(page=page, text="\n".join(text_parts), lines=result)
