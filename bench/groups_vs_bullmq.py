"""groups_vs_bullmq: G groups through ocrgw against G BullMQ flows, each side timed by its own record.

For G = 1 and 5:

(ocrgw)   G POSTs to /jobs, one after the other on one connection, each with
          N ``echo`` children (text/plain, the model whose work is a no-op),
          max_parallel = the worker pool size, on the stack that
          ``groups_at_once`` runs on (the Procfile's worker, coordinator,
          beat and gateway): the worker's pool is two processes (the
          Procfile's concurrency), each running one child at a time.
(bullmq)  G ``FlowProducer.add`` calls, one after the other, each a parent
          with N children whose processor returns at once, on a
          redis-server of BullMQ's own (the same build and options as the
          ocrgw side's), run by as many Node worker processes as ocrgw's
          pool has, each a BullMQ ``Worker`` of concurrency 1; the parents
          run on the children's queue, so a worker that finishes the last
          child may take its parent next.  ``bench/bullmq/`` holds the Node
          side: its ``package.json`` pins BullMQ and its Redis client,
          ``package-lock.json`` pins the rest, ``worker.mjs`` is a worker
          process and ``producer.mjs`` the client.

Each side is timed from its client's first call to the last parent's end as
that side records it, so that no side pays for how the bench learns of the
end: ocrgw's from the epoch time just before the first POST to the latest
parent ``finished_at`` (Redis's TIME in the finalizing script); BullMQ's
from the epoch time just before the first ``FlowProducer.add`` (the
producer's clock, to the fraction of a millisecond) to the latest parent
``finishedOn`` (the worker's clock, in milliseconds, as BullMQ writes it).
All these clocks are the one machine's.  The bench then learns each side's
end its own way (XREAD of the parents' event streams, ``common.wait_parents``;
the producer waits for the parents' ``completed`` events on a
``QueueEvents``, and reads the parents' hashes every 250 ms in case the
trimmed events stream lost one), and checks that every parent completed with its N
children.  The JSON body and the flows are built before the clock starts.
The BullMQ producer stays up between rounds (its connection and Node's
compiled code warm, as ocrgw's client connection and gateway are) and takes
each round from a Redis list.  The two sides take turns, G by G (ocrgw
bullmq, bullmq ocrgw), for 2 rounds unless ``--reps`` says otherwise
(``--quick``: one round of 20 children); the seconds are medians, and the
ratio is the median of the rounds' ocrgw / BullMQ ratios.  Target: ocrgw /
BullMQ <= 1.0 at each G.

Where the time goes, per side and G (medians of the rounds), from the times
each side recorded for every child (ocrgw's ``started_at``/``finished_at``
from Redis's TIME, BullMQ's ``processedOn``/``finishedOn`` in milliseconds)
and from the side's redis-server over the round (``bench/capacity_stats.py``:
``INFO commandstats`` and its CPU, the bench's own XREAD, BLPOP, INFO and
CONFIG left out; the idle processes' commands over the round left in):

* ``submit_to_first_start_ms``: the first call to the first child's start;
* ``slot_ms_per_child``: the span of the children (first start to last end)
  times the worker processes, divided by the children: what a child holds a
  worker process for, all told;
* ``in_job_ms_per_child``: the mean of each child's end less its start
  (ocrgw: from the script that claimed it to the one that completed it,
  through the worker's run of it; BullMQ: its processor's run, as BullMQ's
  worker times it);
* ``between_jobs_ms_per_child``: the slot less the time in the job: the
  hand-off from a child's end to the next start on that process;
* ``store_exec_us_per_child``, ``store_cpu_us_per_child``,
  ``store_commands_per_child``: the side's Redis time (each command once: a
  script's inner commands are counted in its EVALSHA), the server's CPU and
  the commands it ran, per child;
* ``outside_redis_ms_per_child``: the slot less the Redis execution time: the
  worker's own work and the round trips;
* ``worker_cpu_ms_per_child``: the CPU time (user and system, from
  ``/proc``) the side's worker processes spent over the round, per child:
  ocrgw's Celery worker with its pool processes, BullMQ's worker processes;
* ``message_starts`` (ocrgw only): children that started at no child's end
  (Redis times to the microsecond), that is through a Celery message rather
  than a kept slot;
* ``last_child_to_parent_ms``: the last child's end to the last parent's end.

node and npm are Debian's (``nodejs`` and ``npm``, which ``scripts/setup.sh
--bench`` installs); BullMQ comes from the npm registry, installed by this
benchmark (``npm ci`` into ``bench/bullmq/``) when its ``node_modules`` does
not hold the pinned versions.  It is a reference for this benchmark only,
never a dependency of ocrgw, as OCRmyPDF is for ``scan_vs_ocrmypdf``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import statistics
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import redis

from bench.capacity_stats import OCRGW_LUA, Usage, Window
from bench.common import (
    ROOT,
    STACK_DB,
    check,
    echo_payloads,
    fanout_body,
    median,
    micros,
    print_table,
    result,
    rotations,
    token,
    wait_parents,
)
from bench.processes import START_TIMEOUT, Bench, Stack, pool_children
from tests.harness import Proc, RedisServer

NAME = "groups_vs_bullmq"
#: The benchmark as a whole, full and quick (hang detectors: see bench/deadline.py).
DEADLINE = (1800.0, 600.0)
#: G groups or flows, from the first call to the last end, full and quick.
ROUND_DEADLINE = (300.0, 120.0)
#: ``npm ci`` of the Node side, when it is not installed yet.
INSTALL_DEADLINE = 600.0
#: Starting BullMQ's redis-server, workers and producer.
START_DEADLINE = 300.0
#: How many groups or flows are submitted at once.
GROUP_COUNTS = (1, 5)
#: Children of a group or flow: full and quick.
CHILDREN = (500, 20)
#: Rounds of each G when --reps is not given.
ROUNDS = 2
#: ocrgw / BullMQ, at each G.
TARGET = 1.0
SIDES = ("ocrgw", "bullmq")

NODE_DIR = ROOT / "bench" / "bullmq"
#: The queue of the flows' parents and children.
QUEUE = "flows"
#: The Redis list the producer takes its rounds from (producer.mjs).
ROUNDS_KEY = "bench:bullmq:rounds"
READY = re.compile(r"bullmq (worker|producer) ready")
_LUA_CALL = re.compile(r"(?:rcall|redis\.p?call)\(\s*['\"]([A-Za-z]+)")


def rounds_for(bench: Bench) -> int:
    options = bench.options
    return options.reps if options.quick or options.reps_given else ROUNDS


# -- the Node side ------------------------------------------------------------------------


def node_tools() -> tuple[str, str]:
    """The node and npm commands, or an error that says how to get them."""
    node, npm = shutil.which("node"), shutil.which("npm")
    missing = [name for name, path in (("node", node), ("npm", npm)) if path is None]
    if node is None or npm is None:
        raise RuntimeError(
            f"{NAME} needs Node.js to run BullMQ, its reference: {' and '.join(missing)} not found on PATH. "
            "scripts/setup.sh --bench installs Debian's nodejs and npm (apt-get install nodejs npm)."
        )
    return node, npm


def pinned_versions() -> dict[str, str]:
    """What bench/bullmq/package.json pins, by package."""
    return dict(json.loads((NODE_DIR / "package.json").read_text())["dependencies"])


def installed_version(package: str) -> str | None:
    path = NODE_DIR / "node_modules" / package / "package.json"
    try:
        return str(json.loads(path.read_text())["version"])
    except (OSError, ValueError, KeyError):
        return None


def ensure_installed(npm: str) -> None:
    """``npm ci`` into bench/bullmq/ unless its node_modules already holds every pinned version.

    ``--ignore-scripts``: no package's install script runs.  The only one,
    msgpackr-extract's, would look for its prebuilt binary (its platform's
    package ships it) or else compile one; msgpackr runs without it.
    """
    if all(installed_version(name) == version for name, version in pinned_versions().items()):
        return
    proc = subprocess.run(
        [npm, "ci", "--no-audit", "--no-fund", "--ignore-scripts"],
        cwd=NODE_DIR,
        capture_output=True,
        text=True,
        timeout=INSTALL_DEADLINE,
        stdin=subprocess.DEVNULL,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"npm ci in {NODE_DIR} exited {proc.returncode}:\n{proc.stderr[-3000:]}")
    installed = {name: installed_version(name) for name in pinned_versions()}
    if installed != pinned_versions():
        raise RuntimeError(f"npm ci in {NODE_DIR} left {installed}, not {pinned_versions()}")


def bullmq_lua_commands() -> frozenset[str]:
    """The commands BullMQ's Lua scripts call (lower case), whose time their EVALSHA already counts."""
    commands = NODE_DIR / "node_modules" / "bullmq" / "dist" / "esm" / "commands"
    return frozenset(m.lower() for path in commands.rglob("*.lua") for m in _LUA_CALL.findall(path.read_text()))


@dataclass
class BullmqSide:
    """BullMQ's redis-server, its worker processes and its producer."""

    server: RedisServer
    workers: list[Proc]
    producer: Proc
    client: redis.Redis
    node_version: str

    @classmethod
    def start(cls, bench: Bench) -> BullmqSide:
        node, npm = node_tools()
        with bench.phase("npm ci bench/bullmq (when not installed)", INSTALL_DEADLINE):
            ensure_installed(npm)
        version = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=60).stdout.strip()
        with bench.phase("start BullMQ's redis-server, workers and producer", START_DEADLINE):
            server = RedisServer(bench.group, bench.work / "bullmq-redis", name="bullmq-redis").start()
            address = [server.host, str(server.port), QUEUE]
            workers = [
                bench.group.start("bullmq-worker", [node, str(NODE_DIR / "worker.mjs"), *address], wait=False)
                for _ in range(bench.concurrency)
            ]
            producer = bench.group.start(
                "bullmq-producer", [node, str(NODE_DIR / "producer.mjs"), *address], wait=False
            )
            for proc in (*workers, producer):
                proc.wait_ready(READY, START_TIMEOUT)
        return cls(server, workers, producer, server.client(), version)

    def stop(self, bench: Bench) -> None:
        """Stopped at the benchmark's end, so that its idle processes take no core from later benchmarks."""
        self.client.close()
        for proc in (self.producer, *self.workers):
            bench.stop(proc)
        self.server.stop()


# -- one round ----------------------------------------------------------------------------


@dataclass
class Round:
    """What one side recorded of one round: epoch seconds, and its redis-server's usage."""

    started: float
    parent_ends: list[float]
    child_starts: list[float]
    child_ends: list[float]
    usage: Usage
    #: CPU seconds the side's worker processes spent over the round (user and system).
    worker_cpu_seconds: float

    @property
    def seconds(self) -> float:
        return max(self.parent_ends) - self.started


def process_cpu_seconds(pids: list[int]) -> float:
    """User and system CPU seconds of these processes so far (a process gone since counts nothing)."""
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime and stime, fields 14 and 15 of stat(5)
    return total / os.sysconf("SC_CLK_TCK")


def ocrgw_round(stack: Stack, client: redis.Redis, body: bytes, groups: int, size: int) -> Round:
    # The Celery worker's main process (it takes the messages) and its pool processes (they run the children).
    workers = [stack.worker.pid, *pool_children(stack.worker.pid)]
    cpu = process_cpu_seconds(workers)
    window = Window(client).start()
    started = time.time()
    ids = [stack.http.post_json("/jobs", body)["id"] for _ in range(groups)]
    statuses = wait_parents(client, ids)
    usage = window.stop()
    cpu = process_cpu_seconds(workers) - cpu
    parent_ends, starts, ends = [], [], []
    for parent_id in ids:
        view = stack.http.get_json(f"/jobs/{parent_id}")
        if statuses[parent_id] != "completed" or view["counts"]["completed"] != size:
            raise AssertionError(f"parent {parent_id} ended {statuses[parent_id]} with counts {view['counts']}")
        parent_ends.append(micros(view["finished_at"]) / 1e6)
        page = stack.http.get_json(f"/jobs/{parent_id}/children?limit=200")
        children = list(page["children"])
        while page["children_page"]["next"]:
            page = stack.http.get_json(page["children_page"]["next"])
            children += page["children"]
        if len(children) != size:
            raise AssertionError(f"parent {parent_id} lists {len(children)} children, not {size}")
        starts += [micros(child["started_at"]) / 1e6 for child in children]
        ends += [micros(child["finished_at"]) / 1e6 for child in children]
    return Round(started, parent_ends, starts, ends, usage, cpu)


def bullmq_round(side: BullmqSide, groups: int, size: int) -> Round:
    client = side.client
    reply_key = f"bench:bullmq:reply:{token()}"
    workers = [proc.pid for proc in side.workers]
    cpu = process_cpu_seconds(workers)
    window = Window(client).start()
    client.rpush(ROUNDS_KEY, json.dumps({"reply": reply_key, "groups": groups, "children": size}))
    reply = client.blpop([reply_key], timeout=0)  # the phase's deadline bounds the wait
    usage = window.stop()
    cpu = process_cpu_seconds(workers) - cpu
    assert reply is not None, "a blpop without a timeout returns an item"
    answer = json.loads(reply[1])
    if answer["failed"]:
        raise AssertionError(f"BullMQ parents failed: {answer['failed']}")
    parent_ends, starts, ends = [], [], []
    for parent_id in answer["parents"]:
        finished_on = client.hget(f"bull:{QUEUE}:{parent_id}", "finishedOn")
        if finished_on is None:
            raise AssertionError(f"BullMQ parent {parent_id} has no finishedOn")
        parent_ends.append(int(finished_on) / 1e3)
        child_keys = client.hkeys(f"bull:{QUEUE}:{parent_id}:processed")
        if len(child_keys) != size:
            raise AssertionError(f"BullMQ parent {parent_id} has {len(child_keys)} processed children, not {size}")
        pipe = client.pipeline(transaction=False)
        for key in child_keys:
            pipe.hmget(key, "processedOn", "finishedOn")
        for processed_on, child_finished_on in pipe.execute():
            starts.append(int(processed_on) / 1e3)
            ends.append(int(child_finished_on) / 1e3)
    return Round(answer["started_ms"] / 1e3, parent_ends, starts, ends, usage, cpu)


def message_starts(starts: list[float], ends: list[float]) -> int:
    """Children that started at no child's end: a kept slot's start is its predecessor's end, to the µs."""
    end_micros = {round(t * 1e6) for t in ends}
    return sum(1 for t in starts if round(t * 1e6) not in end_micros)


def breakdown(one: Round, workers: int, inner: frozenset[str], side: str) -> dict[str, Any]:
    """Where one round's time went, per child (see the module's docstring)."""
    n = len(one.child_starts)
    span = max(one.child_ends) - min(one.child_starts)
    slot_ms = 1e3 * span * workers / n
    in_job_ms = 1e3 * statistics.fmean(e - s for s, e in zip(one.child_starts, one.child_ends, strict=True))
    store = one.usage.per(n, inner)
    return {
        "seconds": one.seconds,
        "submit_to_first_start_ms": 1e3 * (min(one.child_starts) - one.started),
        "slot_ms_per_child": slot_ms,
        "in_job_ms_per_child": in_job_ms,
        "between_jobs_ms_per_child": slot_ms - in_job_ms,
        "store_exec_us_per_child": store["exec_us"],
        "store_cpu_us_per_child": store["cpu_us"],
        "store_commands_per_child": store["commands"],
        "worker_cpu_ms_per_child": 1e3 * one.worker_cpu_seconds / n,
        "outside_redis_ms_per_child": slot_ms - store["exec_us"] / 1e3,
        "message_starts": message_starts(one.child_starts, one.child_ends) if side == "ocrgw" else None,
        "last_child_to_parent_ms": 1e3 * (max(one.parent_ends) - max(one.child_ends)),
        "store_by_command": {name: row for name, row in list(store["by_command"].items())[:12] if row["calls"] >= 0.01},
    }


# -- the benchmark ------------------------------------------------------------------------


def run(bench: Bench) -> dict:
    options = bench.options
    n = CHILDREN[1] if options.quick else CHILDREN[0]
    rounds = rounds_for(bench)
    bullmq = BullmqSide.start(bench)
    try:
        stack = bench.stack()
        client = bench.client(STACK_DB)
        inner = {"ocrgw": OCRGW_LUA, "bullmq": bullmq_lua_commands()}
        bodies: dict[int, bytes] = {}

        def side_round(name: str, groups: int, size: int) -> Round:
            if name == "ocrgw":
                body = bodies.setdefault(size, fanout_body(echo_payloads(size), bench.concurrency))
                return ocrgw_round(stack, client, body, groups, size)
            return bullmq_round(bullmq, groups, size)

        # Warm-up: connections, imports, code paths, scripts loaded, on both sides, two at once.
        for name in SIDES:
            with bench.phase(f"warm-up: {name}", *ROUND_DEADLINE):
                side_round(name, 2, min(n, 50))

        runs: dict[int, dict[str, list[Round]]] = {g: {name: [] for name in SIDES} for g in GROUP_COUNTS}
        for groups in GROUP_COUNTS:
            for order in rotations(list(SIDES), rounds):
                for name in order:
                    with bench.phase(f"{name}, {groups} at once of {n}", *ROUND_DEADLINE):
                        runs[groups][name].append(side_round(name, groups, n))
        versions = {"node": bullmq.node_version, **{k: installed_version(k) for k in pinned_versions()}}
    finally:
        bullmq.stop(bench)
    return _result(bench, n, rounds, runs, inner, versions)


def _result(
    bench: Bench,
    n: int,
    rounds: int,
    runs: dict[int, dict[str, list[Round]]],
    inner: dict[str, frozenset[str]],
    versions: dict[str, str | None],
) -> dict:
    options = bench.options
    workers = bench.concurrency
    figures: dict[str, Any] = {
        "children": n,
        "worker_processes": workers,
        "max_parallel": workers,
        "rounds": rounds,
        "group_counts": list(runs),
        "versions": versions,
    }
    checks, rows, detail_rows = [], [], []
    per_child: dict[str, dict[str, dict[str, Any]]] = {}
    ratios: dict[str, list[float]] = {}
    for groups, sides in runs.items():
        seconds = {name: [r.seconds for r in sides[name]] for name in SIDES}
        ratios[str(groups)] = [a / b for a, b in zip(seconds["ocrgw"], seconds["bullmq"], strict=True)]
        ratio = median(ratios[str(groups)])
        figures[str(groups)] = {
            "ocrgw_seconds": median(seconds["ocrgw"]),
            "bullmq_seconds": median(seconds["bullmq"]),
            "ocrgw_over_bullmq": ratio,
            "target": TARGET,
        }
        entry = check(f"ocrgw/BullMQ, {groups} at once", ratio, "<=", TARGET)
        checks.append(entry)
        rows.append(
            [
                groups,
                figures[str(groups)]["ocrgw_seconds"],
                figures[str(groups)]["bullmq_seconds"],
                ratio,
                f"<= {TARGET:g}",
                "pass" if entry["passed"] else "MISS",
            ]
        )
        per_child[str(groups)] = {}
        for name in SIDES:
            each = [breakdown(r, workers, inner[name], name) for r in sides[name]]
            summary: dict[str, Any] = {
                key: (None if each[0][key] is None else median(b[key] for b in each))
                for key in each[0]
                if key != "store_by_command"
            }
            summary["store_by_command"] = each[-1]["store_by_command"]
            per_child[str(groups)][name] = summary
            detail_rows.append(
                [
                    name,
                    groups,
                    summary["seconds"],
                    summary["submit_to_first_start_ms"],
                    summary["slot_ms_per_child"],
                    summary["in_job_ms_per_child"],
                    summary["between_jobs_ms_per_child"],
                    summary["store_exec_us_per_child"],
                    summary["outside_redis_ms_per_child"],
                    summary["store_cpu_us_per_child"],
                    summary["store_commands_per_child"],
                    summary["worker_cpu_ms_per_child"],
                    "" if summary["message_starts"] is None else summary["message_starts"],
                    summary["last_child_to_parent_ms"],
                ]
            )
    figures["per_child"] = per_child
    differences = {
        groups: {
            key: sides["ocrgw"][key] - sides["bullmq"][key]
            for key in (
                "slot_ms_per_child",
                "in_job_ms_per_child",
                "store_exec_us_per_child",
                "outside_redis_ms_per_child",
                "store_cpu_us_per_child",
                "store_commands_per_child",
                "worker_cpu_ms_per_child",
            )
        }
        for groups, sides in per_child.items()
    }
    figures["ocrgw_minus_bullmq_per_child"] = differences
    print_table(
        f"{NAME}: G groups of {n} echo children vs G BullMQ flows of {n} no-op children, submitted at once, "
        f"{workers} worker processes a side, {rounds} round(s) (medians; each side's own record of its end)",
        ["G", "ocrgw s", "BullMQ s", "ocrgw/BullMQ", "target", "result"],
        rows,
    )
    print_table(
        f"{NAME}: where the time goes (medians; ms and µs per child; slot = children's span x processes / children)",
        [
            "side",
            "G",
            "s",
            "to 1st start ms",
            "slot ms",
            "in job ms",
            "between ms",
            "Redis µs",
            "outside Redis ms",
            "Redis CPU µs",
            "commands",
            "worker CPU ms",
            "via message",
            "last child->parent ms",
        ],
        detail_rows,
    )
    print_table(
        f"{NAME}: ocrgw less BullMQ, per child (what a cheaper path must take off; medians)",
        ["G", "slot ms", "in job ms", "Redis µs", "outside Redis ms", "Redis CPU µs", "commands", "worker CPU ms"],
        [
            [
                groups,
                diff["slot_ms_per_child"],
                diff["in_job_ms_per_child"],
                diff["store_exec_us_per_child"],
                diff["outside_redis_ms_per_child"],
                diff["store_cpu_us_per_child"],
                diff["store_commands_per_child"],
                diff["worker_cpu_ms_per_child"],
            ]
            for groups, diff in differences.items()
        ],
    )
    context = {
        "ocrgw_over_bullmq_per_round": ratios,
        "seconds": {str(g): {name: [r.seconds for r in sides[name]] for name in SIDES} for g, sides in runs.items()},
        "per_child_per_round": {
            str(g): {name: [breakdown(r, workers, inner[name], name) for r in sides[name]] for name in SIDES}
            for g, sides in runs.items()
        },
        "node_dir": str(Path(NODE_DIR).relative_to(ROOT)),
    }
    res = result(NAME, options, figures=figures, checks=checks, context=context, method=__doc__ or "")
    res["reps"] = rounds
    return res
