"""A webhook receiver for tests: a real HTTP server on 127.0.0.1 in a thread.

It records every request it gets (path, headers, body) and answers each
with the next status of its script (then 200), so a test can make it fail
first and succeed after.  ``verify`` checks a signature the way a client
of ocrgw would, from the README's description alone.
"""

from __future__ import annotations

import hashlib
import hmac
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass(frozen=True)
class Received:
    path: str
    headers: dict[str, str]
    body: bytes
    at: float  # time.time() when it arrived


class Receiver:
    def __init__(self, statuses: Iterable[int] = (), redirect_to: str = "/elsewhere"):
        self.received: list[Received] = []
        self._script = list(statuses)
        self._redirect_to = redirect_to
        self._changed = threading.Condition()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 (http.server's naming)
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                status = receiver._answer(Received(self.path, dict(self.headers.items()), body, time.time()))
                self.send_response(status)
                if 300 <= status < 400:
                    self.send_header("Location", receiver._redirect_to)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self._thread = threading.Thread(target=self.server.serve_forever, name="webhook-receiver", daemon=True)

    def url(self, path: str = "/hook") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def __enter__(self) -> Receiver:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()

    def _answer(self, request: Received) -> int:
        with self._changed:
            self.received.append(request)
            self._changed.notify_all()
            return self._script.pop(0) if self._script else 200

    def to(self, path: str) -> list[Received]:
        with self._changed:
            return [r for r in self.received if r.path == path]

    def wait_for(self, path: str, count: int, timeout: float) -> list[Received]:
        """The first ``count`` requests to ``path``, once they arrived; the timeout bounds a hang only."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                found = [r for r in self.received if r.path == path]
                if len(found) >= count:
                    return found
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"{len(found)} of {count} webhooks to {path} arrived (waited {timeout:g}s)")
                self._changed.wait(left)


def verify(secret: str, request: Received, tolerance_seconds: float = 300.0) -> bool:
    """X-Ocrgw-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">, t recent."""
    header = request.headers.get("X-Ocrgw-Signature", "")
    parts = dict(item.split("=", 1) for item in header.split(",") if "=" in item)
    if "t" not in parts or "v1" not in parts or not parts["t"].isdigit():
        return False
    expected = hmac.new(secret.encode(), parts["t"].encode() + b"." + request.body, hashlib.sha256).hexdigest()
    fresh = abs(request.at - int(parts["t"])) <= tolerance_seconds
    return fresh and hmac.compare_digest(expected, parts["v1"])
