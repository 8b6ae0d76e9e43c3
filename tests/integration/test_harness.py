"""The test harness itself, on real processes: redis-server, Celery, plain Python.

If these fail, every integration test built on the harness is suspect, so
they check the properties those tests rely on: a clean database really is
clean yet Celery keeps routing, an AOF restart keeps data, a kill takes the
whole process group, a terminate reaches only the main process, and a failing
test shows its processes' logs.
"""

from __future__ import annotations

import os
import runpy
import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pypdfium2 as pdfium
import pytest

from tests.harness import (
    CELERY_READY,
    ROOT,
    ProcGroup,
    in_ci,
    make_sample,
    wait_until,
)
from tests.keyspace import keys
from workers.celery_app import COORDINATOR_QUEUE

pytestmark = pytest.mark.integration


def gone(pid: int) -> bool:
    """True once ``pid`` no longer runs (a zombie awaiting its reaper counts as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] == "Z"


def python(code: str) -> list[str]:
    return [sys.executable, "-c", textwrap.dedent(code)]


# A parent that forks a sleeping child, reports both pids, then waits.
PARENT_WITH_CHILD = """
    import os, signal, subprocess, sys, time
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    def on_term(signum, frame):
        print("parent got TERM", flush=True)
        os._exit(3)
    signal.signal(signal.SIGTERM, on_term)
    print(f"child={child.pid}", flush=True)
    print("to stderr too", file=sys.stderr, flush=True)
    print("ready", flush=True)
    time.sleep(600)
"""


def child_pid(proc) -> int:
    for line in proc.log_text().splitlines():
        if line.startswith("child="):
            return int(line.split("=", 1)[1])
    raise AssertionError(f"no child pid in log:\n{proc.log_text()}")


# -- redis -------------------------------------------------------------------


def test_redis_server_answers_on_its_url(redis_server, redis_url):
    assert redis_url == f"redis://127.0.0.1:{redis_server.port}/0"
    with redis_server.client() as client:
        assert client.ping()
        # Only what the running session stack writes on its own may be there, whatever
        # the test does: kombu's exchange bindings (they survive a clean) and unacked
        # index, beat's sweep messages on the coordinator's queue, the sweep's lock, the worker's
        # report of its languages, the store's layout (recorded as the stack starts).
        stack_keys = (b"_kombu.", b"unacked", COORDINATOR_QUEUE.encode(), keys.LAYOUT.encode())
        own = [
            k
            for k in client.keys("*")
            if not k.startswith(stack_keys) and not keys.is_sweep_lock(k) and not keys.is_worker_report(k.decode())
        ]
        assert own == []


def test_clean_empties_every_db_but_keeps_kombu_bindings(redis_server_factory):
    # A private server: the session stack writes to the session server's database 0 while it runs.
    server = redis_server_factory()
    with server.client(0) as db0, server.client(7) as db7:
        db0.set("job:1", "x")
        db0.sadd("_kombu.binding.ocr.echo", "ocr.echo\x06\x16\x06\x16ocr.echo")
        db7.rpush("queue", "a", "b")
        server.clean()
        assert b"_kombu.binding.ocr.echo" in db0.keys("*")
        assert [k for k in db0.keys("*") if not k.startswith(b"_kombu.binding")] == []
        assert db7.dbsize() == 0


def test_aof_server_keeps_data_across_graceful_restart(redis_server_factory):
    server = redis_server_factory(appendonly=True)
    port, url = server.port, server.url
    with server.client() as client:
        client.set("survives", "yes")
        client.hset("job:9", mapping={"state": "queued"})
    server.restart()
    assert (server.port, server.url) == (port, url)
    with server.client() as client:
        assert client.get("survives") == b"yes"
        assert client.hgetall("job:9") == {b"state": b"queued"}


def test_aof_always_keeps_data_across_sigkill(redis_server_factory):
    server = redis_server_factory(appendonly=True, extra_args=["--appendfsync", "always"])
    with server.client() as client:
        client.set("survives", "a crash")
    server.restart(hard=True)
    with server.client() as client:
        assert client.get("survives") == b"a crash"


def test_default_server_keeps_nothing_across_restart(redis_server_factory):
    """Proves restart() really restarts: without AOF the data is gone."""
    server = redis_server_factory()
    with server.client() as client:
        client.set("ephemeral", "1")
    server.restart()
    with server.client() as client:
        assert client.get("ephemeral") is None


def test_stop_shuts_the_server_down(redis_server_factory):
    server = redis_server_factory()
    pid = server.proc.pid
    server.stop()
    assert gone(pid)
    assert not server.ping()


def test_fresh_db_is_empty_and_not_db0(procs, redis_server):
    db = procs.fresh_db()
    assert 1 <= db <= 15
    assert procs.url(db) == redis_server.url_for(db)
    with redis_server.client(db) as client:
        assert client.dbsize() == 0


# -- Proc ----------------------------------------------------------------------


def test_proc_captures_stdout_and_stderr_in_its_log(procs):
    proc = procs.start("talker", python(PARENT_WITH_CHILD), ready=r"(?m)^ready$")
    text = proc.log_text()
    assert "to stderr too" in text
    assert proc.log_path.is_file() and proc.log_path.is_relative_to(procs.work_dir)
    assert proc.alive and proc.returncode is None


def test_kill_takes_the_whole_process_group(procs):
    proc = procs.start("parent", python(PARENT_WITH_CHILD), ready=r"(?m)^ready$")
    child = child_pid(proc)
    proc.kill()
    assert proc.returncode == -signal.SIGKILL
    wait_until(lambda: gone(child), timeout=10, message=f"child {child} survived the kill")


def test_terminate_signals_only_the_main_process(procs):
    proc = procs.start("parent", python(PARENT_WITH_CHILD), ready=r"(?m)^ready$")
    child = child_pid(proc)
    proc.terminate()
    assert proc.wait(timeout=10) == 3
    assert "parent got TERM" in proc.log_text()
    assert not gone(child), "terminate() must not signal the rest of the group"
    proc.close()  # what teardown does: the orphaned child goes too
    wait_until(lambda: gone(child), timeout=10, message="close() left the child running")


def test_wait_ready_accepts_a_predicate(procs, tmp_path):
    flag = tmp_path / "flag"
    proc = procs.start(
        "toucher",
        python(f"""
        import pathlib, time
        time.sleep(0.2)
        pathlib.Path({str(flag)!r}).touch()
        time.sleep(600)
    """),
    )
    assert proc.wait_ready(flag.exists, timeout=30) is proc


def test_wait_ready_fails_fast_with_the_log_when_the_process_dies(procs):
    proc = procs.start("crasher", python("print('boom: bad config'); raise SystemExit(2)"))
    with pytest.raises(AssertionError, match=r"(?s)exited with status 2.*boom: bad config"):
        proc.wait_ready("never printed", timeout=60)


def test_wait_ready_times_out_with_the_log(procs):
    proc = procs.start("silent", python("print('hello', flush=True); import time; time.sleep(600)"))
    with pytest.raises(AssertionError, match=r"(?s)not ready after 0.3s.*hello"):
        proc.wait_ready("never printed", timeout=0.3)


def test_env_is_passed_on_top_of_os_environ(procs):
    proc = procs.start(
        "env",
        python("""
        import os
        print(os.environ["OCRGW_PROBE"], "PATH" in os.environ, os.environ["PYTHONUNBUFFERED"])
    """),
        env={"OCRGW_PROBE": "probe-value"},
    )
    assert proc.wait(timeout=30) == 0
    assert "probe-value True 1" in proc.log_text()


def test_group_close_kills_everything_left(tmp_path):
    group = ProcGroup(tmp_path / "g")
    try:
        proc = group.start("sleeper", python(PARENT_WITH_CHILD), ready=r"(?m)^ready$")
        child = child_pid(proc)
    finally:
        group.close()
    assert gone(proc.pid)
    wait_until(lambda: gone(child), timeout=10, message="group close left the child running")


def test_wait_until_returns_the_value_or_raises_the_message():
    assert wait_until(lambda: 42, timeout=1) == 42
    with pytest.raises(AssertionError, match=r"job never finished \(waited 0.1s\)"):
        wait_until(lambda: None, timeout=0.1, message="job never finished")
    with pytest.raises(AssertionError, match="state was queued"):
        wait_until(lambda: False, timeout=0.1, message=lambda: "state was queued")


def test_failing_test_report_shows_process_log_tails(tmp_path):
    """Runs a failing test in a child pytest and reads its report."""
    (tmp_path / "conftest.py").write_text("from tests.conftest import *  # noqa: F403\n")
    (tmp_path / "test_fails.py").write_text(
        textwrap.dedent("""
        import sys

        def test_boom(procs):
            proc = procs.start("chatty", [sys.executable, "-c",
                "print('line-%d' % 0); [print('line-%d' % i) for i in range(1, 100)];"
                "import time; time.sleep(600)"], ready="line-99")
            assert False, "deliberate"
    """)
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", str(tmp_path)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    out = result.stdout + result.stderr
    assert result.returncode == 1, out
    assert "chatty [test]: last 60 log lines" in out, out
    assert "line-99" in out and "line-40" in out
    assert "line-39" not in out, "more than the last 60 lines were attached"


# -- Celery through the harness ------------------------------------------------

# Routed through a named topic exchange, the case in which routing depends on
# kombu's binding keys in Redis.
MINI_APP = """
import os
from celery import Celery
from kombu import Exchange, Queue

app = Celery("mini", broker=os.environ["REDIS_URL"], backend=os.environ["REDIS_URL"])
app.conf.task_queues = [Queue("mini", Exchange("mini-ex", type="topic"), routing_key="mini.#")]
app.conf.task_default_queue = "mini"
app.conf.task_routes = {"mini.add": {"queue": "mini", "routing_key": "mini.add"}}
app.conf.broker_connection_retry_on_startup = True

@app.task(name="mini.add")
def add(x, y):
    return x + y
"""


def test_clean_keeps_a_running_celery_worker_reachable(procs, redis_server, tmp_path, monkeypatch):
    """A long-lived producer and worker still route after clean(), as the session stack needs.

    The producer declares its queue's binding once per connection; were
    clean() a plain FLUSHALL, its next message would be routed nowhere.
    """
    app_file = tmp_path / "miniapp.py"
    app_file.write_text(MINI_APP)
    url = redis_server.url_for(procs.fresh_db())
    procs.start(
        "mini-worker",
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "miniapp",
            "worker",
            "--loglevel",
            "INFO",
            "--queues",
            "mini",
            "--pool",
            "solo",
            "--hostname",
            "mini@%h",
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
        ],
        env={"REDIS_URL": url},
        ready=CELERY_READY,
        cwd=tmp_path,
    )

    monkeypatch.setenv("REDIS_URL", url)
    app = runpy.run_path(str(app_file))["app"]
    try:
        assert app.send_task("mini.add", (1, 2)).get(timeout=60) == 3
        redis_server.clean()
        assert app.send_task("mini.add", (2, 3)).get(timeout=60) == 5
    finally:
        app.close()


# -- scripts/make_sample.py ----------------------------------------------------


def test_make_sample_png_is_read_back_by_tesseract(tmp_path):
    if shutil.which("tesseract") is None:
        if in_ci():
            pytest.fail("tesseract is not installed (scripts/setup.sh installs it)")
        pytest.skip("tesseract is not installed")
    page = make_sample(tmp_path / "page.png", "Hello from ocrgw")
    out = subprocess.run(
        ["tesseract", str(page), "-"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "OMP_THREAD_LIMIT": "1"},
    )
    assert "Hello from ocrgw" in out.stdout, out.stdout + out.stderr


def test_make_sample_pdf_has_one_page_per_text(tmp_path):
    path = make_sample(tmp_path / "doc.pdf", "first page", "second page", "third")
    pdf = pdfium.PdfDocument(str(path))
    try:
        assert len(pdf) == 3
    finally:
        pdf.close()


def test_make_sample_cli(tmp_path):
    out = tmp_path / "cli.png"
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "make_sample.py"), str(out), "CLI text"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    bad = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "make_sample.py"), str(tmp_path / "x.png"), "one", "two"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 2 and "only a .pdf" in bad.stderr
