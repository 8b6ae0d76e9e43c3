"""capacity's saturation run: the store's kept-slot transitions, as fast as client processes can drive them.

A redis-server of its own (AOF on, as the store's in ``bench/capacity.py``)
and ``CLIENTS`` helper processes (from the bench's forkserver) each loop,
with ``JobStore`` and nothing else: create a group of ``GROUP`` echo children
with max_parallel ``SLOTS``, start from each wake-up the creation answered
(``claim_next``, as a worker an ``ocrgw.pull`` brought), then complete each
job with ``take_next`` (the kept slot: the completing script claims the
model's next ready job for the caller) until none is ready.  No Celery,
no gateway: what one primary does for the kept-slot path, and nothing else.

The clients wait for a common start time, then count the children they
complete until a common end time.  Over exactly that window the bench
reads the server's CPU (``used_cpu_sys + used_cpu_user``) and commandstats.
The figures: children per second; the server's share of a core; execution
µs per child (commandstats) and CPU µs per child.  The prediction to check:
``share x 1e6 / µs per child``, with the µs of the kept_group side (store
only) and with this run's own commandstats.  Client processes and Redis
share the machine's cores, so the share reached says how far from
saturation the server was.
"""

from __future__ import annotations

import os
import time

import redis

from bench.capacity_stats import OCRGW_LUA, Window
from bench.common import median
from bench.processes import HELPERS, Bench
from jobs.config import Settings
from jobs.records import GroupRules, NewJob
from jobs.store import JobStore
from tests.harness import RedisServer

GROUP = 100
SLOTS = 2
#: The share of a core of one Redis primary that a ceiling is taken at.
CORE_SHARE = 0.8


def drive(url: str, start_at: float, end_at: float) -> int:
    """In a helper process: kept-slot groups from ``start_at`` to ``end_at`` (wall clock); children completed."""
    store = JobStore.from_settings(Settings.from_env({**os.environ, "REDIS_URL": url, "CELERY_BROKER_URL": url}))
    children = [NewJob("echo", "text/plain", f"child {i}".encode()) for i in range(GROUP)]
    run_group(store, children[: SLOTS + 1], lambda: True)  # the scripts loaded, the connection made
    if time.time() > start_at:
        return -1  # too late for the window: the bench says so
    while time.time() < start_at:
        time.sleep(0.002)
    return run_until(store, children, end_at)


def run_until(store: JobStore, children: list[NewJob], end_at: float) -> int:
    done = 0
    while time.time() < end_at:
        done += run_group(store, children, lambda: time.time() < end_at)
    return done


def run_group(store: JobStore, children: list[NewJob], going) -> int:
    """Creates a group and, as workers would, starts from each wake-up and goes on from job to job.

    Every wake-up answered is taken (those of ``claim_next`` and ``complete``
    too): one left untaken would count as on its way and hold back the next
    group's (ready.lua).
    """
    done = 0
    wake_ups = list(store.create_group(children, GroupRules(SLOTS)).dispatches)
    while wake_ups and going():
        wake_up = wake_ups.pop()
        claim, more = store.claim_next(wake_up.model, wake_up.priority, wake_up.bucket)
        wake_ups += more
        while claim is not None and going():
            completion = store.complete(claim.job_id, claim.attempt, {"text": "ok"}, take_next="echo")
            wake_ups += completion.dispatches
            done += 1
            claim = completion.next_claim
    return done


def one_run(bench: Bench, server: RedisServer, client, clients: int, seconds: float) -> dict:
    start_at = time.time() + (6.0 if bench.options.quick else 10.0)  # the helpers' start, warm-up included
    end_at = start_at + seconds
    pool = HELPERS.Pool(clients)
    try:
        pending = pool.starmap_async(drive, [(server.url, start_at, end_at)] * clients)
        time.sleep(max(start_at - time.time(), 0))
        load_before = os.getloadavg()[0]
        window = Window(client).start()
        time.sleep(max(end_at - time.time(), 0))
        usage = window.stop()
        counts = pending.get()
        if min(counts) < 0:
            raise AssertionError("a client process was ready only after the window had started")
        done = sum(counts)
        pool.close()
        pool.join()
    finally:
        pool.terminate()
    client.flushall()
    per = usage.per(done, OCRGW_LUA) if done else {}
    return {
        "clients": clients,
        "children": done,
        "seconds": usage.wall_seconds,
        "children_per_second": done / usage.wall_seconds,
        "server_cpu_share": usage.cpu_seconds / usage.wall_seconds,
        "exec_us": per.get("exec_us"),
        "cpu_us": per.get("cpu_us"),
        "commands": per.get("commands"),
        "by_command": per.get("by_command"),
        "load_1min_at_start": load_before,
        "load_1min_at_end": os.getloadavg()[0],
    }


def saturate(bench: Bench, sides: dict) -> dict:
    quick = bench.options.quick
    clients, seconds = (2, 2.0) if quick else (4, 10.0)
    server = RedisServer(
        bench.group, bench.work / "capacity-saturation", appendonly=True, name="capacity-saturation"
    ).start()
    assert server.port is not None, "a started server has its port"
    client = redis.Redis(host=server.host, port=server.port)
    runs = []
    for _ in range(bench.options.reps):
        with bench.phase(f"saturation, {clients} client processes for {seconds:g} s", 180, quick=60):
            runs.append(one_run(bench, server, client, clients, seconds))
    server.stop()
    side_us = median(r["store"]["exec_us"] for r in sides["kept_group"])
    for r in runs:
        # What each run's share of a core predicts, against what that run did.
        share = r["server_cpu_share"]
        r["predicted_from_side"] = share * 1e6 / side_us
        r["predicted_from_own"] = share * 1e6 / r["exec_us"]
        r["measured_over_predicted_side"] = r["children_per_second"] / r["predicted_from_side"]
        r["measured_over_predicted_own"] = r["children_per_second"] / r["predicted_from_own"]
        # At CORE_SHARE of a core, scaled from the share reached: the CPU per child this run measured.
        r["ceiling_from_cpu"] = CORE_SHARE * 1e6 / r["cpu_us"]
        r["ceiling_from_exec_us"] = CORE_SHARE * 1e6 / r["exec_us"]
    per_run = (
        "children_per_second",
        "server_cpu_share",
        "exec_us",
        "cpu_us",
        "commands",
        "predicted_from_side",
        "predicted_from_own",
        "measured_over_predicted_side",
        "measured_over_predicted_own",
        "ceiling_from_cpu",
        "ceiling_from_exec_us",
    )
    fig: dict = {key: median(r[key] for r in runs) for key in per_run}
    busiest = max(runs, key=lambda r: r["server_cpu_share"])
    fig.update(
        clients=clients,
        seconds=seconds,
        group=GROUP,
        slots=SLOTS,
        kept_group_side_exec_us=side_us,
        busiest_run={key: busiest[key] for key in per_run},
    )
    return {"figures": fig, "context": runs}
