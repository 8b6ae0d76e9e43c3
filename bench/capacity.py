"""capacity: the Redis cost of a child's life on each path, and how many children one primary sustains.

Two redis-servers of its own, both with AOF (``appendonly yes``, fsync every
second, as docs/operating/production.md asks): the store's and the
Celery broker's, so that each one's figures are clean (by default the two
share one primary: add them up).  On them, three sets of processes with the
Procfile's command lines, started by this benchmark and stopped at its end:

* stack K (database 0): kept slots for the whole side
  (``OCRGW_KEEP_SLOT_SECONDS=600``), so every hand-off is a kept slot;
* stack M (database 1): kept slots off (``OCRGW_KEEP_SLOT_SECONDS=0``), every
  child through a Celery message, as fanout_vs_canvas's (m) side;
* the canvas worker (database 2, ``bench/canvas_app.py``): the reference.

Each side runs in one window on both servers (``bench/capacity_stats.py``:
CONFIG RESETSTAT, then INFO commandstats and the server's CPU at the end)
and is divided by its children; an idle window before each round gives the
rates at which the idle processes (beat ticks, sweeps, BRPOP timeouts) use
Redis, which are taken off.

* ``kept_group``: POST of a group of echo children, max_parallel = the pool
  size, on K; ends at the parent's terminal event (XREAD).
* ``message_group``: the same on M.
* ``message_single``: POSTs of single echo jobs on K (a single job has no
  slot to keep: it always comes through a message); ends when every job's
  terminal event is on its stream.
* ``reclaim_group`` / ``reclaim_single``: children whose worker dies.  The
  bench creates them with the store (max_parallel = the group's size, so
  that every child is released and claimed at once), claims each as a worker
  would (a lease of 1 s, and no heartbeat: the worker "died"), and takes
  the creation's wake-ups back unsent (they would find nothing ready: the
  dead worker holds every child).  When the
  leases run out, K's sweep reclaims the children and re-publishes them, and
  K's worker runs them (the second run).  Not counted: the gateway's part
  of the creation, and kombu's restoring of a dead worker's unacked message.
* ``chord``: a Celery chord of no-op tasks with a callback, on a Redis
  result backend (the store's server) and the broker's server.

An ocrgw side ends once its roots are terminal and no wake-up it published
is still on its way (the store's count of them, ready.lua): one that arrives
late takes whatever job of the model is ready then, so its cost is its
side's, and the next side begins with none.  Without that, a wake-up left
over by the side before took a reclaim side's job before the dead worker
claimed it.

The saturation run (``bench/capacity_load.py``) then drives the store's own
kept-slot transitions against one more redis-server from client processes.
"""

from __future__ import annotations

import time

from bench.capacity_load import CORE_SHARE, saturate
from bench.capacity_sides import Servers, Sides, start_processes
from bench.capacity_stats import CELERY_LUA, OCRGW_LUA
from bench.common import check, median, print_table, result, rotations
from bench.processes import Bench

NAME = "capacity"
#: The benchmark as a whole, full and quick (hang detectors: see bench/deadline.py).
DEADLINE = (1800.0, 600.0)
#: One side, from its first call to its end, full and quick.
SIDE_DEADLINE = (300.0, 120.0)

#: What a kept-slot child may cost the servers in commands, all told.
MAX_KEPT_COMMANDS = 25

SIDES = ("kept_group", "message_group", "message_single", "reclaim_group", "reclaim_single", "chord")


def run(bench: Bench) -> dict:
    options = bench.options
    sizes = (
        {
            "kept_group": 20,
            "message_group": 20,
            "message_single": 10,
            "reclaim_group": 10,
            "reclaim_single": 5,
            "chord": 20,
        }
        if options.quick
        else {
            "kept_group": 1000,
            "message_group": 1000,
            "message_single": 200,
            "reclaim_group": 200,
            "reclaim_single": 100,
            "chord": 1000,
        }
    )
    idle_seconds = 1.0 if options.quick else 3.0

    def idle_window() -> int:
        time.sleep(idle_seconds)
        return 1

    servers = Servers(bench)
    procs, kept, message = start_processes(bench, servers)
    sides = Sides(bench, servers, kept, message)
    rounds: dict[str, list[dict]] = {name: [] for name in SIDES}
    idles = []
    try:
        for name in SIDES:
            with bench.phase(f"warm-up: {name}", *SIDE_DEADLINE):
                getattr(sides, name)(min(sizes[name], 10))
                sides.after()
        for order in rotations(list(SIDES), options.reps):
            with bench.phase("idle window", 60):
                _, idle_store, idle_broker = servers.measure(idle_window)
            idles.append(
                {
                    "store_per_second": idle_store.per(idle_store.wall_seconds, OCRGW_LUA),
                    "broker_per_second": idle_broker.per(idle_broker.wall_seconds),
                }
            )
            for name in order:
                with bench.phase(f"{name}, {sizes[name]} children", *SIDE_DEADLINE):
                    n, store, broker = servers.measure(getattr(sides, name), sizes[name])
                sides.after()
                store, broker = store.minus(idle_store), broker.minus(idle_broker)
                inner = CELERY_LUA if name == "chord" else OCRGW_LUA
                rounds[name].append(
                    {"store": store.per(n, inner), "broker": broker.per(n), "seconds": store.wall_seconds}
                )
    finally:
        for proc in procs:
            bench.stop(proc)
    saturation = saturate(bench, sides=rounds)
    return report(bench, sizes, rounds, idles, saturation)


def report(bench: Bench, sizes: dict, rounds: dict, idles: list, saturation: dict) -> dict:
    options = bench.options
    per_child: dict[str, dict] = {}
    for name, reps in rounds.items():
        fig: dict = {}
        for server in ("store", "broker"):
            for key in ("commands", "script_calls", "exec_us", "cpu_us"):
                fig[f"{server}_{key}"] = median(r[server][key] for r in reps)
        fig["children"] = sizes[name]
        for key in ("commands", "exec_us", "cpu_us"):
            fig[f"total_{key}"] = fig[f"store_{key}"] + fig[f"broker_{key}"]
        # Children per second at CORE_SHARE of a core: from commandstats µs, and from the server's CPU µs.
        for basis in ("exec_us", "cpu_us"):
            suffix = "" if basis == "exec_us" else "_cpu"
            for scope, us in (("store_only", fig[f"store_{basis}"]), ("shared_primary", fig[f"total_{basis}"])):
                fig[f"ceiling{suffix}_{scope}"] = CORE_SHARE * 1e6 / us if us else None
        per_child[name] = fig
    kept, ref = per_child["kept_group"], per_child["chord"]
    figures = {
        "per_child": per_child,
        "core_share": CORE_SHARE,
        "kept_over_chord_exec_us": kept["total_exec_us"] / ref["total_exec_us"],
        "kept_over_chord_commands": kept["total_commands"] / ref["total_commands"],
        "kept_over_chord_cpu_us": kept["total_cpu_us"] / ref["total_cpu_us"],
        "saturation": saturation["figures"],
    }
    checks = [
        check("kept-slot group / chord, µs per child (commandstats)", figures["kept_over_chord_exec_us"], "<=", 1.0),
        check("kept-slot group / chord, server CPU µs per child", figures["kept_over_chord_cpu_us"], "<=", 0.6),
        # Every command the servers ran for a kept child: its script calls and the commands inside them.
        check("kept-slot group, commands per child", kept["total_commands"], "<=", MAX_KEPT_COMMANDS),
    ]
    print_table(
        f"{NAME}: per child, medians of {options.reps} round(s); store | broker on its own redis-server",
        [
            "path",
            "n",
            "store cmds",
            "scripts",
            "store µs",
            "store CPU µs",
            "broker cmds",
            "broker µs",
            "broker CPU µs",
            "ceiling/s store",
            "ceiling/s shared",
            "CPU: store",
            "CPU: shared",
        ],
        [
            [
                name,
                f["children"],
                f["store_commands"],
                f["store_script_calls"],
                f["store_exec_us"],
                f["store_cpu_us"],
                f["broker_commands"],
                f["broker_exec_us"],
                f["broker_cpu_us"],
                f["ceiling_store_only"],
                f["ceiling_shared_primary"],
                f["ceiling_cpu_store_only"],
                f["ceiling_cpu_shared_primary"],
            ]
            for name, f in per_child.items()
        ],
    )
    sat = saturation["figures"]
    print(
        f"  ceilings: children/s at {CORE_SHARE:.0%} of a core, from commandstats µs per child, then from the "
        f"server's CPU µs (store only, and store + broker on one primary)"
    )
    print(
        f"  saturation: {sat['clients']} clients, {sat['children_per_second']:,.0f} children/s at "
        f"{sat['server_cpu_share']:.0%} of a core; predicted at that share from the kept side "
        f"{sat['predicted_from_side']:,.0f}/s, from its own commandstats {sat['predicted_from_own']:,.0f}/s; "
        f"from CPU: {sat['ceiling_from_cpu']:,.0f}/s at {CORE_SHARE:.0%}"
    )
    busiest = sat["busiest_run"]
    print(
        f"  busiest saturation run: {busiest['children_per_second']:,.0f} children/s at "
        f"{busiest['server_cpu_share']:.0%} of a core, {busiest['measured_over_predicted_own']:.2f} of its prediction"
    )
    context = {"rounds": rounds, "idle": idles, "saturation": saturation["context"]}
    return result(NAME, options, figures=figures, checks=checks, context=context, method=__doc__)
