"""A local OTLP/HTTP trace receiver: what the processes' OTLP exporters send, decoded, for a test to read.

It answers ``POST /v1/traces`` as a collector does (an empty
``ExportTraceServiceResponse``) and keeps each span with its service's name.
"""

from __future__ import annotations

import gzip
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue

STATUS_ERROR = 2  # opentelemetry.proto.trace.v1.Status.STATUS_CODE_ERROR


@dataclass(frozen=True)
class ReceivedSpan:
    service: str
    name: str
    trace_id: str
    span_id: str
    parent_span_id: str  # '' for a root span
    kind: int
    attributes: dict[str, Any]
    links: list[tuple[str, str]]  # (trace_id, span_id) of each link
    status_code: int
    status_message: str


@dataclass
class OtlpReceiver:
    """``with OtlpReceiver() as receiver``: ``receiver.endpoint`` is the OTEL_EXPORTER_OTLP_ENDPOINT to give."""

    spans: list[ReceivedSpan] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _server: ThreadingHTTPServer | None = None

    def __enter__(self) -> OtlpReceiver:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (the name http.server calls)
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                request = ExportTraceServiceRequest()
                request.ParseFromString(body)
                receiver._keep(request)
                answer = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *_: Any) -> None:  # a test's output is not the place for each export
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._server.serve_forever, name="otlp-receiver", daemon=True).start()
        return self

    def __exit__(self, *_: Any) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    @property
    def endpoint(self) -> str:
        assert self._server is not None, "the receiver is not running"
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def received(self) -> list[ReceivedSpan]:
        with self._lock:
            return list(self.spans)

    def _keep(self, request: ExportTraceServiceRequest) -> None:
        spans = list(_spans_of(request))
        with self._lock:
            self.spans.extend(spans)


def _spans_of(request: ExportTraceServiceRequest) -> Iterator[ReceivedSpan]:
    for resource_spans in request.resource_spans:
        resource = {a.key: _value(a.value) for a in resource_spans.resource.attributes}
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                yield ReceivedSpan(
                    service=str(resource.get("service.name", "")),
                    name=span.name,
                    trace_id=span.trace_id.hex(),
                    span_id=span.span_id.hex(),
                    parent_span_id=span.parent_span_id.hex(),
                    kind=span.kind,
                    attributes={a.key: _value(a.value) for a in span.attributes},
                    links=[(link.trace_id.hex(), link.span_id.hex()) for link in span.links],
                    status_code=span.status.code,
                    status_message=span.status.message,
                )


def _value(value: AnyValue) -> Any:
    kind = value.WhichOneof("value")
    return getattr(value, kind) if kind else None
