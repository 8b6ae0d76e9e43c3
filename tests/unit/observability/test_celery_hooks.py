"""How a Celery process sets up its logs and metrics: its role, its port, its handlers, its banner, its job."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace

import pytest

from jobs.config import Settings
from observability import celery_hooks, logs
from workers.celery_app import COORDINATOR_QUEUE, RUN_TASK, SWEEP_TASK, WEBHOOK_QUEUE

JOB = "0123456789abcdef0123456789abcdef"
JSON = Settings(log_format="json", webhook_secret="a-webhook-secret-to-hide")


@pytest.fixture
def settings(monkeypatch):
    def use(settings: Settings) -> None:
        monkeypatch.setitem(celery_hooks._state, "settings", settings)

    yield use
    logging.captureWarnings(False)  # JSON mode routes warnings to logging: not for the rest of the session


@pytest.mark.parametrize(
    ("queues", "role"),
    [
        ({"ocr.tesseract", "ocr.echo"}, "worker"),
        ({COORDINATOR_QUEUE}, "coordinator"),
        ({WEBHOOK_QUEUE}, "webhooks"),
        ({COORDINATOR_QUEUE, "ocr.echo"}, "coordinator"),
    ],
)
def test_a_worker_s_role_is_told_by_its_queues(queues, role):
    assert celery_hooks.role_of(queues, COORDINATOR_QUEUE, WEBHOOK_QUEUE) == role


def test_each_role_has_its_own_metrics_port():
    settings = Settings(worker_metrics_port=9101, coordinator_metrics_port=9102, webhooks_metrics_port=0)

    assert [celery_hooks.metrics_port(settings, r) for r in ("worker", "coordinator", "webhooks")] == [9101, 9102, 0]


def test_in_json_mode_celery_s_handlers_write_json_lines_without_the_secret(settings):
    settings(JSON)
    handler = logging.StreamHandler()
    logger = logging.Logger("celery-test")
    logger.addHandler(handler)

    celery_hooks._json_handlers(logger=logger)

    made = logging.LogRecord("x", logging.INFO, __file__, 1, "signed with %s", (JSON.webhook_secret,), None)
    got = json.loads(handler.format(made))
    assert got["message"] == f"signed with {logs.REDACTED}"


def test_in_the_plain_format_celery_s_handlers_are_left_alone(settings):
    settings(Settings())
    handler = logging.StreamHandler()
    plain = logging.Formatter("[%(levelname)s] %(message)s")
    handler.setFormatter(plain)
    logger = logging.Logger("celery-test")
    logger.addHandler(handler)

    celery_hooks._json_handlers(logger=logger)
    worker = SimpleNamespace(quiet=False)
    celery_hooks._no_banner(instance=worker)

    assert handler.formatter is plain and not handler.filters
    assert worker.quiet is False


def test_in_json_mode_a_worker_prints_no_banner(settings):
    settings(JSON)
    worker = SimpleNamespace(quiet=False)

    celery_hooks._no_banner(instance=worker)

    assert worker.quiet is True


def test_a_task_of_a_job_binds_the_job_for_its_run_and_lets_it_go_after():
    def bound() -> dict:
        made = logging.LogRecord("x", logging.INFO, __file__, 1, "m", (), None)
        logs.JobContext().filter(made)
        return {k: getattr(made, k) for k in logs.JOB_FIELDS if hasattr(made, k)}

    celery_hooks._bind_task_job(task=SimpleNamespace(name=RUN_TASK), args=[f"{JOB}-3"])
    during = bound()
    celery_hooks._unbind_task_job()
    after = bound()
    celery_hooks._bind_task_job(task=SimpleNamespace(name=SWEEP_TASK), args=[f"{JOB}-3"])
    other_task = bound()
    celery_hooks._bind_task_job(task=SimpleNamespace(name=RUN_TASK), args=["not an id"])
    not_an_id = bound()

    assert during == {"job_id": f"{JOB}-3", "parent_id": JOB}
    assert after == other_task == not_an_id == {}


class Server:
    def __init__(self):
        self.socket: SimpleNamespace = SimpleNamespace(closed=False, close=lambda: setattr(self.socket, "closed", True))


def test_a_prefork_pool_process_closes_the_metrics_socket_it_inherited(monkeypatch):
    server = Server()
    monkeypatch.setitem(celery_hooks._state, "server", server)
    monkeypatch.setitem(celery_hooks._state, "server_pid", -1)  # started by another process: the pool's parent

    celery_hooks._close_inherited_server()

    assert server.socket.closed is True


def test_the_solo_pool_s_own_process_keeps_serving(monkeypatch):
    """The solo pool sends worker_process_init in the main process, which serves the metrics."""
    server = Server()
    monkeypatch.setitem(celery_hooks._state, "server", server)
    monkeypatch.setitem(celery_hooks._state, "server_pid", os.getpid())

    celery_hooks._close_inherited_server()

    assert server.socket.closed is False


SERVE = """
    import socket, sys, urllib.request
    from types import SimpleNamespace
    from jobs.config import Settings
    from observability import celery_hooks, metrics

    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    free = socket.socket()
    free.bind(("127.0.0.1", 0))
    free_port = free.getsockname()[1]
    free.close()
    port = taken.getsockname()[1] if sys.argv[2] == "taken" else free_port
    settings = Settings(worker_metrics_port=port, metrics_address="127.0.0.1", metrics_dir=sys.argv[1])
    celery_hooks._state.update(settings=settings, queues=("coordinator", "webhooks"))
    queues = SimpleNamespace(consume_from={"ocr.echo": 1})
    worker = SimpleNamespace(app=SimpleNamespace(amqp=SimpleNamespace(queues=queues)))
    celery_hooks._serve_metrics(sender=worker)
    metrics.attempt_started("echo", "message")
    if sys.argv[2] == "free":
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        print(opener.open(f"http://127.0.0.1:{port}/metrics", timeout=10).read().decode())
"""


@pytest.mark.parametrize("port", ["free", "taken"])
def test_a_worker_serves_its_metrics_on_its_port_or_says_why_not(tmp_path, port):
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(SERVE), str(tmp_path), port],
        cwd=Path(__file__).resolve().parents[3],
        capture_output=True,
        text=True,
        timeout=120,  # bounds a hang only
    )

    assert done.returncode == 0, done.stderr
    if port == "free":
        assert 'ocrgw_job_starts_total{model="echo",path="message"} 1.0' in done.stdout
    else:
        assert "this worker serves no metrics: port" in done.stderr


@pytest.mark.parametrize(
    ("pool", "queues", "at_worker_init", "role"),
    [
        ("prefork", {"ocr.echo"}, False, "worker"),  # each pool process, after the fork
        ("solo", {COORDINATOR_QUEUE}, True, "coordinator"),
        ("threads", {WEBHOOK_QUEUE}, True, "webhooks"),
    ],
)
def test_tracing_is_set_up_where_the_tasks_run_after_any_fork_as_the_worker_s_role(
    monkeypatch, pool, queues, at_worker_init, role
):
    from celery.concurrency import get_implementation

    from observability import tracing

    configured: list[str] = []
    monkeypatch.setattr(tracing, "configure", configured.append)
    monkeypatch.setattr(celery_hooks, "_state", {"queues": (COORDINATOR_QUEUE, WEBHOOK_QUEUE)})
    app = SimpleNamespace(amqp=SimpleNamespace(queues=SimpleNamespace(consume_from=dict.fromkeys(queues))))
    worker = SimpleNamespace(app=app, pool_cls=get_implementation(pool))

    celery_hooks._trace_unforked_worker(sender=worker)
    assert configured == ([role] if at_worker_init else [])
    celery_hooks._trace_pool_process()
    assert configured[-1] == role
