"""A PDF OCRed before, and an encrypted PDF, through ``ocrgw ocr`` and the API, end to end.

The shared stack (real gateway, Celery worker with Tesseract, coordinator,
beat, Redis) and the command as a process of its own, as ``ocrmypdf`` would
be run.  The OCRed-before PDF is a scan of real pages with an invisible text
layer and a printed legend (``tests.ocr_layers``): its text holds the legend
twice.  Read again with ``--force-ocr`` or ``--redo-ocr``, each word of the
output's text (as PDFium extracts it, as a search finds it) is there once:
the page's words about as often as the source has them, the legend's exactly
once, the old layer's stray word not at all; and the legend is still drawn
from its own untouched content stream.  The same holds of a PDF OCRmyPDF
made searchable (its layer drawn in a form XObject), made here with the
OCRmyPDF the tests install.  An AES-encrypted PDF that needs a
password is refused before anything is stored (422 ``encrypted_document``,
exit 8); one with an owner password only is read as any other.
"""

from __future__ import annotations

import io
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pikepdf
import pypdfium2 as pdfium
import pytest
from PIL import ImageChops, ImageStat

from cli.ocr import EXIT_ENCRYPTED_PDF
from tests.integration.live import assert_problem, job_keys
from tests.integration.test_cli import ocrgw
from tests.ocr_layers import LEGEND, STALE_WORD, earlier_ocr_pdf, legend_box, with_visible_text
from tests.scans import page_accuracy, page_texts, scanned_pdf, source_text

pytestmark = pytest.mark.integration

PAGES = (0, 3)
#: Tesseract reads these 200-dpi scans at about 0.97 of the source's words.
MIN_WORDS_FOUND = 0.9
#: Words beyond what the source has: OCR's misreads, a few in a hundred; a second copy of the text would be 1.0.
MAX_EXTRA_WORDS = 0.1
MIN_PAGE_ACCURACY = 0.9
OCRMYPDF_TIMEOUT = 300  # seconds; bounds a hang of the tool that makes the input, not a speed check


def encrypted(pdf: bytes, user: str) -> bytes:
    """``pdf`` encrypted with AES-256 (R=6): ``user`` is the password to open it (empty: an owner password only)."""
    with pikepdf.open(io.BytesIO(pdf)) as document:
        buffer = io.BytesIO()
        restricted = pikepdf.Permissions(extract=False, modify_other=False)
        document.save(buffer, encryption=pikepdf.Encryption(user=user, owner="owner-secret", R=6, allow=restricted))
        return buffer.getvalue()


def job_id_of(stderr: str) -> str:
    found = re.search(r"job (\S+)", stderr)
    assert found, stderr
    return found.group(1)


def legend_stream(pdf: bytes, index: int) -> bytes:
    with pikepdf.open(io.BytesIO(pdf)) as document:
        contents = document.pages[index].obj.Contents
        streams = list(contents) if isinstance(contents, pikepdf.Array) else [contents]
        (legend,) = [s.read_raw_bytes() for s in streams if b"/Legend" in s.read_bytes()]
        return legend


def legend_drawing(pdf: bytes, index: int):
    document = pdfium.PdfDocument(pdf)
    try:
        page = document[index]
        image = page.render(scale=200 / 72, grayscale=True).to_pil().convert("L")
    finally:
        document.close()
    return image.crop(legend_box(*image.size))


@pytest.mark.parametrize("mode", ["--force-ocr", "--redo-ocr"])
def test_a_pdf_ocred_before_and_ocred_again_has_each_word_once_and_its_printed_text_untouched(api, tmp_path, mode):
    # Given a scan OCRed before: an invisible layer of its words, and a printed legend the layer also holds
    document = earlier_ocr_pdf(PAGES)
    (tmp_path / "before.pdf").write_bytes(document)
    before = page_texts(document)
    assert all(text.count("ZEPHYR") == 2 and STALE_WORD in text for text in before)

    # When it is read again
    done = ocrgw(api.base_url, "ocr", str(tmp_path / "before.pdf"), str(tmp_path / "after.pdf"), mode)

    # Then each page's words are found once: the legend's exactly once, the old layer's stray word not at all
    assert done.returncode == 0, done.stderr
    output = (tmp_path / "after.pdf").read_bytes()
    for index, (source_index, text) in enumerate(zip(PAGES, page_texts(output), strict=True)):
        for word in LEGEND.split():
            assert text.split().count(word) == 1, (index, word, text[-300:])
        assert STALE_WORD not in text
        expected = Counter(source_text(source_index).split() + LEGEND.split())
        found = Counter(text.split())
        total = sum(expected.values())
        assert sum((found & expected).values()) >= MIN_WORDS_FOUND * total, (index, text[:300])
        assert sum((found - expected).values()) <= MAX_EXTRA_WORDS * total, (index, found - expected)
        # And the legend is still the page's own text, drawn by its own stream, as it was
        assert legend_stream(output, index) == legend_stream(document, index)
        difference = ImageChops.difference(legend_drawing(document, index), legend_drawing(output, index))
        assert ImageStat.Stat(difference).mean[0] < 1
    # And with --redo-ocr the result says which lines are the page's own text
    if mode == "--redo-ocr":
        result = api.result(job_id_of(done.stderr))
        for page in result["pages"]:
            own = [line["text"] for line in page["lines"] if line.get("source") == "text_layer"]
            assert own == [LEGEND], page["lines"]
            read = " ".join(line["text"] for line in page["lines"] if "source" not in line)
            assert "ZEPHYR" not in read and "QUOKKA" not in read
            assert page_accuracy(source_text(PAGES[page["page"] - 1]), read) >= MIN_PAGE_ACCURACY


def test_a_pdf_ocrmypdf_made_searchable_ocred_again_with_force_ocr_has_each_word_once(api, tmp_path):
    # Given a scan made searchable by OCRmyPDF (its layer drawn in a form XObject), with a legend printed on it
    (tmp_path / "scan.pdf").write_bytes(scanned_pdf([0]))
    ocrmypdf = Path(sys.executable).with_name("ocrmypdf")
    command = [str(ocrmypdf), "-q", "--output-type", "pdf", str(tmp_path / "scan.pdf"), str(tmp_path / "ocrmypdf.pdf")]
    made = subprocess.run(command, capture_output=True, text=True, timeout=OCRMYPDF_TIMEOUT)
    assert made.returncode == 0, made.stderr
    document = with_visible_text((tmp_path / "ocrmypdf.pdf").read_bytes(), LEGEND)
    (tmp_path / "before.pdf").write_bytes(document)
    (before,) = page_texts(document)
    assert page_accuracy(source_text(0), before.replace(LEGEND, "")) >= MIN_PAGE_ACCURACY

    # When ocrgw reads it again, every page OCRed
    done = ocrgw(api.base_url, "ocr", str(tmp_path / "before.pdf"), str(tmp_path / "after.pdf"), "--force-ocr")

    # Then OCRmyPDF's layer is gone, ocrgw's is there, and a search finds each word once
    assert done.returncode == 0, done.stderr
    (after,) = page_texts((tmp_path / "after.pdf").read_bytes())
    expected = Counter(source_text(0).split() + LEGEND.split())
    found = Counter(after.split())
    total = sum(expected.values())
    assert sum((found & expected).values()) >= MIN_WORDS_FOUND * total, after[:300]
    assert sum((found - expected).values()) <= MAX_EXTRA_WORDS * total, found - expected
    assert all(found[word] == 1 for word in LEGEND.split()), after[-200:]


def test_an_encrypted_pdf_is_refused_as_encrypted_document_and_ocrgw_ocr_exits_8_with_nothing_stored(api, db, tmp_path):
    sealed = encrypted(scanned_pdf([0]), user="user-secret")
    (tmp_path / "sealed.pdf").write_bytes(sealed)

    raw = api.post_raw(sealed, "application/pdf", model="tesseract")
    done = ocrgw(api.base_url, "ocr", str(tmp_path / "sealed.pdf"), str(tmp_path / "out.pdf"))
    forced = ocrgw(api.base_url, "ocr", str(tmp_path / "sealed.pdf"), str(tmp_path / "out.pdf"), "--force-ocr")

    body = assert_problem(raw, 422, "encrypted_document")
    assert "remove the encryption first" in body["detail"]
    for run in (done, forced):
        assert run.returncode == EXIT_ENCRYPTED_PDF, run.stderr
        assert "remove the encryption first" in run.stderr
    assert job_keys(db) == []
    assert not (tmp_path / "out.pdf").exists()


def test_a_pdf_with_an_owner_password_only_is_read_and_comes_back_searchable_and_unencrypted(api, tmp_path: Path):
    restricted = encrypted(scanned_pdf([0]), user="")
    (tmp_path / "restricted.pdf").write_bytes(restricted)

    done = ocrgw(api.base_url, "ocr", str(tmp_path / "restricted.pdf"), str(tmp_path / "out.pdf"))

    assert done.returncode == 0, done.stderr
    output = (tmp_path / "out.pdf").read_bytes()
    (text,) = page_texts(output)
    assert page_accuracy(source_text(0), text) >= MIN_PAGE_ACCURACY
    with pikepdf.open(io.BytesIO(output)) as searchable, pikepdf.open(io.BytesIO(restricted)) as original:
        assert original.is_encrypted and not searchable.is_encrypted
        scan = original.pages[0].resources.XObject["/Scan"].read_raw_bytes()
        assert searchable.pages[0].resources.XObject["/Scan"].read_raw_bytes() == scan
