"""Publishes the messages a transition asked for, each to its model's queue of its lane: wake-ups (a worker
takes the model's next ready job), and run messages for the jobs the sweep re-publishes.

Publishing happens after the transition has committed, so a process that dies
in between leaves a `queued` job with no message; the sweep re-publishes
such jobs (see the `republish` transition), and claim ignores duplicates.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import Protocol

from jobs.records import Dispatch
from jobs.registry import MODELS
from jobs.transitions.spec import BUILD_PDF, PULL
from workers.celery_app import BUILD_PDF_TASK, PULL_TASK, RUN_TASK, app


class WakeupCount(Protocol):
    """What keeps count of the wake-ups on their way (``jobs.store.JobStore``)."""

    def withdraw_wakeups(self, unsent: Iterable[Dispatch]) -> None: ...


log = logging.getLogger(__name__)


# Celery declares a message's queue at every publish, and kombu's check of
# its declaration cache (which binds a copy of the queue each time) was a
# quarter of the publishing time.  So each queue is declared once per broker
# connection: the mark below goes into kombu's own record of what the
# connection declared, which kombu empties whenever the connection is
# re-established, in case the broker lost its queues meanwhile.
def _declared_mark(queue: str) -> tuple[str, str]:
    return ("ocrgw.declared-queue", queue)


def _task_of(d: Dispatch) -> tuple[str, list[str | int]]:
    if d.task == PULL:
        # A wake-up names the bucket whose ready index it is for.
        return PULL_TASK, [d.model, d.priority, d.bucket]
    if d.task == BUILD_PDF and d.pdf_variant:
        return BUILD_PDF_TASK, [d.job_id, d.pdf_variant]
    return (BUILD_PDF_TASK if d.task == BUILD_PDF else RUN_TASK), [d.job_id]


def publish(dispatches: Iterable[Dispatch]) -> int:
    """Sends the messages; returns how many were sent.  Never raises: the sweep covers a failure."""
    dispatches = list(dispatches)
    if not dispatches:
        return 0
    try:
        # One pipelined round trip for the lot instead of one LPUSH each: the
        # per-message round trip was most of a 100-child POST.
        with app.producer_or_acquire() as producer, producer.batch(max_size=512):
            declared = producer.connection.declared_entities
            for d in dispatches:
                queue = MODELS[d.model].queue_for(d.priority)
                task, args = _task_of(d)
                mark = _declared_mark(queue)
                if mark in declared:
                    app.send_task(task, args=args, queue=queue, producer=producer, declare=[])
                else:
                    app.send_task(task, args=args, queue=queue, producer=producer)
                    declared.add(mark)
    except Exception:  # the broker is down or went away mid-way
        # A run's message the sweep re-publishes; a build's, a request once the gateway's mark lapses.
        log.exception("could not publish %d job messages; they will be sent again", len(dispatches))
        return 0
    return len(dispatches)


def publisher(store: WakeupCount) -> Callable[[list[Dispatch]], int]:
    """``publish``, and when the broker refuses the lot, its wake-ups taken back off their models' counts
    (``JobStore.withdraw_wakeups``): a wake-up counted as on its way holds back new ones until it lapses."""

    def publish_or_withdraw(dispatches: list[Dispatch]) -> int:
        sent = publish(dispatches)
        if dispatches and not sent:
            try:
                store.withdraw_wakeups(dispatches)
            except Exception:  # the store is down too: the count lapses on its own
                log.exception("could not withdraw the wake-ups a failed publish did not send")
        return sent

    return publish_or_withdraw
