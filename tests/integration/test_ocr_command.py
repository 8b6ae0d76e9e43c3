"""``ocrgw ocr`` end to end: a scanned, partly turned and skewed PDF becomes a searchable PDF of its pages, upright.

The command runs as a process of its own against the shared stack (real
gateway, Celery worker with Tesseract, coordinator, beat, Redis), as
``ocrmypdf`` would be run: INPUT OUTPUT with ``--rotate-pages --deskew
--sidecar``.  What comes back is checked as a reader would: the output has
the scan's pages, each displayed upright (Tesseract's orientation detection
on the page as a viewer draws it says so), its invisible text is the
source's text, its size is about the scan's, and the sidecar has each
page's text.  Then the statuses a script relies on: a PDF with text already
is 6, a language no worker has is 3, with nothing stored.
"""

from __future__ import annotations

import re
from pathlib import Path

import pikepdf
import pypdfium2 as pdfium
import pytesseract
import pytest

from cli.ocr import EXIT_ALREADY_DONE_OCR, EXIT_MISSING_DEPENDENCY
from tests.harness import wait_until
from tests.integration.live import job_keys
from tests.integration.test_cli import ocrgw
from tests.pdfs import text_pdf
from tests.scans import page_accuracy, page_texts, real_pdf, scanned_pdf, source_text

pytestmark = pytest.mark.integration

PAGES = (0, 1, 2)
TURNED = {1: 90}
SKEWED = {2: 3.0}
#: Tesseract reads these 200-dpi scans at about 0.97 of the source's characters; a page read sideways, under 0.3.
MIN_PAGE_ACCURACY = 0.9
REPORTED_WITHIN = 60.0  # a worker renews its report every 10 s; bounds a hang, not a speed check


def tesseract_languages(api) -> list[str]:
    return next(m["languages"] for m in api.get("/models")["models"] if m["name"] == "tesseract")


def displayed_orientation(pdf: bytes, index: int) -> int:
    """What Tesseract's orientation detection says of page ``index`` as a viewer draws it (0: upright)."""
    document = pdfium.PdfDocument(pdf)
    try:
        page = document[index]
        image = page.render(scale=150 / 72, grayscale=True).to_pil()
        page.close()
    finally:
        document.close()
    osd = pytesseract.image_to_osd(image, config="--dpi 150")
    return int(re.search(r"Orientation in degrees: (\d+)", osd).group(1))  # type: ignore[union-attr]


def test_a_turned_and_skewed_scan_comes_back_searchable_and_upright(api, tmp_path: Path):
    source = real_pdf()
    scan = scanned_pdf(PAGES, turned=TURNED, skewed=SKEWED, pdf=source)
    (tmp_path / "scan.pdf").write_bytes(scan)
    out, sidecar = tmp_path / "searchable.pdf", tmp_path / "searchable.txt"

    done = ocrgw(
        api.base_url, "ocr", str(tmp_path / "scan.pdf"), str(out), "--rotate-pages", "--deskew",
        "--sidecar", str(sidecar), "-j", "2",
    )  # fmt: skip

    assert done.returncode == 0, done.stderr
    pdf = out.read_bytes()
    references = [source_text(i, source) for i in PAGES]
    texts = page_texts(pdf)
    assert len(texts) == len(PAGES)
    for index, (reference, text) in enumerate(zip(references, texts, strict=True)):
        assert page_accuracy(reference, text) >= MIN_PAGE_ACCURACY, (index, text[:300])
        assert displayed_orientation(pdf, index) == 0, f"page {index + 1} is not shown upright"
    text_bytes = sum(len(t.encode()) for t in texts)
    assert len(pdf) <= 1.1 * len(scan) + 4 * text_bytes + 20_000  # the scan kept, the text layer added
    with pikepdf.open(out) as searchable, pikepdf.open(tmp_path / "scan.pdf") as original:
        assert [p.mediabox for p in searchable.pages] == [p.mediabox for p in original.pages]
    pages_in_sidecar = sidecar.read_text().split("\f")
    assert len(pages_in_sidecar) == len(PAGES)
    for reference, text in zip(references, pages_in_sidecar, strict=True):
        assert page_accuracy(reference, text) >= MIN_PAGE_ACCURACY


def test_a_pdf_with_text_is_status_6_and_a_missing_language_status_3_with_nothing_stored(api, db, tmp_path: Path):
    digital = tmp_path / "digital.pdf"
    digital.write_bytes(text_pdf("born digital"))
    scan = tmp_path / "scan.pdf"
    scan.write_bytes(scanned_pdf([0]))

    # The database was emptied for this test, the worker's report of its languages with it: it comes back.
    wait_until(lambda: "eng" in tesseract_languages(api), REPORTED_WITHIN, message="no worker reported its languages")

    has_text = ocrgw(api.base_url, "ocr", str(digital), str(tmp_path / "a.pdf"))
    no_language = ocrgw(api.base_url, "ocr", str(scan), str(tmp_path / "b.pdf"), "-l", "eng+xyz")

    assert has_text.returncode == EXIT_ALREADY_DONE_OCR, has_text.stderr
    assert no_language.returncode == EXIT_MISSING_DEPENDENCY, no_language.stderr
    assert "unsupported_language" in no_language.stderr
    assert job_keys(db) == []
    assert not (tmp_path / "a.pdf").exists() and not (tmp_path / "b.pdf").exists()
