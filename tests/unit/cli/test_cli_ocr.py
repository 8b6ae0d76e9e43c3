"""``ocrgw ocr``: what it asks the gateway for, and its OCRmyPDF exit statuses for what goes wrong before and after."""

from __future__ import annotations

import json

import pytest

from cli import ocr
from cli.client import ApiError
from cli.main import main
from tests.pdfs import image_pdf, text_pdf


def write(tmp_path, name: str, data: bytes):
    path = tmp_path / name
    path.write_bytes(data)
    return path


def test_the_flags_become_the_models_options():
    request = ocr.OcrRequest(languages=("eng", "deu+fra"), rotate_pages=True, deskew=True, skip_text=True)

    assert request.options() == {"lang": "eng+deu+fra", "rotate_pages": True, "deskew": True, "text_layer": "prefer"}
    assert ocr.OcrRequest().options() == {"text_layer": "ignore"}
    assert ocr.OcrRequest(force_ocr=True).options() == {"text_layer": "ignore"}
    assert ocr.OcrRequest(redo_ocr=True).options() == {"text_layer": "redo"}


def test_the_output_type_and_optimize_flags_become_the_jobs_pdf_options():
    assert ocr.OcrRequest(output_type="pdfa", optimize=2).options() == {
        "text_layer": "ignore",
        "output_type": "pdfa",
        "optimize": 2,
    }
    assert ocr.OcrRequest(output_type="pdfa-2").options()["output_type"] == "pdfa"  # OCRmyPDF's name of it


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (["--output-type", "pdfa-1"], "not PDF/A-1 or PDF/A-3"),
        (["--output-type", "pdfa-3"], "not PDF/A-1 or PDF/A-3"),
        (["--output-type", "none"], "a plain PDF (pdf) or PDF/A-2b"),
        (["-O", "3"], "the levels are 0, 1 and 2"),
    ],
)
def test_an_output_no_gateway_makes_is_status_1_before_anything_is_sent(served, ocrgw, tmp_path, flags, said):
    document = write(tmp_path, "scan.pdf", image_pdf("words"))

    result = ocrgw("ocr", str(document), str(tmp_path / "out.pdf"), "--force-ocr", *flags)

    assert result.exit_code == ocr.EXIT_BAD_ARGS
    assert said in result.stderr
    assert not any(h.get("Content-Type") for h in served.requests)


def test_a_pdf_with_text_is_refused_with_status_6_before_anything_is_sent(served, ocrgw, tmp_path):
    document = write(tmp_path, "digital.pdf", text_pdf("already searchable"))

    result = ocrgw("ocr", str(document), str(tmp_path / "out.pdf"))

    assert result.exit_code == ocr.EXIT_ALREADY_DONE_OCR
    assert "page 1 already has text" in result.stderr
    assert not (tmp_path / "out.pdf").exists()
    assert not any(h.get("Content-Type") for h in served.requests)  # nothing was submitted


def test_the_first_page_with_text_is_found_in_a_scan_with_one_digital_page():
    assert ocr.first_page_with_text(image_pdf("a picture only")) is None
    assert ocr.first_page_with_text(text_pdf("one", "two")) == 1
    assert ocr.first_page_with_text(b"%PDF-1.7 not really") is None  # the gateway says what is wrong


@pytest.mark.parametrize(
    "flags", [("--skip-text", "--force-ocr"), ("--skip-text", "--redo-ocr"), ("--force-ocr", "--redo-ocr")]
)
def test_two_of_skip_text_force_ocr_and_redo_ocr_are_status_1(served, ocrgw, tmp_path, flags):
    document = write(tmp_path, "scan.pdf", image_pdf("words"))

    result = ocrgw("ocr", str(document), str(tmp_path / "out.pdf"), *flags)

    assert result.exit_code == ocr.EXIT_BAD_ARGS
    assert "mutually exclusive" in result.stderr
    assert not any(h.get("Content-Type") for h in served.requests)  # nothing was submitted


def test_an_input_that_is_missing_or_not_a_document_is_status_2(served, ocrgw, tmp_path):
    missing = ocrgw("ocr", str(tmp_path / "nothing.pdf"), str(tmp_path / "out.pdf"))
    notes = ocrgw("ocr", str(write(tmp_path, "notes.txt", b"plain text")), str(tmp_path / "out.pdf"))

    assert missing.exit_code == ocr.EXIT_INPUT_FILE
    assert "cannot read" in missing.stderr
    assert notes.exit_code == ocr.EXIT_INPUT_FILE
    assert "not a PDF, PNG, JPEG or TIFF" in notes.stderr


def test_a_gateway_that_cannot_be_reached_is_status_15(tmp_path):
    from click.testing import CliRunner

    document = write(tmp_path, "scan.pdf", image_pdf("words"))

    result = CliRunner().invoke(
        main, ["--url", "http://127.0.0.1:9", "ocr", str(document), str(tmp_path / "out.pdf"), "--force-ocr"]
    )

    assert result.exit_code == ocr.EXIT_OTHER_ERROR
    assert "cannot reach the gateway" in result.stderr


@pytest.mark.parametrize(
    ("code", "http_status", "status"),
    [
        ("unsupported_language", 422, ocr.EXIT_MISSING_DEPENDENCY),
        ("invalid_document", 422, ocr.EXIT_INPUT_FILE),
        ("encrypted_document", 422, ocr.EXIT_ENCRYPTED_PDF),
        ("too_many_pages", 422, ocr.EXIT_INPUT_FILE),
        ("payload_too_large", 413, ocr.EXIT_INPUT_FILE),
        ("invalid_field", 422, ocr.EXIT_BAD_ARGS),
        ("store_unavailable", 503, ocr.EXIT_OTHER_ERROR),
    ],
)
def test_the_gateways_problems_map_to_ocrmypdfs_statuses(code, http_status, status):
    from cli.client import ApiError

    assert ocr._status_of(ApiError(http_status, "t", code=code)) == status


def test_the_sidecar_has_each_pages_text_with_a_form_feed_between_pages():
    result = {"text": "one\n\ntwo", "pages": [{"page": 1, "text": "one"}, {"page": 2, "text": "two\n"}]}

    assert ocr.sidecar_text(result) == "one\n\ftwo\n"
    assert json.dumps(ocr.sidecar_text({"text": "only"})) == '"only"'


class _GatewayWithoutThePdf:
    """A gateway whose job completes and whose searchable PDF cannot be made (409 pdf_unavailable)."""

    def submit_json(self, job, headers):
        return {"id": "job-1"}

    def result_pdf(self, job_id):
        raise ApiError(409, "No PDF", "a page's font is not embedded, which PDF/A requires", "pdf_unavailable")


@pytest.mark.parametrize(
    ("output_type", "status"), [("pdf", ocr.EXIT_INVALID_OUTPUT_PDF), ("pdfa", ocr.EXIT_PDFA_CONVERSION_FAILED)]
)
def test_a_pdf_the_gateway_could_not_make_is_status_4_or_10_for_a_pdfa(monkeypatch, tmp_path, output_type, status):
    monkeypatch.setattr(
        ocr.waiting, "wait", lambda gateway, job_id, display, interval: {"status": "completed", "id": job_id}
    )
    document = write(tmp_path, "scan.pdf", image_pdf("words"))
    said: list[str] = []
    request = ocr.OcrRequest(force_ocr=True, output_type=output_type)

    returned = ocr.run(_GatewayWithoutThePdf(), document, tmp_path / "out.pdf", None, request, said.append)  # type: ignore[arg-type]

    assert returned == status
    assert "not embedded" in said[-1] and not (tmp_path / "out.pdf").exists()
