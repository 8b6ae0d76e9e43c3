"""``ocrgw ocr ... --markdown FILE``, ``ocrgw submit --format md`` and ``ocrgw result --format md``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import requests

from cli import main as cli_main
from cli import ocr
from tests.pdfs import image_pdf

MARKDOWN = b"<!-- page 1 -->\n\n# A title\n\nA paragraph.\n"


class _Gateway:
    """A gateway whose job completes at once: it keeps the job it was sent and answers its documents."""

    def __init__(self) -> None:
        self.jobs: list[dict[str, Any]] = []
        self.rendered: list[tuple[str, str]] = []

    def submit_json(self, job: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
        self.jobs.append(job)
        return {"id": "job-1"}

    def result_pdf(self, job_id: str) -> bytes:
        return b"%PDF-1.7 searchable"

    def result_rendered(self, job_id: str, fmt: str) -> bytes:
        self.rendered.append((job_id, fmt))
        return MARKDOWN


@pytest.fixture
def completes_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        ocr.waiting, "wait", lambda gateway, job_id, display, interval: {"status": "completed", "id": job_id}
    )


def scan(tmp_path: Path) -> Path:
    path = tmp_path / "scan.pdf"
    path.write_bytes(image_pdf("words"))
    return path


def test_markdown_asks_for_the_layout_and_writes_the_documents_markdown(completes_at_once, tmp_path):
    gateway = _Gateway()
    request = ocr.OcrRequest(force_ocr=True, layout=True)

    status = ocr.run(gateway, scan(tmp_path), tmp_path / "out.pdf", None, request, print, markdown=tmp_path / "o.md")  # type: ignore[arg-type]

    assert status == ocr.EXIT_OK
    (job,) = gateway.jobs
    assert job["options"]["layout"] is True
    assert gateway.rendered == [("job-1", "md")]
    assert (tmp_path / "o.md").read_bytes() == MARKDOWN
    assert (tmp_path / "out.pdf").read_bytes() == b"%PDF-1.7 searchable"


def test_without_markdown_no_layout_is_asked_and_no_markdown_read(completes_at_once, tmp_path):
    gateway = _Gateway()

    status = ocr.run(gateway, scan(tmp_path), tmp_path / "out.pdf", None, ocr.OcrRequest(force_ocr=True), print)  # type: ignore[arg-type]

    assert status == ocr.EXIT_OK
    assert "layout" not in gateway.jobs[0]["options"] and gateway.rendered == []


def test_an_unwritable_markdown_file_is_status_5(completes_at_once, tmp_path):
    said: list[str] = []
    request = ocr.OcrRequest(force_ocr=True, layout=True)
    markdown = tmp_path / "missing-directory" / "o.md"

    status = ocr.run(_Gateway(), scan(tmp_path), tmp_path / "out.pdf", None, request, said.append, markdown=markdown)  # type: ignore[arg-type]

    assert status == ocr.EXIT_FILE_ACCESS_ERROR
    assert f"cannot write {markdown}" in said[-1]


def test_the_markdown_flag_reaches_the_run(monkeypatch: pytest.MonkeyPatch, ocrgw, served, tmp_path):
    seen: dict[str, Any] = {}

    def run(gateway, input_file, output_file, sidecar, request, say, markdown=None):
        seen.update(request=request, markdown=markdown)
        return ocr.EXIT_OK

    monkeypatch.setattr(cli_main, "run_ocr", run)

    with_flag = ocrgw("ocr", str(scan(tmp_path)), str(tmp_path / "out.pdf"), "--markdown", str(tmp_path / "o.md"))
    asked = dict(seen)
    without = ocrgw("ocr", str(scan(tmp_path)), str(tmp_path / "out.pdf"))

    assert with_flag.exit_code == without.exit_code == 0, with_flag.output + without.output
    assert asked["request"].layout is True and asked["markdown"] == tmp_path / "o.md"
    assert seen["request"].layout is False and seen["markdown"] is None


def test_submit_writes_the_markdown_and_result_prints_it(served, ocrgw, tmp_path):
    document = tmp_path / "note.txt"
    document.write_text("first words")
    out = tmp_path / "note.md"

    submitted = ocrgw("submit", str(document), "--model", "echo", "--format", "md", "-o", str(out))
    job_id = submitted.stdout.splitlines()[0]
    printed = ocrgw("result", job_id, "--format", "md")

    assert submitted.exit_code == printed.exit_code == 0, submitted.output + printed.output
    served_markdown = requests.get(f"{served.url}/jobs/{job_id}/result.md", timeout=10)
    assert served_markdown.status_code == 200
    assert out.read_bytes() == printed.stdout_bytes == served_markdown.content
    assert served_markdown.text == "<!-- page 1 -->\n\nfirst words\n"


@pytest.mark.parametrize(
    ("options", "model", "types", "layout"),
    [
        ({}, None, {"application/pdf"}, True),  # Markdown of a scan: its structure is what is asked for
        ({}, "tesseract", {"image/png", "application/pdf"}, True),
        ({}, "echo", {"text/plain"}, None),  # a model without words would refuse it
        ({}, None, {"text/plain"}, None),
        ({"layout": False}, None, {"application/pdf"}, False),  # the option given by hand stands
    ],
)
def test_submit_asks_for_the_layout_when_the_result_is_wanted_as_markdown(options, model, types, layout):
    asked = cli_main._with_layout_for_markdown(options, fmt="md", model=model, content_types=types)

    assert asked.get("layout") is layout
    assert "layout" not in cli_main._with_layout_for_markdown({}, fmt="text", model=None, content_types=types)
