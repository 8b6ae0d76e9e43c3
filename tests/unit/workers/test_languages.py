"""A worker's report of its Tesseract languages (workers/languages.py and the worker signals):
made when an OCR worker is ready, renewed while it lives, withdrawn at a clean shutdown."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from types import SimpleNamespace

import fakeredis
import pytesseract
import pytest
from redis.exceptions import ConnectionError as RedisConnectionError

from jobs.config import Settings
from jobs.registry import MODELS
from jobs.store import JobStore
from jobs.worker_reports import WorkerReports
from tests.harness import wait_until
from workers import celery_app
from workers.languages import LanguageReporter, installed_languages

SETTINGS = Settings(worker_report_interval=0.1)


@pytest.fixture
def reports() -> WorkerReports:
    return WorkerReports(fakeredis.FakeRedis())


def test_the_installed_languages_are_tesseract_s_list_without_osd():
    assert installed_languages(lambda: ["deu", "eng", "osd"]) == {"deu", "eng"}


def test_a_worker_without_the_tesseract_binary_has_no_language():
    def missing():
        raise pytesseract.TesseractNotFoundError()

    assert installed_languages(missing) == frozenset()


def test_the_languages_of_this_machine_s_tesseract_are_found():
    # The machine's tesseract has English and German (scripts/setup.sh --tests installs both).
    assert {"eng", "deu"} <= installed_languages()
    assert "osd" not in installed_languages()


def test_a_reporter_reports_at_once_renews_and_withdraws_when_stopped(reports):
    renewed = threading.Event()
    calls = []

    class Counting(WorkerReports):
        def report(self, name, languages, lifetime_seconds):
            calls.append((name, sorted(languages), lifetime_seconds))
            super().report(name, languages, lifetime_seconds)
            if len(calls) >= 2:
                renewed.set()

    counting = Counting(reports.redis)
    reporter = LanguageReporter(counting, "worker@h:1", frozenset({"eng", "deu"}), SETTINGS).start()
    assert renewed.wait(timeout=30)
    assert counting.languages() == {"eng", "deu"}

    reporter.stop()

    assert counting.languages() is None
    assert calls[:2] == [("worker@h:1", ["deu", "eng"], pytest.approx(0.3))] * 2


def test_a_report_that_redis_refuses_is_logged_and_tried_again_at_the_next_interval(reports, caplog):
    class Down(WorkerReports):
        def report(self, *args):
            raise RedisConnectionError("Connection refused")

        def withdraw(self, name):
            raise RedisConnectionError("Connection refused")

    reporter = LanguageReporter(Down(reports.redis), "worker@h:1", frozenset({"eng"}), SETTINGS)

    assert reporter.report_once() is False
    reporter.stop()  # nothing to withdraw from: it lapses on its own
    assert "could not report this worker's languages" in caplog.text
    assert "could not withdraw" in caplog.text


def consumer(*queues: str) -> SimpleNamespace:
    app = SimpleNamespace(amqp=SimpleNamespace(queues=SimpleNamespace(consume_from={q: None for q in queues})))
    return SimpleNamespace(app=app, hostname="worker-1@host")


@pytest.fixture
def store(monkeypatch) -> Iterator[JobStore]:
    """The store the worker's main process builds, over a fake Redis."""
    store = JobStore(fakeredis.FakeRedis(), SETTINGS)
    monkeypatch.setattr(JobStore, "from_settings", classmethod(lambda cls, settings: store))
    monkeypatch.setattr(celery_app, "installed_languages", lambda: frozenset({"eng", "deu"}))
    yield store
    celery_app._withdraw_languages()


def test_a_worker_on_tesseract_s_queue_reports_when_ready_and_withdraws_at_shutdown(store):
    celery_app._report_languages(sender=consumer(MODELS["tesseract"].queue, MODELS["echo"].queue))
    report = celery_app._reporters[0]
    assert report.name.startswith("worker-1@host:")
    assert report.languages == {"eng", "deu"}
    wait_until(lambda: store.workers.languages() == {"eng", "deu"}, timeout=30, message="no report")

    celery_app._withdraw_languages()

    assert celery_app._reporters == []
    assert store.workers.languages() is None


@pytest.mark.parametrize("queues", [("coordinator",), ("webhooks",), (MODELS["paddleocr"].queue,)])
def test_a_process_that_runs_no_tesseract_job_reports_nothing(store, queues):
    celery_app._report_languages(sender=consumer(*queues))

    assert celery_app._reporters == []
    assert store.workers.languages() is None
