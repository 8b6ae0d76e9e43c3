"""The read commands (status, result, events, ls, models), cancel, and errors that are not the gateway's problems."""

from __future__ import annotations

import io
import json
import threading

import pytest
import requests
from click.testing import CliRunner
from rich.console import Console
from werkzeug.serving import make_server
from werkzeug.wrappers import Response

from cli.main import EXIT_PROBLEM, main
from cli.output import Printer
from cli.waiting import LiveDisplay


def submitted(ocrgw, tmp_path, *texts: str, extra: tuple[str, ...] = ("--wait",)) -> str:
    files = []
    for i, text in enumerate(texts):
        path = tmp_path / f"doc{i}.txt"
        path.write_text(text)
        files.append(str(path))
    result = ocrgw("submit", *files, "--model", "echo", *extra)
    assert result.exit_code == 0, result.output
    return result.stdout.splitlines()[0]


def api(served, path: str, **params):
    return requests.get(served.url + path, params=params, timeout=10).json()


def test_status_of_a_group_in_plain_lines(served, ocrgw, tmp_path):
    group_id = submitted(ocrgw, tmp_path, "one", "two")

    result = ocrgw("status", group_id)

    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert f"id: {group_id}" in lines
    assert "status: completed" in lines
    assert "counts: held 0, queued 0, processing 0, completed 2, failed 0, cancelled 0" in lines
    assert f"result: ocrgw result {group_id}" in lines
    assert [line.split("\t")[:3] for line in lines if line.startswith("child: ")] == [
        ["child: 0", "completed", f"{group_id}-0"],
        ["child: 1", "completed", f"{group_id}-1"],
    ]
    assert "\x1b[" not in result.output  # not a terminal: no colour codes


def test_status_json_is_the_gateways_view(served, ocrgw, tmp_path):
    job_id = submitted(ocrgw, tmp_path, "alone")

    result = ocrgw("status", job_id, "--json")

    assert result.exit_code == 0
    assert json.loads(result.stdout) == api(served, f"/jobs/{job_id}")


def test_status_of_an_unknown_job_is_the_not_found_problem(ocrgw):
    result = ocrgw("status", "nosuchjob")

    assert result.exit_code == EXIT_PROBLEM
    assert result.stderr == "ocrgw: Job not found (404, job_not_found): There is no job 'nosuchjob'.\n"


def test_result_as_text_json_and_to_a_file(served, ocrgw, tmp_path):
    group_id = submitted(ocrgw, tmp_path, "alpha", "beta")
    out = tmp_path / "result.json"

    text = ocrgw("result", group_id)
    as_json = ocrgw("result", group_id, "--json")
    to_file = ocrgw("result", group_id, "--format", "json", "-o", str(out))

    assert text.exit_code == as_json.exit_code == to_file.exit_code == 0
    assert text.stdout == "alpha\n\nbeta\n"
    merged = api(served, f"/jobs/{group_id}/result")
    assert json.loads(as_json.stdout) == merged == json.loads(out.read_text())
    assert to_file.stdout == ""


def test_result_of_a_job_still_running_and_a_pdf_of_text_are_problems(served, ocrgw, tmp_path):
    done = submitted(ocrgw, tmp_path, "text only")
    served.worker.pause()
    waiting = submitted(ocrgw, tmp_path, "waits", extra=())

    not_ready = ocrgw("result", waiting)
    no_pdf = ocrgw("result", done, "--format", "pdf", "-o", str(tmp_path / "x.pdf"))

    assert not_ready.exit_code == no_pdf.exit_code == EXIT_PROBLEM
    assert "(409, result_not_ready)" in not_ready.stderr
    assert "(409, pdf_unavailable)" in no_pdf.stderr
    assert not (tmp_path / "x.pdf").exists()


def test_events_one_line_each(served, ocrgw, tmp_path):
    group_id = submitted(ocrgw, tmp_path, "a", "b", "c")

    result = ocrgw("events", group_id)
    as_json = ocrgw("events", group_id, "--json")

    assert result.exit_code == as_json.exit_code == 0
    rows = [line.split("\t") for line in result.stdout.splitlines()]
    assert sorted((r[1], r[2], r[3]) for r in rows) == sorted(
        [("job_child", "completed", f"{group_id}-{i}") for i in range(3)] + [("job", "completed", group_id)]
    )
    assert json.loads(as_json.stdout) == api(served, f"/jobs/{group_id}/events")


def test_cancel_a_waiting_group_then_again(served, ocrgw, tmp_path):
    served.worker.pause()
    group_id = submitted(ocrgw, tmp_path, "x", "y", extra=())

    first = ocrgw("cancel", group_id)
    again = ocrgw("cancel", group_id)

    assert first.exit_code == 0
    assert first.stdout == f"{group_id} cancelled\n"
    assert api(served, f"/jobs/{group_id}")["status"] == "cancelled"
    assert again.exit_code == EXIT_PROBLEM
    assert "Job already finished (409, job_finished)" in again.stderr


def test_ls_filters_by_status_and_kind(served, ocrgw, tmp_path):
    single = submitted(ocrgw, tmp_path, "single")
    group = submitted(ocrgw, tmp_path, "g1", "g2")
    served.worker.pause()
    queued = submitted(ocrgw, tmp_path, "stays", extra=())

    everything = ocrgw("ls")
    groups = ocrgw("ls", "--kind", "parent")
    waiting = ocrgw("ls", "--status", "queued", "--json")

    assert [line.split("\t")[0] for line in everything.stdout.splitlines()] == [queued, group, single]
    assert groups.stdout.splitlines()[0].split("\t")[:5] == [group, "parent", "completed", "echo", "2/2"]
    assert len(groups.stdout.splitlines()) == 1
    assert [job["id"] for job in json.loads(waiting.stdout)["jobs"]] == [queued]


def test_ls_refuses_a_status_the_listing_does_not_have(ocrgw):
    result = ocrgw("ls", "--status", "held")

    assert result.exit_code == 2


def test_models(served, ocrgw):
    result = ocrgw("models")
    as_json = ocrgw("models", "--json")

    assert result.exit_code == 0
    names = [line.split("\t")[0] for line in result.stdout.splitlines()]
    assert {"echo", "tesseract", "paddleocr"} <= set(names)
    assert json.loads(as_json.stdout) == api(served, "/models")


@pytest.fixture
def stub(monkeypatch):
    """A server that answers every request with the one response a test gives it."""
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    answer: list[Response] = []
    server = make_server("127.0.0.1", 0, lambda environ, start: answer[0](environ, start))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()

    def serve(response: Response) -> str:
        answer[:] = [response]
        return f"http://127.0.0.1:{server.port}"

    yield serve
    server.shutdown()
    thread.join(timeout=30)


def test_a_401_problem_is_shown_like_any_other(stub):
    problem = {
        "type": "about:blank",
        "title": "Unauthorized",
        "status": 401,
        "detail": "Send a valid API key.",
        "code": "unauthorized",
    }
    url = stub(Response(json.dumps(problem), status=401, content_type="application/problem+json"))

    result = CliRunner().invoke(main, ["ls", "--url", url, "--api-key", "wrong"])

    assert result.exit_code == EXIT_PROBLEM
    assert result.stderr == "ocrgw: Unauthorized (401, unauthorized): Send a valid API key.\n"


def test_an_error_page_that_is_not_a_problem_says_its_status(stub):
    url = stub(Response("<html>\nBad gateway</html>", status=502, content_type="text/html"))

    result = CliRunner().invoke(main, ["status", "abc", "--url", url])

    assert result.exit_code == EXIT_PROBLEM
    assert result.stderr == "ocrgw: Bad Gateway (502): <html>\n"


def test_on_a_terminal_tables_have_headers():
    stream = io.StringIO()

    Printer(stream=stream, rich=True).table(("id", "status"), [("abc", "queued")])

    out = stream.getvalue()
    assert "id" in out and "status" in out and "abc" in out


def test_the_live_display_shows_the_bar_the_counts_elapsed_and_eta():
    console = Console(file=io.StringIO(), force_terminal=True, width=140, record=True)
    counts = {"held": 1, "queued": 1, "processing": 1, "completed": 2, "failed": 0, "cancelled": 0}
    view = {"id": "g1", "kind": "parent", "status": "processing", "total": 5, "counts": counts}

    with LiveDisplay(console, "g1") as display:
        display.update(view)

    text = console.export_text()
    assert "40%" in text
    assert "2/5 children" in text
    assert "held 1  queued 1  processing 1  completed 2" in text
    assert "elapsed 0:00:0" in text
    assert "eta" in text


def test_on_a_terminal_every_read_is_drawn_with_rich(served, ocrgw, tmp_path, monkeypatch):
    group_id = submitted(ocrgw, tmp_path, "one", "two")
    monkeypatch.setattr("cli.output.is_terminal", lambda stream: True)

    shown = {
        name: ocrgw(*args)
        for name, args in {
            "status": ("status", group_id),
            "events": ("events", group_id),
            "ls": ("ls",),
            "models": ("models",),
        }.items()
    }

    for name, result in shown.items():
        assert result.exit_code == 0, (name, result.output)
        assert "\x1b[" in result.stdout, name  # drawn, with colour
    assert "children 1-2 of 2" in shown["status"].stdout
    assert "error_code" in shown["ls"].stdout  # a header row
    assert "content types" in shown["models"].stdout


def test_url_and_key_work_before_the_command_and_the_command_s_own_win(stub):
    problem = {"type": "about:blank", "title": "Unauthorized", "status": 401, "detail": "No.", "code": "unauthorized"}
    url = stub(Response(json.dumps(problem), status=401, content_type="application/problem+json"))

    before = CliRunner().invoke(main, ["--url", url, "--api-key", "k", "ls"], env={"OCRGW_URL": "http://127.0.0.1:1"})
    after = CliRunner().invoke(main, ["--url", "http://127.0.0.1:1", "ls", "--url", url])

    assert before.exit_code == after.exit_code == EXIT_PROBLEM
