"""The ``ocrgw`` command end to end, as a separate process against real processes.

Against the shared stack (gunicorn gateway, Celery worker, coordinator,
beat, Redis): a group of PNG pages read by Tesseract with ``--wait`` and
its merged text, a failing job's exit status, a group cancelled while a
``--wait`` watches it, the listing. Then ``ocrgw up`` on its own: the whole
Procfile and a private redis-server, a job through it, and after SIGINT no
process of it left.

The command runs as ``python -m cli`` from the project root (what the
``ocrgw`` entry point runs). Timeouts bound hangs only.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pypdfium2 as pdfium
import pytest
from redis import Redis

from cli.stack import PrivateRedis, StackError
from tests import harness
from tests.harness import ROOT, START_TIMEOUT, free_port, http_status, make_sample, wait_until
from tests.integration.live import ECHO_TIMEOUT, OCR_TIMEOUT, Api
from tests.integration.polling import wait_for_job

pytestmark = pytest.mark.integration

CLI = [sys.executable, "-m", "cli"]
EXIT_NOT_COMPLETED = 1
#: Bounds a command that hangs; long, since a --wait lasts as long as its job.
COMMAND_TIMEOUT = 3 * OCR_TIMEOUT


def cli_env(url: str | None = None, **extra: str) -> dict[str, str]:
    env = {**os.environ, "NO_PROXY": "127.0.0.1,localhost", **extra}
    if url is not None:
        env["OCRGW_URL"] = url
    return env


def ocrgw(url: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *args], cwd=ROOT, env=cli_env(url), capture_output=True, text=True, timeout=COMMAND_TIMEOUT
    )


@pytest.fixture
def url(api) -> str:
    """The shared stack's gateway, on a database emptied for this test."""
    return api.base_url


def text_files(tmp_path: Path, *texts: str) -> list[str]:
    paths = []
    for i, text in enumerate(texts):
        path = tmp_path / f"doc{i}.txt"
        path.write_text(text)
        paths.append(str(path))
    return paths


def test_a_group_of_pages_with_wait_writes_the_merged_text(url, tmp_path):
    words = ["ALPHA ONE", "BRAVO TWO", "CHARLIE THREE"]
    pages = [str(make_sample(tmp_path / f"page{i}.png", text)) for i, text in enumerate(words)]
    out = tmp_path / "merged.txt"

    done = ocrgw(url, "submit", *pages, "--model", "tesseract", "--max-parallel", "2", "--wait", "-o", str(out))

    assert done.returncode == 0, done.stderr
    group_id = done.stdout.strip()
    merged = out.read_text()
    assert [merged.index(w) for w in words] == sorted(merged.index(w) for w in words), merged
    view = Api(url).job(group_id)
    assert (view["status"], view["total"], view["max_parallel"]) == ("completed", 3, 2)
    assert done.stderr.splitlines()[-1].startswith("completed 3/3 [completed 3] ")

    shown = ocrgw(url, "result", group_id)
    assert (shown.returncode, shown.stdout) == (0, merged)
    status = ocrgw(url, "status", group_id)
    assert "status: completed" in status.stdout.splitlines()
    # The searchable PDF: a worker builds it on the first ask (202), and the command waits for it
    pdf_path = tmp_path / "merged.pdf"
    written = ocrgw(url, "result", group_id, "--format", "pdf", "-o", str(pdf_path))
    assert written.returncode == 0, written.stderr
    pdf = pdfium.PdfDocument(pdf_path.read_bytes())
    try:
        texts = [pdf[i].get_textpage().get_text_range() for i in range(len(pdf))]
    finally:
        pdf.close()
    assert [w in text for w, text in zip(words, texts, strict=True)] == [True] * 3, texts


def test_a_failing_job_exits_non_zero_and_says_why(url, tmp_path):
    (doomed,) = text_files(tmp_path, "never read")

    done = ocrgw(url, "submit", doomed, "--model", "echo", "--option", "fail=true", "--wait")

    assert done.returncode == EXIT_NOT_COMPLETED
    job_id = done.stdout.strip()
    assert f"job {job_id} failed: echo_failed: echo asked to fail" in done.stderr
    assert Api(url).job(job_id)["status"] == "failed"
    assert "Traceback" not in done.stderr


def test_a_group_cancelled_while_waited_on(url, tmp_path):
    # 15 children of 1.5 s, one at a time: the group still runs when `ocrgw cancel` (a process of its own)
    # gets to it on a slow machine.
    files = text_files(tmp_path, *(f"page {i}" for i in range(15)))
    waiter = subprocess.Popen(
        [*CLI, "submit", *files, "--model", "echo", "--option", "delay_ms=1500", "--max-parallel", "1", "--wait"],
        cwd=ROOT,
        env=cli_env(url),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert waiter.stdout is not None
        group_id = waiter.stdout.readline().strip()
        assert group_id, waiter.stderr.read() if waiter.stderr else ""

        cancelled = ocrgw(url, "cancel", group_id)

        assert cancelled.returncode == 0, cancelled.stderr
        assert cancelled.stdout.startswith(f"{group_id} cancel")
        _, err = waiter.communicate(timeout=COMMAND_TIMEOUT)
    finally:
        if waiter.poll() is None:
            waiter.kill()
    assert waiter.returncode == EXIT_NOT_COMPLETED
    assert f"group {group_id} cancelled" in err
    assert wait_for_job(Api(url).job, group_id, timeout=ECHO_TIMEOUT)["status"] == "cancelled"

    listed = ocrgw(url, "ls", "--status", "cancelled")
    assert [line.split("\t")[0] for line in listed.stdout.splitlines()] == [group_id]
    again = ocrgw(url, "cancel", group_id)
    assert again.returncode == 3
    assert "job_finished" in again.stderr


def test_ls_lists_what_was_submitted(url, tmp_path):
    single = ocrgw(url, "submit", *text_files(tmp_path, "single"), "--model", "echo", "--wait")
    group = ocrgw(url, "submit", *text_files(tmp_path, "a", "b"), "--model", "echo", "--wait")
    assert single.returncode == group.returncode == 0

    listed = ocrgw(url, "ls")
    parents = ocrgw(url, "ls", "--kind", "parent")

    assert [line.split("\t")[:3] for line in listed.stdout.splitlines()] == [
        [group.stdout.strip(), "parent", "completed"],
        [single.stdout.strip(), "single", "completed"],
    ]
    assert [line.split("\t")[0] for line in parents.stdout.splitlines()] == [group.stdout.strip()]


# -- ocrgw up --------------------------------------------------------------------------------


def descendants(pid: int) -> set[int]:
    """Every process under ``pid``, however deep (honcho's processes, Celery's pool, redis-server)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    found, todo = set(), [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def running(pid: int) -> bool:
    """Alive and not a zombie waiting for its reaper."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def test_up_runs_the_stack_and_sigint_stops_every_process(procs, tmp_path):
    port = free_port()
    # An empty REDIS_URL counts as unset: up starts a private redis-server.
    env = cli_env(REDIS_URL="", CELERY_BROKER_URL="", PORT=str(port), WEB_CONCURRENCY="1")
    env.update(OCRGW_WORKER_CONCURRENCY="1", OCRGW_WORKER_QUEUES="ocr.echo")
    # The Procfile's gunicorn would open its control socket at a path shared by every gunicorn of this user.
    env["GUNICORN_CMD_ARGS"] = " ".join(harness._gunicorn_isolation_args())
    up = procs.start("ocrgw-up", [*CLI, "up"], env=env)
    url = f"http://127.0.0.1:{port}"
    up.wait_ready(lambda: http_status(f"{url}/healthz") == 200, START_TIMEOUT)
    up.wait_ready("ocrgw is up on", START_TIMEOUT)

    done = ocrgw(url, "submit", *text_files(tmp_path, "through up"), "--model", "echo", "--wait", "--json")

    assert done.returncode == 0, done.stderr + up.log_tail()
    assert '"text": "through up"' in done.stdout
    redis_port = int(up.log_text().split("Redis: redis://127.0.0.1:", 1)[1].split("/", 1)[0])
    family = descendants(up.pid)
    assert len(family) >= 6, family  # redis-server, honcho, and the Procfile's five processes at least

    up.popen.send_signal(signal.SIGINT)
    assert up.wait(timeout=COMMAND_TIMEOUT) == 130

    wait_until(
        lambda: not any(running(pid) for pid in family),
        START_TIMEOUT,
        message=lambda: f"still running: {sorted(p for p in family if running(p))}\n{up.log_tail()}",
    )
    assert http_status(f"{url}/healthz") is None
    log = up.log_text()
    assert f"stopping redis-server (port {redis_port})" in log


def test_the_private_redis_keeps_an_aof_and_refuses_a_data_dir_in_use(redis_server, tmp_path):
    first = PrivateRedis(tmp_path / "data").start()
    assert first.port is not None, "a started private redis has its port"
    try:
        with Redis(host="127.0.0.1", port=first.port) as client:
            assert client.config_get("appendonly") == {"appendonly": "yes"}
            assert client.config_get("dir")["dir"] == str(tmp_path / "data")
        with pytest.raises(StackError, match="already uses"):
            PrivateRedis(tmp_path / "data").start()
    finally:
        first.stop()
    assert first.proc is not None and first.proc.returncode == 0  # a clean SHUTDOWN on SIGTERM
    again = PrivateRedis(tmp_path / "data").start()  # the directory is free once its server stopped
    again.stop()
