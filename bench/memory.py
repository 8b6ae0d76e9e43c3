"""memory: Redis bytes per held child, and the worker pool's RSS per engine.

Redis: on an empty database, groups of 1000 children with tiny payloads are
created held (``create_group(..., release=False)``); the figure is
(used_memory after - before) / children - payload bytes per child, which
carries every key a group writes (child hashes, payload strings, the parent,
its index entries) spread over its children.  Beside it, MEMORY USAGE of one
child's job hash plus its payload string, minus the payload.

Worker: a worker started with the Procfile's command and no
OCRGW_PRELOAD_MODELS runs, in turn, a group of echo children, then
tesseract pages (images, and the structured set's page with two tables as a
PDF), then that page with ``layout: true`` (the layout and table models
loaded and run: their growth, checked), then tesseract pages with
``rotate_pages`` (the orientation
classifier's ONNX Runtime session loaded in each pool process), then
paddleocr pages (2 per pool process, capped at the pool size); after each,
VmRSS of every pool process is read from /proc.  Tesseract
runs as one subprocess per page, so its engine is not in the pool process:
its peak RSS is read separately (getrusage of a process that ran a page).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from bench.common import MEMORY_DB, MEMORY_WORKER_DB, check, median, print_table, result
from bench.ocr import page_texts, render
from bench.processes import STACK_START_DEADLINE, START_TIMEOUT, Bench, pool_children, vm_status, wait_for_pool
from jobs import keys
from jobs.config import Settings
from jobs.contract import TERMINAL
from jobs.records import GroupRules, NewJob
from jobs.registry import MODELS
from jobs.store import JobStore
from tests.harness import CELERY_READY
from tests.structured import structured_set
from workers.celery_app import PULL_TASK, make_celery

#: A worker process's growth once the layout's models have laid out pages (issue: at most 150 MB), measured
#: on a worker of its own (the stack's has run every other benchmark by then).
LAYOUT_GROWTH_TARGET_MIB = 150.0
#: The structured set's page with a bordered and a borderless table: both models run on it.
TABLES_PAGE = 2

NAME = "memory"
#: The benchmark as a whole, and each of its phases, full and quick (hang detectors: see bench/deadline.py).
DEADLINE = (1800.0, 600.0)
PHASE_DEADLINE = (600.0, 300.0)
PAYLOAD = b"tiny payload 16b"


def _store(url: str) -> JobStore:
    return JobStore.from_settings(Settings.from_env({**os.environ, "REDIS_URL": url, "CELERY_BROKER_URL": url}))


def redis_per_child(bench: Bench, groups: int, children: int) -> dict:
    url = bench.url(MEMORY_DB)
    store = _store(url)
    client = bench.client(MEMORY_DB)
    client.flushdb()
    kids = [NewJob("echo", "text/plain", PAYLOAD) for _ in range(children)]
    store.create_group(kids[:1], GroupRules(1), release=False)  # scripts loaded, indexes exist
    time.sleep(0.05)
    before = client.info("memory")["used_memory"]
    parents = [store.create_group(kids, GroupRules(1), release=False).job_id for _ in range(groups)]
    after = client.info("memory")["used_memory"]
    total = groups * children
    per_child = (after - before) / total - len(PAYLOAD)
    child = keys.child_id(parents[0], children // 2)
    job_bytes = client.memory_usage(store.keyspace.job(child), samples=0)
    payload_bytes = client.memory_usage(store.keyspace.payload(child), samples=0)
    parent_bytes = client.memory_usage(store.keyspace.job(parents[0]), samples=0)
    assert job_bytes is not None and payload_bytes is not None, "the child's keys exist"
    encoding = client.object("encoding", store.keyspace.job(child))
    client.flushdb()
    return {
        "used_memory_delta_per_child": per_child,
        "memory_usage_child_job_hash": job_bytes,
        "memory_usage_child_payload": payload_bytes,
        "memory_usage_per_child": job_bytes + payload_bytes - len(PAYLOAD),
        "memory_usage_parent_hash": parent_bytes,
        "child_hash_encoding": encoding.decode() if isinstance(encoding, bytes) else encoding,
    }


def _wait_terminal(store: JobStore, parent_id: str) -> str:
    """Polls the parent until it is terminal; the phase's deadline bounds the wait."""
    while True:
        view = store.queries.get(parent_id)
        assert view is not None, f"parent {parent_id} is gone"
        status = view["status"]
        if status in {s.value for s in TERMINAL}:
            return status
        time.sleep(0.05)


def tesseract_peak_rss_kib(page: bytes) -> int:
    """The peak RSS of the tesseract subprocess that reads one page."""
    code = textwrap.dedent("""
        import resource, sys
        from workers.adapters import get_adapter
        get_adapter("tesseract").run(sys.stdin.buffer.read(), "image/png", {})
        print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
    """)
    out = subprocess.run(
        [sys.executable, "-c", code],
        input=page,
        capture_output=True,
        cwd=Path(__file__).resolve().parent.parent,
        timeout=120,
        check=True,
    )
    return int(out.stdout.split()[-1])


def worker_rss(bench: Bench) -> dict:
    conc = bench.concurrency
    url = bench.url(MEMORY_WORKER_DB)
    bench.client(MEMORY_WORKER_DB).flushdb()
    worker = bench.celery_worker(MEMORY_WORKER_DB, env={"OCRGW_PRELOAD_MODELS": ""}, name="memory-worker")
    try:
        with bench.phase("start the worker", STACK_START_DEADLINE):
            worker.wait_ready(CELERY_READY, START_TIMEOUT)
            wait_for_pool(worker, conc)
        store = _store(url)
        app = make_celery(Settings(redis_url=url, broker_url=url))
        pages = [render(t) for t in page_texts(2 * conc, seed=7)]

        def run_group(model: str, payloads: list[bytes], content_type: str, **options) -> None:
            jobs = [NewJob(model, content_type, p, options=options) for p in payloads]
            with bench.phase(f"a group of {len(jobs)} {model} children", *PHASE_DEADLINE):
                created = store.create_group(jobs, GroupRules(conc))
                with app.producer_or_acquire() as producer:
                    for d in created.dispatches:  # wake-ups: a worker takes the model's next ready job
                        queue = _queue_of(d.model)
                        app.send_task(PULL_TASK, args=[d.model, d.priority, d.bucket], queue=queue, producer=producer)
                status = _wait_terminal(store, created.job_id)
            if status != "completed":
                raise AssertionError(f"the {model} group ended {status}")

        def snapshot() -> dict:
            pids = pool_children(worker.pid)
            per = {}
            for pid in pids:
                status = vm_status(pid)
                maps = Path(f"/proc/{pid}/maps").read_text()
                per[str(pid)] = {
                    "rss_kib": status["VmRSS"],
                    "hwm_kib": status["VmHWM"],
                    "onnxruntime_loaded": "onnxruntime" in maps,
                }
            return {
                "pool": per,
                "max_rss_mib": max(p["rss_kib"] for p in per.values()) / 1024,
                "main_rss_mib": vm_status(worker.pid)["VmRSS"] / 1024,
            }

        stages: dict[str, dict | float] = {"started": snapshot()}
        run_group("echo", [b"hello"] * (2 * conc), "text/plain")
        stages["after_echo"] = snapshot()
        tables_page = [structured_set().scan(TABLES_PAGE)] * (2 * conc)
        run_group("tesseract", pages, "image/png")
        run_group("tesseract", tables_page, "application/pdf")  # PDFium's share, before the layout's
        stages["after_tesseract"] = snapshot()
        # The same pages with the layout on: the layout and table models loaded and run (two tables a page).
        run_group("tesseract", tables_page, "application/pdf", layout=True)
        stages["after_layout"] = snapshot()
        run_group("tesseract", pages, "image/png", rotate_pages=True)
        stages["after_rotate_pages"] = snapshot()
        run_group("paddleocr", pages, "image/png")
        stages["after_paddleocr"] = snapshot()
        with bench.phase("one page in a tesseract subprocess", *PHASE_DEADLINE):
            stages["tesseract_subprocess_peak_mib"] = tesseract_peak_rss_kib(pages[0]) / 1024
        return stages
    finally:
        bench.stop(worker)
        bench.client(MEMORY_WORKER_DB).flushdb()


def run(bench: Bench) -> dict:
    options = bench.options
    groups, children = (1, 20) if options.quick else (3, 1000)
    reps = []
    for _ in range(options.reps):
        with bench.phase(f"Redis bytes of {groups} group(s) of {children} held children", *PHASE_DEADLINE):
            reps.append(redis_per_child(bench, groups, children))
    redis_fig = {
        key: median(r[key] for r in reps)
        for key in (
            "used_memory_delta_per_child",
            "memory_usage_per_child",
            "memory_usage_child_job_hash",
            "memory_usage_child_payload",
            "memory_usage_parent_hash",
        )
    }
    redis_fig["child_hash_encoding"] = reps[-1]["child_hash_encoding"]
    rss = worker_rss(bench)
    figures = {
        "groups": groups,
        "children_per_group": children,
        "payload_bytes": len(PAYLOAD),
        "redis": redis_fig,
        "worker_pool_rss_mib": {
            stage: rss[stage]["max_rss_mib"]
            for stage in (
                "started",
                "after_echo",
                "after_tesseract",
                "after_layout",
                "after_rotate_pages",
                "after_paddleocr",
            )
        },
        "tesseract_subprocess_peak_mib": rss["tesseract_subprocess_peak_mib"],
        "layout_growth_mib": _growth_mib(rss["after_tesseract"], rss["after_layout"]),
    }
    checks = [
        check("Redis metadata bytes per held child", redis_fig["used_memory_delta_per_child"], "<=", 1024),
        check(
            "pool process growth with the layout models",
            figures["layout_growth_mib"],
            "<=",
            LAYOUT_GROWTH_TARGET_MIB,
            " MiB",
        ),
    ]
    print_table(
        f"{NAME}: Redis, {groups} group(s) of {children} held children, payload {len(PAYLOAD)} B",
        ["figure", "bytes"],
        [[k, v] for k, v in redis_fig.items()],
    )
    print_table(
        f"{NAME}: worker pool of {bench.concurrency}, largest pool process after each stage",
        ["stage", "RSS MiB"],
        [[k, v] for k, v in figures["worker_pool_rss_mib"].items()]
        + [["tesseract subprocess (peak)", figures["tesseract_subprocess_peak_mib"]]],
    )
    return result(
        NAME,
        options,
        figures=figures,
        checks=checks,
        context={"redis_per_rep": reps, "worker_stages": rss},
        method=__doc__,
    )


def _growth_mib(before: dict, after: dict) -> float:
    """The largest growth of one pool process between two stages (the same process in both)."""
    grown = [
        (after["pool"][pid]["rss_kib"] - before["pool"][pid]["rss_kib"]) / 1024
        for pid in before["pool"]
        if pid in after["pool"]
    ]
    return max(grown, default=float("nan"))


def _queue_of(model: str) -> str:
    return MODELS[model].queue
