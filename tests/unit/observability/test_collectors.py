"""The store's gauges, as the coordinator last counted them: what the exposition says for what the store holds."""

from __future__ import annotations

import fakeredis
import pytest
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families
from redis.exceptions import ConnectionError as RedisConnectionError

from jobs import controls, keys, observed
from jobs.config import Settings
from jobs.records import NewJob
from jobs.store import JobStore
from observability.collectors import StoreCollector
from tests.unit.redis_spy import round_trips


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
    created = store.create_group([echo(i) for i in range(6)], 2)
    assert store.claim(keys.child_id(created.job_id, 0)) is not None
    sample = observed.record_sample(store.redis)

    got = scrape(StoreCollector(store.redis))

    assert got[("ocrgw_store_up", "")] == 1
    assert got[("ocrgw_jobs_sample_timestamp_seconds", "")] == sample.sampled_at_ms / 1000
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

    got = scrape(StoreCollector(down))

    assert got == {("ocrgw_store_up", ""): 0}


def test_the_gauges_are_the_last_count_not_the_store_as_it_is_now(store):
    """They lag the store by one interval at most: what changed since the count shows at the next."""
    created = store.create_group([echo(i) for i in range(3)], 1)
    observed.record_sample(store.redis)
    controls.cancel(store, created.job_id)

    assert scrape(StoreCollector(store.redis))[("ocrgw_jobs_held", "echo")] == 2
    observed.record_sample(store.redis)
    assert scrape(StoreCollector(store.redis))[("ocrgw_jobs_held", "echo")] == 0


def test_before_any_count_there_are_no_job_gauges(store):
    store.create_group([echo(i) for i in range(3)], 1)

    assert scrape(StoreCollector(store.redis)) == {("ocrgw_store_up", ""): 1}


def test_a_scrape_reads_one_key_whatever_the_backlog(store, monkeypatch):
    for _ in range(5):
        store.create_group([echo(i) for i in range(20)], 1)
    observed.record_sample(store.redis)

    with round_trips(monkeypatch) as trips:
        scrape(StoreCollector(store.redis))

    assert trips == [["GET"]]


def test_a_count_that_cannot_be_read_gives_no_job_gauges(store):
    store.redis.set(keys.GAUGES, b"not json")

    assert scrape(StoreCollector(store.redis)) == {("ocrgw_store_up", ""): 1}
