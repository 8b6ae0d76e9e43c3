"""A wake-up's message names the bucket whose ready index it was published for, and the task takes from
that bucket's; a message published before buckets (no bucket) takes from bucket 0."""

from __future__ import annotations

import os
from types import SimpleNamespace

from jobs.transitions.spec import BUILD_PDF, PULL, RUN, Dispatch
from workers import dispatch, tasks
from workers.celery_app import BUILD_PDF_TASK, PULL_TASK, RUN_TASK


def test_a_wake_up_s_message_names_its_model_lane_and_bucket():
    assert dispatch._task_of(Dispatch("", "echo", PULL, "interactive", 17)) == (PULL_TASK, ["echo", "interactive", 17])
    assert dispatch._task_of(Dispatch("job-id", "echo", RUN, "batch", 17)) == (RUN_TASK, ["job-id"])


def test_a_builds_message_names_its_pdf_variant_unless_it_is_the_default():
    # The default's message is as it was before there were variants: a worker of then still takes it.
    assert dispatch._task_of(Dispatch("job-id", "echo", BUILD_PDF)) == (BUILD_PDF_TASK, ["job-id"])
    variant = Dispatch("job-id", "echo", BUILD_PDF, pdf_variant="pdfa-o1")
    assert dispatch._task_of(variant) == (BUILD_PDF_TASK, ["job-id", "pdfa-o1"])


def test_the_pull_task_takes_from_the_bucket_its_message_names(monkeypatch):
    pulled = []

    def pull(model: str, lane: str, bucket: int) -> str:
        pulled.append((model, lane, bucket))
        return "skipped"

    fake = SimpleNamespace(pull=pull)
    monkeypatch.setattr(tasks, "_runner", fake)
    monkeypatch.setattr(tasks, "_runner_pid", os.getpid())

    tasks.pull.run("echo", "batch", 5)
    tasks.pull.run("echo", "batch")  # published before buckets

    assert pulled == [("echo", "batch", 5), ("echo", "batch", 0)]
