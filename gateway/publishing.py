"""Publishing the messages for the jobs a request queued."""

from __future__ import annotations

import logging
from collections.abc import Callable

from jobs.records import Dispatch

log = logging.getLogger(__name__)

Publish = Callable[[list[Dispatch]], int]


def publish_quietly(publish: Publish, dispatches: list[Dispatch]) -> None:
    # The jobs are durable already and the sweep re-publishes queued jobs
    # that nobody claims, so a publishing failure must not fail the request.
    if not dispatches:
        return
    try:
        publish(dispatches)
    except Exception:
        log.exception("publishing %d job messages failed; the sweep will re-publish them", len(dispatches))
