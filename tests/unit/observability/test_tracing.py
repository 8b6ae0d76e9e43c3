"""Tracing: off (and OpenTelemetry not even imported) unless the environment asks; an attempt's span and log ids.

What needs a configured tracer runs in a fresh interpreter: a tracer
provider is set once per process, and the instrumentations it installs
would change every later test of this one.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from observability import tracing
from tests.harness import ROOT


def run_python(code: str, **env: str) -> str:
    """``code`` in a fresh interpreter with no OTEL_* variable but ``env``; its stdout."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env={**clean, "PYTHONPATH": str(ROOT), **env},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize(
    ("environ", "wanted"),
    [
        ({}, False),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, True),
        ({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://collector:4318/v1/traces"}, True),
        ({"OTEL_TRACES_EXPORTER": "otlp"}, True),
        ({"OTEL_TRACES_EXPORTER": "console"}, True),
        ({"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, False),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318", "OTEL_SDK_DISABLED": "true"}, False),
        ({"OTEL_SERVICE_NAME": "ocr"}, False),  # naming a service asks for no traces
    ],
)
def test_tracing_is_wanted_only_when_an_exporter_or_an_endpoint_is_set(environ, wanted):
    assert tracing.wanted(environ) is wanted


def test_the_service_is_named_after_the_role_unless_the_environment_names_it():
    assert tracing._resource_attributes("worker", {}) == {"service.name": "ocrgw-worker"}
    assert tracing._resource_attributes("gateway", {"OTEL_SERVICE_NAME": "ocr-edge"}) == {}
    assert tracing._resource_attributes("worker", {"OTEL_RESOURCE_ATTRIBUTES": "service.name=ocr,x=y"}) == {}


def test_with_no_otel_variable_nothing_is_configured_nor_the_tracing_sdk_imported():
    out = run_python(
        """
        import json, sys
        # redis-py imports OpenTelemetry's API and metrics SDK itself where they are installed; the
        # tracing SDK, the instrumentations and the exporters are what tracing would bring.
        TRACING_MODULES = ("opentelemetry.sdk.trace", "opentelemetry.instrumentation", "opentelemetry.exporter")
        from flask import Flask
        from jobs.records import Claim
        from observability import logs, tracing
        from workers import runner  # noqa: F401  (the attempt's hot path, imported as a worker does)

        claim = Claim("0" * 32, 1, 1, "echo", "text/plain", {}, b"x", traceparent="")
        tracing.install_gateway(Flask("probe"))
        with tracing.attempt_span(claim, "message"):
            tracing.attempt_error("echo_failed", "no")
            tracing.attempt_outcome("failed")
            ids = tracing.log_ids()
        print(json.dumps({
            "configured": tracing.configure("worker") or tracing.configured(),
            "traceparent": tracing.current_traceparent(),
            "ids": ids,
            "imported": sorted(m for m in sys.modules if m.startswith(TRACING_MODULES)),
        }))
        """
    )
    assert json.loads(out) == {"configured": False, "traceparent": "", "ids": {}, "imported": []}


def test_an_attempt_span_is_a_child_of_the_stored_context_with_a_link_to_its_task_and_the_logs_carry_it():
    out = run_python(
        """
        import json, logging
        from opentelemetry import trace
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
        from jobs.records import Claim
        from observability import logs, tracing

        exporter = InMemorySpanExporter()
        tracing._exporters = lambda environ: iter([exporter])
        assert tracing.configure("worker")
        stored = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
        claim = Claim("a" * 32 + "-3", 2, 1, "echo", "text/plain", {}, None, (4, 6), traceparent=stored)
        made = logging.LogRecord("workers.runner", logging.WARNING, "runner.py", 1, "inside", (), None)
        with trace.get_tracer("test").start_as_current_span("run/ocrgw.run") as task:
            with tracing.attempt_span(claim, "kept_slot"):
                tracing.attempt_error("echo_transient", "try again")
                tracing.attempt_outcome("retried")
                logs.JobContext().filter(made)
                line = json.loads(logs.JsonFormatter().format(made))
        tracing.flush()
        [attempt] = [s for s in exporter.get_finished_spans() if s.name == "ocrgw.attempt"]
        print(json.dumps({
            "trace": f"{attempt.context.trace_id:032x}",
            "parent": f"{attempt.parent.span_id:016x}",
            "links": [f"{link.context.span_id:016x}" for link in attempt.links],
            "task": f"{task.get_span_context().span_id:016x}",
            "attributes": dict(attempt.attributes),
            "status": attempt.status.status_code.name,
            "service": attempt.resource.attributes["service.name"],
            "line": [line.get("trace_id"), line.get("span_id")],
            "span": f"{attempt.context.span_id:016x}",
        }))
        """,
        OTEL_TRACES_EXPORTER="memory",  # the exporter is this test's own (set above)
    )
    got = json.loads(out)
    assert (got["trace"], got["parent"]) == ("0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331")
    assert got["links"] == [got["task"]]
    assert got["attributes"] == {
        "ocrgw.job_id": "a" * 32 + "-3",
        "ocrgw.parent_id": "a" * 32,
        "ocrgw.model": "echo",
        "ocrgw.path": "kept_slot",
        "ocrgw.try_number": 1,
        "ocrgw.pages": 3,
        "ocrgw.error_code": "echo_transient",
        "ocrgw.outcome": "retried",
    }
    assert (got["status"], got["service"]) == ("ERROR", "ocrgw-worker")
    assert got["line"] == [got["trace"], got["span"]]


class FakeSpan:
    def __init__(self, name: str, **attributes):
        self.name, self.attributes = name, attributes

    def is_recording(self) -> bool:
        return True

    def update_name(self, name: str) -> None:
        self.name = name


def test_a_long_pipeline_s_span_is_renamed_after_its_first_commands_and_their_count():
    span = FakeSpan("HGET " + "HMGET " * 200 + "MGET", **{"db.redis.pipeline_length": 202})
    tracing._brief_pipeline_name(span, None, None)
    assert span.name.startswith("HGET HMGET HMGET") and span.name.endswith(" ... (202 commands)")
    assert len(span.name) <= tracing.LONGEST_SPAN_NAME + len(" ... (202 commands)")

    short = FakeSpan("ZADD HSET", **{"db.redis.pipeline_length": 2})
    tracing._brief_pipeline_name(short, None, None)
    assert short.name == "ZADD HSET"


def test_a_dashboard_page_is_one_server_span_and_its_in_process_api_reads_none():
    out = run_python(
        """
        import json
        import fakeredis
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
        from gateway import create_app
        from jobs.config import Settings
        from jobs.store import JobStore
        from observability import tracing

        exporter = InMemorySpanExporter()
        tracing._exporters = lambda environ: iter([exporter])
        settings = Settings()
        app = create_app(settings, JobStore(fakeredis.FakeRedis(), settings), lambda dispatches: len(dispatches))
        client = app.test_client()
        statuses = [client.get(path).status_code for path in ("/ui/workers", "/jobs")]
        tracing.flush()
        spans = exporter.get_finished_spans()
        page = next(s for s in spans if s.name == "GET /ui/workers")
        print(json.dumps({
            "statuses": statuses,
            "requests": sorted(
                (s.name, s.kind.name) for s in spans if "http.route" in s.attributes or "http.method" in s.attributes
            ),
            "under_the_page": sorted({s.name for s in spans if s.parent and s.parent.span_id == page.context.span_id}),
        }))
        """,
        OTEL_TRACES_EXPORTER="memory",  # the exporter is this test's own (set above)
    )
    got = json.loads(out)
    assert got["statuses"] == [200, 200]
    # The page's read of /ui/overview.json is no span of its own; /jobs asked by a client is one.
    assert got["requests"] == [["GET /jobs", "SERVER"], ["GET /ui/workers", "SERVER"]]
    # What the read did (its Redis commands) shows under the page's span.
    assert got["under_the_page"]
