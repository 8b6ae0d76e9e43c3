"""Every metric is defined once and documented; recording one counts exactly the events it names and never raises."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from observability import metrics
from tests.unit.observability.support import Counts

METRICS_PAGE = Path(__file__).resolve().parents[3] / "docs" / "operating" / "observability.md"


def test_every_metric_is_named_ocrgw_and_a_counter_s_name_ends_in_total():
    names = [m.name for m in metrics.ALL]
    assert len(names) == len(set(names))
    for metric in metrics.ALL:
        assert metric.name.startswith("ocrgw_")
        assert metric.name.endswith("_total") == (metric.kind == "counter"), metric.name
        assert metric.help and all(re.fullmatch(r"[a-z_]+", label) for label in metric.labels)


def test_every_metric_is_in_the_docs_table_with_its_labels():
    rows = dict(re.findall(r"^\| `(ocrgw_\w+)` \|([^|]*)\|", METRICS_PAGE.read_text(), flags=re.MULTILINE))
    for metric in metrics.ALL:
        assert metric.name in rows, f"{metric.name} is not in the table of docs/operating/observability.md"
        assert sorted(re.findall(r"`(\w+)`", rows[metric.name])) == sorted(metric.labels), metric.name


def test_an_attempt_that_ends_a_job_counts_it_finished_and_its_duration():
    counts = Counts()

    metrics.attempt_ended("echo", "completed", 0.25)
    metrics.attempt_ended("echo", "retried", 0.1)
    metrics.attempt_ended("tesseract", "failed", 2.0)

    assert counts.delta("ocrgw_job_attempts_total", model="echo", outcome="completed") == 1
    assert counts.delta("ocrgw_job_attempts_total", model="echo", outcome="retried") == 1
    assert counts.delta("ocrgw_jobs_finished_total", model="echo", status="completed") == 1
    assert counts.delta("ocrgw_jobs_finished_total", model="tesseract", status="failed") == 1
    assert counts.delta("ocrgw_job_duration_seconds_count", model="echo", status="completed") == 1
    assert counts.delta("ocrgw_job_duration_seconds_sum", model="echo", status="completed") == 0.25
    # A retried attempt did not end its job.
    assert counts.delta("ocrgw_job_duration_seconds_count", model="echo", status="retried") == 0


@pytest.mark.parametrize(
    ("ended_as", "outcome", "finished"),
    [(None, "reclaimed", None), ("failed", "lease_expired", "failed"), ("cancelled", "cancelled", "cancelled")],
)
def test_a_lease_that_ran_out(ended_as, outcome, finished):
    counts = Counts()

    metrics.lease_ran_out("paddleocr", ended_as)

    assert counts.delta("ocrgw_job_attempts_total", model="paddleocr", outcome=outcome) == 1
    total = sum(counts.delta("ocrgw_jobs_finished_total", model="paddleocr", status=s) for s in metrics.ENDING)
    assert total == (0 if finished is None else 1)


def test_a_sweep_counts_its_duration_by_outcome_and_each_repair():
    counts = Counts()

    metrics.swept(False, 0.002, {"reclaimed": 2, "released": 0})
    metrics.swept(True, 0.0001, {})

    assert counts.delta("ocrgw_sweep_duration_seconds_count", outcome="swept") == 1
    assert counts.delta("ocrgw_sweep_duration_seconds_count", outcome="skipped") == 1
    assert counts.delta("ocrgw_sweep_repairs_total", action="reclaimed") == 2
    assert counts.delta("ocrgw_sweep_repairs_total", action="released") == 0


def test_recording_never_raises(monkeypatch, caplog):
    def broken(metric):
        raise OSError("no space left on device")

    monkeypatch.setattr(metrics, "live", broken)

    metrics.submitted("single", "echo")
    metrics.page_done("echo", 0.1)

    assert "could not record ocrgw_submissions_total" in caplog.text


def test_a_label_set_recorded_again_counts_on_the_same_value_and_a_new_one_on_its_own():
    counts = Counts()

    for _ in range(3):
        metrics.attempt_started("echo", "kept_slot")
    metrics.attempt_started("echo", "pulled")

    assert counts.delta("ocrgw_job_starts_total", model="echo", path="kept_slot") == 3
    assert counts.delta("ocrgw_job_starts_total", model="echo", path="pulled") == 1


def test_a_label_set_recorded_before_a_failure_still_never_raises(monkeypatch, caplog):
    metrics.page_done("echo", 0.1)  # its labelled value is known from here on

    def broken(metric):
        raise OSError("no space left on device")

    monkeypatch.setattr(metrics, "live", broken)
    monkeypatch.setattr(metrics, "_failed", set())  # a failure is logged once per process: this one afresh
    metrics.page_done("echo", 0.1)

    assert "could not record ocrgw_page_duration_seconds" in caplog.text
