"""How a Celery process sets up its logs and metrics: its role, its port, its handlers, its banner, its job."""

from __future__ import annotations

import json
import logging
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
        self.socket = SimpleNamespace(closed=False, close=lambda: setattr(self.socket, "closed", True))


def test_a_prefork_pool_process_closes_the_metrics_socket_it_inherited(monkeypatch):
    server = Server()
    monkeypatch.setitem(celery_hooks._state, "server", server)
    monkeypatch.setitem(celery_hooks._state, "server_pid", -1)  # started by another process: the pool's parent

    celery_hooks._close_inherited_server()

    assert server.socket.closed is True


def test_the_solo_pool_s_own_process_keeps_serving(monkeypatch):
    """The solo pool sends worker_process_init in the main process, which serves the metrics."""
    import os

    server = Server()
    monkeypatch.setitem(celery_hooks._state, "server", server)
    monkeypatch.setitem(celery_hooks._state, "server_pid", os.getpid())

    celery_hooks._close_inherited_server()

    assert server.socket.closed is False
