"""The processes of a run: the Procfile's commands, ``Bench`` and the ocrgw stacks.

``Bench`` owns one private redis-server and every process a benchmark starts,
built from the Procfile's own commands (with ``python -m`` so the project's
interpreter is used, a loopback bind, and a unique Celery node name), and
kills them all on ``close()``.  It also holds the run's ``Deadlines``
(``bench/deadline.py``): every benchmark runs its phases in ``bench.phase``.

The bench's own helper processes (a pool of OCR engines, client processes)
come from ``HELPERS``, never from a fork of the bench process: that process
has threads (a pool's handler threads, client libraries'), and a child
forked while one of them held a lock (a pool queue's, say) waits on that
lock forever.  ``HELPERS`` is a forkserver context: one fresh,
single-threaded server process, started at first use with the benchmark
modules that run helpers already imported, forks each helper, which is
safe and quick (8 client processes spawned from scratch would spend
seconds importing Celery on 2 cores).  So helper functions live at module
level and take picklable arguments.
"""

from __future__ import annotations

import multiprocessing
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path

import redis

from bench.common import MESSAGE_PATH_DB, ROOT, STACK_DB, Http, Options
from bench.deadline import Deadlines
from tests.harness import BEAT_READY, CELERY_READY, Proc, ProcGroup, RedisServer, WebProc, free_port, uniq

PROCFILE = ROOT / "Procfile"
HELPERS = multiprocessing.get_context("forkserver")
HELPERS.set_forkserver_preload(["bench.ocr", "bench.pdf_split", "bench.submission", "bench.sweep"])

#: Per process, the bound of one wait for its readiness line; the phase around it bounds the whole start.
START_TIMEOUT = 120.0
#: A stack's start (Celery workers preloading the engines, a coordinator, a beat, a gateway), full or quick.
STACK_START_DEADLINE = 300.0


def procfile_argv(name: str, env: dict[str, str]) -> list[str]:
    """The Procfile's command for process ``name``, variables expanded, run by this Python."""
    for line in PROCFILE.read_text().splitlines():
        key, sep, command = line.partition(":")
        if sep and key.strip() == name:
            break
    else:
        raise KeyError(f"the Procfile has no {name!r} process")
    argv = shlex.split(expand(command.strip(), env))
    return [sys.executable, "-m", argv[0], *argv[1:]]


_VARIABLE = re.compile(r"\$\{(\w+)(?::([-+])([^}]*))?\}|\$(\w+)")


def expand(text: str, env: dict[str, str]) -> str:
    """``text`` with its variables expanded as the shell that honcho runs a command with does:
    ``$NAME``, ``${NAME}``, ``${NAME:-default}`` and ``${NAME:+word}`` (``word`` when set)."""

    def value(match: re.Match[str]) -> str:
        if match.group(4):
            return env.get(match.group(4), "")
        name, operator, word = match.group(1), match.group(2), match.group(3) or ""
        if operator == "+":
            return expand(word, env) if env.get(name) else ""
        return env.get(name) or expand(word, env)

    return _VARIABLE.sub(value, text)


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
        help_text = subprocess.run(
            [sys.executable, "-m", "gunicorn", "--help"], capture_output=True, text=True, timeout=60
        ).stdout
        _gunicorn_extra = ["--no-control-socket"] if "--no-control-socket" in help_text else []
    return _gunicorn_extra


class Bench:
    """The redis-server and the processes of one run."""

    def __init__(self, options: Options, work_dir: Path | None = None):
        self.options = options
        self.work = Path(work_dir or tempfile.mkdtemp(prefix="ocrgw-bench-"))
        self.group = ProcGroup(self.work, label="bench")
        self.redis = RedisServer(self.group, self.work / "redis").start()
        self.deadlines = Deadlines(scale=options.deadline_scale)
        self._stack: Stack | None = None
        self._message_path: Stack | None = None

    def phase(self, name: str, seconds: float, quick: float | None = None) -> AbstractContextManager[None]:
        """Runs a phase of the current benchmark under a deadline: ``seconds``
        in a full run, ``quick`` (when given) with --quick."""
        return self.deadlines.phase(name, quick if self.options.quick and quick is not None else seconds)

    @property
    def concurrency(self) -> int:
        return self.options.concurrency

    def url(self, db: int) -> str:
        return self.redis.url_for(db)

    def client(self, db: int) -> redis.Redis:
        assert self.redis.port is not None, "started in __init__"
        return redis.Redis(host=self.redis.host, port=self.redis.port, db=db)

    def _env(self, db: int, extra: dict[str, str] | None = None) -> dict[str, str]:
        # The broker is named too, so that a CELERY_BROKER_URL in the caller's
        # environment cannot send a benchmark's messages elsewhere.
        url = self.url(db)
        return {"REDIS_URL": url, "CELERY_BROKER_URL": url, "PYTHONUNBUFFERED": "1", **(extra or {})}

    def celery_worker(
        self,
        db: int,
        *,
        app: str = "workers",
        queues: str | None = None,
        env: dict[str, str] | None = None,
        name: str = "worker",
    ) -> Proc:
        """The Procfile's worker command (loglevel, pool, concurrency), for ``app`` on ``queues``."""
        env = self._env(db, env)
        argv = procfile_argv("worker", {**os.environ, **env, "OCRGW_WORKER_CONCURRENCY": str(self.concurrency)})
        argv = set_option(argv, "-A", app)
        if queues is not None:
            argv = set_option(argv, "--queues", queues)
        argv = visible_readiness(set_option(argv, "--hostname", f"{name}-{uniq()}@%h"))
        return self.group.start(name, argv, env=env, wait=False)

    def coordinator(self, db: int, extra: dict[str, str] | None = None) -> Proc:
        env = self._env(db, extra)
        argv = visible_readiness(
            set_option(procfile_argv("coordinator", {**os.environ, **env}), "--hostname", f"coordinator-{uniq()}@%h")
        )
        return self.group.start("coordinator", argv, env=env, wait=False)

    def beat(self, db: int, extra: dict[str, str] | None = None) -> Proc:
        env = self._env(db, extra)
        argv = visible_readiness(
            set_option(procfile_argv("beat", {**os.environ, **env}), "--schedule", str(self.work / f"beat-{uniq()}"))
        )
        return self.group.start("beat", argv, env=env, wait=False)

    def web(self, db: int, extra: dict[str, str] | None = None) -> WebProc:
        """The Procfile's web command (its worker and thread counts), bound to loopback."""
        env = self._env(db, extra)
        port = free_port()
        argv = procfile_argv("web", {**os.environ, **env, "PORT": str(port)})
        argv = set_option(argv, "--bind", f"127.0.0.1:{port}")
        argv[3:3] = _gunicorn_extra_args()
        web = self.group.start("web", argv, env=env, wait=False, proc_class=WebProc, port=port)
        assert isinstance(web, WebProc)
        return web

    def stack(self) -> Stack:
        """Started on first use: the ocrgw stack on database 0 and the canvas worker beside it."""
        if self._stack is None:
            with self.phase("start the ocrgw stack and the canvas worker", STACK_START_DEADLINE):
                canvas = self.celery_worker(STACK_DB, app="bench.canvas_app", queues=CANVAS_QUEUE, name="canvas-worker")
                self._stack = self._start_stack(STACK_DB, {}, canvas)
        return self._stack

    def message_path_stack(self) -> Stack:
        """A second ocrgw stack (database 1) whose workers keep no slot
        (``OCRGW_KEEP_SLOT_SECONDS=0``): every child goes through a Celery
        message, as with the slot kept past its time budget."""
        if self._message_path is None:
            with self.phase("start the stack with kept slots off", STACK_START_DEADLINE):
                self._message_path = self._start_stack(MESSAGE_PATH_DB, {"OCRGW_KEEP_SLOT_SECONDS": "0"}, None)
        return self._message_path

    def stop_message_path_stack(self) -> None:
        """Its users stop it when done, so that its idle processes do not share the cores with later benchmarks."""
        if self._message_path is not None:
            for proc in (
                self._message_path.worker,
                self._message_path.coordinator,
                self._message_path.beat,
                self._message_path.web,
            ):
                self.stop(proc)
            self._message_path = None

    def _start_stack(self, db: int, env: dict[str, str], canvas: Proc | None) -> Stack:
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
    _http: Http | None = field(default=None, repr=False)

    @property
    def http(self) -> Http:
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
