"""The workers' reports of their Tesseract languages (jobs/worker_reports.py): kept while renewed,
gone when withdrawn or lapsed, and read as the union of the live ones."""

from __future__ import annotations

import fakeredis
import pytest

from jobs.config import Settings
from jobs.store import JobStore
from jobs.worker_reports import WorkerReport, WorkerReports
from tests.keyspace import keys
from tests.unit import fake_clock
from tests.unit.fake_clock import FakeClock


@pytest.fixture
def redis() -> fakeredis.FakeRedis:
    return fakeredis.FakeRedis()


@pytest.fixture
def clock(monkeypatch) -> FakeClock:
    """Moves the reporters' clock and FakeRedis's (key expiry) together."""
    return fake_clock.install(monkeypatch)


@pytest.fixture
def reports(redis, clock) -> WorkerReports:
    return WorkerReports(redis, clock=clock.time)


def test_no_report_means_no_live_worker_and_no_known_language(reports):
    assert reports.live() == []
    assert reports.languages() is None


def test_the_live_languages_are_the_union_of_every_live_worker_s(reports):
    reports.report("worker-a@h1:11", {"eng", "deu"}, 30)
    reports.report("worker-b@h2:12", {"eng", "fra"}, 30)

    assert reports.live() == [
        WorkerReport("worker-a@h1:11", frozenset({"eng", "deu"})),
        WorkerReport("worker-b@h2:12", frozenset({"eng", "fra"})),
    ]
    assert reports.languages() == {"eng", "deu", "fra"}


def test_a_worker_without_tesseract_is_live_with_no_language(reports):
    reports.report("worker-a@h1:11", [], 30)

    assert reports.languages() == frozenset()


def test_a_report_lapses_when_its_lifetime_is_up_unless_renewed(reports, redis, clock):
    reports.report("w:1", {"eng"}, 30)
    reports.report("w:2", {"deu"}, 30)
    assert redis.zscore(keys.WORKERS, "w:1") == pytest.approx((clock.time() + 30) * 1000, abs=50)

    clock.advance(20)
    reports.report("w:1", {"eng"}, 30)  # renewed: 30 s from now
    clock.advance(11)  # w:2's report, never renewed, has lapsed

    assert reports.live() == [WorkerReport("w:1", frozenset({"eng"}))]
    assert reports.languages() == {"eng"}
    assert redis.zscore(keys.WORKERS, "w:2") is not None  # still indexed, skipped by the read

    clock.advance(20)
    assert reports.languages() is None


def test_a_report_trims_the_names_that_lapsed_a_whole_lifetime_ago(reports, redis, clock):
    reports.report("gone:1", {"eng"}, 30)
    clock.advance(45)  # lapsed 15 s ago: another host's clock could be that far behind
    reports.report("w:2", {"eng"}, 30)
    assert redis.zscore(keys.WORKERS, "gone:1") is not None

    clock.advance(20)  # lapsed 35 s ago: more than a lifetime
    reports.report("w:2", {"eng"}, 30)

    assert [m.decode() for m in redis.zrange(keys.WORKERS, 0, -1)] == ["w:2"]


def test_a_withdrawn_report_goes_at_once(reports, redis):
    reports.report("w:1", {"eng", "deu"}, 30)
    reports.report("w:2", {"eng"}, 30)

    reports.withdraw("w:1")

    assert reports.languages() == {"eng"}
    assert redis.exists(keys.worker_report("w:1")) == 0
    reports.withdraw("w:2")
    assert reports.languages() is None
    assert [k for k in redis.scan_iter() if keys.is_worker_report(k.decode())] == []


def test_the_store_holds_the_reports_over_its_own_client(redis, clock):
    store = JobStore(redis, Settings())
    store.workers.report("w:1", {"eng"}, 30)

    assert store.workers.languages() == {"eng"}
    assert keys.is_worker_report(keys.WORKERS) and keys.is_worker_report(keys.worker_report("w:1"))
    assert not keys.is_worker_report(keys.LEASES)


def test_a_report_lasts_three_intervals():
    assert Settings(worker_report_interval=2.0).worker_report_lifetime == 6.0
