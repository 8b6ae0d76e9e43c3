"""The gauges read from the store when Prometheus scrapes: jobs held, queued, processing and in flight per model.

Not kept in any process's memory: the store's indexes are the truth every
process shares, so every gateway answers the same (take ``max``, not
``sum``, over gateways).  The read is ``jobs.observed.occupancy``, which
reads the indexes of the work in flight, never the whole store.  A store
that does not answer gives ``ocrgw_store_up 0`` and no job gauges, rather
than a failed scrape.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

from redis import Redis
from redis.exceptions import RedisError

from jobs import observed
from observability.metrics import JOBS_HELD, JOBS_IN_FLIGHT, JOBS_PROCESSING, JOBS_QUEUED, STORE_UP, Metric

log = logging.getLogger(__name__)


class StoreCollector:
    def __init__(self, client: Redis):
        self.client = client

    def collect(self) -> Iterator[Any]:
        from prometheus_client.core import GaugeMetricFamily

        try:
            now = observed.occupancy(self.client)
        except RedisError as error:
            log.warning("metrics: the store did not answer: %s", error)
            yield GaugeMetricFamily(STORE_UP.name, STORE_UP.help, value=0)
            return
        yield GaugeMetricFamily(STORE_UP.name, STORE_UP.help, value=1)
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
