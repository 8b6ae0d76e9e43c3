"""Priority lanes end to end: real redis-server, gateway, Celery worker, coordinator and beat.

The worker has one process and is narrowed to the echo model's queue
(``--queues ocr.echo``, as ``OCRGW_WORKER_QUEUES`` does), so it runs one
child at a time and must bring the model's interactive queue along itself.
A long batch group keeps it busy; an interactive job submitted later must
start as soon as the batch child running then ends, ahead of every batch
child queued before it.  Everything is read from what the scripts recorded
(each attempt's start and end, in Redis time), never from the test's clock.

Two groups: one without a cap (all its children ready at once), and one
with a cap of 1; either way the worker goes from job to job with no
message, taking the next ready job itself, and must take the interactive
lane's before the batch lane's.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from jobs.config import Settings
from jobs.ids import DEFAULT_TENANT
from jobs.store import JobStore
from tests.harness import BEAT_READY, CELERY_READY, START_TIMEOUT, ProcGroup, Stack, wait_until
from tests.integration.fanout_support import Gateway, echo_children, group_body, recorded_micros
from tests.integration.polling import wait_for_job
from tests.keyspace import keys

pytestmark = pytest.mark.integration

BATCH_CHILDREN = 8
INTERACTIVE_JOBS = 3
CHILD_MS = 400  # a batch child's time: the interactive job waits for one at most
WAIT = 120.0  # bounds a hang only


def start_lanes_stack(procs: ProcGroup, buckets: int | None = None) -> Stack:
    """A stack whose one worker process consumes only the echo model's queue (``--queues ocr.echo``);
    its store in ``buckets`` buckets if given (else as the store's default: 1, or 24 on a cluster)."""
    db = procs.fresh_db()
    # Kept slots last as long as a whole group here: only giving way lets the interactive job in.
    env = {"OCRGW_KEEP_SLOT_SECONDS": "60", "OCRGW_SWEEP_INTERVAL": "0.5"}
    if buckets is not None:
        env["OCRGW_STORE_BUCKETS"] = str(buckets)
    worker = procs.worker(concurrency=1, queues="ocr.echo", db=db, env=env, wait=False)
    coordinator = procs.coordinator(db=db, env=env, wait=False)
    beat = procs.beat(db=db, env=env, wait=False)
    stack = Stack(procs, db, procs.url(db), env, worker, coordinator, beat)
    stack.web()
    worker.wait_ready(CELERY_READY, START_TIMEOUT)
    coordinator.wait_ready(CELERY_READY, START_TIMEOUT)
    beat.wait_ready(BEAT_READY, START_TIMEOUT)
    return stack


@pytest.fixture(scope="module")
def lanes_stack(module_procs: ProcGroup) -> Stack:
    return start_lanes_stack(module_procs)


@pytest.fixture
def lanes(lanes_stack: Stack) -> Iterator[tuple[Gateway, JobStore]]:
    store = JobStore.from_settings(Settings.from_env({**lanes_stack.store_env, **lanes_stack.env}))
    keys.use_bucket_count(store.keyspace.bucket_count)  # the test names the store's keys
    with Gateway(lanes_stack.web().base_url) as gateway:
        try:
            yield gateway, store
        finally:
            store.redis.close()
            keys.use_bucket_count(None)


def runs(store: JobStore, parent_id: str) -> list[tuple[int, int]]:
    """(started µs, ended µs) of every attempt of every child of the group, in start order."""
    parent = store.queries.get(parent_id)
    assert parent is not None
    out = []
    for child in store.queries.children_page(parent_id, 0, int(parent["total"])).children:
        assert child["status"] == "completed", child
        for run in filter(None, (child["intervals"] or "").split(",")):
            _, started, ended, _ = run.split(":")
            out.append((int(started), int(ended)))
    return sorted(out)


def submit_batch_group(gateway: Gateway, max_parallel: int) -> str:
    response = gateway.post_json(group_body(echo_children(BATCH_CHILDREN, delay_ms=CHILD_MS), max_parallel))
    assert response.status_code == 202, response.text
    return response.json()["id"]


def busy(store: JobStore, parent_id: str) -> bool:
    """The group has a child running and at least two more to go."""
    view = store.queries.get(parent_id)
    assert view is not None
    return int(view["n_processing"]) == 1 and int(view["n_completed"]) <= BATCH_CHILDREN - 3


def submit_interactive(gateway: Gateway, away_from: str | None = None) -> str:
    """An interactive echo job; with ``away_from`` (a root, on more than one bucket), in another bucket than
    that root's, through an Idempotency-Key of such a bucket (a keyed root is made in its key's bucket)."""
    headers = {}
    if away_from is not None:
        taken = keys.bucket_of(away_from)
        key = next(f"now-{i}" for i in range(1000) if keys.bucket_of_idempotency(DEFAULT_TENANT, f"now-{i}") != taken)
        headers["Idempotency-Key"] = key
    response = gateway.post_raw(
        b"now, please", "text/plain", params={"model": "echo", "priority": "interactive"}, headers=headers
    )
    assert response.status_code == 202, response.text
    return response.json()["id"]


def assert_went_ahead(store: JobStore, parent_id: str, job_ids: list[str]) -> None:
    """The interactive jobs started once the batch child running at their submission ended, one after
    the other, before any batch child queued then."""
    jobs = [wait_for_job(store.queries.get, j, lambda v: v["status"] == "completed", timeout=WAIT) for j in job_ids]
    wait_for_job(store.queries.get, parent_id, lambda v: v["status"] == "completed", timeout=WAIT)
    submitted = min(recorded_micros(j["created_at"]) for j in jobs)
    started = [recorded_micros(j["started_at"]) for j in jobs]
    ended = [recorded_micros(j["finished_at"]) for j in jobs]
    batch = runs(store, parent_id)
    running_then = [(s, e) for s, e in batch if s <= submitted < e]
    queued_ahead = [(s, e) for s, e in batch if s > submitted]
    assert len(running_then) == 1, f"no batch child was running when the interactive jobs came: {batch}"
    assert len(queued_ahead) >= 2, f"no batch child was left queued ahead of them: no test ({batch})"
    assert min(started) >= running_then[0][1], "an interactive job ran beside the batch child: one process"
    assert all(max(started) < s for s, _ in queued_ahead), (
        f"batch children queued ahead of the interactive jobs started before them: {queued_ahead} vs {started}"
    )
    # Right after the running child: the next batch child starts only once every interactive job has ended.
    assert all(s >= max(ended) for s, _ in queued_ahead)


def test_interactive_jobs_start_before_the_batch_children_queued_ahead_of_them(lanes):
    gateway, store = lanes
    parent = submit_batch_group(gateway, max_parallel=0)  # every child in the broker's batch queue at once
    wait_until(lambda: busy(store, parent), WAIT, message="the batch group never got going")

    # Several: the worker must stay on the interactive queue while it has work, not take turns.
    jobs = [submit_interactive(gateway) for _ in range(INTERACTIVE_JOBS)]

    assert_went_ahead(store, parent, jobs)


def test_a_finishing_worker_takes_a_waiting_interactive_job_before_its_batch_group_s_next_child(lanes):
    gateway, store = lanes
    parent = submit_batch_group(gateway, max_parallel=1)  # one child at a time, each taken by the worker itself
    wait_until(lambda: busy(store, parent), WAIT, message="the batch group never got going")

    job = submit_interactive(gateway)

    assert_went_ahead(store, parent, [job])


def test_an_interactive_groups_children_go_ahead_of_queued_batch_children(lanes):
    gateway, store = lanes
    parent = submit_batch_group(gateway, max_parallel=0)
    wait_until(lambda: busy(store, parent), WAIT, message="the batch group never got going")
    body = group_body(echo_children(2), max_parallel=1)
    body["fanout"]["priority"] = "interactive"
    response = gateway.post_json(body)
    assert response.status_code == 202, response.text
    interactive = response.json()["id"]

    wait_for_job(store.queries.get, interactive, lambda v: v["status"] == "completed", timeout=WAIT)
    wait_for_job(store.queries.get, parent, lambda v: v["status"] == "completed", timeout=WAIT)
    submitted = recorded_micros(store.queries.get(interactive)["created_at"])
    ahead = runs(store, interactive)
    queued_ahead = [s for s, _ in runs(store, parent) if s > submitted]
    assert len(ahead) == 2 and len(queued_ahead) >= 2
    # The worker that ends the last interactive child may take the next batch child in that same
    # script: it then starts at the very microsecond the interactive group's last child ended.
    assert all(s >= ahead[-1][1] for s in queued_ahead), (
        f"a batch child started before the interactive group ended: {ahead} vs {queued_ahead} (from {submitted})"
    )
