"""``ocrgw ocr INPUT OUTPUT``: the common ``ocrmypdf`` command line, run through a gateway.

A PDF is split into one child per page (``split_pages=1``), so its pages
are read in parallel by every worker the gateway has, at most ``--jobs`` at
once; an image is one job.  The live progress goes to stderr, the
searchable PDF (the original pages with the text added) to OUTPUT, the
job's id to stderr first (for ``ocrgw result ID --format hocr`` and the like), the
text to ``--sidecar``, one page after another, a form feed between pages,
as OCRmyPDF writes it.  ``--markdown FILE`` asks the job for each page's
layout too (the option ``layout``) and writes the document's Markdown
(``GET /jobs/{id}/result.md``: headings, paragraphs in reading order,
tables, no running headers or page numbers) to FILE.

As with OCRmyPDF, a PDF that already has text on a page is refused (exit
6) unless ``--skip-text`` (those pages keep their text, the others are
OCRed), ``--force-ocr`` (every page is OCRed; an earlier invisible OCR layer
is replaced, and a page's visible text keeps its words with no second copy:
see ``documents.searchable_pdf``) or ``--redo-ocr`` (an earlier invisible OCR
layer is replaced, the visible text is kept as it is, and OCR reads the
rest) says what to do with it; the three exclude each other.

``--output-type pdfa`` makes the output PDF/A-2b (``pdfa-2`` says the
same; PDF/A-1 and PDF/A-3, which OCRmyPDF also makes, are refused, status
1); the default is a plain PDF, which claims no PDF/A conformance, not
OCRmyPDF's default PDF/A.  ``-O/--optimize 0|1|2`` are OCRmyPDF's levels.
Both are options of the job, so ``ocrgw result ID --format pdf`` gets the
same PDF afterwards.

Exit statuses are OCRmyPDF's where they mean the same thing (``EXIT_*``):
a refused option is 1, an unreadable or refused input 2, a language no
worker has 3, an input with text already 6, a page an engine could not
read 7, a PDF that needs a password to open 8, an output that cannot be
written 5, a searchable PDF the gateway could not make 4 (10 for a PDF/A:
OCRmyPDF's "PDF/A conversion failed"); a gateway that cannot be
reached is 15 (OCRmyPDF's "other error"), an interrupt 130.
"""

from __future__ import annotations

import base64
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cli import waiting
from cli.client import ApiError, Gateway, Unreachable
from cli.statuses import COMPLETED
from cli.submitting import content_type_of

EXIT_OK = 0
EXIT_BAD_ARGS = 1
EXIT_INPUT_FILE = 2
EXIT_MISSING_DEPENDENCY = 3
EXIT_INVALID_OUTPUT_PDF = 4
EXIT_FILE_ACCESS_ERROR = 5
EXIT_ALREADY_DONE_OCR = 6
EXIT_CHILD_PROCESS_ERROR = 7
EXIT_ENCRYPTED_PDF = 8
EXIT_PDFA_CONVERSION_FAILED = 10
EXIT_OTHER_ERROR = 15
EXIT_CTRL_C = 130

PDF_TYPE = "application/pdf"
#: The extra that gives this command pypdfium2, to find the pages that already have text.
PDF_EXTRA = "pdf"
#: The problems about the document itself: OCRmyPDF's "input file" error. The gateway's error codes
#: as plain strings, so the client imports none of the server's packages.
_INPUT_PROBLEMS = frozenset(
    {
        "invalid_document",
        "empty_document",
        "unsupported_content_type",
        "content_type_mismatch",
        "too_many_pages",
        "too_many_children",
        "too_many_pixels",
        "payload_too_large",
    }
)
_LANGUAGE_PROBLEMS = frozenset({"unsupported_language"})
#: What --output-type takes: what the gateway makes, and OCRmyPDF's name of the same PDF/A.
OUTPUT_TYPE_ALIASES = {"pdfa-2": "pdfa"}
OUTPUT_TYPES = ("pdf", "pdfa", *OUTPUT_TYPE_ALIASES)
OPTIMIZE_LEVELS = (0, 1, 2)
_ENCRYPTED_PROBLEMS = frozenset({"encrypted_document"})
PAGE_SEPARATOR = "\f"


#: The range of the option image_dpi (the gateway's, ``jobs.registry``, which the command line does not import).
MIN_IMAGE_DPI, MAX_IMAGE_DPI = 50, 4800


@dataclass(frozen=True)
class OcrRequest:
    """What the flags ask for."""

    model: str = "tesseract"
    languages: tuple[str, ...] = ()
    rotate_pages: bool = False
    deskew: bool = False
    skip_text: bool = False
    force_ocr: bool = False
    jobs: int | None = None
    output_type: str = "pdf"  # OCRmyPDF's --output-type: pdf, or pdfa (PDF/A-2b)
    optimize: int = 0  # OCRmyPDF's --optimize level
    redo_ocr: bool = False
    image_dpi: float | None = None  # an image's resolution, as OCRmyPDF's --image-dpi
    layout: bool = False  # read each page's layout (--markdown)

    def options(self) -> dict[str, Any]:
        options: dict[str, Any] = {}
        if self.languages:
            options["lang"] = "+".join(part for lang in self.languages for part in lang.split("+") if part)
        if self.rotate_pages:
            options["rotate_pages"] = True
        if self.deskew:
            options["deskew"] = True
        options["text_layer"] = "prefer" if self.skip_text else "redo" if self.redo_ocr else "ignore"
        if self.output_type != "pdf":
            options["output_type"] = OUTPUT_TYPE_ALIASES.get(self.output_type, self.output_type)
        if self.optimize:
            options["optimize"] = self.optimize
        options.update(image_resolution(self.image_dpi))
        if self.layout:
            options["layout"] = True
        return options

    def says_what_to_do_with_text(self) -> bool:
        return self.skip_text or self.force_ocr or self.redo_ocr


def image_resolution(image_dpi: float | None) -> dict[str, float | int]:
    """``--image-dpi`` as the option, a whole number as an integer (as it was typed, most likely)."""
    if image_dpi is None:
        return {}
    return {"image_dpi": int(image_dpi) if float(image_dpi).is_integer() else image_dpi}


class OcrFailed(Exception):
    """The run stops: ``status`` is the exit status, ``why`` the line to print."""

    def __init__(self, status: int, why: str):
        super().__init__(why)
        self.status, self.why = status, why


def run(
    gateway: Gateway,
    input_path: Path,
    output_path: Path,
    sidecar: Path | None,
    request: OcrRequest,
    say: Callable[[str], None],
    interval: float = waiting.POLL_SECONDS,
    markdown: Path | None = None,
) -> int:
    """Runs the whole command; returns its exit status, having said why on failure."""
    try:
        _run(gateway, input_path, output_path, sidecar, request, interval, say, markdown)
    except OcrFailed as failed:
        say(failed.why)
        return failed.status
    except ApiError as problem:
        say(str(problem))
        return _status_of(problem)
    except Unreachable as unreachable:
        say(str(unreachable))
        return EXIT_OTHER_ERROR
    except KeyboardInterrupt:
        say("interrupted; the job goes on on the gateway")
        return EXIT_CTRL_C
    return EXIT_OK


def _run(
    gateway: Gateway,
    input_path: Path,
    output_path: Path,
    sidecar: Path | None,
    request: OcrRequest,
    interval: float,
    say: Callable[[str], None],
    markdown: Path | None = None,
) -> None:
    if sum((request.skip_text, request.force_ocr, request.redo_ocr)) > 1:
        raise OcrFailed(EXIT_BAD_ARGS, "--skip-text, --force-ocr and --redo-ocr are mutually exclusive")
    if request.output_type not in OUTPUT_TYPES:
        raise OcrFailed(
            EXIT_BAD_ARGS,
            f"--output-type {request.output_type}: ocrgw makes a plain PDF (pdf) or PDF/A-2b (pdfa, or pdfa-2); "
            "not PDF/A-1 or PDF/A-3",
        )
    if request.optimize not in OPTIMIZE_LEVELS:
        raise OcrFailed(EXIT_BAD_ARGS, f"--optimize {request.optimize}: the levels are 0, 1 and 2")
    data, content_type = _read_input(input_path)
    if content_type == PDF_TYPE and not request.says_what_to_do_with_text():
        page = _first_page_with_text_or_say_what_is_missing(data)
        if page is not None:
            raise OcrFailed(
                EXIT_ALREADY_DONE_OCR,
                f"page {page} already has text: use --skip-text to OCR only the pages without, "
                "--force-ocr to OCR every page, or --redo-ocr to replace an earlier OCR layer",
            )
    view = _submit(gateway, data, content_type, request)
    say(f"job {view['id']}")  # what `ocrgw result ID --format hocr` and the others read afterwards
    final = waiting.wait(gateway, view["id"], waiting.display_for(sys.stderr, view["id"]), interval)
    if final["status"] != COMPLETED:
        raise OcrFailed(EXIT_CHILD_PROCESS_ERROR, "\n".join(waiting.why_not_completed(gateway, final)))
    try:
        pdf = gateway.result_pdf(final["id"])
    except ApiError as problem:
        if problem.code != "pdf_unavailable":
            raise
        # The text was read; the PDF could not be made of it (a PDF/A of a page whose fonts are not embedded).
        pdfa = OUTPUT_TYPE_ALIASES.get(request.output_type, request.output_type) == "pdfa"
        raise OcrFailed(EXIT_PDFA_CONVERSION_FAILED if pdfa else EXIT_INVALID_OUTPUT_PDF, str(problem)) from None
    _write(output_path, pdf)
    if sidecar is not None:
        _write(sidecar, sidecar_text(gateway.result(final["id"])).encode())
    if markdown is not None:
        _write(markdown, gateway.result_rendered(final["id"], "md"))


def _read_input(path: Path) -> tuple[bytes, str]:
    try:
        data = sys.stdin.buffer.read() if str(path) == "-" else path.read_bytes()
    except OSError as error:
        raise OcrFailed(EXIT_INPUT_FILE, f"cannot read {path}: {error.strerror or error}") from None
    content_type = content_type_of(path, data)
    if content_type not in (PDF_TYPE, "image/png", "image/jpeg", "image/tiff"):
        raise OcrFailed(EXIT_INPUT_FILE, f"{path} is not a PDF, PNG, JPEG or TIFF")
    return data, content_type


def _submit(gateway: Gateway, data: bytes, content_type: str, request: OcrRequest) -> dict[str, Any]:
    job: dict[str, Any] = {
        "model": request.model,
        "content_type": content_type,
        "payload": base64.b64encode(data).decode("ascii"),
        "options": request.options(),
    }
    if content_type == PDF_TYPE:
        job.update(split_pages=1, max_parallel=request.jobs or 0)
    return gateway.submit_json(job, {})


def _first_page_with_text_or_say_what_is_missing(pdf: bytes) -> int | None:
    try:
        return first_page_with_text(pdf)
    except ModuleNotFoundError as missing:
        raise OcrFailed(
            EXIT_MISSING_DEPENDENCY,
            f"looking for pages that already have text needs {missing.name}, which is not installed: "
            f"pip install 'ocrgw[{PDF_EXTRA}]' (or pass --skip-text, --force-ocr or --redo-ocr, which leave that "
            "to the gateway)",
        ) from None


def first_page_with_text(pdf: bytes) -> int | None:
    """The number of the first page that carries text of its own, or None (also for a PDF this cannot read).

    pypdfium2 is imported here, not with the module: the command line's own install has only what
    talks to the gateway (``ocrgw[pdf]`` adds it).
    """
    import pypdfium2 as pdfium

    try:
        document = pdfium.PdfDocument(pdf)
    except pdfium.PdfiumError:
        return None  # the gateway says what is wrong with it
    try:
        for index in range(len(document)):
            page = document[index]
            text_page = page.get_textpage()
            try:
                if text_page.get_text_range().strip():
                    return index + 1
            finally:
                text_page.close()
                page.close()
        return None
    finally:
        document.close()


def sidecar_text(result: dict[str, Any]) -> str:
    """The text of each page, a form feed between pages, as OCRmyPDF's sidecar has it."""
    pages = result.get("pages") or []
    if not pages:
        return result.get("text", "")
    return PAGE_SEPARATOR.join(page.get("text", "").rstrip("\n") + "\n" for page in pages)


def _write(path: Path, data: bytes) -> None:
    try:
        if str(path) == "-":
            sys.stdout.buffer.write(data)
            sys.stdout.buffer.flush()
        else:
            path.write_bytes(data)
    except OSError as error:
        raise OcrFailed(EXIT_FILE_ACCESS_ERROR, f"cannot write {path}: {error.strerror or error}") from None


def _status_of(problem: ApiError) -> int:
    if problem.code in _LANGUAGE_PROBLEMS:
        return EXIT_MISSING_DEPENDENCY
    if problem.code in _ENCRYPTED_PROBLEMS:
        return EXIT_ENCRYPTED_PDF
    if problem.code in _INPUT_PROBLEMS or problem.status == 413:
        return EXIT_INPUT_FILE
    if 400 <= problem.status < 500:
        return EXIT_BAD_ARGS
    return EXIT_OTHER_ERROR
