"""What every benchmark shares: options, HTTP and Redis helpers, statistics, tables.

The processes of a run (``Bench``) are in ``bench/processes.py``.  Databases
keep the benchmarks apart on the run's one redis-server:

==  ==========================================================================
0   the ocrgw stack (worker, coordinator, beat, gateway) and the canvas worker
1   the stack with kept slots off (fanout_vs_canvas and handoff)
3   sweep_scaling (in-process, no Celery processes)
4   submission (its own gateway, no worker: the queues just fill)
5   memory: Redis bytes per held child
6   memory: the worker whose pool processes are measured
==  ==========================================================================
"""

from __future__ import annotations

import base64
import http.client
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import redis

from jobs.config import Settings
from jobs.keys import Keyspace

if TYPE_CHECKING:
    from bench.processes import Bench

ROOT = Path(__file__).resolve().parent.parent

STACK_DB = 0
MESSAGE_PATH_DB = 1  # a second stack with kept slots off: every child through the broker
SWEEP_DB = 3
SUBMISSION_DB = 4
MEMORY_DB = 5
MEMORY_WORKER_DB = 6

#: The keys of the bench stacks' store: their processes read the bucket count from the environment, as this does.
STACK_KEYS = Keyspace(Settings.from_env().store_buckets)


@dataclass(frozen=True)
class Options:
    quick: bool
    out: Path
    reps: int
    concurrency: int
    #: Multiplies every phase's deadline (bench/deadline.py), for a machine slower than they allow for.
    deadline_scale: float = 1.0
    #: Whether --reps named ``reps``: a benchmark with a round count of its own keeps it unless it did.
    reps_given: bool = False


# -- HTTP ------------------------------------------------------------------------------


class Http:
    """One keep-alive connection to a gateway (not thread-safe: one per thread or process)."""

    def __init__(self, base_url: str, timeout: float = 120.0):
        host, _, port = base_url.removeprefix("http://").partition(":")
        self.host, self.port, self.timeout = host, int(port), timeout
        self.conn: http.client.HTTPConnection | None = None

    def request(
        self, method: str, path: str, body: bytes | None = None, content_type: str = "application/json"
    ) -> tuple[int, bytes]:
        for attempt in (1, 2):
            if self.conn is None:
                self.conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
            try:
                headers = {"Content-Type": content_type} if body is not None else {}
                self.conn.request(method, path, body=body, headers=headers)
                resp = self.conn.getresponse()
                return resp.status, resp.read()
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                # The server closed an idle keep-alive connection; retry once on a new one.
                self.conn.close()
                self.conn = None
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def post_json(self, path: str, body: bytes) -> dict[str, Any]:
        status, data = self.request("POST", path, body)
        if status != 202:
            raise AssertionError(f"POST {path} answered {status}: {data[:500]!r}")
        return json.loads(data)

    def get_json(self, path: str) -> dict[str, Any]:
        status, data = self.request("GET", path)
        if status != 200:
            raise AssertionError(f"GET {path} answered {status}: {data[:500]!r}")
        return json.loads(data)

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None


def fanout_body(
    payloads: Sequence[bytes], max_parallel: int, model: str = "echo", content_type: str = "text/plain"
) -> bytes:
    children = [
        {"model": model, "content_type": content_type, "payload": base64.b64encode(p).decode()} for p in payloads
    ]
    return json.dumps({"fanout": {"max_parallel": max_parallel, "children": children}}).encode()


def echo_payloads(n: int) -> list[bytes]:
    return [f"child {i}".encode() for i in range(n)]


def wait_parent(client: redis.Redis, parent_id: str, poll: float = 0.002) -> str:
    """Blocks until the parent's terminal audit event is on its events stream; returns the status.

    See ``wait_parents``, of which this is the one-parent case.
    """
    return wait_parents(client, [parent_id], poll)[parent_id]


def wait_parents(client: redis.Redis, parent_ids: Sequence[str], poll: float = 0.002) -> dict[str, str]:
    """Blocks until every parent's terminal audit event is on its events stream; returns their statuses.

    Reads the streams of the parents not yet ended with one XREAD BLOCK, each
    from where its last read stopped, and sleeps ``poll`` seconds between
    reads so that a fast group does not cost one round trip per child event:
    the last end is seen at most ``poll`` plus a round trip after its
    finalizing transition.  The deadline of the phase it runs in
    (``Bench.phase``) bounds the wait.
    """
    last: dict[Any, Any] = {STACK_KEYS.events(parent_id): "0-0" for parent_id in parent_ids}
    parent_of = {STACK_KEYS.events(parent_id).encode(): parent_id for parent_id in parent_ids}
    statuses: dict[str, str] = {}
    while last:
        reply = client.xread(last, count=10_000, block=5000)
        assert not isinstance(reply, dict), "RESP2 replies with a list of [stream, entries] pairs"
        for stream, entries in reply or []:
            parent_id = parent_of[stream]
            for entry_id, fields_ in entries:
                last[stream.decode()] = entry_id
                if fields_.get(b"operation") == b"job" and fields_.get(b"job_id") == parent_id.encode():
                    statuses[parent_id] = fields_[b"status"].decode()
                    break
            if parent_id in statuses:
                del last[stream.decode()]
        if last:
            time.sleep(poll)
    return statuses


def micros(rfc3339: str) -> int:
    """``"2026-12-02T18:37:36.987096Z"`` -> integer microseconds since the epoch."""
    dt = datetime.strptime(rfc3339, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)
    return (int(dt.timestamp()) * 1_000_000) + dt.microsecond


# -- statistics ------------------------------------------------------------------------


def median(values: Iterable[float]) -> float:
    values = list(values)
    return statistics.median(values) if values else math.nan


def percentile(values: Iterable[float], q: float) -> float:
    """Linear interpolation between closest ranks; q in 0..100."""
    data = sorted(values)
    if not data:
        return math.nan
    if len(data) == 1:
        return data[0]
    pos = (len(data) - 1) * q / 100
    lo = math.floor(pos)
    hi = min(lo + 1, len(data) - 1)
    return data[lo] + (data[hi] - data[lo]) * (pos - lo)


def rotations(items: Sequence[Any], reps: int) -> list[list[Any]]:
    """``reps`` orders of ``items``, each rotated by one: a,b,c / b,c,a / c,a,b ..."""
    return [list(items[r % len(items) :]) + list(items[: r % len(items)]) for r in range(reps)]


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    value = fn()
    return time.perf_counter() - start, value


def token() -> str:
    return uuid.uuid4().hex[:12]


# -- results ---------------------------------------------------------------------------


def check(figure: str, value: float, op: str, limit: float, unit: str = "") -> dict[str, Any]:
    passed = value <= limit if op == "<=" else value >= limit
    if isinstance(value, float) and math.isnan(value):
        passed = False
    return {"figure": figure, "value": value, "target": f"{op} {limit:g}{unit}", "passed": bool(passed)}


def result(
    name: str,
    options: Options,
    *,
    figures: dict[str, Any],
    checks: list[dict[str, Any]],
    context: dict[str, Any],
    method: str,
) -> dict[str, Any]:
    return {
        "name": name,
        "quick": options.quick,
        "reps": options.reps,
        "concurrency": options.concurrency,
        "figures": figures,
        "checks": checks,
        "passed": all(c["passed"] for c in checks),
        "context": context,
        "method": method,
    }


def fmt(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if math.isnan(value):
            return "n/a"
        if abs(value) >= 1000:
            return f"{value:,.0f}"
        if abs(value) >= 100:
            return f"{value:.1f}"
        return f"{value:.3g}" if abs(value) < 1 else f"{value:.2f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def print_table(title: str, headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
    cells = [[fmt(c) for c in row] for row in rows]
    widths = [max(len(h), *(len(r[i]) for r in cells)) if cells else len(h) for i, h in enumerate(headers)]
    print(f"\n{title}")
    print("  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)))
    print("  ".join("-" * w for w in widths))
    for row in cells:
        print("  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True))))
    sys.stdout.flush()


def machine(bench: Bench | None) -> dict[str, Any]:
    cpu = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    info: dict[str, Any] = {
        "nproc": len(os.sched_getaffinity(0)),
        "cpu_model": cpu,
        "python": platform.python_version(),
        "platform": platform.platform(),
    }
    if bench is not None:
        with bench.client(0) as client:
            info["redis"] = client.info("server")["redis_version"]
    try:
        import celery
        import kombu

        info["celery"], info["kombu"] = celery.__version__, kombu.__version__
    except ImportError:
        pass
    try:
        first = subprocess.run(
            ["tesseract", "--version"], capture_output=True, text=True, timeout=30
        ).stdout.splitlines()
        info["tesseract"] = first[0].split()[1] if first else ""
    except (OSError, subprocess.SubprocessError, IndexError):
        info["tesseract"] = ""
    try:
        import tesserocr

        # The libtesseract the workers read pages with (the wheel's), beside the binary's above.
        info["libtesseract"] = tesserocr.tesseract_version().split()[1]
    except (ImportError, IndexError):
        info["libtesseract"] = ""
    try:
        from importlib.metadata import version

        info["onnxruntime"] = version("onnxruntime")
    except Exception:  # not installed
        pass
    return info
