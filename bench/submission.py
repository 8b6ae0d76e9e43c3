"""submission: what POSTing a fan-out group costs, beside publishing a Celery group.

(A) 8 client processes (one keep-alive HTTP connection each) POST groups of
    100 small ``echo`` children, max_parallel=0 (no cap: every child is
    released and published in the POST, as a Celery group publishes every
    task) to a gateway started with the Procfile's web command (its worker and
    thread counts), back to back, for the window; latency is per POST.
(B) one Celery client (an app with ocrgw's own Celery settings) builds and
    ``apply_async``\\ s a group of 100 task signatures onto the same broker
    and queue: median of repeated calls.

No worker consumes this database, so the queue only grows: both sides
publish into the same list on the same redis-server.

The targets compare like with like: POST p50 under 8 clients against
apply_async p50 under 8 client processes at once (B8), and one client's POST
against one client's apply_async.  POST p50 under 8 clients against one idle
client's apply_async is reported too, but it is not a measure of overhead:
8 clients on 2 cores queue behind each other, so by Little's law their
latency is 8 / throughput whatever either side does per call.
"""

from __future__ import annotations

import os
import time
from multiprocessing.synchronize import Barrier

from celery import group

from bench.common import (
    SUBMISSION_DB,
    Http,
    check,
    echo_payloads,
    fanout_body,
    median,
    percentile,
    print_table,
    result,
    rotations,
)
from bench.processes import HELPERS, STACK_START_DEADLINE, START_TIMEOUT, Bench
from jobs.config import Settings
from jobs.registry import MODELS
from workers.celery_app import RUN_TASK, make_celery

NAME = "submission"
#: The benchmark as a whole, full and quick (hang detectors: see bench/deadline.py).
DEADLINE = (1200.0, 300.0)
#: Each side of a round: start the client processes, run the window, collect.
SIDE_DEADLINE = (300.0, 180.0)
CLIENTS = 8
CHILDREN = 100
APPLY_SAMPLES = 20
QUICK_APPLY_SAMPLES = 5


def _post_loop(base_url: str, body: bytes, ready: Barrier, seconds: float, out) -> None:
    """In a client process: POST ``body`` back to back for ``seconds``, once every client is ready."""
    http = Http(base_url)
    lat, errors = [], 0
    ready.wait()
    start = time.monotonic()
    while time.monotonic() < start + seconds:
        t0 = time.perf_counter()
        status, _ = http.request("POST", "/jobs", body)
        elapsed = time.perf_counter() - t0
        if status == 202:
            lat.append(elapsed)
        else:
            errors += 1
    out.put((lat, errors, time.monotonic() - start))
    http.close()


def _celery_client(url: str):
    return make_celery(Settings(redis_url=url, broker_url=url))


def _group(app) -> group:
    queue = _queue_of("echo")
    return group(app.signature(RUN_TASK, args=[f"{os.urandom(16).hex()}-{i}"], queue=queue) for i in range(CHILDREN))


def _apply_loop(url: str, ready: Barrier, seconds: float, out) -> None:
    """In a client process: ``apply_async`` groups back to back for ``seconds``, once all are ready."""
    app = _celery_client(url)
    _group(app).apply_async()  # connect and declare first
    lat = []
    ready.wait()
    start = time.monotonic()
    while time.monotonic() < start + seconds:
        sig = _group(app)
        t0 = time.perf_counter()
        sig.apply_async()
        lat.append(time.perf_counter() - t0)
    out.put((lat, 0, time.monotonic() - start))


def _fan(target, args, clients: int, seconds: float):
    """``clients`` processes run ``target`` for ``seconds``, all starting together
    once every one is up and connected, so that a slow start shortens no window."""
    out = HELPERS.Queue()
    ready = HELPERS.Barrier(clients + 1)
    procs = [HELPERS.Process(target=target, args=(*args, ready, seconds, out)) for _ in range(clients)]
    try:
        for p in procs:
            p.start()
        ready.wait()
        got = [out.get() for _ in procs]
        for p in procs:
            p.join()
    finally:
        for p in procs:
            if p.is_alive():
                p.kill()
                p.join()
    lat = [x for g in got for x in g[0]]
    return lat, sum(g[1] for g in got), max(g[2] for g in got)


def run(bench: Bench) -> dict:
    options = bench.options
    window = 3.0 if options.quick else 20.0
    per_round = window / options.reps
    url = bench.url(SUBMISSION_DB)
    with bench.phase("start the gateway", STACK_START_DEADLINE):
        web = bench.web(SUBMISSION_DB)
        web.wait_ready(web.healthy, START_TIMEOUT)
    body = fanout_body(echo_payloads(CHILDREN), 0)
    app = _celery_client(url)
    http = Http(web.base_url)
    with bench.phase("warm-up", 120):
        for _ in range(3):  # connections, imports, declarations
            http.post_json("/jobs", body)
            _group(app).apply_async()

    def loaded_posts():
        lat, errors, elapsed = _fan(_post_loop, (web.base_url, body), CLIENTS, per_round)
        return {"lat": lat, "errors": errors, "elapsed": elapsed}

    samples = QUICK_APPLY_SAMPLES if options.quick else APPLY_SAMPLES

    def apply_async():
        lat = []
        for _ in range(samples):
            sig = _group(app)
            t0 = time.perf_counter()
            sig.apply_async()
            lat.append(time.perf_counter() - t0)
        single = []
        for _ in range(samples):
            t0 = time.perf_counter()
            status, _ = http.request("POST", "/jobs", body)
            single.append(time.perf_counter() - t0)
            assert status == 202, status
        return {"apply": lat, "single_post": single}

    def loaded_apply():
        lat, _, elapsed = _fan(_apply_loop, (url,), CLIENTS, min(per_round, 2.0))
        return {"lat": lat, "elapsed": elapsed}

    sides = {"A_posts": loaded_posts, "B_apply_async": apply_async, "B8_apply_async": loaded_apply}
    rounds: dict[str, list[dict]] = {name: [] for name in sides}
    for order in rotations(list(sides), options.reps):
        for name in order:
            with bench.phase(name, *SIDE_DEADLINE):
                rounds[name].append(sides[name]())
    http.close()
    bench.stop(web)

    post_lat = [x for r in rounds["A_posts"] for x in r["lat"]]
    post_time = sum(r["elapsed"] for r in rounds["A_posts"])
    errors = sum(r["errors"] for r in rounds["A_posts"])
    apply_med = median(median(r["apply"]) for r in rounds["B_apply_async"])
    single_med = median(median(r["single_post"]) for r in rounds["B_apply_async"])
    apply8 = [x for r in rounds["B8_apply_async"] for x in r["lat"]]
    figures = {
        "clients": CLIENTS,
        "children_per_group": CHILDREN,
        "window_seconds": round(post_time, 2),
        "post_p50_ms": 1000 * percentile(post_lat, 50),
        "post_p99_ms": 1000 * percentile(post_lat, 99),
        "groups_per_s": len(post_lat) / post_time,
        "children_per_s": CHILDREN * len(post_lat) / post_time,
        "post_errors": errors,
        "apply_async_median_ms": 1000 * apply_med,
        "post_p50_over_apply_async": percentile(post_lat, 50) / apply_med,
        "single_client_post_median_ms": 1000 * single_med,
        "single_client_post_over_apply_async": single_med / apply_med,
        "apply_async_8_clients_p50_ms": 1000 * percentile(apply8, 50),
        "post_p50_over_apply_async_8_clients": percentile(post_lat, 50) / percentile(apply8, 50),
    }
    checks = [
        check(
            "POST p50 / apply_async p50, both with 8 clients", figures["post_p50_over_apply_async_8_clients"], "<=", 1.0
        ),
        check("POST / apply_async, one client each", figures["single_client_post_over_apply_async"], "<=", 1.0),
    ]
    print_table(
        f"{NAME}: groups of {CHILDREN} echo children, {CLIENTS} clients, {post_time:.0f} s in "
        f"{options.reps} round(s), gateway as the Procfile runs it",
        ["figure", "value"],
        [[k, v] for k, v in figures.items()],
    )
    context = {
        "gateway_command": web.command,
        "per_round": {
            "A_posts": [
                {"posts": len(r["lat"]), "p50_ms": 1000 * percentile(r["lat"], 50), "seconds": r["elapsed"]}
                for r in rounds["A_posts"]
            ],
            "B_apply_async_median_ms": [1000 * median(r["apply"]) for r in rounds["B_apply_async"]],
            "single_post_median_ms": [1000 * median(r["single_post"]) for r in rounds["B_apply_async"]],
        },
    }
    with bench.client(SUBMISSION_DB) as client:
        client.flushdb()
    return result(NAME, options, figures=figures, checks=checks, context=context, method=__doc__)


def _queue_of(model: str) -> str:
    return MODELS[model].queue
