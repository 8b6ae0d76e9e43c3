"""The job gauges a gateway serves: jobs held, queued, processing and in flight per model, the reporting
workers (live, lapsed), and when they were counted.

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

A count older than ``stale_after`` (three intervals, at least
``STALE_FLOOR_SECONDS``) is not served either: with the coordinator or
beat stopped the key keeps its last count (it has no expiry, so that its
date stays readable), and serving it would show frozen queues as if they
were the store's.  The scrape then serves the count's timestamp and
``ocrgw_jobs_sample_stale 1``, so that an alert on the age can fire, and
logs once that it withholds them.  The age is the store's clock against
the store's clock (``TIME`` in the same round trip as the ``GET``), so a
gateway's own clock does not enter it.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

from redis.exceptions import RedisError

from jobs import observed
from jobs.connections import StoreClient
from jobs.worker_reports import Census
from observability.metrics import (
    JOBS_HELD,
    JOBS_IN_FLIGHT,
    JOBS_PROCESSING,
    JOBS_QUEUED,
    JOBS_SAMPLE_STALE,
    JOBS_SAMPLE_TIME,
    STORE_UP,
    WORKERS,
    Metric,
)

log = logging.getLogger(__name__)


#: The least age at which a count is withheld, whatever the interval: beat's ticks and a long count may run late.
STALE_FLOOR_SECONDS = 10.0


def stale_after(gauge_interval: float) -> float:
    """The age (seconds) past which a count is not served: three missed counts, and never under the floor."""
    return max(3 * gauge_interval, STALE_FLOOR_SECONDS)


class StoreCollector:
    """``gauge_interval``: ``OCRGW_GAUGE_INTERVAL``, how often the coordinator counts (bounds a count's age)."""

    def __init__(self, client: StoreClient, gauge_interval: float):
        self.client = client
        self.max_age_ms = stale_after(gauge_interval) * 1000
        self.withholding = False  # so that a stale count is logged once, not at every scrape

    def collect(self) -> Iterator[Any]:
        from prometheus_client.core import GaugeMetricFamily

        try:
            sample, now_ms = observed.last_sample_and_time(self.client)
        except RedisError as error:
            log.warning("metrics: the store did not answer: %s", error)
            yield GaugeMetricFamily(STORE_UP.name, STORE_UP.help, value=0)
            return
        yield GaugeMetricFamily(STORE_UP.name, STORE_UP.help, value=1)
        if sample is None:
            return
        yield GaugeMetricFamily(JOBS_SAMPLE_TIME.name, JOBS_SAMPLE_TIME.help, value=sample.sampled_at_ms / 1000)
        stale = self._is_stale(sample, now_ms)
        yield GaugeMetricFamily(JOBS_SAMPLE_STALE.name, JOBS_SAMPLE_STALE.help, value=int(stale))
        if stale:
            return
        counts = sample.occupancy
        in_flight = counts.queued + counts.processing
        for metric, by_model in (
            (JOBS_HELD, counts.held),
            (JOBS_QUEUED, counts.queued),
            (JOBS_PROCESSING, counts.processing),
            (JOBS_IN_FLIGHT, in_flight),
        ):
            yield _by_model(metric, by_model, counts.models)
        if sample.workers is not None:
            yield _workers(sample.workers)

    def _is_stale(self, sample: observed.Sample, now_ms: int) -> bool:
        """Whether the count is too old to serve; logs when that starts, and when it ends."""
        age_ms = now_ms - sample.sampled_at_ms
        stale = age_ms > self.max_age_ms
        if stale and not self.withholding:
            log.warning(
                "metrics: the job gauges were counted %.1f s ago (more than %.1f s): not served until the "
                "coordinator counts them again (is it, or beat, running?)",
                age_ms / 1000,
                self.max_age_ms / 1000,
            )
        elif self.withholding and not stale:
            log.info("metrics: the job gauges are counted again; served")
        self.withholding = stale
        return stale


def _workers(census: Census) -> Any:
    from prometheus_client.core import GaugeMetricFamily

    family = GaugeMetricFamily(WORKERS.name, WORKERS.help, labels=WORKERS.labels)
    family.add_metric(["live"], census.live)
    family.add_metric(["lapsed"], census.lapsed)
    return family


def _by_model(metric: Metric, counts: dict[str, int], models: list[str]) -> Any:
    from prometheus_client.core import GaugeMetricFamily

    family = GaugeMetricFamily(metric.name, metric.help, labels=metric.labels)
    for model in models:
        family.add_metric([model], counts.get(model, 0))
    return family
