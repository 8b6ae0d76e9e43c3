"""The store's gauges, as the coordinator last counted them: what the exposition says for what the store holds."""

from __future__ import annotations

import json
import logging

import fakeredis
import pytest
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families
from redis.exceptions import ConnectionError as RedisConnectionError

from jobs import controls, observed
from jobs.config import Settings
from jobs.records import GroupRules, NewJob
from jobs.store import JobStore
from jobs.worker_reports import WorkerReports
from observability.collectors import STALE_FLOOR_SECONDS, StoreCollector
from tests.keyspace import keys
from tests.unit.redis_spy import round_trips

INTERVAL = 5.0  # OCRGW_GAUGE_INTERVAL's default: a count older than 15 s is withheld


def scrape(collector: StoreCollector) -> dict[tuple[str, str], float]:
    registry = CollectorRegistry(auto_describe=False)
    registry.register(collector)
    text = generate_latest(registry).decode()
    return {
        (sample.name, sample.labels.get("model", "")): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


@pytest.fixture
def store() -> JobStore:
    return JobStore(fakeredis.FakeRedis(server=fakeredis.FakeServer()), Settings())


def echo(i: int) -> NewJob:
    return NewJob(model="echo", content_type="text/plain", payload=f"child {i}".encode())


def test_a_running_group_s_children_per_status_and_model(store):
    created = store.create_group([echo(i) for i in range(6)], GroupRules(2))
    assert store.claim(keys.child_id(created.job_id, 0)) is not None
    sample = observed.record_sample(store.redis, keys)

    got = scrape(StoreCollector(store.redis, INTERVAL))

    assert got[("ocrgw_store_up", "")] == 1
    assert got[("ocrgw_jobs_sample_timestamp_seconds", "")] == sample.sampled_at_ms / 1000
    assert got[("ocrgw_jobs_sample_stale", "")] == 0
    assert got[("ocrgw_jobs_held", "echo")] == 4
    assert got[("ocrgw_jobs_queued", "echo")] == 1
    assert got[("ocrgw_jobs_processing", "echo")] == 1
    assert got[("ocrgw_jobs_in_flight", "echo")] == 2
    for model in ("tesseract", "paddleocr"):  # every model has its series, at zero
        assert got[("ocrgw_jobs_queued", model)] == 0 and got[("ocrgw_jobs_held", model)] == 0


def test_a_store_that_does_not_answer_gives_store_up_0_and_no_job_gauges():
    server = fakeredis.FakeServer()
    server.connected = False  # fakeredis then raises ConnectionError, as redis-py does
    down = fakeredis.FakeRedis(server=server)
    with pytest.raises(RedisConnectionError):
        down.ping()

    got = scrape(StoreCollector(down, INTERVAL))

    assert got == {("ocrgw_store_up", ""): 0}


def test_the_gauges_are_the_last_count_not_the_store_as_it_is_now(store):
    """They lag the store by one interval at most: what changed since the count shows at the next."""
    created = store.create_group([echo(i) for i in range(3)], GroupRules(1))
    observed.record_sample(store.redis, keys)
    controls.cancel(store, created.job_id)

    assert scrape(StoreCollector(store.redis, INTERVAL))[("ocrgw_jobs_held", "echo")] == 2
    observed.record_sample(store.redis, keys)
    assert scrape(StoreCollector(store.redis, INTERVAL))[("ocrgw_jobs_held", "echo")] == 0


def test_before_any_count_there_are_no_job_gauges(store):
    store.create_group([echo(i) for i in range(3)], GroupRules(1))

    assert scrape(StoreCollector(store.redis, INTERVAL)) == {("ocrgw_store_up", ""): 1}


def test_a_scrape_reads_one_key_and_the_store_s_time_whatever_the_backlog(store, monkeypatch):
    for _ in range(5):
        store.create_group([echo(i) for i in range(20)], GroupRules(1))
    observed.record_sample(store.redis, keys)

    with round_trips(monkeypatch) as trips:
        scrape(StoreCollector(store.redis, INTERVAL))

    assert trips == [["GET", "TIME"]]


def test_a_count_that_cannot_be_read_gives_no_job_gauges(store):
    store.redis.set(keys.GAUGES, b"not json")

    assert scrape(StoreCollector(store.redis, INTERVAL)) == {("ocrgw_store_up", ""): 1}


def age_count(client, seconds: float) -> int:
    """Moves the count's date back by ``seconds``, as if the store's clock had run on since with no new count."""
    found = json.loads(client.get(keys.GAUGES))
    found["sampled_at_ms"] -= int(seconds * 1000)
    client.set(keys.GAUGES, json.dumps(found))
    return found["sampled_at_ms"]


def test_a_count_older_than_three_intervals_is_withheld_but_its_date_is_served(store):
    """The coordinator or beat stopped: frozen gauges would be read as the store's; the date lets an alert fire."""
    store.create_group([echo(i) for i in range(3)], GroupRules(1))
    observed.record_sample(store.redis, keys)
    sampled_at_ms = age_count(store.redis, 3 * INTERVAL + 1)

    got = scrape(StoreCollector(store.redis, INTERVAL))

    assert got == {
        ("ocrgw_store_up", ""): 1,
        ("ocrgw_jobs_sample_timestamp_seconds", ""): sampled_at_ms / 1000,
        ("ocrgw_jobs_sample_stale", ""): 1,
    }


def test_a_count_younger_than_the_bound_is_served(store):
    store.create_group([echo(i) for i in range(3)], GroupRules(1))
    observed.record_sample(store.redis, keys)
    age_count(store.redis, 3 * INTERVAL - 1)

    got = scrape(StoreCollector(store.redis, INTERVAL))

    assert got[("ocrgw_jobs_sample_stale", "")] == 0
    assert got[("ocrgw_jobs_held", "echo")] == 2


def test_a_short_interval_still_allows_a_count_some_seconds(store):
    """Beat's ticks and a long count run late: the bound is never under STALE_FLOOR_SECONDS."""
    store.create_group([echo(i) for i in range(3)], GroupRules(1))
    observed.record_sample(store.redis, keys)
    age_count(store.redis, STALE_FLOOR_SECONDS - 1)

    assert scrape(StoreCollector(store.redis, 0.2))[("ocrgw_jobs_held", "echo")] == 2

    age_count(store.redis, 2)
    assert ("ocrgw_jobs_held", "echo") not in scrape(StoreCollector(store.redis, 0.2))


def test_a_stale_count_is_logged_once_and_served_again_once_counted(store, caplog):
    store.create_group([echo(i) for i in range(3)], GroupRules(1))
    observed.record_sample(store.redis, keys)
    age_count(store.redis, 60)
    collector = StoreCollector(store.redis, INTERVAL)

    with caplog.at_level(logging.INFO, logger="observability.collectors"):
        for _ in range(3):
            scrape(collector)
        observed.record_sample(store.redis, keys)
        got = scrape(collector)

    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "counted 60" in warnings[0].getMessage()
    assert got[("ocrgw_jobs_sample_stale", "")] == 0 and got[("ocrgw_jobs_held", "echo")] == 2


def test_the_workers_that_report_are_counted_live_and_those_that_stopped_without_a_word_lapsed(store):
    reports = WorkerReports(store.redis)
    for name in ("ocr-1", "ocr-2", "ocr-3", "ocr-4"):
        reports.report(name, ["eng"], lifetime_seconds=60)
    reports.withdraw("ocr-3")  # stopped cleanly: gone at once
    store.redis.delete(keys.worker_report("ocr-4"))  # its report ran out: Redis expired it
    observed.record_sample(store.redis, keys)

    got = scrape_labelled(StoreCollector(store.redis, INTERVAL))

    assert got[("ocrgw_workers", "live")] == 2
    assert got[("ocrgw_workers", "lapsed")] == 1


def test_a_count_made_without_the_workers_serves_no_worker_gauge(store):
    store.redis.set(
        keys.GAUGES, json.dumps({"sampled_at_ms": store.now_ms(), "held": {}, "queued": {}, "processing": {}})
    )

    got = scrape_labelled(StoreCollector(store.redis, INTERVAL))

    assert got[("ocrgw_store_up", "")] == 1
    assert not any(name == "ocrgw_workers" for name, _ in got)


def scrape_labelled(collector: StoreCollector) -> dict[tuple[str, str], float]:
    registry = CollectorRegistry(auto_describe=False)
    registry.register(collector)
    text = generate_latest(registry).decode()
    return {
        (sample.name, sample.labels.get("state", "")): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }
