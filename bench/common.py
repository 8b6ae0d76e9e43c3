"""What every benchmark shares: the processes, HTTP and Redis helpers, statistics, tables.

``Bench`` owns one private redis-server and every process a benchmark starts,
built from the Procfile's own commands (with ``python -m`` so the project's
interpreter is used, a loopback bind, and a unique Celery node name), and
kills them all on ``close()``.  Databases keep the benchmarks apart on the
one server:

==  ==========================================================================
0   the ocrgw stack (worker, coordinator, beat, gateway) and the canvas worker
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
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import redis

from jobs import keys
from tests.harness import CELERY_READY, BEAT_READY, ProcGroup, Proc, RedisServer, WebProc, free_port, uniq

ROOT = Path(__file__).resolve().parent.parent
PROCFILE = ROOT / "Procfile"

STACK_DB = 0
MESSAGE_PATH_DB = 1  # a second stack with kept slots off: every child through the broker
SWEEP_DB = 3
SUBMISSION_DB = 4
MEMORY_DB = 5
MEMORY_WORKER_DB = 6

START_TIMEOUT = 120.0


@dataclass(frozen=True)
class Options:
    quick: bool
    out: Path
    reps: int
    concurrency: int


# -- the Procfile's commands ---------------------------------------------------------


def procfile_argv(name: str, env: dict[str, str]) -> list[str]:
    """The Procfile's command for process ``name``, variables expanded, run by this Python."""
    for line in PROCFILE.read_text().splitlines():
        key, sep, command = line.partition(":")
        if sep and key.strip() == name:
            break
    else:
        raise KeyError(f"the Procfile has no {name!r} process")
    expanded = re.sub(
        r"\$\{(\w+)(?::-([^}]*))?\}",
        lambda m: env.get(m.group(1)) or (m.group(2) or ""),
        command.strip(),
    )
    argv = shlex.split(expanded)
    return [sys.executable, "-m", argv[0], *argv[1:]]


def set_option(argv: list[str], option: str, value: str) -> list[str]:
    """``argv`` with ``option``'s value replaced (or the option appended)."""
    out = list(argv)
    if option in out:
        out[out.index(option) + 1] = value
    else:
        out += [option, value]
    return out


def visible_readiness(argv: list[str]) -> list[str]:
    """A Celery command whose log level shows its readiness line (logged at INFO).

    The Procfile may quiet a process to WARNING; the bench then raises it to
    INFO, the only change it makes to a Procfile command besides its bind,
    node name, queues and schedule file.
    """
    if "--loglevel" in argv and argv[argv.index("--loglevel") + 1].upper() not in ("DEBUG", "INFO"):
        return set_option(argv, "--loglevel", "INFO")
    return argv


def procfile_concurrency(env: dict[str, str] | None = None) -> int:
    argv = procfile_argv("worker", dict(os.environ if env is None else env))
    return int(argv[argv.index("--concurrency") + 1])


_gunicorn_extra: list[str] | None = None


def _gunicorn_extra_args() -> list[str]:
    # gunicorn 27 opens a control socket at one fixed path per user; a bench
    # gateway must not fight a developer's running one over it.
    global _gunicorn_extra
    if _gunicorn_extra is None:
        help_text = subprocess.run([sys.executable, "-m", "gunicorn", "--help"],
                                   capture_output=True, text=True, timeout=60).stdout
        _gunicorn_extra = ["--no-control-socket"] if "--no-control-socket" in help_text else []
    return _gunicorn_extra


# -- processes -----------------------------------------------------------------------


class Bench:
    """The redis-server and the processes of one run."""

    def __init__(self, options: Options, work_dir: Path | None = None):
        self.options = options
        self.work = Path(work_dir or tempfile.mkdtemp(prefix="ocrgw-bench-"))
        self.group = ProcGroup(self.work, label="bench")
        self.redis = RedisServer(self.group, self.work / "redis").start()
        self._stack: Stack | None = None
        self._message_path: Stack | None = None

    @property
    def concurrency(self) -> int:
        return self.options.concurrency

    def url(self, db: int) -> str:
        return self.redis.url_for(db)

    def client(self, db: int) -> redis.Redis:
        return redis.Redis(host=self.redis.host, port=self.redis.port, db=db)

    def _env(self, db: int, extra: dict[str, str] | None = None) -> dict[str, str]:
        # The broker is named too, so that a CELERY_BROKER_URL in the caller's
        # environment cannot send a benchmark's messages elsewhere.
        url = self.url(db)
        return {"REDIS_URL": url, "CELERY_BROKER_URL": url, "PYTHONUNBUFFERED": "1", **(extra or {})}

    def celery_worker(self, db: int, *, app: str = "workers", queues: str | None = None,
                      env: dict[str, str] | None = None, name: str = "worker") -> Proc:
        """The Procfile's worker command (loglevel, pool, concurrency), for ``app`` on ``queues``."""
        env = self._env(db, env)
        argv = procfile_argv("worker", {**os.environ, **env,
                                        "OCRGW_WORKER_CONCURRENCY": str(self.concurrency)})
        argv = set_option(argv, "-A", app)
        if queues is not None:
            argv = set_option(argv, "--queues", queues)
        argv = visible_readiness(set_option(argv, "--hostname", f"{name}-{uniq()}@%h"))
        return self.group.start(name, argv, env=env, wait=False)

    def coordinator(self, db: int, extra: dict[str, str] | None = None) -> Proc:
        env = self._env(db, extra)
        argv = visible_readiness(set_option(procfile_argv("coordinator", {**os.environ, **env}),
                                            "--hostname", f"coordinator-{uniq()}@%h"))
        return self.group.start("coordinator", argv, env=env, wait=False)

    def beat(self, db: int, extra: dict[str, str] | None = None) -> Proc:
        env = self._env(db, extra)
        argv = visible_readiness(set_option(procfile_argv("beat", {**os.environ, **env}),
                                            "--schedule", str(self.work / f"beat-{uniq()}")))
        return self.group.start("beat", argv, env=env, wait=False)

    def web(self, db: int, extra: dict[str, str] | None = None) -> WebProc:
        """The Procfile's web command (its worker and thread counts), bound to loopback."""
        env = self._env(db, extra)
        port = free_port()
        argv = procfile_argv("web", {**os.environ, **env, "PORT": str(port)})
        argv = set_option(argv, "--bind", f"127.0.0.1:{port}")
        argv[3:3] = _gunicorn_extra_args()
        return self.group.start("web", argv, env=env, wait=False, proc_class=WebProc, port=port)

    def stack(self) -> "Stack":
        """Started on first use: the ocrgw stack on database 0 and the canvas worker beside it."""
        if self._stack is None:
            canvas = self.celery_worker(STACK_DB, app="bench.canvas_app",
                                        queues=CANVAS_QUEUE, name="canvas-worker")
            self._stack = self._start_stack(STACK_DB, {}, canvas)
        return self._stack

    def message_path_stack(self) -> "Stack":
        """A second ocrgw stack (database 1) whose workers keep no slot
        (``OCRGW_KEEP_SLOT_SECONDS=0``): every child goes through a Celery
        message, as with the slot kept past its time budget."""
        if self._message_path is None:
            self._message_path = self._start_stack(MESSAGE_PATH_DB, {"OCRGW_KEEP_SLOT_SECONDS": "0"}, None)
        return self._message_path

    def stop_message_path_stack(self) -> None:
        """Its users stop it when done, so that its idle processes do not share the cores with later benchmarks."""
        if self._message_path is not None:
            for proc in (self._message_path.worker, self._message_path.coordinator,
                         self._message_path.beat, self._message_path.web):
                self.stop(proc)
            self._message_path = None

    def _start_stack(self, db: int, env: dict[str, str], canvas: "Proc | None") -> "Stack":
        worker = self.celery_worker(db, env={"OCRGW_PRELOAD_MODELS": "tesseract,paddleocr", **env}, name="worker")
        coordinator = self.coordinator(db, env)
        beat = self.beat(db, env)
        web = self.web(db, env)
        for proc in (worker, coordinator) + ((canvas,) if canvas else ()):
            proc.wait_ready(CELERY_READY, START_TIMEOUT)
        beat.wait_ready(BEAT_READY, START_TIMEOUT)
        web.wait_ready(web.healthy, START_TIMEOUT)
        wait_for_pool(worker, self.concurrency)
        if canvas:
            wait_for_pool(canvas, self.concurrency)
        return Stack(self, worker, canvas, coordinator, beat, web, db)

    def stop(self, proc: Proc) -> None:
        """Stop one process of this run (its whole process group)."""
        proc.close()

    def close(self) -> None:
        self.group.close()


CANVAS_QUEUE = "bench.canvas"


@dataclass
class Stack:
    bench: Bench
    worker: Proc
    canvas: Proc | None
    coordinator: Proc
    beat: Proc
    web: WebProc
    db: int = STACK_DB
    _http: "Http | None" = field(default=None, repr=False)

    @property
    def http(self) -> "Http":
        if self._http is None:
            self._http = Http(self.web.base_url)
        return self._http

    def redis(self) -> redis.Redis:
        return self.bench.client(self.db)


def pool_children(pid: int) -> list[int]:
    """The pids a process forked (a Celery prefork worker's pool processes)."""
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except FileNotFoundError:
        return []
    return [int(p) for p in text.split()]


def wait_for_pool(proc: Proc, size: int, timeout: float = START_TIMEOUT) -> list[int]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        children = pool_children(proc.pid)
        if len(children) >= size:
            return children
        time.sleep(0.05)
    raise AssertionError(f"{proc.name} has {len(pool_children(proc.pid))} pool processes, wanted {size}")


def vm_status(pid: int) -> dict[str, int]:
    """VmRSS and VmHWM of a process, in KiB."""
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            out[name] = int(value.split()[0])
    return out


# -- HTTP ------------------------------------------------------------------------------


class Http:
    """One keep-alive connection to a gateway (not thread-safe: one per thread or process)."""

    def __init__(self, base_url: str, timeout: float = 120.0):
        host, _, port = base_url.removeprefix("http://").partition(":")
        self.host, self.port, self.timeout = host, int(port), timeout
        self.conn: http.client.HTTPConnection | None = None

    def request(self, method: str, path: str, body: bytes | None = None,
                content_type: str = "application/json") -> tuple[int, bytes]:
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


def fanout_body(payloads: Sequence[bytes], max_parallel: int, model: str = "echo",
                content_type: str = "text/plain") -> bytes:
    children = [
        {"model": model, "content_type": content_type, "payload": base64.b64encode(p).decode()}
        for p in payloads
    ]
    return json.dumps({"fanout": {"max_parallel": max_parallel, "children": children}}).encode()


def echo_payloads(n: int) -> list[bytes]:
    return [f"child {i}".encode() for i in range(n)]


def wait_parent(client: redis.Redis, parent_id: str, timeout: float = 600.0,
                poll: float = 0.002) -> str:
    """Blocks until the parent's terminal audit event is on its events stream; returns the status.

    Reads the stream with XREAD BLOCK from where the last read stopped, and
    sleeps ``poll`` seconds between reads so that a fast group does not cost
    one round trip per child event: the end is seen at most ``poll`` plus a
    round trip after the finalizing transition.
    """
    stream = keys.events(parent_id)
    last = "0-0"
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise AssertionError(f"parent {parent_id} not terminal after {timeout:g}s")
        reply = client.xread({stream: last}, count=10_000, block=max(1, int(min(left, 5.0) * 1000)))
        for _, entries in reply or []:
            for entry_id, fields_ in entries:
                last = entry_id
                if fields_.get(b"operation") == b"job" and fields_.get(b"job_id") == parent_id.encode():
                    return fields_[b"status"].decode()
        time.sleep(poll)


def micros(rfc3339: str | None) -> int | None:
    """``"2026-12-02T18:37:36.987096Z"`` -> integer microseconds since the epoch."""
    if not rfc3339:
        return None
    dt = datetime.strptime(rfc3339, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc)
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
    return [list(items[r % len(items):]) + list(items[:r % len(items)]) for r in range(reps)]


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


def result(name: str, options: Options, *, figures: dict[str, Any], checks: list[dict[str, Any]],
           context: dict[str, Any], method: str) -> dict[str, Any]:
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
    print("  ".join(h.ljust(w) for h, w in zip(headers, widths)))
    print("  ".join("-" * w for w in widths))
    for row in cells:
        print("  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths))))
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
        first = subprocess.run(["tesseract", "--version"], capture_output=True, text=True,
                               timeout=30).stdout.splitlines()
        info["tesseract"] = first[0].split()[1] if first else ""
    except (OSError, subprocess.SubprocessError, IndexError):
        info["tesseract"] = ""
    try:
        from importlib.metadata import version

        info["onnxruntime"] = version("onnxruntime")
    except Exception:  # not installed
        pass
    return info
