"""handoff: how long a slot freed by a finishing child stays empty.

One group of N ``echo`` children with max_parallel=1, and one with
max_parallel=4, taking turns; the sweep interval is left at its default, so
any gap the sweep had to close would show as about a second.  From GET
/jobs/{parent}'s children (``started_at``/``finished_at``, both Redis times)
each finish is paired with the next start after it (in time order, each start
used once): the gap is that start minus that finish.  With max_parallel=1
that is child i+1's start minus child i's finish.

Both hand-off paths are measured, taking turns: ``kept``, the default stack,
whose finishing worker claims the next child in its completing transition
and runs it (the gap is zero: one script's TIME is both the finish and the
next start; it is a message's when the kept slot's time budget runs out); and
``message``, a stack with ``OCRGW_KEEP_SLOT_SECONDS=0``, where every freed
slot goes to a child through a new Celery message.  Both must meet the target.

With max_parallel above the pool size, the child a completion releases waits
behind children already queued, so the gap to *that* child measures queueing,
not handoff; it is reported as ``released_gap`` context (the j-th finisher
releases child ``max_parallel + j``, as releases go in index order).
"""

from __future__ import annotations

from bench.common import (
    check,
    echo_payloads,
    fanout_body,
    median,
    micros,
    percentile,
    print_table,
    result,
    rotations,
    wait_parent,
)
from bench.processes import Bench

NAME = "handoff"
#: The benchmark as a whole, and one group, full and quick (hang detectors: see bench/deadline.py).
DEADLINE = (1800.0, 600.0)
GROUP_DEADLINE = (300.0, 120.0)
CAPS = (1, 4)


def gaps_next_start(children: list[dict]) -> list[float]:
    """ms from each finish to the first not yet paired start at or after it."""
    events = sorted(
        [(micros(c["finished_at"]), 0) for c in children] + [(micros(c["started_at"]), 1) for c in children]
    )
    # Finishes sort before starts at the same microsecond: a child run in a
    # kept slot starts at the very TIME its predecessor finished, and that
    # tie is a zero gap.  (A child's own start and finish come from two
    # scripts, so they never tie.)
    gaps, waiting = [], []
    for t, kind in events:
        if kind == 0:
            waiting.append(t)
        elif waiting:
            gaps.append((t - waiting.pop(0)) / 1000)
    return gaps


def gaps_released(children: list[dict], cap: int) -> list[float]:
    """ms from the j-th finish to the start of the child it released (index cap + j)."""
    by_index = sorted(children, key=lambda c: c["index"])
    finishes = sorted(micros(c["finished_at"]) for c in children)
    out = []
    for j, finished in enumerate(finishes):
        k = cap + j
        if k >= len(by_index):
            break
        out.append((micros(by_index[k]["started_at"]) - finished) / 1000)
    return out


PATHS = ("kept", "message")


def run(bench: Bench) -> dict:
    options = bench.options
    n = 20 if options.quick else 300
    stacks = {"kept": bench.stack(), "message": bench.message_path_stack()}
    clients = {path: stack.redis() for path, stack in stacks.items()}

    def one(path: str, cap: int) -> list[dict]:
        stack = stacks[path]
        parent = stack.http.post_json("/jobs", fanout_body(echo_payloads(n), cap))
        status = wait_parent(clients[path], parent["id"])
        if status != "completed":
            raise AssertionError(f"parent {parent['id']} ended {status}")
        page = stack.http.get_json(f"/jobs/{parent['id']}/children?limit=200")
        children = page["children"]
        while page["children_page"]["next"]:
            page = stack.http.get_json(page["children_page"]["next"])
            children += page["children"]
        return children

    cases = [(path, cap) for path in PATHS for cap in CAPS]
    for path in PATHS:
        with bench.phase(f"warm-up: {path}", *GROUP_DEADLINE):
            one(path, 1)
    runs: dict[tuple, list[dict]] = {case: [] for case in cases}
    for order in rotations(cases, options.reps):
        for case in order:
            with bench.phase(f"{case[0]}, max_parallel {case[1]}, {n} children", *GROUP_DEADLINE):
                children = one(*case)
            gaps = gaps_next_start(children)
            released = gaps_released(children, case[1])
            runs[case].append(
                {
                    "p50_ms": percentile(gaps, 50),
                    "p99_ms": percentile(gaps, 99),
                    "max_ms": max(gaps),
                    "released_p50_ms": percentile(released, 50),
                    "released_p99_ms": percentile(released, 99),
                    "gaps": len(gaps),
                }
            )

    bench.stop_message_path_stack()
    figures: dict = {"children": n}
    checks = []
    rows = []
    for path, cap in cases:
        reps = runs[(path, cap)]
        fig = {
            key: median(r[key] for r in reps)
            for key in ("p50_ms", "p99_ms", "max_ms", "released_p50_ms", "released_p99_ms")
        }
        figures[f"{path}_max_parallel_{cap}"] = fig
        checks.append(check(f"p99 gap, {path}, max_parallel={cap} (ms)", fig["p99_ms"], "<=", 20))
        rows.append(
            [path, cap, fig["p50_ms"], fig["p99_ms"], fig["max_ms"], fig["released_p50_ms"], fig["released_p99_ms"]]
        )
    print_table(
        f"{NAME}: {n} echo children, pool {bench.concurrency}, default sweep interval, "
        f"{options.reps} alternations (medians, ms)",
        ["slot", "max_parallel", "gap p50", "gap p99", "gap max", "released p50", "released p99"],
        rows,
    )
    return result(
        NAME,
        options,
        figures=figures,
        checks=checks,
        context={"per_rep": {f"{path} {cap}": runs[(path, cap)] for path, cap in cases}},
        method=__doc__,
    )
