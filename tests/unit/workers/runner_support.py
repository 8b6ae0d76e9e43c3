"""The runner's test harness: a store on fakeredis (which runs the real Lua),
a scripted fake adapter, recorded publishing, and heartbeats a test triggers.

* ``Harness(SETTINGS, monkeypatch)`` (the ``h`` fixture), or
  ``make(monkeypatch, **overrides)`` with other settings.
* ``h.adapter.behaviour(document, options, on_page)`` is what the adapter
  does; a returned str becomes a one-page result.
* ``h.beats.beat()`` lets the heartbeat thread run one round and returns
  once that round is over.  Between rounds the thread waits, however long
  the test takes, so a lease is extended exactly when a test says so.
"""

from __future__ import annotations

import threading
from dataclasses import replace
from typing import Any

import fakeredis
import pytest

from jobs.config import Settings
from jobs.records import Dispatch, GroupRules, NewJob
from jobs.store import JobStore
from tests.keyspace import keys
from workers import runner as runner_module
from workers.adapters.base import OcrResult, PageResult
from workers.runner import Runner

SETTINGS = Settings(max_attempts=3, lease_seconds=30.0, retry_backoff=2.0, requeue_seconds=60.0)
#: Bounds a wait for the heartbeat thread in case it hangs; asserts nothing about speed.
HANG_SECONDS = 30.0


def text(value):
    return value.decode() if isinstance(value, bytes) else value


def result_of(text_: str) -> OcrResult:
    return OcrResult(pages=[PageResult(page=1, text=text_, lines=[])])


class FakeAdapter:
    """Runs ``behaviour(document, options, on_page)`` and wraps a returned str as a result."""

    name = "fake"

    def __init__(self):
        self.behaviour = lambda document, options, on_page: document.decode()
        self.calls = 0
        self.pages: tuple[int, int] | None = None  # what the last run was asked to read

    def run(self, document, content_type, options, on_page=None, *, pages=None):
        self.calls += 1
        self.pages = pages
        outcome = self.behaviour(document, options, on_page)
        return result_of(outcome) if isinstance(outcome, str) else outcome


class ManualBeats:
    """Stands in for the heartbeat thread's sleep between rounds (``Runner(heartbeat_sleep=...)``).

    Only the harness runner's heartbeat thread sleeps here; a heartbeat left
    behind by another test keeps its own sleep.  ``beat()`` first waits for
    the thread to be asleep (it starts with the first job), wakes it for one
    round, and returns once it is asleep again: every lease it holds has then
    been extended, or found lost, exactly once.
    """

    def __init__(self):
        self._turn = threading.Condition()
        self._sleeps = 0  # how often the heartbeat thread has gone to sleep
        self._rounds = 0  # how many rounds it was let run
        self._woken = False

    def sleep(self, seconds: float) -> None:
        with self._turn:
            self._sleeps += 1
            self._turn.notify_all()
            self._turn.wait_for(lambda: self._woken)
            self._woken = False

    def beat(self) -> None:
        with self._turn:
            asleep = self._turn.wait_for(lambda: self._sleeps == self._rounds + 1, HANG_SECONDS)
            assert asleep, "no heartbeat thread is waiting for its next round"
            self._rounds += 1
            self._woken = True
            self._turn.notify_all()
            done = self._turn.wait_for(lambda: self._sleeps == self._rounds + 1, HANG_SECONDS)
            assert done, "the heartbeat round never ended"


class Harness:
    def __init__(self, settings: Settings, monkeypatch: pytest.MonkeyPatch):
        self.store = JobStore(fakeredis.FakeRedis(server=fakeredis.FakeServer()), settings)
        # The harness reads raw replies of every shape, which redis-py's stubs type as unions.
        self.r: Any = self.store.redis
        self.published: list[list[Dispatch]] = []
        self.adapter = FakeAdapter()
        self.beats = ManualBeats()
        monkeypatch.setattr(runner_module, "get_adapter", lambda model: self.adapter)
        self.runner = Runner(self.store, self._publish, heartbeat_sleep=self.beats.sleep)

    def _publish(self, dispatches):
        self.published.append(list(dispatches))
        return len(dispatches)

    def single(self, payload: bytes = b"hello") -> str:
        job = NewJob(model="echo", content_type="text/plain", payload=payload)
        return self.store.create_single(job).job_id

    def group(self, n: int, max_parallel: int) -> tuple[str, list[Dispatch]]:
        jobs = [NewJob(model="echo", content_type="text/plain", payload=f"child {i}".encode()) for i in range(n)]
        created = self.store.create_group(jobs, GroupRules(max_parallel))
        return created.job_id, created.dispatches

    def job(self, job_id: str) -> dict[str, str]:
        return {text(k): text(v) for k, v in self.r.hgetall(keys.job(job_id)).items()}

    def events(self, job_id: str) -> list[dict[str, str]]:
        return [
            {text(k): text(v) for k, v in raw.items()}
            for _, raw in self.r.xrange(keys.events(job_id))
            if raw[b"job_id"].decode() == job_id
        ]

    def lease(self, job_id: str) -> float | None:
        return self.r.zscore(keys.leases(keys.bucket_of(job_id)), job_id)

    def queued_deadline(self, job_id: str) -> float | None:
        return self.r.zscore(keys.queued(keys.bucket_of(job_id)), job_id)

    def expired_leases(self) -> list[str]:
        return self.store.expired_leases(self.store.now_ms(), 10)

    def lapse_lease(self, job_id: str) -> None:
        """What a long wait does to a lease nobody extends: its deadline passes."""
        assert (
            self.r.zadd(keys.leases(keys.bucket_of(job_id)), {job_id: self.store.now_ms() - 1}, xx=True, ch=True) == 1
        ), job_id

    def snapshot(self) -> dict:
        return {key: self.r.dump(key) for key in sorted(self.r.keys("*"))}

    def take_over(self, job_id: str) -> int:
        """What the sweep and another worker do to a stalled attempt: reclaim, claim again."""
        self.r.zadd(keys.leases(keys.bucket_of(job_id)), {job_id: 1}, xx=True)
        assert self.store.reclaim([job_id]).requeued, self.job(job_id)
        claim = self.store.claim(job_id)
        assert claim is not None
        return claim.attempt


def make(monkeypatch, **overrides) -> Harness:
    return Harness(replace(SETTINGS, **overrides), monkeypatch)
