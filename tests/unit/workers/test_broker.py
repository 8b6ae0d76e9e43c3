"""The Celery app's broker settings: Redis as before, RabbitMQ with quorum queues and publisher confirms."""

import pytest
from celery.worker.consumer import Consumer
from kombu.utils.imports import symbol_by_name

from jobs.config import Settings
from workers.broker import is_rabbitmq
from workers.celery_app import COORDINATOR_QUEUE, WEBHOOK_QUEUE, make_celery

REDIS = "redis://127.0.0.1:6379/0"
RABBITMQ = "amqp://ocrgw:secret@127.0.0.1:5672/ocrgw"


def app_for(broker_url: str):
    return make_celery(Settings.from_env({"REDIS_URL": REDIS, "CELERY_BROKER_URL": broker_url}))


@pytest.mark.parametrize(
    ("url", "rabbit"),
    [(RABBITMQ, True), ("amqps://h/v", True), ("pyamqp://h//", True), (REDIS, False), ("rediss://h/0", False)],
)
def test_only_amqp_urls_name_rabbitmq(url, rabbit):
    assert is_rabbitmq(url) is rabbit


def test_on_rabbitmq_every_queue_is_declared_as_a_quorum_queue():
    app = app_for(RABBITMQ)
    # The default queue, and those created on first use by a publish or a worker's --queues.
    for name in (COORDINATOR_QUEUE, "ocr.echo", WEBHOOK_QUEUE):
        assert app.amqp.queues[name].queue_arguments == {"x-queue-type": "quorum"}, name
    assert app.conf.worker_detect_quorum_queues is True


def test_on_rabbitmq_workers_set_up_no_native_delayed_delivery():
    """ocrgw sends nothing with an ETA, so no celery_delayed_* exchanges and queues."""
    consumer = symbol_by_name(app_for(RABBITMQ).conf.worker_consumer)
    assert issubclass(consumer, Consumer)
    steps = consumer.Blueprint.default_steps
    assert not [s for s in steps if "delayed_delivery" in s]
    assert len(steps) == len(Consumer.Blueprint.default_steps) - 1


def test_on_rabbitmq_publishes_are_confirmed_and_redis_only_options_are_dropped():
    options = app_for(RABBITMQ).conf.broker_transport_options
    assert options["confirm_publish"] is True
    assert "visibility_timeout" not in options


def test_acks_and_prefetch_do_not_depend_on_the_broker():
    for url in (REDIS, RABBITMQ):
        conf = app_for(url).conf
        assert (conf.task_acks_late, conf.task_reject_on_worker_lost, conf.worker_prefetch_multiplier) == (
            True,
            True,
            1,
        )


def test_on_redis_nothing_changes():
    app = app_for(REDIS)
    options = app.conf.broker_transport_options
    assert options["visibility_timeout"] == 3600 and "confirm_publish" not in options
    assert app.amqp.queues["ocr.echo"].queue_arguments is None
    assert app.conf.task_default_queue_type == "classic"
    assert app.conf.worker_consumer == "celery.worker.consumer:Consumer"
