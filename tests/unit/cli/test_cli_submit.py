"""``ocrgw submit``: the shapes it sends, --wait and its exit status, -o, and how it tells why a job failed."""

from __future__ import annotations

import json

import pytest

from cli.main import EXIT_NOT_COMPLETED, main
from cli.submitting import content_type_of
from tests.keyspace import keys
from tests.pdfs import pdf


def write(tmp_path, name: str, data: bytes | str):
    path = tmp_path / name
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


def view(served, job_id: str) -> dict:
    import requests

    return requests.get(f"{served.url}/jobs/{job_id}", params={"limit": 50}, timeout=10).json()


def test_one_file_is_a_single_job_sent_as_its_own_body(served, ocrgw, tmp_path):
    page = write(tmp_path, "note.txt", "hello from a file")

    result = ocrgw("submit", str(page), "--model", "echo")

    assert result.exit_code == 0, result.output
    job_id = result.stdout.strip()
    job = view(served, job_id)
    assert job["kind"] == "single"
    assert job["content_type"] == "text/plain"
    assert job["model"] == "echo"
    post = next(h for h in served.requests if h.get("Content-Type", "").startswith("text/plain"))
    assert "Authorization" not in post


def test_wait_prints_progress_on_stderr_and_writes_the_text(served, ocrgw, tmp_path):
    page = write(tmp_path, "note.txt", "hello from a file")
    out = tmp_path / "out.txt"

    result = ocrgw("submit", str(page), "--model", "echo", "--wait", "-o", str(out), "--interval", "0.05")

    assert result.exit_code == 0, result.output
    job_id = result.stdout.strip()
    assert view(served, job_id)["status"] == "completed"
    assert out.read_text() == "hello from a file\n"
    assert result.stderr.splitlines()[-1].startswith("completed 100% [completed 1] ")


def test_several_files_make_a_group_whose_merged_text_is_written_in_file_order(served, ocrgw, tmp_path):
    files = [str(write(tmp_path, f"part{i}.txt", f"part number {i}")) for i in range(3)]
    out = tmp_path / "merged.txt"

    result = ocrgw("submit", *files, "--model", "echo", "--max-parallel", "2", "--wait", "-o", str(out))

    assert result.exit_code == 0, result.output
    group = view(served, result.stdout.strip())
    assert (group["kind"], group["total"], group["max_parallel"], group["status"]) == ("parent", 3, 2, "completed")
    assert group["counts"]["completed"] == 3
    assert out.read_text() == "part number 0\n\npart number 1\n\npart number 2\n"
    assert result.stderr.splitlines()[-1].startswith("completed 3/3 [completed 3] ")


def test_json_prints_the_gateways_view(served, ocrgw, tmp_path):
    files = [str(write(tmp_path, f"p{i}.txt", f"text {i}")) for i in range(2)]

    result = ocrgw("submit", *files, "--model", "echo", "--json")

    assert result.exit_code == 0, result.output
    printed = json.loads(result.stdout)
    assert printed["kind"] == "parent"
    assert printed["total"] == 2
    assert printed["max_parallel"] == 0


def test_wait_with_json_prints_the_final_view(served, ocrgw, tmp_path):
    page = write(tmp_path, "note.txt", "final")

    result = ocrgw("submit", str(page), "--model", "echo", "--wait", "--json")

    assert result.exit_code == 0, result.output
    printed = json.loads(result.stdout)
    assert printed["status"] == "completed"
    assert printed["result"]["text"] == "final"


def test_rotate_pages_and_deskew_flags_set_the_options_and_leave_others_as_given(served, ocrgw, tmp_path):
    served.worker.pause()  # Tesseract would read it; only the options sent matter here
    document = write(tmp_path, "scan.pdf", pdf([("text", "a crooked scan")]))

    flagged = ocrgw("submit", str(document), "--rotate-pages", "--deskew", "--option", "rotate_pages_threshold=5")
    plain = ocrgw("submit", str(document))

    assert flagged.exit_code == plain.exit_code == 0, flagged.output + plain.output
    options = [
        json.loads(served.redis.hget(keys.job(result.stdout.strip()), "options") or "{}") for result in (flagged, plain)
    ]
    assert options == [{"rotate_pages": True, "deskew": True, "rotate_pages_threshold": 5}, {}]


@pytest.mark.parametrize("shape", ["raw", "json", "group"])
def test_priority_asks_for_the_lane_in_every_shape(served, ocrgw, tmp_path, shape):
    files = [str(write(tmp_path, f"p{i}.txt", f"text {i}")) for i in range(2 if shape == "group" else 1)]
    extra = ["--option", "tag=1"] if shape == "json" else []

    result = ocrgw("submit", *files, "--model", "echo", "--priority", "interactive", *extra)

    assert result.exit_code == 0, result.output
    job_id = result.stdout.strip()
    assert served.redis.hget(keys.job(job_id), "priority") == b"interactive"


def test_split_pages_sends_the_pdf_with_split_pages_and_the_cap(served, ocrgw, tmp_path):
    served.worker.pause()  # the children would need Tesseract; only the group's shape matters here
    document = write(tmp_path, "report.bin", pdf([("text", f"page {n}") for n in range(1, 6)]))

    result = ocrgw("submit", str(document), "--split-pages", "2", "--max-parallel", "1")

    assert result.exit_code == 0, result.output
    group = view(served, result.stdout.strip())
    assert (group["kind"], group["total"], group["max_parallel"]) == ("parent", 3, 1)


def test_options_make_a_json_job_and_a_failed_job_exits_non_zero_saying_why(served, ocrgw, tmp_path):
    page = write(tmp_path, "doomed.txt", "never read")

    result = ocrgw("submit", str(page), "--model", "echo", "--option", "fail=true", "--wait")

    assert result.exit_code == EXIT_NOT_COMPLETED
    job_id = result.stdout.strip()
    assert view(served, job_id)["status"] == "failed"
    assert f"job {job_id} failed: echo_failed: echo asked to fail" in result.stderr
    assert "Traceback" not in result.output


def test_a_failed_group_names_its_failed_children_by_file(served, ocrgw, tmp_path):
    files = [str(write(tmp_path, f"doc{i}.txt", f"doc {i}")) for i in range(2)]

    result = ocrgw("submit", *files, "--model", "echo", "--option", "fail=true", "--wait", "-o", str(tmp_path / "o"))

    assert result.exit_code == EXIT_NOT_COMPLETED
    group_id = result.stdout.strip()
    assert f"group {group_id} failed (child_failed): 2 failed, 0 cancelled of 2 children" in result.stderr
    assert "child 0 doc0.txt" in result.stderr
    assert "child 1 doc1.txt" in result.stderr
    assert "echo_failed: echo asked to fail" in result.stderr
    assert (tmp_path / "o").read_text() == ""  # a failed group's merged text: none of its children completed


def test_an_idempotency_key_gives_the_same_job_again(served, ocrgw, tmp_path):
    page = write(tmp_path, "note.txt", "once")

    first = ocrgw("submit", str(page), "--model", "echo", "--idempotency-key", "batch-1")
    second = ocrgw("submit", str(page), "--model", "echo", "--idempotency-key", "batch-1")

    assert first.exit_code == second.exit_code == 0
    assert first.stdout == second.stdout
    assert [h.get("Idempotency-Key") for h in served.requests if "Idempotency-Key" in h] == ["batch-1", "batch-1"]


def test_the_api_key_is_sent_as_a_bearer_token(served, ocrgw, tmp_path):
    page = write(tmp_path, "note.txt", "secret")

    from_env = ocrgw("submit", str(page), "--model", "echo", env={"OCRGW_API_KEY": "k-env"})
    from_flag = ocrgw("submit", str(page), "--model", "echo", "--api-key", "k-flag", env={"OCRGW_API_KEY": "k-env"})

    assert from_env.exit_code == from_flag.exit_code == 0
    posts = [h for h in served.requests if h.get("Content-Type", "").startswith("text/plain")]
    assert [h.get("Authorization") for h in posts] == ["Bearer k-env", "Bearer k-flag"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--split-pages", "2"], "--split-pages splits one PDF"),
        (["--max-parallel", "2", "--no-such"], "No such option"),
    ],
)
def test_flags_that_make_no_submission_are_usage_errors(served, ocrgw, tmp_path, args, message):
    files = [str(write(tmp_path, f"p{i}.txt", "x")) for i in range(2)]

    result = ocrgw("submit", *files, *args)

    assert result.exit_code == 2
    assert message in result.stderr
    assert not [h for h in served.requests if h.get("Content-Type")]


def test_a_cap_on_a_single_file_is_a_usage_error(served, ocrgw, tmp_path):
    result = ocrgw("submit", str(write(tmp_path, "one.txt", "x")), "--max-parallel", "3")

    assert result.exit_code == 2
    assert "--max-parallel caps a group" in result.stderr


def test_a_file_of_unknown_type_is_refused_before_sending(served, ocrgw, tmp_path):
    result = ocrgw("submit", str(write(tmp_path, "blob", b"\x00\x01\x02")))

    assert result.exit_code == 2
    assert "cannot tell the type of" in result.stderr
    assert "--content-type" in result.stderr


def test_the_gateways_problem_is_printed_with_title_code_and_detail(served, ocrgw, tmp_path):
    page = write(tmp_path, "note.txt", "x")

    result = ocrgw("submit", str(page), "--model", "nope")

    assert result.exit_code == 3
    assert result.stdout == ""
    assert "Unknown model (422, unknown_model): There is no model 'nope'" in result.stderr
    assert "Traceback" not in result.output


def test_an_invalid_field_problem_names_the_fields(served, ocrgw, tmp_path):
    page = write(tmp_path, "note.txt", "x")

    result = ocrgw("submit", str(page), "--model", "echo", "--option", "delay_ms=-5")

    assert result.exit_code == 3
    assert "invalid_field" in result.stderr
    assert "options:" in result.stderr


def test_an_unreachable_gateway_is_one_line(tmp_path):
    from click.testing import CliRunner

    from tests.harness import free_port

    page = write(tmp_path, "note.txt", "x")
    url = f"http://127.0.0.1:{free_port()}"

    result = CliRunner().invoke(main, ["submit", str(page), "--url", url], env={"NO_PROXY": "127.0.0.1"})

    assert result.exit_code == 4
    assert result.stderr.strip().splitlines() == [f"ocrgw: cannot reach the gateway at {url}: Connection refused"]


@pytest.mark.parametrize(
    ("name", "data", "expected"),
    [
        ("scan.bin", b"\x89PNG\r\n\x1a\n...", "image/png"),
        ("photo", b"\xff\xd8\xff\xe0...", "image/jpeg"),
        ("page.tif", b"II*\x00...", "image/tiff"),
        ("page", b"MM\x00*...", "image/tiff"),
        ("report", b"%PDF-1.7...", "application/pdf"),
        ("notes.txt", b"plain words", "text/plain"),
        ("page.png", b"not really a png", "image/png"),
        ("mystery", b"\x00", None),
    ],
)
def test_a_files_type_comes_from_its_bytes_then_its_name(tmp_path, name, data, expected):
    assert content_type_of(tmp_path / name, data) == expected


@pytest.mark.parametrize("shape", ["raw", "json", "group"])
def test_webhook_events_ask_for_each_child_s_webhook_in_every_shape(served, ocrgw, tmp_path, shape):
    served.worker.pause()  # only what the gateway stored matters here
    hook = "https://hooks.example/done"
    if shape == "group":
        files = [str(write(tmp_path, f"p{i}.txt", f"text {i}")) for i in range(2)]
        extra = ["--model", "echo"]
    else:
        files = [str(write(tmp_path, "report.bin", pdf([("text", f"page {n}") for n in range(1, 5)])))]
        extra = ["--split-pages", "2", *(["--deskew"] if shape == "json" else [])]  # an option makes it JSON

    result = ocrgw(
        "submit", *files, *extra, "--callback-url", hook, "--webhook-event", "child.completed", "--webhook-event",
        "child.completed",
    )  # fmt: skip

    assert result.exit_code == 0, result.output
    parent = result.stdout.strip()
    callbacks = [
        served.redis.hget(keys.job(job_id), "callback_url") for job_id in (parent, f"{parent}-0", f"{parent}-1")
    ]
    assert callbacks == [b"", hook.encode(), hook.encode()]  # child.completed alone: the children's, not the group's


def test_webhook_events_without_a_callback_url_is_a_usage_error(served, ocrgw, tmp_path):
    result = ocrgw("submit", str(write(tmp_path, "one.txt", "x")), "--webhook-event", "job.completed")

    assert result.exit_code == 2
    assert "--webhook-event names webhooks sent to --callback-url" in result.stderr
    assert not [h for h in served.requests if h.get("Content-Type")]


def test_the_cli_s_webhook_events_are_the_gateway_s():
    from cli.submitting import WEBHOOK_EVENTS
    from jobs.contract import WebhookEvent

    assert set(WEBHOOK_EVENTS) == {e.value for e in WebhookEvent}
