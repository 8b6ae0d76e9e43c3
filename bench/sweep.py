"""sweep_scaling: the sweep's cost against the number of active parents.

``coordinator.sweep.Sweeper(store, publish).sweep()`` is called in this
process, with a publish stub that only counts, on a database of its own that
no coordinator sweeps.  For each size N, parents are created with
``JobStore.create_group(children, max_parallel=1, release=False)`` (two held
children each): every parent is then due with one child to release, as if
each creating gateway had died right after its create.

* due: sweep passes are run until one releases nothing; each pass is timed.
  ``settings.sweep_batch`` bounds a pass, so N parents need ceil(N / batch)
  passes, one per beat tick in production.
* nothing due: the same N parents, now each with its one child queued (the
  cap reached), so they stay active but none is due; the median of repeated
  passes.

Growth: the exponent k in time ~ N^k of all due passes together, between the
two largest sizes (1 means linear in the parents with work).
"""

from __future__ import annotations

import logging
import math
import os
import time
from multiprocessing.pool import Pool

from bench.common import SWEEP_DB, check, median, print_table, result
from bench.processes import HELPERS, Bench
from coordinator.sweep import Sweeper
from jobs.config import Settings
from jobs.records import Dispatch, GroupRules, NewJob
from jobs.store import JobStore

NAME = "sweep_scaling"
#: The benchmark as a whole, full and quick (hang detectors: see bench/deadline.py).
DEADLINE = (1800.0, 300.0)
IDLE_PASSES = 15
CREATE_PROCS = 2


def _store(url: str) -> JobStore:
    return JobStore.from_settings(Settings.from_env({**os.environ, "REDIS_URL": url, "CELERY_BROKER_URL": url}))


def _create(url: str, count: int) -> int:
    """In a helper process: ``count`` parents of two held children each."""
    store = _store(url)
    children = [NewJob("echo", "text/plain", b"x"), NewJob("echo", "text/plain", b"y")]
    for _ in range(count):
        store.create_group(children, GroupRules(1), release=False)
    return count


def create_parents(pool: Pool, url: str, n: int) -> float:
    share = [n // CREATE_PROCS + (1 if i < n % CREATE_PROCS else 0) for i in range(CREATE_PROCS)]
    start = time.perf_counter()
    created = sum(pool.starmap(_create, [(url, s) for s in share if s]))
    if created != n:
        raise AssertionError(f"the helper processes created {created} parents, not {n}")
    return time.perf_counter() - start


def measure(bench: Bench, pool: Pool, sweeper: Sweeper, store: JobStore, n: int) -> dict:
    """One round at ``n`` parents: create them, sweep until nothing is due, then sweep idle."""
    with bench.phase(f"create {n:,} parents", 600, quick=120):
        with bench.client(SWEEP_DB) as client:
            client.flushdb()
        create_s = create_parents(pool, bench.url(SWEEP_DB), n)
    if store.active_parent_count() != n:
        raise AssertionError(f"{store.active_parent_count()} active parents, not {n}")
    passes = []
    with bench.phase(f"due passes at {n:,} parents", 300, quick=60):
        while True:
            start = time.perf_counter()
            report = sweeper.sweep()
            seconds = time.perf_counter() - start
            if report.skipped:
                raise AssertionError("the sweep lock was taken: another sweeper on this database?")
            if not report.released:
                break
            passes.append({"seconds": seconds, "released": report.released})
    released = sum(p["released"] for p in passes)
    if released != n:
        raise AssertionError(f"the due passes released {released} children, not {n}")
    idle = []
    with bench.phase(f"idle passes at {n:,} parents", 300, quick=60):
        for _ in range(IDLE_PASSES):
            start = time.perf_counter()
            report = sweeper.sweep()
            idle.append(time.perf_counter() - start)
            assert not report.released and not report.republished and not report.reclaimed
    return {
        "create_seconds": create_s,
        "due_passes": len(passes),
        "due_total_ms": 1000 * sum(p["seconds"] for p in passes),
        "due_pass_ms": 1000 * median(p["seconds"] for p in passes),
        "due_us_per_parent": 1e6 * sum(p["seconds"] for p in passes) / n,
        "idle_ms": 1000 * median(idle),
    }


def run(bench: Bench) -> dict:
    options = bench.options
    sizes = (20, 200) if options.quick else (100, 1_000, 10_000)
    store = _store(bench.url(SWEEP_DB))
    published: list[int] = []

    def publish(dispatches: list[Dispatch]) -> int:
        published.append(len(dispatches))
        return len(dispatches)

    sweeper = Sweeper(store, publish)
    batch = store.settings.sweep_batch
    # What the sweep logs goes where a coordinator's log would, not to the console.
    sweep_log = logging.getLogger("coordinator.sweep")
    handler = logging.FileHandler(bench.work / "sweep-bench.log")
    sweep_log.addHandler(handler)
    sweep_log.propagate = False
    # The helper processes that create the parents wait idle on their queue
    # while the sweep is timed.  They are closed and joined, not terminated,
    # after a clean run.
    pool = HELPERS.Pool(CREATE_PROCS)
    per_size: dict[int, list[dict]] = {n: [] for n in sizes}
    try:
        for _ in range(options.reps):
            for n in sizes:
                per_size[n].append(measure(bench, pool, sweeper, store, n))
        with bench.phase("stop the helper processes", 120):
            pool.close()
            pool.join()
    finally:
        pool.terminate()
        with bench.client(SWEEP_DB) as client:
            client.flushdb()
        sweep_log.removeHandler(handler)
        sweep_log.propagate = True
        handler.close()

    figures: dict = {"sweep_batch": batch, "sizes": list(sizes)}
    rows = []
    for n in sizes:
        reps = per_size[n]
        fig = {
            key: median(r[key] for r in reps)
            for key in ("due_passes", "due_total_ms", "due_pass_ms", "due_us_per_parent", "idle_ms")
        }
        fig["passes_needed"] = math.ceil(n / batch)
        figures[str(n)] = fig
        rows.append(
            [n, fig["idle_ms"], fig["due_pass_ms"], fig["due_passes"], fig["due_total_ms"], fig["due_us_per_parent"]]
        )
    big, small = sizes[-1], sizes[-2]
    exponent = math.log(figures[str(big)]["due_total_ms"] / figures[str(small)]["due_total_ms"]) / math.log(big / small)
    figures["due_growth_exponent"] = exponent
    checks = [
        check(f"nothing due at {big} parents (ms)", figures[str(big)]["idle_ms"], "<=", 50),
        check(f"due growth exponent {small}->{big}", exponent, "<=", 1.1),
    ]
    print_table(
        f"{NAME}: sweep_batch {batch}, {options.reps} rep(s) (medians)",
        ["parents", "nothing due ms", "due ms/pass", "passes", "due ms total", "due us/parent"],
        rows,
    )
    print(f"  time ~ N^{exponent:.2f} for the due passes between {small} and {big} parents")
    return result(
        NAME,
        options,
        figures=figures,
        checks=checks,
        context={"per_rep": {str(n): per_size[n] for n in sizes}},
        method=__doc__,
    )
