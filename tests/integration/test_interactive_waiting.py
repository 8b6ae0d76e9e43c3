"""``workers.lanes.InteractiveWaiting`` against a real redis-server broker: what a worker on more than one
bucket reads before it takes its own bucket's next job."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from redis import Redis

from jobs.config import Settings
from jobs.registry import MODELS, interactive_queue_of
from workers.celery_app import PULL_TASK, make_celery
from workers.lanes import InteractiveWaiting

pytestmark = pytest.mark.integration

INTERACTIVE_ECHO = interactive_queue_of(MODELS["echo"].queue)


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def broker(redis_server_factory) -> Iterator[tuple[object, Redis]]:
    url = redis_server_factory().url
    app = make_celery(Settings(redis_url=url, broker_url=url))
    client = Redis.from_url(url)
    try:
        yield app, client
    finally:
        app.close()
        client.close()


def test_an_interactive_wake_up_in_the_broker_is_seen_until_a_worker_takes_it(broker):
    app, client = broker
    clock = Clock()
    waiting = InteractiveWaiting(app, ["echo", "tesseract"], every_seconds=0.05, clock=clock)
    try:
        assert waiting() is False, "no queue yet: nothing waits"

        app.send_task(PULL_TASK, args=["echo", "batch", 3], queue=MODELS["echo"].queue)
        clock.now += 1
        assert waiting() is False, "a batch wake-up is not an interactive one"

        app.send_task(PULL_TASK, args=["echo", "interactive", 3], queue=INTERACTIVE_ECHO)
        clock.now += 1
        assert waiting() is True

        assert client.rpop(INTERACTIVE_ECHO) is not None  # a worker took it
        clock.now += 0.01
        assert waiting() is True, "the answer is kept for every_seconds"
        clock.now += 0.05
        assert waiting() is False
    finally:
        waiting.close()


def test_a_broker_that_cannot_be_read_counts_as_nothing_waiting(redis_server_factory):
    server = redis_server_factory()
    app = make_celery(Settings(redis_url=server.url, broker_url=server.url))
    app.conf.broker_connection_timeout = 1
    app.conf.broker_connection_max_retries = 0
    waiting = InteractiveWaiting(app, ["echo"], every_seconds=0)
    try:
        app.send_task(PULL_TASK, args=["echo", "interactive", 0], queue=INTERACTIVE_ECHO)
        assert waiting() is True
        server.stop()
        assert waiting() is False
    finally:
        waiting.close()
        app.close()
