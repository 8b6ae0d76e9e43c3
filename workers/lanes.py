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
"""

from __future__ import annotations

from typing import Any

from kombu.utils.scheduling import round_robin_cycle

from jobs.registry import MODELS, interactive_queue_of, is_interactive_queue, with_interactive_lanes

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
