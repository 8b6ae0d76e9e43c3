"""The job gauges a gateway serves: jobs held, queued, processing and in flight per model, and when they were counted.

Not kept in any process's memory, and not counted at scrape time: the
coordinator counts them from the store's indexes once every
``OCRGW_GAUGE_INTERVAL`` and keeps the count in one key
(``jobs.observed.record_sample``); a scrape reads that key, one command
whatever the backlog (``jobs.observed.last_sample``).  So the gauges lag
the store by one interval at most, ``ocrgw_jobs_sample_timestamp_seconds``
says by how much, and every gateway answers the same (take ``max``, not
``sum``, over gateways).  A store that does not answer gives
``ocrgw_store_up 0`` and no job gauges, rather than a failed scrape; a
store no coordinator has counted yet gives no job gauges either.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

from redis import Redis
from redis.exceptions import RedisError

from jobs import observed
from observability.metrics import (
    JOBS_HELD,
    JOBS_IN_FLIGHT,
    JOBS_PROCESSING,
    JOBS_QUEUED,
    JOBS_SAMPLE_TIME,
    STORE_UP,
    Metric,
)

log = logging.getLogger(__name__)


class StoreCollector:
    def __init__(self, client: Redis):
        self.client = client

    def collect(self) -> Iterator[Any]:
        from prometheus_client.core import GaugeMetricFamily

        try:
            sample = observed.last_sample(self.client)
        except RedisError as error:
            log.warning("metrics: the store did not answer: %s", error)
            yield GaugeMetricFamily(STORE_UP.name, STORE_UP.help, value=0)
            return
        yield GaugeMetricFamily(STORE_UP.name, STORE_UP.help, value=1)
        if sample is None:
            return
        yield GaugeMetricFamily(JOBS_SAMPLE_TIME.name, JOBS_SAMPLE_TIME.help, value=sample.sampled_at_ms / 1000)
        now = sample.occupancy
        in_flight = now.queued + now.processing
        for metric, counts in (
            (JOBS_HELD, now.held),
            (JOBS_QUEUED, now.queued),
            (JOBS_PROCESSING, now.processing),
            (JOBS_IN_FLIGHT, in_flight),
        ):
            yield _by_model(metric, counts, now.models)


def _by_model(metric: Metric, counts: dict[str, int], models: list[str]) -> Any:
    from prometheus_client.core import GaugeMetricFamily

    family = GaugeMetricFamily(metric.name, metric.help, labels=metric.labels)
    for model in models:
        family.add_metric([model], counts.get(model, 0))
    return family
