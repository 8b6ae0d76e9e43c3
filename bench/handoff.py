"""handoff: how long a slot freed by a finishing child stays empty.

One group of N ``echo`` children with max_parallel=1, and one with
max_parallel=4, taking turns; the sweep interval is left at its default, so
any gap the sweep had to close would show as about a second.  From GET
/jobs/{parent}'s children (``started_at``/``finished_at``, both Redis times)
each finish is paired with the next start after it (in time order, each start
used once): the gap is that start minus that finish.  With max_parallel=1
that is child i+1's start minus child i's finish.

With max_parallel above the pool size, the child a completion releases waits
behind children already queued, so the gap to *that* child measures queueing,
not handoff; it is reported as ``released_gap`` context (the j-th finisher
releases child ``max_parallel + j``, as releases go in index order).
"""

from __future__ import annotations

from bench.common import (Bench, STACK_DB, check, echo_payloads, fanout_body, median, micros,
                          percentile, print_table, result, rotations, wait_parent)

NAME = "handoff"
CAPS = (1, 4)


def gaps_next_start(children: list[dict]) -> list[float]:
    """ms from each finish to the first not yet paired start at or after it."""
    events = sorted(
        [(micros(c["finished_at"]), 1) for c in children] + [(micros(c["started_at"]), 0) for c in children]
    )
    # Starts sort before finishes at the same microsecond: a start can never
    # precede its own finish, and a tie is a zero gap either way.
    gaps, waiting = [], []
    for t, kind in events:
        if kind == 1:
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


def run(bench: Bench) -> dict:
    options = bench.options
    n = 20 if options.quick else 300
    stack = bench.stack()
    client = bench.client(STACK_DB)

    def one(cap: int) -> list[dict]:
        parent = stack.http.post_json("/jobs", fanout_body(echo_payloads(n), cap))
        status = wait_parent(client, parent["id"])
        view = stack.http.get_json(f"/jobs/{parent['id']}")
        if status != "completed":
            raise AssertionError(f"parent {parent['id']} ended {status}")
        return view["children"]

    one(1)  # warm-up
    runs: dict[int, list[dict]] = {cap: [] for cap in CAPS}
    for order in rotations(list(CAPS), options.reps):
        for cap in order:
            children = one(cap)
            gaps = gaps_next_start(children)
            released = gaps_released(children, cap)
            runs[cap].append({
                "p50_ms": percentile(gaps, 50), "p99_ms": percentile(gaps, 99), "max_ms": max(gaps),
                "released_p50_ms": percentile(released, 50), "released_p99_ms": percentile(released, 99),
                "gaps": len(gaps),
            })

    figures: dict = {"children": n}
    checks = []
    rows = []
    for cap in CAPS:
        reps = runs[cap]
        fig = {key: median(r[key] for r in reps) for key in
               ("p50_ms", "p99_ms", "max_ms", "released_p50_ms", "released_p99_ms")}
        figures[f"max_parallel_{cap}"] = fig
        checks.append(check(f"p99 gap, max_parallel={cap} (ms)", fig["p99_ms"], "<=", 20))
        rows.append([cap, fig["p50_ms"], fig["p99_ms"], fig["max_ms"], fig["released_p50_ms"],
                     fig["released_p99_ms"]])
    print_table(
        f"{NAME}: {n} echo children, pool {bench.concurrency}, default sweep interval, "
        f"{options.reps} alternations (medians, ms)",
        ["max_parallel", "gap p50", "gap p99", "gap max", "released p50", "released p99"], rows)
    return result(NAME, options, figures=figures, checks=checks,
                  context={"per_rep": {str(cap): runs[cap] for cap in CAPS}}, method=__doc__)
