"""event_streams: what 500 open live event streams cost one gateway process, and that each gets the job's end.

A gateway of its own (the Procfile's web command with ``WEB_CONCURRENCY=1``:
one gunicorn worker process, its 4 threads; the stream limits raised past
the count) on the bench stack's database, beside its worker.  A warm-up
stream of an ended job starts the process's hub.  Then a group of echo
children (``max_parallel`` 1, each sleeping ``CHILD_MS``) is submitted and
``STREAMS`` clients open its stream at once: one socket each, sending
``Accept: text/event-stream`` and reading what comes, all in one thread of
the bench over a selector.

Figures: VmRSS of the gunicorn worker process (from /proc) before the
streams and once every one of them has its first event (all open, the
group still running), the growth and its share per stream; how many
streams ended with ``event: end`` and ``reason: terminal`` (all must),
how many held an ``audit`` event for every child and the group, and how
long the group took from its first start to its end (Redis times) against
the same group's run time without streams in the same run (context: the
looks the hub makes are reads on the same Redis).  Target: growth <= 100
MiB for 500 streams; every stream gets the end.
"""

from __future__ import annotations

import base64
import json
import selectors
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from bench.common import Http, check, echo_payloads, micros, print_table, result, wait_parent
from bench.processes import Bench, pool_children, vm_status

NAME = "event_streams"
#: The benchmark as a whole, and each phase, full and quick (hang detectors: see bench/deadline.py).
DEADLINE = (900.0, 300.0)
PHASE_DEADLINE = (300.0, 120.0)
STREAMS = 500
GROWTH_TARGET_MIB = 100.0
CHILD_MS = 400


@dataclass
class Client:
    sock: socket.socket
    received: bytearray = field(default_factory=bytearray)
    closed: bool = False

    @property
    def opened(self) -> bool:
        return b"event: progress" in self.received

    @property
    def ended(self) -> bool:
        return b'"reason":"terminal"' in self.received and self.closed

    def audit_events(self) -> int:
        return self.received.count(b"event: audit\n")


def open_streams(host: str, port: int, path: str, count: int) -> tuple[selectors.BaseSelector, list[Client]]:
    selector = selectors.DefaultSelector()
    clients = []
    request = f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nAccept: text/event-stream\r\n\r\n".encode()
    for _ in range(count):
        sock = socket.create_connection((host, port), timeout=30)
        sock.sendall(request)
        sock.setblocking(False)
        client = Client(sock)
        selector.register(sock, selectors.EVENT_READ, client)
        clients.append(client)
    return selector, clients


def read_until(
    selector: selectors.BaseSelector, clients: list[Client], done: Callable[[list[Client]], bool], deadline: float
) -> None:
    """Reads every client's bytes as they come until ``done(clients)`` or the deadline."""
    while not done(clients):
        if time.monotonic() > deadline:
            raise AssertionError(f"{sum(done([c]) for c in clients)} of {len(clients)} streams only, past the deadline")
        for key, _ in selector.select(1.0):
            client: Client = key.data
            try:
                data = client.sock.recv(1 << 16)
            except BlockingIOError:
                continue
            except OSError:
                data = b""
            if data:
                client.received += data
            else:
                client.closed = True
                selector.unregister(client.sock)
                client.sock.close()


def submit_group(http: Http, payloads: list[str]) -> str:
    """A group of slow echo children that run one at a time: its id."""
    children = [
        {"model": "echo", "content_type": "text/plain", "payload": p, "options": {"delay_ms": CHILD_MS}}
        for p in payloads
    ]
    body = json.dumps({"fanout": {"max_parallel": 1, "children": children}})
    return http.post_json("/jobs", body.encode())["id"]


def run_time(http: Http, group: str) -> float:
    """From the group's first start to its end (Redis times), s."""
    _, data = http.request("GET", f"/jobs/{group}?children=none")
    view = json.loads(data)
    return (micros(view["finished_at"]) - micros(view["started_at"])) / 1e6


def run(bench: Bench) -> dict:
    options = bench.options
    streams, children = (50, 5) if options.quick else (STREAMS, 15)
    stack = bench.stack()
    client = stack.redis()
    limits = {"OCRGW_STREAM_MAX_PER_PROCESS": str(2 * streams), "OCRGW_STREAM_MAX_PER_TENANT": str(2 * streams)}
    web = bench.web(stack.db, {"WEB_CONCURRENCY": "1", **limits})
    try:
        with bench.phase("start a one-process gateway", *PHASE_DEADLINE):
            web.wait_ready(web.healthy, 60)
            (worker_pid,) = pool_children(web.pid)
        http = Http(web.base_url)
        payloads = [base64.b64encode(p).decode() for p in echo_payloads(children)]

        with bench.phase("the group alone, and a warm-up stream", *PHASE_DEADLINE):
            alone = submit_group(http, payloads)
            wait_parent(client, alone)
            alone_s = run_time(http, alone)
            selector, warm = open_streams("127.0.0.1", web.port, f"/jobs/{alone}/events", 1)
            read_until(selector, warm, lambda cs: all(c.ended for c in cs), time.monotonic() + 60)
            selector.close()

        before = vm_status(worker_pid)["VmRSS"]
        with bench.phase(f"{streams} streams of a running group", *PHASE_DEADLINE):
            group = submit_group(http, payloads)
            opened_at = time.monotonic()
            selector, clients = open_streams("127.0.0.1", web.port, f"/jobs/{group}/events", streams)
            read_until(selector, clients, lambda cs: all(c.opened for c in cs), time.monotonic() + 120)
            open_s = time.monotonic() - opened_at
            with_streams = vm_status(worker_pid)["VmRSS"]
            _, data = http.request("GET", f"/jobs/{group}?children=none")
            still_running = json.loads(data)["status"] not in ("completed", "failed", "cancelled")
            read_until(selector, clients, lambda cs: all(c.closed for c in cs), time.monotonic() + 240)
            selector.close()
        watched_s = run_time(http, group)
        after = vm_status(worker_pid)["VmRSS"]
    finally:
        bench.stop(web)

    ended = sum(c.ended for c in clients)
    complete = sum(c.audit_events() == children + 1 for c in clients)
    growth_mib = (with_streams - before) / 1024
    figures = {
        "streams": streams,
        "children": children,
        "rss_before_mib": before / 1024,
        "rss_with_streams_mib": with_streams / 1024,
        "rss_after_mib": after / 1024,
        "growth_mib": growth_mib,
        "growth_per_stream_kib": (with_streams - before) / streams,
        "open_all_s": open_s,
        "group_running_when_measured": still_running,
        "ended_terminal": ended,
        "every_audit_event": complete,
        "group_alone_s": alone_s,
        "group_watched_s": watched_s,
    }
    checks = [
        check(f"RSS growth with {streams} open streams (MiB)", growth_mib, "<=", GROWTH_TARGET_MIB),
        check("streams that got the group's end", ended, ">=", streams),
        check("streams that got every audit event", complete, ">=", streams),
        check("the group still ran when RSS was read (1 = yes)", int(still_running), ">=", 1),
    ]
    print_table(
        f"{NAME}: {streams} live streams of one running group ({children} echo children of {CHILD_MS} ms, one at a "
        "time) on one gateway process (gthread, 4 threads)",
        [
            "RSS before (MiB)",
            "with streams",
            "growth",
            "per stream (KiB)",
            "open all (s)",
            "ended",
            "group alone/watched (s)",
        ],
        [
            [
                before / 1024,
                with_streams / 1024,
                growth_mib,
                figures["growth_per_stream_kib"],
                open_s,
                f"{ended}/{streams}",
                f"{alone_s:.2f}/{watched_s:.2f}",
            ]
        ],
    )
    return result(NAME, options, figures=figures, checks=checks, context={}, method=__doc__)
