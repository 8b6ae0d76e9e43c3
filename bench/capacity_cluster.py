"""capacity_cluster: what a child costs the store on a 3-primary Redis Cluster, against one primary, and how evenly.

Two stores, measured taking turns in one run, each with the same 24 buckets
(``OCRGW_STORE_BUCKETS=24``), so that only the cluster differs:

* ``one``: one standalone redis-server (AOF on, fsync every second, as in
  ``bench/capacity.py``);
* ``cluster``: a local Redis Cluster of 3 primaries and no replicas
  (``tests/redis_cluster.py``, AOF on every node).  No replicas because
  the ``one`` side has none: feeding a replica costs a primary the same
  per write with or without a cluster, so it belongs to both sides or to
  neither, and three more redis-servers would take CPU from the measured
  ones on a small machine.  ``OCRGW_MIN_REPLICAS=0`` on both.

Each store has its own Celery broker (a standalone redis-server, AOF on)
and its own stack with the Procfile's command lines (worker, coordinator,
beat, gateway), kept slots for the whole side (``OCRGW_KEEP_SLOT_SECONDS=600``).

The loads, each in one window on every primary of the side (CONFIG
RESETSTAT, then INFO commandstats and the server's CPU at the end,
``bench/capacity_stats.py``), less an idle window's rates measured on the
same side just before (beat ticks, 24 buckets' sweeps, BRPOP timeouts):

* ``kept_groups``: ``GROUPS`` POSTs of groups of ``GROUP_SIZE`` echo
  children, max_parallel = the pool size, one after the other without
  waiting, then until every parent's terminal event.  Many groups, so that
  their roots, each in one bucket, spread over the primaries as a real
  load's would; a group's first children come through a wake-up message,
  the rest through kept slots.
* ``message_single``: POSTs of single echo jobs, each a root of its own and
  always through a Celery message.

The bench waits for the ends by XREAD on each bucket's primary directly
(a plain client per node, one XREAD per bucket, since a multi-key command
must stay in one slot); its XREAD, INFO, CONFIG and DBSIZE are left out.

Figures per child, per side: commands (every command the primaries ran,
those inside scripts included), execution µs (commandstats, a script's
inner commands counted once), the servers' CPU µs (sum over the primaries);
on the cluster the same per primary.  Commands the cluster clients send
that no transition does (CLUSTER SLOTS / SHARDS / NODES, COMMAND, FUNCTION
LOAD, READONLY, PING, CLIENT, HELLO) are counted apart as housekeeping and
left out of the transitions' figures.  The spread: busiest / least busy
primary by the transitions' commands, per round (median), and each
primary's share of the keys (DBSIZE) after the last round.  Ratios are the
medians of the ratios of each round's adjacent pair (cluster / one).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import redis

from bench.capacity_stats import OCRGW_LUA, Usage, Window
from bench.common import Http, check, echo_payloads, fanout_body, median, print_table, result, rotations
from bench.processes import START_TIMEOUT, Bench, wait_for_pool
from jobs.keys import Keyspace
from tests.harness import BEAT_READY, CELERY_READY, Proc, RedisServer
from tests.redis_cluster import LocalCluster

NAME = "capacity_cluster"
#: The benchmark as a whole, full and quick (hang detectors: see bench/deadline.py).
DEADLINE = (1800.0, 420.0)
#: One load on one side, from its first call to its end, full and quick.
LOAD_DEADLINE = (300.0, 90.0)
START_DEADLINE = (600.0, 300.0)

BUCKETS = 24
#: The keys the bench waits on and counts: the stacks' (OCRGW_STORE_BUCKETS=BUCKETS).
STORE_KEYS = Keyspace(BUCKETS)
PRIMARIES = 3
KEEP_SLOT_SECONDS = "600"
SIDES = ("one", "cluster")
LOADS = ("kept_groups", "message_single")
#: Between the bench's reads of the events streams.
WAIT_POLL_SECONDS = 0.05
#: What a cluster client sends besides the transitions (first word, or ``word|sub`` as commandstats names it).
HOUSEKEEPING_PREFIXES = (
    "cluster|",
    "command",
    "script|",
    "function|",
    "readonly",
    "readwrite",
    "ping",
    "client|",
    "hello",
    "auth",
)
#: The bench's own: waiting for ends, reading the figures and the keys.
BENCH_ONLY = frozenset({"dbsize"})

RATIO_LIMIT = 1.2
SPREAD_LIMIT = 1.3


def housekeeping(name: str) -> bool:
    return name.startswith(HOUSEKEEPING_PREFIXES)


def combine(usages: Iterable[Usage]) -> Usage:
    """Several servers' windows as one: calls, µs and CPU added, the longest wall time."""
    out: dict[str, list[float]] = {}
    cpu, wall = 0.0, 0.0
    for usage in usages:
        for name, (calls, usec) in usage.commands.items():
            row = out.setdefault(name, [0.0, 0.0])
            row[0] += calls
            row[1] += usec
        cpu += usage.cpu_seconds
        wall = max(wall, usage.wall_seconds)
    return Usage(out, cpu, wall)


def split(usage: Usage) -> tuple[Usage, Usage]:
    """(the transitions' commands, the housekeeping's), the CPU with the first."""
    kept = {n: r for n, r in usage.commands.items() if not housekeeping(n) and n not in BENCH_ONLY}
    other = {n: r for n, r in usage.commands.items() if housekeeping(n)}
    return Usage(kept, usage.cpu_seconds, usage.wall_seconds), Usage(other, 0.0, usage.wall_seconds)


@dataclass
class Side:
    """One store (its primaries), its broker and the stack on them."""

    name: str
    env: dict[str, str]
    primaries: list[redis.Redis]
    #: Per bucket, the plain client of the primary serving its slot.
    by_bucket: list[redis.Redis]
    broker: RedisServer
    procs: list[Proc] = field(default_factory=list)
    http: Http | None = None
    #: How many of the last load's roots each primary holds.
    last_roots: list[int] = field(default_factory=list)

    def count_roots(self, root_ids: list[str]) -> None:
        counts = [0] * len(self.primaries)
        for root in root_ids:
            counts[self.primaries.index(self.by_bucket[STORE_KEYS.bucket_of(root)])] += 1
        self.last_roots = counts

    def windows(self, fn: Callable[..., int], *args) -> tuple[int, list[Usage], Usage]:
        broker_client = self.broker.client()
        try:
            windows = [Window(c).start() for c in self.primaries]
            broker = Window(broker_client).start()
            n = fn(*args)
            usages = [w.stop() for w in windows]
            return n, usages, broker.stop()
        finally:
            broker_client.close()

    def wait_roots(self, root_ids: list[str]) -> dict[str, str]:
        """Until every root's terminal event is on its stream: one XREAD per bucket on its primary."""
        by_bucket: dict[int, dict[str, str]] = {}
        for root in root_ids:
            by_bucket.setdefault(STORE_KEYS.bucket_of(root), {})[STORE_KEYS.events(root)] = "0-0"
        root_of = {STORE_KEYS.events(r): r for r in root_ids}
        ended: dict[str, str] = {}
        while len(ended) < len(root_ids):
            for bucket, streams in list(by_bucket.items()):
                reply: Any = self.by_bucket[bucket].xread(streams, count=1000)  # type: ignore[arg-type]
                for raw, entries in reply or []:
                    stream = raw.decode()
                    root = root_of[stream]
                    for entry_id, fields_ in entries:
                        streams[stream] = entry_id
                        if fields_.get(b"operation") == b"job" and fields_.get(b"job_id") == root.encode():
                            ended[root] = fields_[b"status"].decode()
                    if root in ended:
                        del streams[stream]
                if not streams:
                    del by_bucket[bucket]
            if len(ended) < len(root_ids):
                time.sleep(WAIT_POLL_SECONDS)
        return ended

    def kept_groups(self, groups: int, size: int, max_parallel: int) -> int:
        assert self.http is not None, "the side's gateway is started"
        body = fanout_body(echo_payloads(size), max_parallel)
        parents = [self.http.post_json("/jobs", body)["id"] for _ in range(groups)]
        self.count_roots(parents)
        _expect(self.name, self.wait_roots(parents))
        return groups * size

    def message_single(self, n: int) -> int:
        assert self.http is not None, "the side's gateway is started"
        ids = []
        for payload in echo_payloads(n):
            status, body = self.http.request("POST", "/jobs?model=echo", payload, "text/plain")
            if status != 202:
                raise AssertionError(f"{self.name}: POST /jobs?model=echo answered {status}: {body[:300]!r}")
            ids.append(json.loads(body)["id"])
        self.count_roots(ids)
        _expect(self.name, self.wait_roots(ids))
        return n

    def dbsize(self) -> list[int]:
        return [int(c.dbsize()) for c in self.primaries]


def _expect(side: str, ended: dict[str, str]) -> None:
    if set(ended.values()) != {"completed"}:
        raise AssertionError(f"{side}: roots ended {sorted(set(ended.values()))}, not completed")


def start_servers(bench: Bench) -> tuple[RedisServer, LocalCluster, dict[str, Side]]:
    work = bench.work / NAME
    one = RedisServer(bench.group, work / "one", appendonly=True, name="cc-one").start()
    cluster = LocalCluster(bench.group, work / "cluster", primaries=PRIMARIES, replicas=0)
    for node in cluster.nodes:
        node.appendonly = True  # as the one primary, and as production asks
    cluster.start()
    brokers = {
        side: RedisServer(bench.group, work / f"broker-{side}", appendonly=True, name=f"cc-broker-{side}").start()
        for side in SIDES
    }
    common = {"OCRGW_PRELOAD_MODELS": "", "OCRGW_KEEP_SLOT_SECONDS": KEEP_SLOT_SECONDS}
    one_client = _plain(one.port)
    sides = {
        "one": Side(
            "one",
            {
                **common,
                "REDIS_URL": one.url_for(0),
                "CELERY_BROKER_URL": brokers["one"].url_for(0),
                "OCRGW_STORE_BUCKETS": str(BUCKETS),
            },
            [one_client],
            [one_client] * BUCKETS,
            brokers["one"],
        )
    }
    ports = [cluster.owner(STORE_KEYS.bucket_prefix(b)).primary.port for b in range(BUCKETS)]
    by_port = {port: _plain(port) for port in dict.fromkeys(ports)}  # in the order of the slots they serve
    by_bucket = [by_port[port] for port in ports]
    sides["cluster"] = Side(
        "cluster",
        {
            **common,
            **cluster.env(min_replicas=0),
            "CELERY_BROKER_URL": brokers["cluster"].url_for(0),
            "OCRGW_STORE_BUCKETS": str(BUCKETS),
        },
        list(by_port.values()),
        by_bucket,
        brokers["cluster"],
    )
    return one, cluster, sides


def _plain(port: int | None) -> redis.Redis:
    assert port is not None, "a started server has its port"
    return redis.Redis(host="127.0.0.1", port=port)


def start_stacks(bench: Bench, sides: dict[str, Side]) -> None:
    started = {}
    for i, side in enumerate(sides.values()):
        started[side.name] = (
            bench.celery_worker(i, env=side.env, name=f"cc-worker-{side.name}"),
            bench.coordinator(i, side.env),
            bench.beat(i, side.env),
            bench.web(i, side.env),
        )
    for name, (worker, coordinator, beat, web) in started.items():
        for proc in (worker, coordinator):
            proc.wait_ready(CELERY_READY, START_TIMEOUT)
        beat.wait_ready(BEAT_READY, START_TIMEOUT)
        web.wait_ready(web.healthy, START_TIMEOUT)
        wait_for_pool(worker, bench.concurrency)
        sides[name].procs = [worker, coordinator, beat, web]
        sides[name].http = Http(web.base_url)


def run(bench: Bench) -> dict:
    options = bench.options
    quick = options.quick
    groups, size = (24, 5) if quick else (720, 10)
    singles = 10 if quick else 1000
    idle_seconds = 1.0 if quick else 3.0
    pick = 0 if not quick else 1
    servers: list = []
    sides: dict[str, Side] = {}
    rounds: dict[str, dict[str, list[dict]]] = {load: {side: [] for side in SIDES} for load in LOADS}
    idles: dict[str, list[dict]] = {side: [] for side in SIDES}
    sizes = {"kept_groups": groups * size, "message_single": singles}
    load_avg: list[float] = []
    try:
        with bench.phase("start the servers, the cluster and the two stacks", *START_DEADLINE[pick:]):
            one, cluster, sides = start_servers(bench)
            servers = [one, cluster, *(s.broker for s in sides.values())]
            # What the processes send the primaries from their start to the end of the warm-up: the housekeeping.
            startup = {name: [Window(c).start() for c in side.primaries] for name, side in sides.items()}
            start_stacks(bench, sides)

        def idle_window() -> int:
            time.sleep(idle_seconds)
            return 1

        def load(side: Side, name: str, small: bool = False) -> Callable[[], int]:
            if name == "kept_groups":
                count = min(groups, 4) if small else groups
                return lambda: side.kept_groups(count, size, bench.concurrency)
            return lambda: side.message_single(min(singles, 5) if small else singles)

        for side in sides.values():
            for name in LOADS:
                with bench.phase(f"warm-up: {side.name}, {name}", *LOAD_DEADLINE[pick:]):
                    load(side, name, small=True)()
        started = {name: combine(w.stop() for w in windows) for name, windows in startup.items()}
        startup_figures = {
            name: {
                "housekeeping": {n: c for n, (c, _) in sorted(u.commands.items()) if housekeeping(n)},
                "transitions_and_reads": sum(c for n, (c, _) in u.commands.items() if not housekeeping(n)),
                "seconds": u.wall_seconds,
            }
            for name, u in started.items()
        }
        for order in rotations(list(SIDES), options.reps):
            load_avg.append(os.getloadavg()[0])
            idle: dict[str, tuple[list[Usage], Usage]] = {}
            for name in order:
                with bench.phase(f"idle window: {name}", 60):
                    _, usages, broker = sides[name].windows(idle_window)
                idle[name] = (usages, broker)
                idles[name].append(
                    {
                        "store_per_second": combine(usages).per(idle_seconds, OCRGW_LUA),
                        "broker_per_second": broker.per(idle_seconds),
                    }
                )
            for load_name in LOADS:
                for name in order:
                    side = sides[name]
                    with bench.phase(f"{name}: {load_name}, {sizes[load_name]} children", *LOAD_DEADLINE[pick:]):
                        n, usages, broker = side.windows(load(side, load_name))
                    base, base_broker = idle[name]
                    net = [u.minus(b) for u, b in zip(usages, base, strict=True)]
                    rounds[load_name][name].append(measured(n, net, broker.minus(base_broker), side.last_roots))
        keys_per_primary = {name: side.dbsize() for name, side in sides.items()}
    finally:
        for side in sides.values():
            for proc in side.procs:
                bench.stop(proc)
            if side.http is not None:
                side.http.close()
        for server in servers:
            server.stop()
    return report(bench, sizes, rounds, idles, keys_per_primary, load_avg, groups, size, startup_figures)


def measured(n: int, net: list[Usage], broker: Usage, roots: list[int]) -> dict:
    """One window's figures per child: in total and per primary, transitions and housekeeping apart."""
    parts = [split(u) for u in net]
    total, total_other = split(combine(net))
    return {
        "children": n,
        "roots_per_primary": roots,
        "seconds": max(u.wall_seconds for u in net),
        "store": total.per(n, OCRGW_LUA),
        "housekeeping": total_other.per(n),
        "broker": broker.per(n),
        "per_primary": [t.per(n, OCRGW_LUA) for t, _ in parts],
        "housekeeping_per_primary": [o.per(n) for _, o in parts],
    }


def spread(per_primary: list[dict]) -> float:
    counts = [p["commands"] for p in per_primary]
    return max(counts) / min(counts) if min(counts) > 0 else float("inf")


def report(
    bench: Bench,
    sizes: dict,
    rounds: dict,
    idles: dict,
    keys_per_primary: dict,
    load_avg: list[float],
    groups: int,
    size: int,
    startup: dict,
) -> dict:
    options = bench.options
    figures: dict = {"buckets": BUCKETS, "primaries": PRIMARIES, "replicas": 0, "groups": groups, "group_size": size}
    rows = []
    for load_name, by_side in rounds.items():
        fig: dict = {"children": sizes[load_name]}
        for side, reps in by_side.items():
            f: dict = {
                key: median(r["store"][key] for r in reps)
                for key in ("commands", "script_calls", "exec_us", "exec_us_all_rows", "cpu_us")
            }
            f["housekeeping_commands"] = median(r["housekeeping"]["commands"] for r in reps)
            f["housekeeping_by_command"] = reps[-1]["housekeeping"]["by_command"]
            f["broker_commands"] = median(r["broker"]["commands"] for r in reps)
            f["broker_cpu_us"] = median(r["broker"]["cpu_us"] for r in reps)
            f["per_primary"] = [
                {key: median(r["per_primary"][i][key] for r in reps) for key in ("commands", "exec_us", "cpu_us")}
                for i in range(len(reps[0]["per_primary"]))
            ]
            f["spread_commands"] = median(spread(r["per_primary"]) for r in reps)
            f["spread_each_round"] = [spread(r["per_primary"]) for r in reps]
            f["roots_per_primary_each_round"] = [r["roots_per_primary"] for r in reps]
            # Every round's work added up: more roots, so less of their chance spread.
            f["spread_all_rounds"] = spread(
                [
                    {"commands": sum(r["per_primary"][i]["commands"] for r in reps)}
                    for i in range(len(reps[0]["per_primary"]))
                ]
            )
            fig[side] = f
            rows.append(
                [
                    load_name,
                    side,
                    fig["children"],
                    f["commands"],
                    f["script_calls"],
                    f["exec_us"],
                    f["cpu_us"],
                    f["housekeeping_commands"],
                    " / ".join(f"{p['commands']:.1f}" for p in f["per_primary"]),
                    " / ".join(f"{p['cpu_us']:.0f}" for p in f["per_primary"]),
                    f["spread_commands"] if side == "cluster" else "",
                ]
            )
        for key in ("commands", "exec_us", "cpu_us"):
            fig[f"cluster_over_one_{key}"] = median(
                c["store"][key] / o["store"][key] if o["store"][key] else float("nan")
                for c, o in zip(by_side["cluster"], by_side["one"], strict=True)
            )
        figures[load_name] = fig
    dbsizes = keys_per_primary.get("cluster", [])
    figures["keys_per_primary"] = dbsizes
    figures["keys_share_per_primary"] = [k / sum(dbsizes) for k in dbsizes] if sum(dbsizes) else []
    figures["keys_spread"] = max(dbsizes) / min(dbsizes) if dbsizes and min(dbsizes) else float("nan")
    figures["keys_one_primary"] = keys_per_primary.get("one", [])
    figures["load_1min"] = load_avg
    figures["startup"] = startup
    checks = [
        check(
            f"{load_name}: cluster / one primary, {what} per child",
            figures[load_name][f"cluster_over_one_{key}"],
            "<=",
            RATIO_LIMIT,
        )
        for load_name in LOADS
        for key, what in (
            ("commands", "transitions' commands"),
            ("exec_us", "store µs (commandstats)"),
            ("cpu_us", "store server CPU µs"),
        )
    ]
    checks.append(
        check(
            "kept_groups: busiest / least busy primary, commands",
            figures["kept_groups"]["cluster"]["spread_commands"],
            "<=",
            SPREAD_LIMIT,
        )
    )
    print_table(
        f"{NAME}: per child, medians of {options.reps} round(s); {BUCKETS} buckets on both sides; "
        f"cluster: {PRIMARIES} primaries, no replicas",
        [
            "load",
            "side",
            "n",
            "cmds",
            "scripts",
            "µs",
            "CPU µs",
            "housekeeping cmds",
            "cmds per primary",
            "CPU µs per primary",
            "busiest/least",
        ],
        rows,
    )
    for load_name in LOADS:
        f = figures[load_name]
        print(
            f"  {load_name}: cluster / one: commands {f['cluster_over_one_commands']:.3f}, "
            f"µs {f['cluster_over_one_exec_us']:.2f}, CPU µs {f['cluster_over_one_cpu_us']:.2f}; "
            f"cluster housekeeping {f['cluster']['housekeeping_by_command']}; spread each round "
            f"{', '.join(f'{x:.2f}' for x in f['cluster']['spread_each_round'])} (all rounds "
            f"{f['cluster']['spread_all_rounds']:.2f}), roots per primary "
            f"{f['cluster']['roots_per_primary_each_round']}"
        )
    print(f"  from the start of the processes to the end of the warm-up: {startup}")
    print(
        f"  keys per primary after the last round: {dbsizes} "
        f"(shares {', '.join(f'{s:.1%}' for s in figures['keys_share_per_primary'])}); "
        f"load average (1 min) at each round's start: {', '.join(f'{x:.1f}' for x in load_avg)}"
    )
    context = {"rounds": rounds, "idle": idles}
    return result(NAME, options, figures=figures, checks=checks, context=context, method=__doc__)
