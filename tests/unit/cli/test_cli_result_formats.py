"""``ocrgw result ID --format hocr|alto``: the gateway's document, to stdout or to a file."""

from __future__ import annotations

import requests

from cli.main import EXIT_PROBLEM
from tests.unit.documents.markup_support import alto_pages, alto_words, hocr_pages, hocr_words


def submitted(ocrgw, tmp_path, *texts: str) -> str:
    files = []
    for i, text in enumerate(texts):
        path = tmp_path / f"doc{i}.txt"
        path.write_text(text)
        files.append(str(path))
    result = ocrgw("submit", *files, "--model", "echo", "--wait")
    assert result.exit_code == 0, result.output
    return result.stdout.splitlines()[0]


def served_document(served, job_id: str, suffix: str) -> bytes:
    response = requests.get(f"{served.url}/jobs/{job_id}/result.{suffix}", timeout=10)
    assert response.status_code == 200, response.text
    return response.content


def test_hocr_to_stdout_and_alto_to_a_file_are_the_gateways_documents(served, ocrgw, tmp_path):
    group_id = submitted(ocrgw, tmp_path, "alpha", "beta gamma")
    out = tmp_path / "result.xml"

    hocr = ocrgw("result", group_id, "--format", "hocr")
    alto = ocrgw("result", group_id, "--format", "alto", "-o", str(out))

    assert hocr.exit_code == alto.exit_code == 0
    assert hocr.stdout_bytes == served_document(served, group_id, "hocr")
    assert out.read_bytes() == served_document(served, group_id, "alto")
    assert alto.stdout == ""
    # echo's words are its text's, split at spaces, in page order
    assert [w.text for page in hocr_pages(hocr.stdout) for line in hocr_words(page) for w in line] == [
        "alpha", "beta", "gamma"]  # fmt: skip
    assert [w.text for page in alto_pages(out.read_text()) for line in alto_words(page) for w in line] == [
        "alpha", "beta", "gamma"]  # fmt: skip


def test_a_document_of_a_job_still_running_is_the_problem(served, ocrgw, tmp_path):
    served.worker.pause()
    path = tmp_path / "waits.txt"
    path.write_text("waits")
    job_id = ocrgw("submit", str(path), "--model", "echo").stdout.strip()

    result = ocrgw("result", job_id, "--format", "alto", "-o", str(tmp_path / "x.xml"))

    assert result.exit_code == EXIT_PROBLEM
    assert "(409, result_not_ready)" in result.stderr
    assert not (tmp_path / "x.xml").exists()


def test_submit_waits_and_writes_the_hocr(served, ocrgw, tmp_path):
    path = tmp_path / "doc.txt"
    path.write_text("written")
    out = tmp_path / "doc.hocr"

    result = ocrgw("submit", str(path), "--model", "echo", "--format", "hocr", "-o", str(out))

    assert result.exit_code == 0, result.output
    job_id = result.stdout.splitlines()[0]
    assert out.read_bytes() == served_document(served, job_id, "hocr")
