"""groups_at_once: G groups submitted at once through ocrgw against G Celery chords at once.

For each G in (1, 2, 5, 10):

(ocrgw)  G POSTs to /jobs, one after the other on one connection, each with N
         ``echo`` children (text/plain), max_parallel = the worker
         concurrency, as ``fanout_vs_canvas`` posts its one group.  Done when
         every parent's terminal audit event is on its events stream (one
         XREAD over the streams of the parents not yet ended, see
         ``common.wait_parents``).
(chords) G ``chord`` s of N ``bench.noop`` tasks, each with its own
         ``bench.chord_done`` callback, on a Redis result backend, sent one
         after the other by one client.  Done when every callback has RPUSHed
         its marker (BLPOP over the markers not yet seen).

Each side is timed from the client's first call (the first POST, the first
apply_async) to the moment the bench sees the last group's or chord's end.
The JSON body and the chords' signatures are built before the clock starts.
The chords' client subscribes to no task's result channel
(``canvas_app.chord_client``), as in ``fanout_vs_canvas``.  Both sides run on
the same redis-server and on Celery workers of the same pool size and kind
(ocrgw's worker and the canvas worker, the Procfile's command line); the idle
one waits on its queues meanwhile.  The two sides take turns, G by G
(ocrgw chords, chords ocrgw, ...), for 2 rounds unless ``--reps`` says
otherwise (``--quick``: one round of tiny groups); per G the seconds are
medians and the ratio is the median of the rounds' ocrgw / chords ratios.
As context, each ocrgw round also records the span from the first parent's
``created_at`` to the last one's ``finished_at`` (Redis's times).

What it shows: a finishing worker takes its model's next ready job itself,
whichever group it belongs to, with no message, so G groups at once cost
what one does (before, a kept slot gave way to any queued work, and with
two groups or more nearly every hand-off went through a message).  Target: ocrgw / chords <= 0.25 for
each G (1, 2, 5 and 10).
"""

from __future__ import annotations

import gc
from typing import Any

from celery import chord

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
    wait_parents,
)
from bench.processes import Bench
from jobs.config import Settings

NAME = "groups_at_once"
#: The benchmark as a whole, full and quick (hang detectors: see bench/deadline.py).
DEADLINE = (2400.0, 600.0)
#: G groups or chords, from the first call to the last end, full and quick.
ROUND_DEADLINE = (600.0, 120.0)
#: How many groups or chords are submitted at once.
GROUP_COUNTS = (1, 2, 5, 10)
#: Children of a group, tasks of a chord header: full and quick.
CHILDREN = (500, 20)
#: Rounds of each G when --reps is not given (a full round runs 18 x N children a side).
ROUNDS = 2
#: The target, ocrgw / chords, for each G: several groups at once must cost no more per group than one.
TARGET = 0.25
SIDES = ("ocrgw", "chords")


def target_for(groups: int) -> float:
    return TARGET


def rounds_for(bench: Bench) -> int:
    options = bench.options
    return options.reps if options.quick or options.reps_given else ROUNDS


def run(bench: Bench) -> dict:
    options = bench.options
    n = CHILDREN[1] if options.quick else CHILDREN[0]
    rounds = rounds_for(bench)
    stack = bench.stack()
    client = bench.client(STACK_DB)
    url = bench.url(STACK_DB)
    celery = canvas_app.chord_client(Settings(redis_url=url, broker_url=url))
    max_parallel = bench.concurrency
    body = fanout_body(echo_payloads(n), max_parallel)
    # Context: from the first parent's creation to the last one's end, in
    # Redis's times, per ocrgw round: what the client's clock saw, less the
    # first POST's way in and the last end's way out.
    server_spans: dict[int, list[float]] = {g: [] for g in GROUP_COUNTS}

    def ocrgw_groups(groups: int, size: int) -> float:
        one_body = body if size == n else fanout_body(echo_payloads(size), max_parallel)

        def go():
            ids = [stack.http.post_json("/jobs", one_body)["id"] for _ in range(groups)]
            return ids, wait_parents(client, ids)

        seconds, (ids, statuses) = timed(go)
        created, finished = [], []
        for parent_id in ids:
            view = stack.http.get_json(f"/jobs/{parent_id}")
            if statuses[parent_id] != "completed" or view["counts"]["completed"] != size:
                raise AssertionError(f"parent {parent_id} ended {statuses[parent_id]} with counts {view['counts']}")
            created.append(micros(view["created_at"]))
            finished.append(micros(view["finished_at"]))
        server_spans[groups].append((max(finished) - min(created)) / 1e6)
        return seconds

    def canvas_chords(groups: int, size: int) -> float:
        markers = [f"bench:chord:{token()}" for _ in range(groups)]
        sigs = [
            chord(
                [celery.signature(canvas_app.NOOP_TASK, queue=canvas_app.QUEUE) for _ in range(size)],
                celery.signature(canvas_app.CHORD_DONE_TASK, args=[marker], queue=canvas_app.QUEUE),
            )
            for marker in markers
        ]

        def go():
            handles = [sig.apply_async() for sig in sigs]
            waiting, got = set(markers), {}
            while waiting:
                reply = client.blpop(sorted(waiting), timeout=0)  # the phase's deadline bounds the wait
                assert reply is not None, "a blpop without a timeout returns an item"
                marker = reply[0].decode() if isinstance(reply[0], bytes) else reply[0]
                got[marker] = int(reply[1])
                waiting.discard(marker)
            return got, handles

        seconds, (got, handles) = timed(go)
        del handles  # their result handles unsubscribe now, outside the clock
        gc.collect()
        short = {marker: count for marker, count in got.items() if count != size}
        if short:
            raise AssertionError(f"chord callbacks saw {sorted(short.values())} results, not {size}")
        return seconds

    sides = {"ocrgw": ocrgw_groups, "chords": canvas_chords}
    # Warm-up: connections, imports, code paths, on both sides, two at once.
    for name, fn in sides.items():
        with bench.phase(f"warm-up: {name}", *ROUND_DEADLINE):
            fn(2, min(n, 50))
    for spans in server_spans.values():
        spans.clear()

    times: dict[int, dict[str, list[float]]] = {g: {name: [] for name in sides} for g in GROUP_COUNTS}
    for groups in GROUP_COUNTS:
        for order in rotations(list(sides), rounds):
            for name in order:
                with bench.phase(f"{name}, {groups} at once of {n}", *ROUND_DEADLINE):
                    times[groups][name].append(sides[name](groups, n))
    celery.close()
    return _result(bench, n, rounds, times, server_spans)


def _result(
    bench: Bench,
    n: int,
    rounds: int,
    times: dict[int, dict[str, list[float]]],
    server_spans: dict[int, list[float]],
) -> dict:
    options = bench.options
    per_g: dict[str, Any] = {}
    ratios: dict[str, list[float]] = {}
    checks = []
    for groups, sides in times.items():
        ratios[str(groups)] = [a / b for a, b in zip(sides["ocrgw"], sides["chords"], strict=True)]
        ratio = median(ratios[str(groups)])
        per_g[str(groups)] = {
            "ocrgw_seconds": median(sides["ocrgw"]),
            "chords_seconds": median(sides["chords"]),
            "ocrgw_over_chords": ratio,
            "target": target_for(groups),
        }
        checks.append(check(f"ocrgw/chords, {groups} at once", ratio, "<=", target_for(groups)))
    figures: dict[str, Any] = {
        "children": n,
        "max_parallel": bench.concurrency,
        "rounds": rounds,
        "group_counts": list(times),
        **per_g,
    }
    context = {
        "seconds": {str(g): sides for g, sides in times.items()},
        "ocrgw_over_chords_per_round": ratios,
        "ocrgw_first_created_to_last_finished_seconds": {str(g): spans for g, spans in server_spans.items()},
    }
    print_table(
        f"{NAME}: G groups of {n} echo children vs G chords of {n} no-op tasks, submitted at once, "
        f"pool {bench.concurrency}, {rounds} round(s) (medians)",
        ["G", "ocrgw s", "chords s", "ocrgw/chords", "target", "result"],
        [
            [
                groups,
                fig["ocrgw_seconds"],
                fig["chords_seconds"],
                fig["ocrgw_over_chords"],
                f"<= {fig['target']:g}",
                "pass" if entry["passed"] else "MISS",
            ]
            for (groups, fig), entry in zip(((g, per_g[str(g)]) for g in times), checks, strict=True)
        ],
    )
    res = result(NAME, options, figures=figures, checks=checks, context=context, method=__doc__)
    res["reps"] = rounds
    return res
