"""A stand-in for an upstream ocrgw on a loopback port, recording every request it gets.

``FakeUpstream`` answers POST /jobs with ``submit`` (status, JSON body),
each GET /jobs/{id} with the next of ``views`` (the last one again once
they run out), and DELETE with 202.  ``requests`` lists what arrived, in
order, so a test can show what left the worker, and that nothing did.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

UPSTREAM_ID = "up-0001"
Answer = tuple[int, Any]  # (status, JSON body; None: no body)


@dataclass(frozen=True)
class Recorded:
    method: str
    path: str  # with its query
    headers: dict[str, str]  # names lower-cased
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


def view(status: str, **fields: Any) -> Answer:
    return 200, {"id": UPSTREAM_ID, "kind": "single", "status": status, "stage": status, **fields}


def page(number: int, text: str, **fields: Any) -> dict[str, Any]:
    return {
        "page": number,
        "text": text,
        "source": "ocr",
        "rotation": 0,
        "skew": 0.0,
        "orientation_by": None,
        "lines": [
            {
                "text": text,
                "confidence": 0.9312,
                "bbox": [10, 20, 310, 60],
                "words": [{"text": text, "confidence": 0.9312, "bbox": [10, 20, 310, 60]}],
            }
        ],
        "width": 1700,
        "height": 2200,
        **fields,
    }


def completed(*pages: dict[str, Any]) -> Answer:
    text = "\n\n".join(p["text"] for p in pages)
    return view("completed", result={"text": text, "pages": list(pages)})


@dataclass
class FakeUpstream:
    submit: Answer = (202, {"id": UPSTREAM_ID, "status": "queued"})
    views: list[Answer] = field(default_factory=lambda: [completed(page(1, "upstream text"))])
    requests: list[Recorded] = field(default_factory=list)
    _server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self._server is not None
        host, port = self._server.server_address[:2]
        assert isinstance(host, str), "an IPv4 address"
        return f"http://{host}:{port}"

    def __enter__(self) -> FakeUpstream:
        upstream = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self, answer: Answer) -> None:
                status, body = answer
                data = b"" if body is None else json.dumps(body).encode()
                self.send_response(status)
                if body is not None:
                    kind = "application/problem+json" if status >= 400 else "application/json"
                    self.send_header("Content-Type", kind)
                if 300 <= status < 400:
                    self.send_header("Location", "http://127.0.0.1:9/elsewhere")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _record(self) -> Recorded:
                length = int(self.headers.get("Content-Length") or 0)
                recorded = Recorded(
                    self.command,
                    self.path,
                    {k.lower(): v for k, v in self.headers.items()},
                    self.rfile.read(length),
                )
                upstream.requests.append(recorded)
                return recorded

            def do_POST(self):  # noqa: N802 - the name http.server calls
                self._record()
                self._answer(upstream.submit)

            def do_GET(self):  # noqa: N802
                self._record()
                if urlsplit(self.path).path != f"/jobs/{UPSTREAM_ID}":
                    self._answer((404, {"code": "job_not_found", "detail": "no such job"}))
                    return
                answer = upstream.views.pop(0) if len(upstream.views) > 1 else upstream.views[0]
                self._answer(answer)

            def do_DELETE(self):  # noqa: N802
                self._record()
                self._answer(view("cancelled"))

            def log_message(self, format, *args):  # noqa: A002 - quiet
                pass

        self._server = server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        # A short poll interval: shutdown waits for the loop's next turn.
        serving = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
        serving.start()
        return self

    def __exit__(self, *exc_info) -> None:
        assert self._server is not None
        self._server.shutdown()
        self._server.server_close()

    def of(self, method: str) -> list[Recorded]:
        return [r for r in self.requests if r.method == method]
