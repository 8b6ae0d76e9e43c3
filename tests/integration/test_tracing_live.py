"""Traces end to end: a job's attempts join the trace of the POST that created it, however they reached a worker.

A stack whose processes export over OTLP/HTTP to a receiver in this test
(``otlp_receiver``), with JSON logs and kept slots.  The test sends each
POST with a ``traceparent`` of its own, so it knows each trace's id before
any process does.  It submits a single job, then a fan-out group with
max_parallel 1 whose first child a worker takes from a wake-up (an
``ocrgw.pull`` task) and whose later children go through the kept-slot path, the
last of them failing transiently once (retried, sent again by the sweep)
and then for good.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterator
from typing import Any

import pytest

from tests.harness import Stack, wait_until
from tests.integration.fanout_support import Gateway, echo_child, group_body
from tests.integration.otlp_receiver import STATUS_ERROR, OtlpReceiver, ReceivedSpan
from tests.integration.polling import WAIT, wait_for_job

pytestmark = pytest.mark.integration

SERVER = 2  # SpanKind.SERVER in OTLP's numbering
ATTEMPT = "ocrgw.attempt"


@pytest.fixture(scope="module")
def receiver() -> Iterator[OtlpReceiver]:
    with OtlpReceiver() as running:
        yield running


@pytest.fixture(scope="module")
def deployment(stack_factory, receiver) -> Stack:
    env = {
        "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint,
        "OTEL_BSP_SCHEDULE_DELAY": "100",  # ms: the spans arrive soon after they end
        "OCRGW_LOG_FORMAT": "json",
        # Long enough that every child after the first runs in the slot its predecessor kept.
        "OCRGW_KEEP_SLOT_SECONDS": "30",
        "OCRGW_MAX_ATTEMPTS": "2",
        "OCRGW_RETRY_BACKOFF": "0.2",
        "OCRGW_SWEEP_INTERVAL": "0.2",
    }
    return stack_factory(env=env, concurrency=1)


def new_traceparent() -> tuple[str, str, str]:
    """A sampled W3C traceparent of the caller's own: (header, trace id, span id)."""
    trace_id, span_id = secrets.token_hex(16), secrets.token_hex(8)
    return f"00-{trace_id}-{span_id}-01", trace_id, span_id


@pytest.fixture(scope="module")
def ran(deployment: Stack) -> dict[str, Any]:
    """A single job, then a group of three (the last failing transiently once, then for good), both ended."""
    single_header, single_trace, single_caller = new_traceparent()
    group_header, group_trace, group_caller = new_traceparent()
    children = [echo_child("first"), echo_child("second"), echo_child("third", options={"transient_fail": True})]
    with Gateway(deployment.web().base_url) as gateway:
        single = gateway.post_json(echo_child("alone"), headers={"traceparent": single_header}).json()["id"]
        assert wait_for_job(gateway.job, single)["status"] == "completed"
        parent = gateway.post_json(group_body(children, 1), headers={"traceparent": group_header}).json()["id"]
        view = wait_for_job(gateway.job, parent)
    assert view["status"] == "failed"
    return {
        "single": (single, single_trace, single_caller),
        "group": (parent, group_trace, group_caller),
        "children": [c["id"] for c in view["children"]],
    }


def attempts_of(receiver: OtlpReceiver, job_ids: list[str], count: int) -> list[ReceivedSpan]:
    """The attempt spans of these jobs, once ``count`` of them have arrived."""

    def arrived() -> list[ReceivedSpan] | None:
        found = [s for s in receiver.received() if s.name == ATTEMPT and s.attributes.get("ocrgw.job_id") in job_ids]
        return found if len(found) >= count else None

    return wait_until(arrived, WAIT, message=lambda: f"attempt spans of {job_ids}: {receiver.received()}")


def post_span(receiver: OtlpReceiver, trace_id: str, caller_span: str) -> ReceivedSpan:
    """The gateway's server span of the POST sent with (trace_id, caller_span)."""

    def arrived() -> ReceivedSpan | None:
        for span in receiver.received():
            if span.trace_id == trace_id and span.kind == SERVER and span.parent_span_id == caller_span:
                return span
        return None

    span = wait_until(arrived, WAIT, message="the POST's server span never arrived")
    assert span.service == "ocrgw-gateway" and span.name == "POST /jobs"
    return span


def chain_reaches(spans: list[ReceivedSpan], span: ReceivedSpan, ancestor: ReceivedSpan) -> bool:
    by_id = {s.span_id: s for s in spans}
    current: ReceivedSpan | None = span
    while current is not None:
        if current.parent_span_id == ancestor.span_id:
            return True
        current = by_id.get(current.parent_span_id)
    return False


def test_a_single_job_s_attempt_is_in_its_post_s_trace(receiver, ran):
    job_id, trace_id, caller = ran["single"]
    post = post_span(receiver, trace_id, caller)
    [attempt] = attempts_of(receiver, [job_id], 1)

    assert attempt.trace_id == trace_id and attempt.service == "ocrgw-worker"
    assert chain_reaches(receiver.received(), attempt, post)
    assert attempt.attributes["ocrgw.model"] == "echo" and attempt.attributes["ocrgw.pages"] == 1
    assert attempt.attributes["ocrgw.outcome"] == "completed" and attempt.attributes["ocrgw.path"] == "pulled"
    assert "ocrgw.parent_id" not in attempt.attributes
    # The Celery task it ran in is linked: the wake-up the POST published, so in the same trace.
    task = linked_task(receiver, attempt)
    assert task.trace_id == trace_id and task.service == "ocrgw-worker" and task.name == "run/ocrgw.pull"
    assert chain_reaches(receiver.received(), task, post)


def linked_task(receiver: OtlpReceiver, attempt: ReceivedSpan) -> ReceivedSpan:
    """The Celery task span an attempt links to: the task it ran in."""
    [(linked_trace, linked_span)] = attempt.links
    task = wait_until(lambda: next((s for s in receiver.received() if s.span_id == linked_span), None), WAIT)
    assert task.trace_id == linked_trace
    return task


def test_every_child_s_attempt_kept_slot_or_not_is_in_the_group_s_post_s_trace(receiver, ran):
    parent_id, trace_id, caller = ran["group"]
    children = ran["children"]
    post = post_span(receiver, trace_id, caller)
    # The first two children once each, the third twice (retried, then failed).
    attempts = attempts_of(receiver, children, 4)
    spans = receiver.received()

    for attempt in attempts:
        assert attempt.trace_id == trace_id, attempt
        assert chain_reaches(spans, attempt, post), attempt
        assert attempt.attributes["ocrgw.parent_id"] == parent_id and attempt.attributes["ocrgw.model"] == "echo"
        assert attempt.links, "the Celery task span it ran in is linked"

    by_job = {c: sorted((a for a in attempts if a.attributes["ocrgw.job_id"] == c), key=try_number) for c in children}
    first, second, third = (by_job[c] for c in children)
    assert [a.attributes["ocrgw.path"] for a in (*first, *second)] == ["pulled", "kept_slot"]
    # The first child ran in the task of the wake-up its group's POST published; the next in that same task.
    [task] = {linked_task(receiver, a).span_id: linked_task(receiver, a) for a in (*first, *second)}.values()
    assert task.name == "run/ocrgw.pull" and task.trace_id == trace_id
    for done in (*first, *second):
        assert (done.attributes["ocrgw.outcome"], done.attributes["ocrgw.pages"]) == ("completed", 1)
    retried, failed = third
    assert retried.attributes["ocrgw.path"] == "kept_slot"  # then sent again by the sweep, as a message
    assert (retried.attributes["ocrgw.outcome"], failed.attributes["ocrgw.outcome"]) == ("retried", "failed")
    for attempt in (retried, failed):
        assert attempt.attributes["ocrgw.error_code"] == "echo_transient"
        assert attempt.status_code == STATUS_ERROR


def try_number(span: ReceivedSpan) -> int:
    return int(span.attributes["ocrgw.try_number"])


def test_the_worker_s_json_lines_carry_the_trace_and_span_of_the_attempt(deployment, receiver, ran):
    _, trace_id, _ = ran["group"]
    third = ran["children"][2]
    retried = min(attempts_of(receiver, [third], 2), key=try_number)
    lines = [json.loads(line) for line in deployment.worker.log_text().splitlines() if line.startswith("{")]

    [retrying] = [r for r in lines if r.get("job_id") == third and "retrying" in r["message"]]
    assert (retrying["trace_id"], retrying["span_id"]) == (trace_id, retried.span_id)
    # The Celery lines of the group's tasks are in its trace too.
    assert any(r.get("trace_id") == trace_id and r["logger"].startswith("celery") for r in lines)


def test_a_pipeline_s_span_is_named_after_its_first_commands_not_all_of_them(receiver, ran):
    # Reading a group's view is one pipeline of many commands: its span would be named after each.
    attempts_of(receiver, ran["children"], 4)
    pipelines = [s for s in receiver.received() if "db.redis.pipeline_length" in s.attributes]
    assert any(s.attributes["db.redis.pipeline_length"] > 20 for s in pipelines)
    assert max(len(s.name) for s in receiver.received()) <= 120
    # Its statement (the commands, their arguments masked) is cut at 1024 characters.
    statements = [s.attributes.get("db.statement", "") for s in pipelines]
    assert max(len(statement) for statement in statements) == 1024
