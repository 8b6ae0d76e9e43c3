"""A webhook receiver for tests: a real HTTP server on 127.0.0.1 in a thread.

It records every request it gets (path, headers, body) and answers each
with the next status of its script (then 200), so a test can make it fail
first and succeed after.  ``verify`` checks a signature the way a client
of ocrgw would, from the description in docs/webhooks.md alone.
"""

from __future__ import annotations

import hashlib
import hmac
import socket
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


# A complete, valid answer, padded so that a byte at a time takes long.
SLOW_ANSWER = b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nX-Padding: " + b"x" * 60 + b"\r\n\r\n"


@dataclass
class SlowConnection:
    """One request a ``SlowReceiver`` took, and how its answer went."""

    path: str
    accepted_at: float  # time.time()
    sent: int = 0  # bytes of the answer sent
    hung_up_at: float | None = None  # when the client was found gone before the answer's end
    finished: bool = False  # the whole answer was sent
    ended_at: float | None = None  # when the answer was sent or the client found gone


class SlowReceiver:
    """A slow loris: reads each request, then answers it one byte every ``interval`` seconds.

    ``release()`` sends what is left of every answer at once (and of any
    later one).  Each connection runs in its own daemon thread and stops as
    soon as the client hangs up.
    """

    def __init__(self, interval: float = 1.0, answer: bytes = SLOW_ANSWER):
        self.interval = interval
        self.answer = answer
        self.connections: list[SlowConnection] = []
        self._released = threading.Event()
        self._changed = threading.Condition()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]

    def url(self, path: str = "/slow") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def __enter__(self) -> SlowReceiver:
        threading.Thread(target=self._accept, name="slow-receiver", daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self.release()
        self._listener.close()

    def release(self) -> None:
        self._released.set()

    def wait_for(self, count: int, timeout: float, *, ended: bool = False) -> list[SlowConnection]:
        """The first ``count`` connections once taken (``ended``: once each ended); the timeout bounds a hang."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                found = self.connections[:count]
                if len(found) >= count and (not ended or all(c.finished or c.hung_up_at for c in found)):
                    return found
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"{len(self.connections)} of {count} slow requests (waited {timeout:g}s)")
                self._changed.wait(left)

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return  # closed
            threading.Thread(target=self._dribble, args=(client,), daemon=True).start()

    def _dribble(self, client: socket.socket) -> None:
        with client:
            path = _read_request(client)
            connection = SlowConnection(path, time.time())
            self._changed_with(lambda: self.connections.append(connection))
            try:
                while connection.sent < len(self.answer):
                    if self._released.is_set():
                        client.sendall(self.answer[connection.sent :])
                        connection.sent = len(self.answer)
                        break
                    client.sendall(self.answer[connection.sent : connection.sent + 1])
                    connection.sent += 1
                    self._released.wait(self.interval)
                self._changed_with(lambda: _end(connection, finished=True))
            except OSError:
                self._changed_with(lambda: _end(connection, finished=False))

    def _changed_with(self, change) -> None:
        with self._changed:
            change()
            self._changed.notify_all()


def _end(connection: SlowConnection, finished: bool) -> None:
    connection.ended_at = time.time()
    if finished:
        connection.finished = True
    else:
        connection.hung_up_at = connection.ended_at


def _read_request(client: socket.socket) -> str:
    """Reads one request (head and a Content-Length body); returns its path."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = client.recv(65536)
        if not chunk:
            return ""
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    length = next(
        (int(v) for k, _, v in (line.partition(":") for line in lines[1:]) if k.lower() == "content-length"), 0
    )
    while len(body) < length:
        chunk = client.recv(65536)
        if not chunk:
            break
        body += chunk
    return lines[0].split(" ")[1]
