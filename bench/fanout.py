"""fanout_vs_canvas: N no-op children through Celery's canvas and through ocrgw.

(a) ``group`` of ``bench.count`` tasks, results ignored: the dispatch floor.
    Done when the last task's INCR reaches N and it RPUSHes a marker (BLPOP).
(b) ``chord`` of ``bench.noop`` tasks with a ``bench.chord_done`` callback, on
    a Redis result backend.  Done when the callback RPUSHes its marker (BLPOP).
(c) POST /jobs with N ``echo`` children (text/plain), max_parallel = the worker
    concurrency.  Done when the parent's terminal audit event is on its events
    stream (XREAD, see ``common.wait_parent``).  Workers keep their slots (the
    default): a finishing child's worker runs the next child itself.
(m) context, no target: (c) on a second stack whose workers keep no slot
    (``OCRGW_KEEP_SLOT_SECONDS=0``), so every child goes through a Celery
    message: what the kept slot saves, and what a group pays once the
    kept slot's time budget is spent.

Each side is timed from the client's first call (apply_async / POST) to the
moment the bench sees the end.  Celery's signatures and ocrgw's JSON body are
built before the clock starts.  (a)'s client has no result backend; (b)'s
does not subscribe to each task's result channel as it sends it (Celery's
default with a Redis backend, for a later .get()): no side waits on a task's
result, so neither baseline pays that round trip per task.  The two Celery workers (ocrgw's and the
canvas one) run the Procfile's command line with the same concurrency and
pool; the idle one waits on its queues meanwhile.
"""

from __future__ import annotations

import gc
from typing import Any

from celery import chord, group

from bench import canvas_app
from bench.common import (
    STACK_DB,
    check,
    echo_payloads,
    fanout_body,
    median,
    micros,
    print_table,
    result,
    rotations,
    timed,
    token,
    wait_parent,
)
from bench.processes import Bench
from jobs.config import Settings

NAME = "fanout_vs_canvas"
#: The benchmark as a whole, full and quick (hang detectors: see bench/deadline.py).
DEADLINE = (1800.0, 600.0)
#: One group, chord or fan-out, from the first call to its end, full and quick.
GROUP_DEADLINE = (300.0, 120.0)


def run(bench: Bench) -> dict:
    options = bench.options
    n = 20 if options.quick else 1000
    stack = bench.stack()
    client = bench.client(STACK_DB)
    url = bench.url(STACK_DB)
    settings = Settings(redis_url=url, broker_url=url)
    # (a) ignores results: its client has no result backend at all.  (b)'s
    # client needs one for the chord, but subscribes to no task's result
    # channel (see canvas_app.chord_client): each baseline is timed as fast
    # as Celery can be made to go here, not at its defaults.
    plain = canvas_app.make_app(settings, result_backend=False)
    celery = canvas_app.chord_client(settings)
    max_parallel = bench.concurrency

    def canvas_group(size: int) -> float:
        key = f"bench:group:{token()}"
        sig = group(
            plain.signature(canvas_app.COUNT_TASK, args=[key, size], queue=canvas_app.QUEUE) for _ in range(size)
        )

        def go():
            handle = sig.apply_async()
            client.blpop([key + ":done"], timeout=0)  # the phase's deadline bounds the wait
            return handle

        seconds, handle = timed(go)
        del handle  # its result handles unsubscribe now, outside the clock
        gc.collect()
        count = client.get(key)
        if count is None or int(count) != size:
            raise AssertionError("the group's counter does not match its size")
        return seconds

    def canvas_chord(size: int) -> float:
        marker = f"bench:chord:{token()}"
        header = [celery.signature(canvas_app.NOOP_TASK, queue=canvas_app.QUEUE) for _ in range(size)]
        callback = celery.signature(canvas_app.CHORD_DONE_TASK, args=[marker], queue=canvas_app.QUEUE)
        sig = chord(header, callback)

        def go():
            handle = sig.apply_async()
            reply = client.blpop([marker], timeout=0)  # the phase's deadline bounds the wait
            assert reply is not None, "a blpop without a timeout returns an item"
            return int(reply[1]), handle

        seconds, (got, handle) = timed(go)
        del handle  # its result handles unsubscribe now, outside the clock
        gc.collect()
        if got != size:
            raise AssertionError(f"the chord's callback saw {got} results, not {size}")
        return seconds

    server_side: list[float] = []

    def fanout_on(target, record: bool):
        target_client = target.redis()

        def ocrgw_fanout(size: int) -> float:
            body = fanout_body(echo_payloads(size), max_parallel)

            def go():
                parent = target.http.post_json("/jobs", body)
                return parent["id"], wait_parent(target_client, parent["id"])

            seconds, (parent_id, status) = timed(go)
            view = target.http.get_json(f"/jobs/{parent_id}")
            if status != "completed" or view["counts"]["completed"] != size:
                raise AssertionError(f"parent {parent_id} ended {status} with counts {view['counts']}")
            if record:
                server_side.append((micros(view["finished_at"]) - micros(view["created_at"])) / 1e6)
            return seconds

        return ocrgw_fanout

    sides = {
        "a_group": canvas_group,
        "b_chord": canvas_chord,
        "c_ocrgw": fanout_on(stack, True),
        "m_ocrgw_messages": fanout_on(bench.message_path_stack(), False),
    }
    # Warm-up: connections, imports, code paths, on every side.
    for name, fn in sides.items():
        with bench.phase(f"warm-up: {name}", *GROUP_DEADLINE):
            fn(min(n, 50))
    server_side.clear()

    times: dict[str, list[float]] = {name: [] for name in sides}
    for order in rotations(list(sides), options.reps):
        for name in order:
            with bench.phase(f"{name}, {n} children", *GROUP_DEADLINE):
                times[name].append(sides[name](n))

    bench.stop_message_path_stack()
    plain.close()
    celery.close()
    c_over_b = [c / b for c, b in zip(times["c_ocrgw"], times["b_chord"], strict=True)]
    c_over_a = [c / a for c, a in zip(times["c_ocrgw"], times["a_group"], strict=True)]
    m_over_b = [m / b for m, b in zip(times["m_ocrgw_messages"], times["b_chord"], strict=True)]
    med = {name: median(v) for name, v in times.items()}
    figures: dict[str, Any] = {
        "children": n,
        "max_parallel": max_parallel,
        "median_seconds": med,
        "per_child_ms": {name: 1000 * v / n for name, v in med.items()},
        "c_over_b": median(c_over_b),
        "c_over_a": median(c_over_a),
        "m_over_b": median(m_over_b),
    }
    context = {
        "seconds": times,
        "c_over_b_per_rep": c_over_b,
        "c_over_a_per_rep": c_over_a,
        "m_over_b_per_rep": m_over_b,
        "ocrgw_parent_created_to_finished_seconds": server_side,
    }
    checks = [check("c/b", figures["c_over_b"], "<=", 1.0), check("c/a", figures["c_over_a"], "<=", 1.25)]
    print_table(
        f"{NAME}: {n} no-op children, pool {bench.concurrency}, {options.reps} alternations (medians)",
        ["side", "seconds", "ms/child", "vs c"],
        [[name, med[name], figures["per_child_ms"][name], med["c_ocrgw"] / med[name]] for name in sides],
    )
    print(
        f"  c/b = {figures['c_over_b']:.3f} (target <= 1.0)   c/a = {figures['c_over_a']:.3f} (target <= 1.25)"
        f"   m/b = {figures['m_over_b']:.3f} (no slot kept; context)"
    )
    return result(NAME, options, figures=figures, checks=checks, context=context, method=__doc__)
