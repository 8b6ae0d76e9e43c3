"""capacity's sides: the servers and processes they run on, and each path a child can take.

See ``bench/capacity.py`` for what each side does and how it is measured.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence

import redis
from celery import chord

from bench import canvas_app
from bench.capacity_stats import Usage, Window
from bench.common import STACK_KEYS, Http, echo_payloads, fanout_body, wait_parent
from bench.processes import CANVAS_QUEUE, STACK_START_DEADLINE, START_TIMEOUT, Bench, wait_for_pool
from jobs import keys
from jobs.config import Settings
from jobs.contract import Field, Priority
from jobs.records import Dispatch, GroupRules, NewJob
from jobs.store import JobStore
from tests.harness import BEAT_READY, CELERY_READY, RedisServer
from workers.celery_app import make_celery

KEPT_DB, MESSAGE_DB, CANVAS_DB = 0, 1, 2
#: The lease of the claims of the worker that "dies" (no heartbeat follows them).
DEAD_LEASE_SECONDS = "1"
#: Between the bench's reads of the events streams: few reads, whose CPU the server's figures carry.
WAIT_POLL_SECONDS = 0.05
#: Kept slots for the whole of a side on stack K: every hand-off is a kept slot.
KEEP_SLOT_SECONDS = "600"


class Servers:
    def __init__(self, bench: Bench):
        self.store = RedisServer(
            bench.group, bench.work / "capacity-store", appendonly=True, name="capacity-store"
        ).start()
        self.broker = RedisServer(
            bench.group, bench.work / "capacity-broker", appendonly=True, name="capacity-broker"
        ).start()
        self.store_client = self.client(self.store, 0)
        self.broker_client = self.client(self.broker, 0)

    @staticmethod
    def client(server: RedisServer, db: int) -> redis.Redis:
        assert server.port is not None, f"{server.name} was never started"
        return redis.Redis(host=server.host, port=server.port, db=db)

    def env(self, db: int) -> dict[str, str]:
        return {"REDIS_URL": self.store.url_for(db), "CELERY_BROKER_URL": self.broker.url_for(db)}

    def settings(self, db: int, **extra: str) -> Settings:
        return Settings.from_env({**self.env(db), **extra})

    def measure(self, fn, *args) -> tuple[int, Usage, Usage]:
        """Runs ``fn(*args)`` (which returns its number of children) in one window on each server."""
        store, broker = Window(self.store_client).start(), Window(self.broker_client).start()
        children = fn(*args)
        return children, store.stop(), broker.stop()


def start_processes(bench: Bench, servers: Servers) -> tuple[list, Http, Http]:
    with bench.phase("start stacks K and M and the canvas worker", STACK_START_DEADLINE * 2):
        stacks = []
        for db, keep in ((KEPT_DB, KEEP_SLOT_SECONDS), (MESSAGE_DB, "0")):
            env = {**servers.env(db), "OCRGW_PRELOAD_MODELS": "", "OCRGW_KEEP_SLOT_SECONDS": keep}
            stacks.append(
                (
                    bench.celery_worker(db, env=env, name=f"capacity-worker-{db}"),
                    bench.coordinator(db, env),
                    bench.beat(db, env),
                    bench.web(db, env),
                )
            )
        canvas = bench.celery_worker(
            CANVAS_DB, app="bench.canvas_app", queues=CANVAS_QUEUE, env=servers.env(CANVAS_DB), name="capacity-canvas"
        )
        for worker, coordinator, beat, web in stacks:
            for proc in (worker, coordinator):
                proc.wait_ready(CELERY_READY, START_TIMEOUT)
            beat.wait_ready(BEAT_READY, START_TIMEOUT)
            web.wait_ready(web.healthy, START_TIMEOUT)
            wait_for_pool(worker, bench.concurrency)
        canvas.wait_ready(CELERY_READY, START_TIMEOUT)
        wait_for_pool(canvas, bench.concurrency)
    procs = [p for stack in stacks for p in stack] + [canvas]
    return procs, Http(stacks[0][3].base_url), Http(stacks[1][3].base_url)


def wait_wakeups_taken(client, model: str = "echo") -> None:
    """Blocks until no wake-up of ``model`` is on its way to a worker of the stack on ``client``'s database.

    A side's roots can all be terminal while wake-ups it published are still
    in the broker: a worker that keeps its slot takes a job some wake-up was
    counted for, and that wake-up, when it arrives, takes whatever job of the
    model is ready then (ready.lua).  The store counts each one from its
    publishing until a worker starts from it (``claim_next``), or until it
    lapses (OCRGW_REQUEUE_SECONDS), so a count of none means none can take
    anything any more.
    """
    counts = [STACK_KEYS.wakeups(b, model, lane.value) for b in STACK_KEYS.buckets() for lane in Priority]
    while True:
        seconds, micros = client.time()
        now_ms = seconds * 1000 + micros // 1000
        pipe = client.pipeline(transaction=False)
        for key in counts:
            pipe.zcount(key, f"({now_ms}", "+inf")
        if not any(pipe.execute()):
            return
        time.sleep(WAIT_POLL_SECONDS)


def wait_roots(client, root_ids: list[str]) -> dict[str, str]:
    """Blocks until every root's terminal event is on its stream; returns their statuses (XREAD)."""
    last = {STACK_KEYS.events(r): "0-0" for r in root_ids}
    root_of = {STACK_KEYS.events(r): r for r in root_ids}
    ended: dict[str, str] = {}
    while len(ended) < len(root_ids):
        pending = {s: i for s, i in last.items() if root_of[s] not in ended}
        for stream, entries in client.xread(pending, count=1000, block=5000) or []:
            stream = stream.decode()
            for entry_id, fields_ in entries:
                last[stream] = entry_id
                if fields_.get(b"operation") == b"job" and fields_.get(b"job_id") == root_of[stream].encode():
                    ended[root_of[stream]] = fields_[b"status"].decode()
        time.sleep(WAIT_POLL_SECONDS)
    return ended


class Sides:
    """The measured sides; each returns the number of children it ran."""

    def __init__(self, bench: Bench, servers: Servers, kept: Http, message: Http):
        self.bench, self.servers, self.kept, self.message = bench, servers, kept, message
        self.clients = {db: servers.client(servers.store, db) for db in (KEPT_DB, MESSAGE_DB, CANVAS_DB)}
        self.dead = JobStore.from_settings(servers.settings(KEPT_DB, OCRGW_LEASE_SECONDS=DEAD_LEASE_SECONDS))
        self.celery = make_celery(servers.settings(KEPT_DB))
        self.canvas = canvas_app.make_app(servers.settings(CANVAS_DB))
        # Nothing waits on a task's result: no SUBSCRIBE per task (as in fanout_vs_canvas).
        self.canvas.backend.result_consumer.consume_from = lambda task_id: None
        self.canvas.backend.result_consumer.cancel_for = lambda task_id: None

    def group(self, http: Http, db: int, n: int) -> int:
        parent = http.post_json("/jobs", fanout_body(echo_payloads(n), self.bench.concurrency))
        status = wait_parent(self.clients[db], parent["id"], poll=WAIT_POLL_SECONDS)
        wait_wakeups_taken(self.clients[db])
        self.after = lambda: self._expect({parent["id"]: status}, n, db)
        return n

    def kept_group(self, n: int) -> int:
        return self.group(self.kept, KEPT_DB, n)

    def message_group(self, n: int) -> int:
        return self.group(self.message, MESSAGE_DB, n)

    def message_single(self, n: int) -> int:
        ids = []
        for payload in echo_payloads(n):
            status, body = self.kept.request("POST", "/jobs?model=echo", payload, "text/plain")
            if status != 202:
                raise AssertionError(f"POST /jobs?model=echo answered {status}: {body[:300]!r}")
            ids.append(json.loads(body)["id"])
        ended = wait_roots(self.clients[KEPT_DB], ids)
        wait_wakeups_taken(self.clients[KEPT_DB])
        self.after = lambda: self._expect(ended, n, KEPT_DB)
        return n

    def _dead_worker(self, job_ids: list[str], dispatches: Sequence[Dispatch]) -> None:
        """Claims the jobs as a worker that dies at once would, and takes the creation's wake-ups back off
        the count unsent, as a publisher does when the broker refuses them (``JobStore.withdraw_wakeups``).

        Counted but never sent, they would hold back the wake-ups of the next side's jobs (ready.lua);
        sent, one still in the broker when the next side begins would take that side's jobs from the
        ready index before the dead worker claims them.  So would one a side before this one left on its
        way: the caller begins with none (``wait_wakeups_taken``), and no job of the model ready but these.
        """
        claims = [self.dead.claim(j) for j in job_ids]
        unclaimed = [j for j, c in zip(job_ids, claims, strict=True) if c is None]
        if unclaimed:
            queries = JobStore(self.clients[KEPT_DB]).queries
            shown = (Field.STATUS.value, Field.ATTEMPTS.value, Field.STARTED_AT.value)
            found = {j: {f: (queries.get(j) or {}).get(f) for f in shown} for j in unclaimed}
            raise AssertionError(f"a job just created could not be claimed (another worker took it?): {found}")
        self.dead.withdraw_wakeups(dispatches)

    def reclaim_group(self, n: int) -> int:
        wait_wakeups_taken(self.clients[KEPT_DB])
        created = self.dead.create_group([NewJob("echo", "text/plain", p) for p in echo_payloads(n)], GroupRules(n))
        ids = [keys.child_id(created.job_id, i) for i in range(n)]
        # Every child was released: the dead worker's claim of each says so.
        self._dead_worker(ids, created.dispatches)
        ended = wait_roots(self.clients[KEPT_DB], [created.job_id])
        wait_wakeups_taken(self.clients[KEPT_DB])
        self.after = lambda: self._expect(ended, n, KEPT_DB, reclaimed=ids)
        return n

    def reclaim_single(self, n: int) -> int:
        wait_wakeups_taken(self.clients[KEPT_DB])
        created = [self.dead.create_single(NewJob("echo", "text/plain", p)) for p in echo_payloads(n)]
        ids = [c.job_id for c in created]
        self._dead_worker(ids, [d for c in created for d in c.dispatches])
        ended = wait_roots(self.clients[KEPT_DB], ids)
        wait_wakeups_taken(self.clients[KEPT_DB])
        self.after = lambda: self._expect(ended, n, KEPT_DB, reclaimed=ids)
        return n

    def chord(self, n: int) -> int:
        marker = f"bench:capacity:{time.monotonic_ns()}"
        header = [self.canvas.signature(canvas_app.NOOP_TASK, queue=canvas_app.QUEUE) for _ in range(n)]
        callback = self.canvas.signature(canvas_app.CHORD_DONE_TASK, args=[marker], queue=canvas_app.QUEUE)
        chord(header, callback).apply_async()
        popped = self.clients[CANVAS_DB].blpop([marker], timeout=0)
        assert popped is not None, "a BLPOP without a timeout returns only with an item"
        got = int(popped[1])
        self.after = lambda: None if got == n else _fail(f"the chord's callback saw {got} results, not {n}")
        return n

    def _expect(self, ended: dict[str, str], n: int, db: int, reclaimed: Sequence[str] = ()) -> None:
        """After the window: every root completed, and a reclaimed job ran twice."""
        if set(ended.values()) != {"completed"}:
            _fail(f"roots ended {sorted(set(ended.values()))}, not completed")
        queries = JobStore(self.clients[db]).queries
        for job_id in reclaimed:
            record = queries.get(job_id)
            assert record is not None, f"{job_id} is not stored"
            if record[Field.ATTEMPTS.value] != "2":
                _fail(f"{job_id} ran as attempt {record[Field.ATTEMPTS.value]}, not 2: it was not reclaimed")


def _fail(message: str) -> None:
    raise AssertionError(message)
