"""Priority lanes on the worker side: a model's interactive queue is consumed before its batch queue.

Every model has two queues, ``ocr.<model>.interactive`` and ``ocr.<model>``
(``jobs.registry``).  A worker consumes both for each model it serves, the
interactive ones first:

* ``--queues`` (``OCRGW_WORKER_QUEUES``) names the models' batch queues; each
  one brings its interactive lane along (``add_interactive_lanes``, on
  ``celeryd_after_setup``, the hook Celery gives for changing what a worker
  consumes once its ``--queues`` are applied).
* On Redis, kombu's worker waits on all its queues in one ``BRPOP``, which
  pops from the first non-empty list in the order given.  ``LaneCycle``
  (kombu's ``queue_order_strategy``) gives that order: every interactive
  queue before every batch queue, each lane kept round robin as kombu's
  default does (so a backlog of one model does not starve another model's
  queue in the same lane).  With one message prefetched per process and
  late acknowledgement, a worker whose processes are all busy holds no
  message back: the next free process takes whatever is first at that
  moment, an interactive job before any batch one.
* RabbitMQ has no order across queues: a consumer of several queues gets
  their messages as they come.  See docs/internals/priority-lanes.md for what
  holds there.
* With more than one bucket (a Redis Cluster), a finishing worker's
  ``complete`` sees the ready index of its own job's bucket only: an
  interactive job of another bucket is known to it only by its wake-up in
  the broker.  ``InteractiveWaiting`` looks there, so that the worker takes
  no next job of its own bucket while one waits (``Runner``).
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable, Sequence
from typing import Any

from kombu.exceptions import ChannelError
from kombu.utils.scheduling import round_robin_cycle

from jobs.registry import MODELS, interactive_queue_of, is_interactive_queue, with_interactive_lanes

log = logging.getLogger(__name__)

#: kombu's ``queue_order_strategy`` transport option naming ``LaneCycle`` (Redis and Sentinel brokers).
QUEUE_ORDER_STRATEGY = "workers.lanes:LaneCycle"


class LaneCycle(round_robin_cycle):
    """kombu's round robin over a channel's queues, every interactive queue ahead of every batch one."""

    def consume(self, n: int) -> list[str]:
        queues = super().consume(n)
        return [q for q in queues if is_interactive_queue(q)] + [q for q in queues if not is_interactive_queue(q)]


def add_interactive_lanes(app: Any) -> None:
    """A worker narrowed by ``--queues`` to some models consumes their interactive queues too, first."""
    queues = app.amqp.queues
    selected = queues.consume_from
    if not selected:  # no --queues: every model's queues, both lanes (the app's task_queues)
        return
    wanted = with_interactive_lanes(selected)
    if wanted == list(selected):
        return
    for name in wanted:
        if name not in queues:
            queues.add(queues.new_missing(name))
    queues.select(wanted)


def consumed_models(app: Any) -> tuple[str, ...]:
    """The models whose queues a worker consumes: every model's without ``--queues``."""
    selected = set(app.amqp.queues.consume_from or ())
    return tuple(
        name
        for name, model in MODELS.items()
        if not selected or model.queue in selected or interactive_queue_of(model.queue) in selected
    )


class InteractiveWaiting:
    """Whether a message waits in an interactive queue of this worker's models, read from the broker.

    A passive ``queue_declare`` per queue, on a connection of the process's
    own (made at the first call, after the pool's fork): its message count
    is what waits, not what a worker holds (with late acknowledgement and
    one message prefetched per process, a busy worker holds none of the
    queue's).  The answer is kept for ``every_seconds``: a worker handing off
    faster than that asks the broker once per period, not per job.  On Redis
    an empty queue is no list at all, which kombu answers with a
    ``ChannelError``: nothing waits.  A broker that cannot be read counts as
    nothing waiting: the worker then goes on as with one bucket.
    """

    def __init__(
        self,
        app: Any,
        models: Sequence[str],
        every_seconds: float = 0.05,
        clock: Callable[[], float] = time.monotonic,
    ):
        self._app, self._every, self._clock = app, every_seconds, clock
        self.queues = [interactive_queue_of(MODELS[name].queue) for name in models]
        self._connection: Any = None
        self._channel: Any = None
        self._asked_at: float | None = None
        self._answer = False

    def __call__(self) -> bool:
        now = self._clock()
        if self._asked_at is None or now - self._asked_at >= self._every:
            self._asked_at = now
            self._answer = self._count() > 0
        return self._answer

    def _count(self) -> int:
        try:
            waiting = 0
            for queue in self.queues:
                channel = self._open_channel()
                try:
                    waiting += channel.queue_declare(queue=queue, passive=True).message_count
                except ChannelError:
                    # No such queue (on Redis: an empty one).  On AMQP the broker closed the channel.
                    if getattr(channel, "is_open", True) is False:
                        self._channel = None
            return waiting
        except Exception:
            log.warning("could not read the interactive queues' lengths from the broker", exc_info=True)
            self.close()
            return 0

    def _open_channel(self) -> Any:
        if self._connection is None:
            self._connection = self._app.connection_for_read()
        if self._channel is None:
            self._channel = self._connection.channel()
        return self._channel

    def close(self) -> None:
        self._channel = None
        connection, self._connection = self._connection, None
        if connection is not None:
            with contextlib.suppress(Exception):  # already gone: nothing to release
                connection.release()
