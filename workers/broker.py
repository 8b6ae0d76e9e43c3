"""What Celery is told differently when its broker is RabbitMQ (``CELERY_BROKER_URL=amqp://...``).

The store is Redis whatever the broker is; the broker carries only "run job
<id>" messages (and the sweep's ticks, and webhook hand-offs).  On RabbitMQ:

* Every queue is a quorum queue: replicated by Raft across the cluster's
  nodes, so a message the broker confirmed survives the loss of a node.
  Celery declares the default queue (``coordinator``) and the queues it
  creates on first use (``ocr.<model>``, ``webhooks``) with
  ``x-queue-type: quorum``; every process declares them the same way, as
  RabbitMQ refuses a second declaration with other arguments.  Quorum
  queues have no global QoS, so the workers detect them and set their
  prefetch per consumer (``worker_detect_quorum_queues``).
* Publisher confirms: a publish returns once the broker has taken the
  message, so a gateway answers 202 only for jobs whose message is with
  the broker (or, if the publish fails, that the sweep will re-publish).
* ``visibility_timeout`` is a Redis transport option: RabbitMQ redelivers
  an unacked message as soon as its consumer's connection closes.
* No native delayed delivery: with quorum queues, a Celery worker would
  declare 28 more exchanges and quorum queues (``celery_delayed_*``) for
  messages with an ETA or a countdown, and warn at every start that the
  direct exchanges of ocrgw's queues cannot be bound to them.  ocrgw sends
  no such message (a retry waits in the store, not in the broker), so its
  workers leave that step out (``ConsumerWithoutDelayedDelivery``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from celery.worker.consumer import Consumer

AMQP_SCHEMES = frozenset({"amqp", "amqps", "pyamqp"})
QUEUE_TYPE = "quorum"
# Options of kombu's Redis transport that mean nothing to the AMQP one.
REDIS_ONLY_TRANSPORT_OPTIONS = frozenset({"visibility_timeout", "priority_steps", "sep", "queue_order_strategy"})


class ConsumerWithoutDelayedDelivery(Consumer):
    """Celery's consumer without its native delayed delivery step (see above)."""

    class Blueprint(Consumer.Blueprint):
        default_steps = [step for step in Consumer.Blueprint.default_steps if not step.endswith(":DelayedDelivery")]


def is_rabbitmq(broker_url: str) -> bool:
    return urlsplit(broker_url).scheme in AMQP_SCHEMES


def rabbitmq_settings(transport_options: Mapping[str, Any]) -> dict[str, Any]:
    """Celery settings for RabbitMQ, given the transport options set for Redis (kept where they apply)."""
    kept = {k: v for k, v in transport_options.items() if k not in REDIS_ONLY_TRANSPORT_OPTIONS}
    return {
        "task_default_queue_type": QUEUE_TYPE,
        "task_create_missing_queue_type": QUEUE_TYPE,
        "worker_detect_quorum_queues": True,
        "worker_consumer": f"{__name__}:{ConsumerWithoutDelayedDelivery.__name__}",
        "broker_transport_options": {**kept, "confirm_publish": True},
    }
