"""The command line against a real gateway app, served over HTTP on loopback, with a worker in a thread.

``served`` is the gateway (``gateway.create_app``) around a fake Redis that
runs the real Lua, behind werkzeug's WSGI server on a free port, so the
command's HTTP client, its headers and its error handling meet a real HTTP
exchange. Its publisher hands each dispatched job to ``InlineWorker``, a
thread running the workers' ``Runner`` with the real adapters (``echo``
for these tests), so a submitted job runs, ends and is read back like on
a real stack. ``served.worker.pause()`` keeps jobs queued (a cancel test).

``ocrgw(*args)`` runs the command in click's CliRunner, pointed at the
served gateway through ``OCRGW_URL``; stdout is not a terminal there, so
the output is the plain form.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import fakeredis
import pytest
from click.testing import CliRunner, Result
from werkzeug.serving import make_server

from cli.main import main
from gateway import create_app, drain
from jobs.config import Settings
from jobs.store import JobStore
from jobs.transitions.spec import PULL, Dispatch
from workers.runner import Runner


class InlineWorker:
    """Runs published jobs one after another in a thread of its own, as a one-process worker would."""

    def __init__(self, store: JobStore):
        self.store = store
        self.jobs: queue.Queue[Dispatch | None] = queue.Queue()
        self.runner = Runner(store, self.publish)
        self.running = threading.Event()
        self.running.set()
        self.stopped = False
        self.thread = threading.Thread(target=self._work, name="inline-worker", daemon=True)
        self.thread.start()

    def publish(self, dispatches) -> int:
        dispatches = list(dispatches)
        for dispatch in dispatches:
            self.jobs.put(dispatch)
        return len(dispatches)

    def pause(self) -> None:
        """Jobs published from now on wait (a job taken already still runs)."""
        self.running.clear()

    def _work(self) -> None:
        while True:
            dispatch = self.jobs.get()
            self.running.wait()
            if dispatch is None or self.stopped:
                return
            if dispatch.task == PULL:  # a wake-up: the model's next ready job, and on from there
                self.runner.pull(dispatch.model, dispatch.priority, dispatch.bucket)
            else:
                self.runner.run(dispatch.job_id)

    def stop(self) -> None:
        """Ends the thread once its job (if any) is done; jobs still waiting never run."""
        self.stopped = True
        self.running.set()
        self.jobs.put(None)
        self.thread.join(timeout=30)


@dataclass
class Served:
    url: str
    store: JobStore
    redis: fakeredis.FakeRedis
    worker: InlineWorker
    requests: list[dict[str, str]]  # the headers of every request the gateway got


@pytest.fixture(autouse=True)
def not_draining():
    """The drain flag is process-wide: no test may leave it set for the next."""
    drain.DRAINING.clear()
    yield
    drain.DRAINING.clear()


@pytest.fixture
def served(monkeypatch) -> Iterator[Served]:
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")  # loopback: no proxy from the environment applies
    redis = fakeredis.FakeRedis()
    settings = Settings(max_children=8, max_pages=50)
    store = JobStore(redis, settings)
    worker = InlineWorker(store)
    app = create_app(settings, store, worker.publish)
    seen: list[dict[str, str]] = []

    @app.before_request
    def record_headers():
        from flask import request

        seen.append(dict(request.headers))

    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, name="gateway", daemon=True)
    thread.start()
    try:
        yield Served(f"http://127.0.0.1:{server.port}", store, redis, worker, seen)
    finally:
        server.shutdown()
        thread.join(timeout=30)
        worker.stop()


@pytest.fixture
def ocrgw(served) -> Callable[..., Result]:
    """Runs ``ocrgw ARGS`` against the served gateway; the Result has exit_code, stdout and stderr apart."""
    runner = CliRunner()

    def run(*args: str, env: dict[str, str] | None = None) -> Result:
        return runner.invoke(main, list(args), env={"OCRGW_URL": served.url, **(env or {})}, catch_exceptions=False)

    return run
