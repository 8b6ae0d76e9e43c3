"""priority_lanes: how long a one-page interactive job takes while a 500-page batch group runs.

The stack is the bench's (database 0: the Procfile's worker, pool
``OCRGW_WORKER_CONCURRENCY``, kept slots on).  A page is an ``echo`` page
that sleeps ``PAGE_MS`` (its ``delay_ms``): what is measured is where the
job waits, not an engine's speed, and a sleeping page leaves the shared
cores to the gateway, the worker and Redis.

Time to result: from just before the POST of the interactive job (JSON,
``priority: "interactive"``, one page) until its result is in hand: its
terminal event read from its events stream (``XREAD BLOCK``,
``bench.common.wait_parent``), then ``GET /jobs/{id}/result``.  The jobs of
a round go one after the other, 20 per round (5 with --quick).

* ``idle``: the same job on the idle stack.
* ``uncapped``: while a batch group of 500 pages (one page a child,
  ``max_parallel`` 0: every child in the model's batch queue at once) runs.
  The round starts once the group has children processing; then the
  group is cancelled, and the next round waits until no child of it is
  processing and nothing is left on the model's batch queue.
* ``kept_slots``: the same with ``max_parallel`` = pool size: the group's
  children run through kept slots (no message), which must give way.

The rounds take turns (idle, uncapped, kept_slots; rotated each
alternation, ``--reps``); p50 and p99 are of every job of a kind over all
rounds.  A page's time is measured in the same run: the median
``finished_at - started_at`` (Redis times) of the batch children that
completed.  Target, for p50 and for p99 alike: busy <= 1.5 x idle + one
page's time (the job may find every worker process one page into a batch
child: one page to wait, then its own).

Context: how long each interactive job waited from its creation to its
start (Redis times, read once it is timed), p50; and the same job in the batch lane, submitted once the round's
interactive jobs are done (it waits behind the batch children queued
before it, as every job did before lanes): its time to its end.
"""

from __future__ import annotations

import base64
import json
import time

import redis

from bench.common import STACK_KEYS, check, median, micros, percentile, print_table, result, rotations, wait_parent
from bench.processes import Bench
from jobs.registry import MODELS

NAME = "priority_lanes"
#: The benchmark as a whole, and one round, full and quick (hang detectors: see bench/deadline.py).
DEADLINE = (1800.0, 300.0)
ROUND_DEADLINE = (300.0, 120.0)
PAGE_MS = 100
KINDS = ("idle", "uncapped", "kept_slots")
RATIO = 1.5


def job_body(text: str, priority: str) -> bytes:
    return json.dumps(
        {
            "model": "echo",
            "content_type": "text/plain",
            "payload": base64.b64encode(text.encode()).decode(),
            "options": {"delay_ms": PAGE_MS},
            "priority": priority,
        }
    ).encode()


def batch_body(pages: int, max_parallel: int) -> bytes:
    child = {"model": "echo", "content_type": "text/plain", "options": {"delay_ms": PAGE_MS}}
    children = [{**child, "payload": base64.b64encode(f"batch page {i}".encode()).decode()} for i in range(pages)]
    return json.dumps({"fanout": {"max_parallel": max_parallel, "children": children}}).encode()


def time_to_result(bench_stack, client: redis.Redis, text: str) -> tuple[float, float]:
    """Seconds from the POST of one interactive one-page job to its result in hand, and (read afterwards,
    Redis times) how long it waited between its creation and its start."""
    http = bench_stack.http
    began = time.perf_counter()
    job = http.post_json("/jobs", job_body(text, "interactive"))
    status = wait_parent(client, job["id"])
    if status != "completed":
        raise AssertionError(f"interactive job {job['id']} ended {status}")
    http.get_json(f"/jobs/{job['id']}/result")
    took = time.perf_counter() - began
    view = http.get_json(f"/jobs/{job['id']}")
    return took, (micros(view["started_at"]) - micros(view["created_at"])) / 1e6


def timed_jobs(bench_stack, client: redis.Redis, label: str, jobs: int) -> dict[str, list[float]]:
    measured = [time_to_result(bench_stack, client, f"{label} {i}") for i in range(jobs)]
    return {"times": [t for t, _ in measured], "waits": [w for _, w in measured]}


def processing(client: redis.Redis, parent_id: str) -> int:
    return int(client.hget(STACK_KEYS.job(parent_id), "n_processing") or 0)


def page_times(bench_stack, parent_id: str) -> list[float]:
    """Seconds each completed child of the group ran (Redis times)."""
    http, out = bench_stack.http, []
    page = http.get_json(f"/jobs/{parent_id}/children?status=completed&limit=200")
    while True:
        out += [(micros(c["finished_at"]) - micros(c["started_at"])) / 1e6 for c in page["children"]]
        following = page["children_page"]["next"]
        if not following:
            return out
        page = http.get_json(following)


def drained(client: redis.Redis, parent_id: str) -> bool:
    """The cancelled group has no child processing, and its messages are all consumed."""
    ended = client.hget(STACK_KEYS.job(parent_id), "status") in (b"cancelled", b"completed", b"failed")
    return ended and processing(client, parent_id) == 0 and client.llen(MODELS["echo"].queue) == 0


def busy_round(bench: Bench, kind: str, jobs: int, pages: int, label: str) -> dict:
    stack, client = bench.stack(), bench.stack().redis()
    cap = 0 if kind == "uncapped" else bench.concurrency
    parent = stack.http.post_json("/jobs", batch_body(pages, cap))["id"]
    while processing(client, parent) < bench.concurrency:
        time.sleep(0.01)
    timed = timed_jobs(stack, client, label, jobs)
    still_running = client.hget(STACK_KEYS.job(parent), "status") in (b"queued", b"processing")
    if not still_running:
        raise AssertionError(f"the batch group {parent} ended before the interactive jobs: no measurement")
    behind_began = time.perf_counter()
    behind = stack.http.post_json("/jobs", job_body(f"{label} batch lane", "batch"))["id"]
    wait_parent(client, behind)
    behind_s = time.perf_counter() - behind_began
    pages_s = page_times(stack, parent)
    stack.http.request("DELETE", f"/jobs/{parent}")
    while not drained(client, parent):
        time.sleep(0.05)
    return {**timed, "page_times": pages_s, "batch_lane_job_s": behind_s}


def run(bench: Bench) -> dict:
    options = bench.options
    jobs, pages = (5, 40) if options.quick else (20, 500)
    stack = bench.stack()
    client = stack.redis()
    with bench.phase("warm-up", *ROUND_DEADLINE):
        time_to_result(stack, client, "warm-up")
    rounds: dict[str, list[dict]] = {k: [] for k in KINDS}
    for rep, order in enumerate(rotations(KINDS, options.reps)):
        for kind in order:
            label = f"{kind} {rep}"
            with bench.phase(
                f"{kind}: {jobs} interactive jobs" + ("" if kind == "idle" else f", {pages}-page batch"),
                *ROUND_DEADLINE,
            ):
                if kind == "idle":
                    rounds[kind].append(timed_jobs(stack, client, label, jobs))
                else:
                    rounds[kind].append(busy_round(bench, kind, jobs, pages, label))

    page_s = median(t for kind in KINDS[1:] for r in rounds[kind] for t in r["page_times"])
    figures: dict = {"jobs_per_round": jobs, "batch_pages": pages, "page_ms": 1000 * page_s}
    idle = [t for r in rounds["idle"] for t in r["times"]]
    idle_p = {q: 1000 * percentile(idle, q) for q in (50, 99)}
    idle_wait = 1000 * median(w for r in rounds["idle"] for w in r["waits"])
    figures["idle"] = {"p50_ms": idle_p[50], "p99_ms": idle_p[99], "wait_p50_ms": idle_wait}
    checks, rows = [], [["idle", idle_p[50], idle_p[99], "", "", idle_wait, ""]]
    for kind in KINDS[1:]:
        times = [t for r in rounds[kind] for t in r["times"]]
        behind = median(r["batch_lane_job_s"] for r in rounds[kind])
        fig = {f"p{q}_ms": 1000 * percentile(times, q) for q in (50, 99)}
        fig["wait_p50_ms"] = 1000 * median(w for r in rounds[kind] for w in r["waits"])
        fig["batch_lane_job_ms"] = 1000 * behind
        figures[kind] = fig
        for q in (50, 99):
            limit = RATIO * idle_p[q] + 1000 * page_s
            fig[f"p{q}_limit_ms"] = limit
            checks.append(
                check(
                    f"{kind}: p{q} time to result (ms), <= {RATIO} x idle + a page",
                    fig[f"p{q}_ms"],
                    "<=",
                    round(limit, 1),
                )
            )
        rows.append(
            [
                kind,
                fig["p50_ms"],
                fig["p99_ms"],
                fig["p50_limit_ms"],
                fig["p99_limit_ms"],
                fig["wait_p50_ms"],
                fig["batch_lane_job_ms"],
            ]
        )
    print_table(
        f"{NAME}: one-page interactive jobs ({jobs} a round) beside a {pages}-page batch group, echo pages of "
        f"{PAGE_MS} ms (measured {1000 * page_s:.0f} ms), pool {bench.concurrency}, {options.reps} alternations (ms)",
        ["batch", "p50", "p99", "p50 target", "p99 target", "waited p50", "batch-lane job (context)"],
        rows,
    )
    return result(
        NAME,
        options,
        figures=figures,
        checks=checks,
        context={kind: [{k: v for k, v in r.items() if k != "page_times"} for r in rounds[kind]] for kind in KINDS},
        method=__doc__,
    )
