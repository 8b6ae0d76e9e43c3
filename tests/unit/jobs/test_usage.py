"""Usage metering through the transitions that end attempts: complete, retry, reclaim, and a redrive's.

Each test ends an attempt or a job by the store's own calls and reads the
tenant's record back (``UsageQueries``): pages count once, when a job
completes, with the units its worker gave; an attempt's engine time counts
once per attempt, exactly the run its interval records, however it ended.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from jobs import controls
from jobs.contract import UsageUnit
from jobs.errors import NothingToRetry, NotProcessing
from jobs.ids import DEFAULT_TENANT, tenant_tag
from jobs.usage import DAY, HOUR, JobUnits, UsageQueries, input_bytes_of, job_units, totals
from tests.keyspace import keys
from tests.unit import fake_clock
from tests.unit.jobs.conftest import parse_intervals

OCR = UsageUnit.OCR_PAGES.value
TEXT = UsageUnit.TEXT_LAYER_PAGES.value
BYTES = UsageUnit.INPUT_BYTES.value
ENGINE = UsageUnit.ENGINE_US.value
JOBS = UsageUnit.JOBS.value


def usage_of(kit, tenant: str = DEFAULT_TENANT, granularity: str = DAY) -> dict[str, dict[str, int]]:
    """The tenant's totals per model over the last two days and the next one."""
    now = datetime.now(UTC)
    periods = UsageQueries(kit.r, keys).periods(tenant, now - timedelta(days=2), now + timedelta(days=1), granularity)
    return totals(periods)


def run_us(kit, *job_ids: str) -> int:
    """The µs of every ended attempt of the jobs, as their intervals record them."""
    runs = [run for j in job_ids for run in parse_intervals(kit.job(j).get("intervals"))]
    return sum(ended - started for _, started, ended, _ in runs)


def test_a_completed_job_counts_its_pages_bytes_itself_and_its_attempt(kit):
    job_id = kit.single().job_id
    claim = kit.claim(job_id)
    units = JobUnits(ocr_pages=3, text_layer_pages=2, input_bytes=1234)
    kit.store.complete(job_id, claim.attempt, {"text": "x"}, units=units)

    used = usage_of(kit)["echo"]
    assert used == {OCR: 3, TEXT: 2, BYTES: 1234, JOBS: 1, ENGINE: run_us(kit, job_id)}
    assert used[ENGINE] > 0
    # The job's own view: a single job keeps its sums on its hash.
    assert job_units(kit.job(job_id), []) == {
        "ocr_pages": 3,
        "text_layer_pages": 2,
        "input_bytes": 1234,
        "engine_seconds": used[ENGINE] / 1e6,
    }


def test_the_units_default_to_the_result_s_pages_by_source(kit):
    job_id = kit.single().job_id
    claim = kit.claim(job_id)
    pages = [{"page": 1, "source": "ocr"}, {"page": 2, "source": "text_layer"}, {"page": 3, "source": "ocr"}]
    kit.store.complete(job_id, claim.attempt, {"text": "x", "pages": pages})

    used = usage_of(kit)["echo"]
    assert (used[OCR], used[TEXT], used.get(BYTES, 0), used[JOBS]) == (2, 1, 0, 1)


def test_a_failed_or_cancelled_attempt_counts_its_seconds_and_no_pages(kit):
    failed, cancelled = kit.single().job_id, kit.single().job_id
    claim = kit.claim(failed)
    kit.store.fail(failed, claim.attempt, "echo_failed", "asked to")
    claim = kit.claim(cancelled)
    kit.store.end_cancelled(cancelled, claim.attempt)

    assert usage_of(kit)["echo"] == {ENGINE: run_us(kit, failed, cancelled)}


def test_a_retried_job_counts_each_attempt_s_seconds_and_its_pages_once(kit):
    job_id = kit.single().job_id
    first = kit.claim(job_id)
    kit.store.retry(job_id, first.attempt, 0.0, "engine_unavailable", "x")
    kit.make_stale(job_id)
    second = kit.claim(job_id)
    kit.store.complete(job_id, second.attempt, {"text": "x"}, units=JobUnits(ocr_pages=4, input_bytes=10))

    assert len(parse_intervals(kit.job(job_id)["intervals"])) == 2
    assert usage_of(kit)["echo"] == {OCR: 4, BYTES: 10, JOBS: 1, ENGINE: run_us(kit, job_id)}


def test_a_reclaimed_attempt_counts_its_seconds_to_the_reclaim_and_a_late_completion_nothing(kit):
    job_id = kit.single().job_id
    dead = kit.claim(job_id)
    kit.expire_lease(job_id)
    kit.store.reclaim([job_id])
    after_reclaim = usage_of(kit)["echo"]
    assert after_reclaim == {ENGINE: run_us(kit, job_id)}

    # The dead attempt's completion comes late: refused, and nothing counted.
    before = kit.snapshot()
    with pytest.raises(NotProcessing):
        kit.store.complete(job_id, dead.attempt, {"text": "late"}, units=JobUnits(ocr_pages=9))
    assert kit.snapshot() == before

    live = kit.claim(job_id)
    kit.store.complete(job_id, live.attempt, {"text": "x"}, units=JobUnits(ocr_pages=1))
    assert usage_of(kit)["echo"] == {OCR: 1, JOBS: 1, ENGINE: run_us(kit, job_id)}


def test_an_attempt_reclaimed_on_its_last_try_counts_its_seconds(kit):
    job_id = kit.single().job_id  # max_attempts 2 (the kit's settings)
    for _ in range(2):
        kit.claim(job_id)
        kit.expire_lease(job_id)
        kit.store.reclaim([job_id])
    assert kit.status(job_id) == "failed"
    assert usage_of(kit)["echo"] == {ENGINE: run_us(kit, job_id)}


def test_a_redriven_child_counts_the_pages_it_finally_read_once(kit):
    parent = kit.group(3, max_parallel=3).job_id
    children = kit.child_ids(parent, 3)
    for i, child in enumerate(children):
        claim = kit.claim(child)
        if i == 1:
            kit.store.fail(child, claim.attempt, "echo_failed", "asked to")
        else:
            kit.store.complete(child, claim.attempt, {"text": "x"}, units=JobUnits(ocr_pages=2, input_bytes=5))
    assert kit.status(parent) == "failed"

    controls.redrive(kit.store, parent)
    claim = kit.claim(children[1])
    kit.store.complete(children[1], claim.attempt, {"text": "x"}, units=JobUnits(ocr_pages=2, input_bytes=5))
    assert kit.status(parent) == "completed"

    # A second redrive finds nothing to send again: the completed children are not counted twice.
    with pytest.raises(NothingToRetry):
        controls.redrive(kit.store, parent)
    used = usage_of(kit)["echo"]
    assert used == {OCR: 6, BYTES: 15, JOBS: 3, ENGINE: run_us(kit, *children)}
    # The parent's view sums its children's, the failed attempt's seconds included.
    assert job_units(kit.job(parent), []) == {
        "ocr_pages": 6,
        "text_layer_pages": 0,
        "input_bytes": 15,
        "engine_seconds": used[ENGINE] / 1e6,
    }
    # A child's own: its units, and its runs' seconds.
    runs = [e - s for _, s, e, _ in parse_intervals(kit.job(children[1])["intervals"])]
    assert len(runs) == 2
    assert job_units(kit.job(children[1]), runs)["ocr_pages"] == 2
    assert job_units(kit.job(children[1]), runs)["engine_seconds"] == sum(runs) / 1e6


def test_a_replayed_completion_counts_nothing_more(kit, monkeypatch):
    job_id = kit.single().job_id
    claim = kit.claim(job_id)
    token = "same-call"
    monkeypatch.setattr("jobs.transitions.complete.call_token", lambda: token)
    kit.store.complete(job_id, claim.attempt, {"text": "x"}, units=JobUnits(ocr_pages=1))
    once = usage_of(kit)
    kit.store.complete(job_id, claim.attempt, {"text": "x"}, units=JobUnits(ocr_pages=1))  # its answer was lost
    assert usage_of(kit) == once


def test_tenants_are_counted_apart(kit):
    for tenant, pages in (("alpha", 1), ("beta", 7)):
        job_id = kit.single(tenant=tenant).job_id
        claim = kit.claim(job_id)
        kit.store.complete(job_id, claim.attempt, {"text": "x"}, units=JobUnits(ocr_pages=pages))
    assert usage_of(kit, "alpha")["echo"][OCR] == 1
    assert usage_of(kit, "beta")["echo"][OCR] == 7
    assert usage_of(kit, "gamma") == {}


def test_the_record_is_per_hour_in_the_job_s_bucket_and_outlives_the_jobs(kit, r, new_kit):
    job_id = kit.single().job_id
    claim = kit.claim(job_id)
    kit.store.complete(job_id, claim.attempt, {"text": "x"}, units=JobUnits(ocr_pages=1))
    finished_us = int(kit.job(job_id)["finished_at"])
    day, hour = finished_us // 86_400_000_000, (finished_us // 3_600_000_000) % 24
    record = keys.usage(tenant_tag(DEFAULT_TENANT), keys.bucket_of(job_id), day)
    assert r.hget(record, f"{hour:02d}|echo|{OCR}") == b"1"
    # Kept OCRGW_USAGE_RETENTION after its day ends, whatever the jobs' retention.
    assert r.expiretime(record) == (day + 1) * 86400 + kit.store.settings.usage_retention

    hourly = UsageQueries(r, keys).periods(
        DEFAULT_TENANT, datetime.now(UTC) - timedelta(hours=1), datetime.now(UTC) + timedelta(hours=1), HOUR
    )
    assert [(p.start.hour, p.model, p.amounts[OCR]) for p in hourly] == [(hour, "echo", 1)]


def test_a_range_that_ends_before_the_hour_of_the_use_finds_nothing(kit):
    job_id = kit.single().job_id
    claim = kit.claim(job_id)
    kit.store.complete(job_id, claim.attempt, {"text": "x"}, units=JobUnits(ocr_pages=1))
    hour_start = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
    assert UsageQueries(kit.r, keys).periods(DEFAULT_TENANT, hour_start - timedelta(days=3), hour_start, DAY) == []


def test_a_usage_record_expires_after_its_retention(new_kit, monkeypatch):
    kit = new_kit(usage_retention=3600)
    clock = fake_clock.install(monkeypatch)
    job_id = kit.single().job_id
    claim = kit.claim(job_id)
    kit.store.complete(job_id, claim.attempt, {"text": "x"}, units=JobUnits(ocr_pages=1))
    assert usage_of(kit)["echo"][OCR] == 1
    clock.advance(2 * 86400 + 3600)
    assert [k for k in kit.r.keys("*") if keys.is_usage_record(k.decode())] == []


def test_a_split_document_counts_its_bytes_once_with_its_first_pages():
    assert input_bytes_of(1000, None) == 1000
    assert input_bytes_of(1000, (1, 4)) == 1000
    assert input_bytes_of(1000, (5, 8)) == 0
