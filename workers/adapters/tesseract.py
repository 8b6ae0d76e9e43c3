"""Tesseract 5, resident in the worker process through its C API (tesserocr).

A page costs one engine run and nothing around it: the page image goes to
Tesseract as it is in memory, and the language's models stay loaded from one
page to the next.  Run as a ``tesseract`` subprocess per page, each page
paid for a PNG written and read back, a process started, its traineddata
loaded and its TSV parsed: on the scan benchmark's pages, a third of its
time (1.00 s a page against 0.67 s resident, the same accuracy; the
benchmark ``tesseract_engine``).

Engines.  One ``TessBaseAPI`` per language combination (``eng``,
``eng+deu``), made on its first page in the process and kept; the page
segmentation mode and the resolution are set per page, so they cost no
engine of their own.  At most ``RESIDENT_LANGUAGES`` are kept, the least
recently used ended first, so that a process asked for many combinations
does not hold a model of each for ever.  Tesseract's API is not thread-safe:
each engine reads one page at a time, under its lock.  The tessdata it loads
is the one the ``tesseract`` binary lists (``tesseract --list-langs``), so
the engine reads exactly the languages the worker reports to the gateway.

Output.  ``GetTSVText`` is what ``tesseract ... tsv`` writes, with the same
block, paragraph and line numbers; words are grouped into lines, and lines
into paragraphs, from it as before.  The wheel's libtesseract may be newer
than the Debian binary's: a character here and there may differ between
them, never the grouping.

Time.  A page gets what is left of the job's budget as Tesseract's own
deadline (``Recognize(timeout=...)``): past it Tesseract stops at its next
check, the page fails ``engine_timeout`` and the engine reads the next page
as if nothing happened.  The job's soft time limit (a signal to the pool
process) also stops a page in the middle: tesserocr polls for signals while
Tesseract works.

Memory.  Tesseract is held to the pool process's address-space limit
(``workers.process_limits``) directly, and it does not always survive
reaching it: after a failed allocation Leptonica, its image library, hands
it no image, which it may read through (SIGSEGV, the process gone).  So a
page is first weighed against what is left of the limit
(``PAGE_BYTES_PER_PIXEL``, ``ENGINE_BYTES``) and refused
``resource_limit`` if it does not fit; never retried, the same page would
fail again.  An allocation that fails inside Tesseract all the same fails
the page ``resource_limit`` too: a C++ one is a ``MemoryError``; a
Leptonica one is only a message, after which Tesseract may go on with a
piece of the page missing, so Leptonica's messages are taken off stderr and
heard.  Either way the engine is ended and the next page gets a new one.
What would still end the process is handled as any lost pool process is:
Celery replaces it, and the sweep gives the job another attempt when its
lease expires, until its last (``lease_expired``).
"""

from __future__ import annotations

import ctypes
import logging
import math
import os
import re
import resource
import subprocess
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytesseract

from jobs.contract import ErrorCode
from jobs.errors import AdapterError, EngineUnavailable
from jobs.registry import DEFAULT_LANGUAGE
from workers.adapters.base import Line, PageAdapter, PageResult, Word, union_bbox

log = logging.getLogger(__name__)

_LANG = re.compile(r"[A-Za-z0-9_/]+(\+[A-Za-z0-9_/]+)*")  # eng, chi_sim, script/Latin, eng+deu
_WORD_LEVEL = 5
#: Tesseract's default, the ``tesseract`` binary's: fully automatic page segmentation, no OSD.
DEFAULT_PSM = 3
#: Language combinations whose engine a process keeps loaded (about 20-60 MB each).
RESIDENT_LANGUAGES = 4
#: Address space a page takes while Tesseract reads it, per pixel (5.6 bytes measured, 3.7 to 59 Mpx), and an
#: engine to load: a page that would not fit under the process's limit is refused before Tesseract starts.
PAGE_BYTES_PER_PIXEL = 8
ENGINE_BYTES = 128 << 20
#: What the layout's models may take beside the engine while it reads (``options.layout``: they look at the page
#: on a thread of their own meanwhile): the layout model's activations at its fixed input, and the table model's
#: on a crop it sees at most twice its input, with their copies; measured below 150 MB, kept with room to spare.
LAYOUT_BYTES = 256 << 20
#: How Leptonica and the C++ runtime say an allocation failed.
_OUT_OF_MEMORY = re.compile(rb"malloc fail|bad_alloc|[Cc]annot allocate memory|[Oo]ut of memory|no memory left")
#: ``tesseract --list-langs``'s first line: List of available languages in "/usr/share/.../tessdata/" (3):
_TESSDATA = re.compile(r'List of available languages in "(?P<path>.+)"')
_LIST_LANGS_SECONDS = 60
_TSV_COLUMNS = ("level", "page_num", "block_num", "par_num", "line_num", "word_num", "left", "top", "width", "height")


class TesseractAdapter(PageAdapter):
    name = "tesseract"

    def __init__(self) -> None:
        # Tesseract's OpenMP threads oversubscribe the cores as soon as two
        # worker processes run it at once; one thread per process is faster
        # overall.  Set before libtesseract is loaded (OpenMP reads it once),
        # and inherited by the ``tesseract`` binary the orientation step
        # runs; a value the operator set is left alone.
        os.environ.setdefault("OMP_THREAD_LIMIT", "1")
        self._tessdata: tuple[str, frozenset[str]] | None = None
        self._tessdata_lock = threading.Lock()
        self._engines = _Engines(RESIDENT_LANGUAGES)

    def recognise(self, page, image, options, deadline):
        lang = self._lang(options)
        psm = _psm(options)
        _check_headroom(page, image, loading=lang not in self._engines, layout=options.get("layout") is True)
        grey = image.convert("L")
        resolution = _resolution(image)
        with self._engines.use(lang, lambda: _Engine(self._installed()[0], lang)) as engine:
            timeout_ms = 0  # Tesseract: no limit
            if deadline is not None:
                # Rounded up, so that Tesseract never stops before the deadline it is checked against below;
                # at least 1, since 0 would be no limit.
                timeout_ms = max(math.ceil((deadline - time.monotonic()) * 1000), 1)
            with _leptonica_messages() as messages:
                try:
                    tsv = engine.read(grey, resolution, psm, timeout_ms)
                except MemoryError:
                    self._engines.discard(lang, engine)
                    raise AdapterError(
                        f"tesseract ran out of memory on page {page}", code=ErrorCode.RESOURCE_LIMIT
                    ) from None
                except RuntimeError as exc:  # tesserocr: the image could not be handed over
                    tsv, failure = None, str(exc)
                else:
                    failure = "tesseract stopped before the end of the page"
            if any(_OUT_OF_MEMORY.search(message) for message in messages):
                # Leptonica said an allocation failed: what came back, if anything, lacks part of the page.
                self._engines.discard(lang, engine)
                raise AdapterError(
                    f"tesseract ran out of memory on page {page}: {_first_memory_message(messages)}",
                    code=ErrorCode.RESOURCE_LIMIT,
                )
            if tsv is None:
                if deadline is not None and time.monotonic() >= deadline:
                    raise AdapterError(f"tesseract ran out of time on page {page}", code=ErrorCode.ENGINE_TIMEOUT)
                self._engines.discard(lang, engine)
                raise AdapterError(f"tesseract failed on page {page}: {failure}")
        return _page_result(page, _tsv_data(tsv))

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
        return self._installed()[1]

    def _installed(self) -> tuple[str, frozenset[str]]:
        """The tessdata directory the ``tesseract`` binary reads, and its languages (asked once)."""
        with self._tessdata_lock:
            if self._tessdata is None:
                self._tessdata = _list_languages()
            return self._tessdata


def _list_languages() -> tuple[str, frozenset[str]]:
    command = [pytesseract.pytesseract.tesseract_cmd, "--list-langs"]
    try:
        listing = subprocess.run(
            command,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,  # Tesseract 4 wrote the list there
            text=True,
            timeout=_LIST_LANGS_SECONDS,
            check=True,
        )
    except OSError:
        raise EngineUnavailable("the tesseract binary is not installed on this worker") from None
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
        raise EngineUnavailable(f"tesseract --list-langs failed: {exc}") from None
    lines = listing.stdout.splitlines()
    for at, line in enumerate(lines):
        found = _TESSDATA.match(line)
        if found is not None:
            return found["path"], frozenset(name.strip() for name in lines[at + 1 :] if name.strip())
    raise EngineUnavailable(f"tesseract --list-langs named no tessdata directory: {listing.stdout[:300]!r}")


class _Engine:
    """One ``TessBaseAPI`` with a language combination loaded."""

    def __init__(self, tessdata: str, lang: str) -> None:
        # Imported with the first engine, after the adapter set OMP_THREAD_LIMIT: an OpenMP build of
        # libtesseract reads it once, when it loads.
        try:
            import tesserocr
        except ImportError:
            raise EngineUnavailable("tesserocr is not installed on this worker (pip install 'ocrgw[server]')") from None
        try:
            self.api = tesserocr.PyTessBaseAPI(path=tessdata, lang=lang)
        except RuntimeError as exc:
            raise EngineUnavailable(f"tesseract cannot load {lang!r} from {tessdata}: {exc}") from None
        _route_leptonica_messages()
        self.lock = threading.Lock()
        self.ended = False

    def read(self, grey: Any, resolution: int, psm: int, timeout_ms: int) -> str | None:
        """The page's TSV; None when Tesseract stopped early (its deadline, or a failure inside)."""
        self.api.SetImage(grey)
        # After SetImage, which resets it.  0 is "not known": Tesseract estimates it from the glyphs, as the
        # binary does for a PNG without a resolution.
        self.api.SetSourceResolution(resolution)
        self.api.SetPageSegMode(psm)
        if not self.api.Recognize(timeout=timeout_ms):
            return None
        return self.api.GetTSVText(0)

    def end(self) -> None:
        self.ended = True
        self.api.End()


class _Engines:
    """The resident engines of one process by language, the least recently used first; at most ``limit``."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._engines: OrderedDict[str, _Engine] = OrderedDict()
        self._lock = threading.Lock()

    @contextmanager
    def use(self, lang: str, make: Any) -> Iterator[_Engine]:
        """The engine of ``lang``, made by ``make()`` if there is none, held for one page."""
        while True:
            engine = self._get(lang, make)
            with engine.lock:
                if engine.ended:  # ended by another thread between the two locks: take the next one
                    continue
                yield engine
                return

    def _get(self, lang: str, make: Any) -> _Engine:
        evicted: list[_Engine] = []
        with self._lock:
            engine = self._engines.get(lang)
            if engine is None:
                engine = self._engines[lang] = make()
                while len(self._engines) > self.limit:
                    evicted.append(self._engines.popitem(last=False)[1])
            self._engines.move_to_end(lang)
        for old in evicted:
            with old.lock:  # after the page it may be reading
                old.end()
        return engine

    def discard(self, lang: str, engine: _Engine) -> None:
        """Ends ``engine``, which its caller holds: the next page of ``lang`` gets a new one."""
        with self._lock:
            if self._engines.get(lang) is engine:
                del self._engines[lang]
        engine.end()

    def __len__(self) -> int:
        return len(self._engines)

    def __contains__(self, lang: str) -> bool:
        return lang in self._engines

    def get(self, lang: str) -> _Engine | None:
        return self._engines.get(lang)


def _check_headroom(page: int, image, loading: bool, layout: bool = False) -> None:
    """Refuses a page that would take Tesseract past the process's address-space limit.

    Tesseract does not always survive a failed allocation: a NULL image
    from Leptonica may end the process (SIGSEGV) instead of the page.  So
    the page is measured against what is left of the limit first, and
    refused (``resource_limit``) if it does not fit with room to spare.
    """
    limit = resource.getrlimit(resource.RLIMIT_AS)[0]
    if limit == resource.RLIM_INFINITY:
        return
    needed = (
        image.width * image.height * PAGE_BYTES_PER_PIXEL
        + (ENGINE_BYTES if loading else 0)
        + (LAYOUT_BYTES if layout else 0)
    )
    left = limit - _address_space()
    if needed > left:
        raise AdapterError(
            f"page {page} ({image.width}x{image.height} pixels) needs about {needed >> 20} MiB to read and this "
            f"worker process has {max(left, 0) >> 20} MiB of its memory limit left",
            code=ErrorCode.RESOURCE_LIMIT,
        )


def _address_space() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[0]) * resource.getpagesize()


# -- Leptonica's messages --------------------------------------------------------------------------

#: The ctypes callback given to Leptonica, kept alive for as long as Leptonica may call it.
_leptonica_handler: Any = None
_leptonica_lock = threading.Lock()
_capture = threading.local()


def _route_leptonica_messages() -> None:
    """Leptonica writes its errors to stderr and goes on; here they come to ``_on_leptonica_message`` instead.

    Done once per process, with the Leptonica that tesserocr loaded (found among the process's mappings).
    """
    global _leptonica_handler
    with _leptonica_lock:
        if _leptonica_handler is not None:
            return
        library = _loaded_library(("libleptonica", "liblept."))
        if library is None:
            log.warning("Leptonica is not among this process's libraries: its out-of-memory messages go unseen")
            _leptonica_handler = False
            return
        handler = ctypes.CFUNCTYPE(None, ctypes.c_char_p)(_on_leptonica_message)
        ctypes.CDLL(library).leptSetStderrHandler(handler)
        _leptonica_handler = handler


def _on_leptonica_message(message: bytes | None) -> None:
    # Called from C, maybe with no memory left even for the message: one that cannot be kept says that much.
    messages = getattr(_capture, "messages", None)
    if messages is not None and message:
        try:
            messages.append(message)
        except MemoryError:
            _capture.lost[0] = True


@contextmanager
def _leptonica_messages() -> Iterator[list[bytes]]:
    """The messages Leptonica gives on this thread until the block ends (the page's), logged after it."""
    messages: list[bytes] = []
    _capture.lost = [False]  # made before the page, so that the callback need not allocate to set it
    _capture.messages = messages
    try:
        yield messages
    finally:
        _capture.messages = None
        if _capture.lost[0]:
            messages.append(b"a message lost: no memory left to keep it")
        for message in messages:
            log.debug("leptonica: %s", message.decode(errors="replace").rstrip())


def _first_memory_message(messages: list[bytes]) -> str:
    first = next(message for message in messages if _OUT_OF_MEMORY.search(message))
    return first.decode(errors="replace").strip()


def _loaded_library(prefixes: tuple[str, ...]) -> str | None:
    for line in Path("/proc/self/maps").read_text().splitlines():
        fields = line.split(maxsplit=5)  # address, perms, offset, device, inode, and the file if any
        if len(fields) == 6 and fields[5].startswith("/") and Path(fields[5]).name.startswith(prefixes):
            return fields[5]
    return None


# -- options and results ---------------------------------------------------------------------------


def _psm(options: dict) -> int:
    psm = options.get("psm")
    if psm is None:
        return DEFAULT_PSM
    if isinstance(psm, bool) or not isinstance(psm, int) or not 0 <= psm <= 13:
        raise AdapterError("options.psm must be an integer from 0 to 13", code=ErrorCode.INVALID_OPTIONS)
    return psm


def _resolution(image) -> int:
    """The rendering (or scanning) resolution, or 0 when the image states none: Tesseract then estimates it
    from the glyphs' sizes (and takes anything below 70 dpi as 70)."""
    dpi = image.info.get("dpi")
    return round(dpi[0]) if dpi else 0


def _tsv_data(tsv: str) -> dict[str, list]:
    """Tesseract's TSV (without its header row) as columns, numbers as numbers."""
    data: dict[str, list] = {name: [] for name in (*_TSV_COLUMNS, "conf", "text")}
    for row in tsv.splitlines():
        fields = row.split("\t", 11)
        if len(fields) < 12:
            continue
        for name, value in zip(_TSV_COLUMNS, fields, strict=False):
            data[name].append(int(value))
        data["conf"].append(float(fields[10]))
        data["text"].append(fields[11])
    return data


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
