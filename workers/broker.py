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

On Redis (Sentinel included), a channel that outlives its connection fails
as a lost connection, not with an ``AttributeError`` (``guard_closed_redis_channels``).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from celery.worker.consumer import Consumer
from kombu.transport import redis as kombu_redis
from redis.exceptions import ConnectionError as RedisConnectionError

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


class ClosedBrokerConnection(RedisConnectionError):
    """A Redis channel was used after its broker connection had been closed."""


def guard_closed_redis_channels() -> None:
    """A kombu Redis channel whose connection was closed raises a connection error when it needs one again.

    kombu's Redis channel opens its connection pool lazily, from
    ``self.connection.client`` (``Channel._connparams``), and drops the pool
    as it closes.  Closing a kombu connection sets its transport's
    ``client`` to None.  At a connection loss Celery's consumer collects its
    connection, then closes it (``on_connection_error_after_connected``).
    When the loss surfaced on the broadcast (pidbox) channel while the task
    channel had a BRPOP in flight and a running task's message
    unacknowledged, the collect gave up before closing the task channel
    (its BRPOP reply, then the broadcast queue's deletion, failed on the dead
    master) but still closed the connection; the close that followed closed
    the task channel, whose restore of the unacknowledged message needed a
    new pool: ``AttributeError: 'NoneType' object has no attribute
    'hostname'`` (celery/kombu#582, "Error on restarting Gossip": the same
    error from a channel closed after its connection; still so in kombu
    5.7.0).  Celery retries only connection errors, so the worker ended with
    "Unrecoverable error" and its queues waited for a restart (once in 30
    Sentinel failovers under CPU load; ``tests/integration/test_failover.py``
    replays it).  Raised as a ``redis.ConnectionError`` instead, it goes
    where every lost connection goes: the close is abandoned as a lost
    connection's is, Celery reconnects (``broker_connection_max_retries``
    None: for ever), a later acknowledgement on that channel is logged as
    lost, and the message comes back after the visibility timeout (claim
    makes it a no-op).
    """
    channel_class: Any = kombu_redis.Channel
    if getattr(channel_class._connparams, "guards_closed_connections", False):
        return
    connparams = channel_class._connparams

    @functools.wraps(connparams)
    def _connparams(self: Any, asynchronous: bool = False) -> dict[str, Any]:
        transport = self.connection
        if transport is None or transport.client is None:
            raise ClosedBrokerConnection("this channel's broker connection was closed")
        return connparams(self, asynchronous)

    _connparams.guards_closed_connections = True  # type: ignore[attr-defined]
    channel_class._connparams = _connparams
