"""Publishing: each queued job becomes one Celery message on its model's queue, on a real redis-server."""

from __future__ import annotations

import base64
import json

import pytest

from jobs.config import Settings
from jobs.records import Dispatch
from workers import dispatch
from workers.celery_app import RUN_TASK, make_celery

pytestmark = pytest.mark.integration


@pytest.fixture
def broker(redis_server, procs, monkeypatch):
    """A client of a database no worker consumes, with the dispatcher publishing there."""
    db = procs.fresh_db()
    url = redis_server.url_for(db)
    monkeypatch.setattr(dispatch, "app", make_celery(Settings(redis_url=url, broker_url=url)))
    with redis_server.client(db) as client:
        yield client
    dispatch.app.close()


def queued_job_ids(client, queue: str) -> list[str]:
    """The job ids of the run messages on a queue, oldest first (the Redis transport LPUSHes)."""
    out = []
    for raw in reversed(client.lrange(queue, 0, -1)):
        message = json.loads(raw)
        assert message["headers"]["task"] == RUN_TASK
        args, kwargs, _ = json.loads(base64.b64decode(message["body"]))
        out.append(args[0])
    return out


def test_each_dispatch_becomes_one_message_on_its_model_s_queue(broker):
    first = [Dispatch("a" * 32, "echo"), Dispatch("b" * 32 + "-0", "tesseract"), Dispatch("c" * 32, "echo")]
    second = [Dispatch("d" * 32, "echo"), Dispatch("e" * 32, "paddleocr")]

    assert dispatch.publish(first) == 3
    assert dispatch.publish(second) == 2

    assert queued_job_ids(broker, "ocr.echo") == ["a" * 32, "c" * 32, "d" * 32]
    assert queued_job_ids(broker, "ocr.tesseract") == ["b" * 32 + "-0"]
    assert queued_job_ids(broker, "ocr.paddleocr") == ["e" * 32]


def test_a_broker_that_is_down_publishes_nothing_and_raises_nothing(monkeypatch):
    dead = "redis://127.0.0.1:1/0"
    app = make_celery(Settings(redis_url=dead, broker_url=dead))
    app.conf.broker_connection_max_retries = 0
    monkeypatch.setattr(dispatch, "app", app)

    assert dispatch.publish([Dispatch("a" * 32, "echo")]) == 0


BINDING = "_kombu.binding.ocr.echo"  # what declaring the queue writes on a Redis broker


def test_a_queue_is_declared_once_per_broker_connection(broker):
    dispatch.publish([Dispatch("a" * 32, "echo")])
    assert broker.exists(BINDING)

    broker.delete(BINDING)
    dispatch.publish([Dispatch("b" * 32, "echo")])
    assert not broker.exists(BINDING), "declared again on the same connection"

    with dispatch.app.producer_or_acquire() as producer:
        producer.connection.close()  # as when the broker goes away: kombu connects anew
    dispatch.publish([Dispatch("c" * 32, "echo")])
    assert broker.exists(BINDING), "not declared on the new connection"
    assert queued_job_ids(broker, "ocr.echo") == ["a" * 32, "b" * 32, "c" * 32]
