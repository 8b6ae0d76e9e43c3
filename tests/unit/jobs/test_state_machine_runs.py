"""The transitions, run, move jobs only along the edges of jobs/state_machine.py, and every row is made.

Each script runs here with Redis's ``redis`` shadowed by a watcher (``WATCH``, put before the script's
generated preamble): every hash write of the status field, whatever the command that carries it, is
recorded with the transition's name, the job's kind and its status before and after, in a list the test
reads.  A write of the status field the watcher cannot read (any command other than HSET, HMSET or
HSETNX naming it, or a command that writes a key wholesale) is recorded as a move to nowhere, which no
edge holds.  The scenarios then drive every kind of job through every transition that moves jobs.

The static half, which reads the scripts themselves, is tests/unit/jobs/test_state_machine.py.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import fakeredis
import pytest

from jobs import controls
from jobs.contract import Field, JobKind, JobStatus, count_field
from jobs.records import GroupRules
from jobs.state_machine import EDGES, NEW, Edge
from jobs.store import JobStore
from jobs.transitions.spec import Transition
from tests.keyspace import keys
from tests.unit.conftest import PINNED_BUCKET
from tests.unit.jobs.conftest import SETTINGS, Kit

MOVES_KEY = "state-machine:moves"
UNREADABLE = "?"  # the target of a status write the watcher cannot read

WATCH = """
-- The global redis, looked up at call time (the local below is not in scope here): a function library's top
-- level has no redis.call (nor setmetatable), only register_function.
local function real_call(...) return redis.call(...) end
local function real_pcall(...) return redis.pcall(...) end
local function watch(command, key, ...)
  local c = string.upper(command)
  local args = {...}
  if c == 'HSET' or c == 'HMSET' or c == 'HSETNX' then
    for i = 1, #args, 2 do
      if args[i] == '%(status)s' then
        local before = real_call('HMGET', key, '%(status)s', '%(kind)s')
        local kind = before[2]
        for j = 1, #args, 2 do if not kind and args[j] == '%(kind)s' then kind = args[j + 1] end end
        real_call('RPUSH', '%(moves)s', table.concat({'%(name)s', tostring(kind), before[1] or '', args[i + 1]}, '|'))
      end
    end
  elseif c == 'RENAME' or c == 'RENAMENX' or c == 'COPY' or c == 'RESTORE' or c == 'MOVE'
      or ((c == 'HINCRBY' or c == 'HINCRBYFLOAT') and args[1] == '%(status)s') then
    real_call('RPUSH', '%(moves)s', table.concat({'%(name)s', c, '', '%(unreadable)s'}, '|'))
  end
end
local redis = {
  call = function(command, ...) watch(command, ...) return real_call(command, ...) end,
  pcall = function(command, ...) watch(command, ...) return real_pcall(command, ...) end,
  register_function = redis.register_function,
}
"""


@pytest.fixture
def watched(monkeypatch) -> Callable[..., Kit]:
    """Builds kits whose scripts record every status write."""
    real_source = Transition.source

    def source(transition: Transition) -> str:
        names = {
            "status": Field.STATUS.value,
            "kind": Field.KIND.value,
            "moves": MOVES_KEY,
            "name": transition.name,
            "unreadable": UNREADABLE,
        }
        return _with_watch(names, real_source(transition))

    monkeypatch.setattr(Transition, "source", source)

    def build(**overrides) -> Kit:
        return Kit(JobStore(fakeredis.FakeRedis(server=fakeredis.FakeServer()), replace(SETTINGS, **overrides)))

    return build


def recorded(kit: Kit) -> list[tuple[str, str, str, str]]:
    """Every status write, as (transition, kind, from, to); from '' for a job the write created."""
    writes = []
    for entry in kit.r.lrange(MOVES_KEY, 0, -1):
        transition, kind, source, target = entry.decode().split("|")
        writes.append((transition, kind, source, target))
    return writes


def as_edge(transition: str, kind: str, source: str, target: str) -> Edge | None:
    """The edge a recorded write is, or None when it is no edge at all (a status or kind not declared)."""
    try:
        return Edge(transition, JobKind(kind), JobStatus(source) if source else NEW, JobStatus(target))
    except ValueError:
        return None


# -- scenarios: each drives jobs of a kit through transitions -------------------------------------------


def singles(kit: Kit) -> None:
    store = kit.store
    done = store.create_single(kit.doc()).job_id
    store.complete(done, kit.claim(done).attempt, {"text": ""})
    failed = store.create_single(kit.doc()).job_id
    store.fail(failed, kit.claim(failed).attempt, "echo_failed", "asked")
    unstarted = store.create_single(kit.doc()).job_id
    controls.cancel(store, unstarted)
    running = store.create_single(kit.doc()).job_id
    attempt = kit.claim(running).attempt
    controls.cancel(store, running)  # asked to stop: no move yet
    store.end_cancelled(running, attempt)
    retried = store.create_single(kit.doc()).job_id
    store.retry(retried, kit.claim(retried).attempt, 0.0, "echo_transient", "again")
    store.complete(retried, kit.claim(retried).attempt, {"text": ""})
    parent = store.create_group(kit.docs(1), GroupRules()).job_id
    child = kit.child_ids(parent, 1)[0]
    store.retry(child, kit.claim(child).attempt, 0.0, "echo_transient", "again")


def reclaims(kit: Kit) -> None:
    """max_attempts 2: a lease that runs out requeues the first attempt and fails the second."""
    store = kit.store
    lost = store.create_single(kit.doc()).job_id
    for _ in range(2):
        kit.claim(lost)
        kit.expire_lease(lost)
        store.reclaim([lost])
    asked = store.create_single(kit.doc()).job_id
    kit.claim(asked)
    controls.cancel(store, asked)
    kit.expire_lease(asked)
    store.reclaim([asked])
    # A group of 2, one at a time: its first child's lease runs out twice; the second child is released.
    parent = store.create_group(kit.docs(2), GroupRules(max_parallel=1, tolerated_failures=1)).job_id
    first, second = kit.child_ids(parent, 2)
    for _ in range(2):
        kit.claim(first)
        kit.expire_lease(first)
        store.reclaim([first])
    # The second child ends its group the same way.
    for _ in range(2):
        kit.claim(second)
        kit.expire_lease(second)
        store.reclaim([second])
    assert kit.status(parent) == JobStatus.FAILED.value
    # A fail-fast group: its first child's last lost lease cancels the held one.
    parent = store.create_group(kit.docs(2), GroupRules(max_parallel=1, fail_fast=True)).job_id
    first, _ = kit.child_ids(parent, 2)
    for _ in range(2):
        kit.claim(first)
        kit.expire_lease(first)
        store.reclaim([first])
    assert kit.status(parent) == JobStatus.FAILED.value
    # A cancelled group whose running child's worker died: the child, then the group, end cancelled.
    parent = store.create_group(kit.docs(1), GroupRules()).job_id
    child = kit.child_ids(parent, 1)[0]
    kit.claim(child)
    controls.cancel(store, parent)
    kit.expire_lease(child)
    store.reclaim([child])
    assert kit.status(parent) == JobStatus.CANCELLED.value
    # A group that tolerates a failure completes when its only child's last lease runs out.
    parent = store.create_group(kit.docs(1), GroupRules(tolerated_failures=1)).job_id
    child = kit.child_ids(parent, 1)[0]
    for _ in range(2):
        kit.claim(child)
        kit.expire_lease(child)
        store.reclaim([child])
    assert kit.status(parent) == JobStatus.COMPLETED.value


def groups(kit: Kit) -> None:
    store = kit.store
    parent = store.create_group(kit.docs(3), GroupRules(max_parallel=1)).job_id
    ids = kit.child_ids(parent, 3)
    store.complete(ids[0], kit.claim(ids[0]).attempt, {"text": ""})  # releases ids[1]
    # The worker keeps its slot: the next ready child is claimed in the same step.
    completion = store.complete(ids[1], kit.claim(ids[1]).attempt, {"text": ""}, take_next="echo")
    assert completion.next_claim is not None and completion.next_claim.job_id == ids[2]
    store.complete(ids[2], completion.next_claim.attempt, {"text": ""})
    assert kit.status(parent) == JobStatus.COMPLETED.value
    # A kept slot may start another group: its parent starts with it.
    single = store.create_single(kit.doc()).job_id
    attempt = kit.claim(single).attempt
    other = store.create_group(kit.docs(1), GroupRules(max_parallel=1)).job_id
    taken = store.complete(single, attempt, {"text": ""}, take_next="echo").next_claim
    assert taken is not None and taken.job_id == kit.child_ids(other, 1)[0]
    # A fail-fast group's failing child cancels its held siblings and fails the group.
    parent = store.create_group(kit.docs(3), GroupRules(max_parallel=1, fail_fast=True)).job_id
    first = kit.child_ids(parent, 3)[0]
    store.fail(first, kit.claim(first).attempt, "echo_failed", "asked")
    assert kit.status(parent) == JobStatus.FAILED.value


def kept_slot(kit: Kit) -> None:
    """A finishing worker keeps its slot: it takes a single job as well as a child."""
    store = kit.store
    single = store.create_single(kit.doc()).job_id
    attempt = kit.claim(single).attempt
    following = store.create_single(kit.doc()).job_id
    taken = store.complete(single, attempt, {"text": ""}, take_next="echo").next_claim
    assert taken is not None and taken.job_id == following


def pulled(kit: Kit) -> None:
    """claim_next: a wake-up's worker takes its model's next ready job, a single one or a child."""
    store = kit.store
    for created in (store.create_single(kit.doc()), store.create_group(kit.docs(1), GroupRules(max_parallel=1))):
        claim, _ = store.claim_next("echo", "batch", PINNED_BUCKET)
        assert claim is not None, created


def cancels(kit: Kit) -> None:
    store = kit.store
    # One child at a time, cancelled one by one: a held child, the queued one (its slot goes to the last),
    # then the last, which ends the group (failed: no failure is tolerated).
    parent = store.create_group(kit.docs(3), GroupRules(max_parallel=1)).job_id
    ids = kit.child_ids(parent, 3)
    controls.cancel(store, ids[1])
    controls.cancel(store, ids[0])
    controls.cancel(store, ids[2])
    assert kit.status(parent) == JobStatus.FAILED.value
    # A whole group before it started.
    parent = store.create_group(kit.docs(2), GroupRules(max_parallel=1)).job_id
    controls.cancel(store, parent)
    assert kit.status(parent) == JobStatus.CANCELLED.value
    # A running group: its running child ends cancelled when its worker stops, and the group with it.
    parent = store.create_group(kit.docs(2), GroupRules(max_parallel=1)).job_id
    first = kit.child_ids(parent, 2)[0]
    attempt = kit.claim(first).attempt
    controls.cancel(store, parent)
    store.end_cancelled(first, attempt)
    assert kit.status(parent) == JobStatus.CANCELLED.value
    # A group that tolerates a failure, cancelled child by child before it started: it completes.
    parent = store.create_group(kit.docs(1), GroupRules(tolerated_failures=1)).job_id
    controls.cancel(store, kit.child_ids(parent, 1)[0])
    assert kit.status(parent) == JobStatus.COMPLETED.value
    # Groups that started (their first child ended), then cancelled whole, or their last child cancelled.
    for rules, cancel_the_group, ending in (
        (GroupRules(max_parallel=1), True, JobStatus.CANCELLED),
        (GroupRules(max_parallel=1), False, JobStatus.FAILED),
        (GroupRules(max_parallel=1, tolerated_failures=1), False, JobStatus.COMPLETED),
    ):
        parent = store.create_group(kit.docs(2), rules).job_id
        first, second = kit.child_ids(parent, 2)
        store.complete(first, kit.claim(first).attempt, {"text": ""})
        controls.cancel(store, parent if cancel_the_group else second)
        assert kit.status(parent) == ending.value


def caps_and_sweeps(kit: Kit) -> None:
    store = kit.store
    parent = store.create_group(kit.docs(3), GroupRules(max_parallel=1)).job_id
    controls.set_cap(store, parent, 3)
    # Created by a process that died before releasing: the sweep releases.
    parent = store.create_group(kit.docs(2), GroupRules(max_parallel=1), release=False).job_id
    store.release([parent])
    assert kit.status(kit.child_ids(parent, 2)[0]) == JobStatus.QUEUED.value


def finalized_by_release(kit: Kit) -> None:
    """The sweep's release finalizes a parent whose children all ended without finalizing it; no transition
    leaves one so, so the test writes the state by hand (not through a script: nothing is recorded)."""
    store = kit.store
    endings = {
        JobStatus.COMPLETED: JobStatus.COMPLETED,
        JobStatus.FAILED: JobStatus.FAILED,
        JobStatus.CANCELLED: JobStatus.CANCELLED,
    }
    for claimed in (False, True):
        for child_ended, parent_ends in endings.items():
            parent = store.create_group(kit.docs(1), GroupRules(max_parallel=1)).job_id
            child = kit.child_ids(parent, 1)[0]
            before = JobStatus.QUEUED
            if claimed:
                kit.claim(child)
                before = JobStatus.PROCESSING
            kit.r.hset(keys.job(child), Field.STATUS.value, child_ended.value)
            kit.r.hincrby(keys.job(parent), count_field(before), -1)
            kit.r.hincrby(keys.job(parent), count_field(child_ended), 1)
            if parent_ends is JobStatus.CANCELLED:
                kit.r.hset(keys.job(parent), Field.CANCEL_REQUESTED.value, "1")
            store.release([parent])
            assert kit.status(parent) == parent_ends.value


def redrives(kit: Kit) -> None:
    store = kit.store
    # Failed: its failed child runs again.
    parent = store.create_group(kit.docs(2), GroupRules()).job_id
    first, second = kit.child_ids(parent, 2)
    store.fail(first, kit.claim(first).attempt, "echo_failed", "asked")
    store.complete(second, kit.claim(second).attempt, {"text": ""})
    assert controls.redrive(store, parent).count == 1
    # Completed within its tolerance: its failed child runs again all the same.
    parent = store.create_group(kit.docs(2), GroupRules(tolerated_failures=1)).job_id
    first, second = kit.child_ids(parent, 2)
    store.fail(first, kit.claim(first).attempt, "echo_failed", "asked")
    store.complete(second, kit.claim(second).attempt, {"text": ""})
    assert kit.status(parent) == JobStatus.COMPLETED.value
    assert controls.redrive(store, parent).count == 1
    # Cancelled: its cancelled children run again when asked.
    parent = store.create_group(kit.docs(2), GroupRules(max_parallel=1)).job_id
    controls.cancel(store, parent)
    assert controls.redrive(store, parent, include_cancelled=True).count == 2


SCENARIOS = (singles, reclaims, groups, kept_slot, pulled, cancels, caps_and_sweeps, finalized_by_release, redrives)


def run_all(watched) -> tuple[set[tuple[str, str, str, str]], list[str]]:
    """Every status write the scenarios made, and how each scenario that stopped short failed: a script
    that moves a job wrongly may stop a scenario, whose writes until then still count."""
    seen: set[tuple[str, str, str, str]] = set()
    stopped = []
    for scenario in SCENARIOS:
        kit = watched()
        try:
            scenario(kit)
        except Exception as error:  # noqa: BLE001 - reported after the writes it made
            stopped.append(f"{scenario.__name__}: {type(error).__name__}: {str(error)[:200]}")
        seen |= set(recorded(kit))
    return seen, stopped


def test_every_status_write_is_an_edge_of_the_table(watched):
    seen, stopped = run_all(watched)
    outside = sorted(w for w in seen if as_edge(*w) not in EDGES)
    assert not outside, "status writes (transition, kind, from, to) the state machine does not hold: " + str(outside)
    assert not stopped, stopped


def test_every_edge_of_the_table_is_made_by_its_script(watched):
    seen, stopped = run_all(watched)
    made = {as_edge(*w) for w in seen}
    unmade = sorted(
        (e.transition, e.kind.value, e.source.value if e.source else "new", e.target.value) for e in EDGES - made
    )
    assert not unmade, "edges (transition, kind, from, to) no scenario made: " + str(unmade)
    assert not stopped, stopped


def test_the_watcher_sees_a_status_written_outside_the_table(watched):
    """The watcher itself: a script that moves a job along an edge the table lacks is caught."""
    kit = watched()
    job = kit.store.create_single(kit.doc()).job_id
    kit.claim(job)
    # heartbeat moves nothing; here a script under its name writes a status, as a faulty one would.
    body = f"redis.call('HSET', KEYS[1], '{Field.STATUS.value}', '{JobStatus.HELD.value}')"
    script = kit.r.register_script(_watched_source("heartbeat", body))
    script(keys=[keys.job(job)], args=[])
    write = ("heartbeat", JobKind.SINGLE.value, JobStatus.PROCESSING.value, JobStatus.HELD.value)
    assert write in recorded(kit)
    assert as_edge(*write) not in EDGES


def _watched_source(name: str, body: str) -> str:
    names = {"status": Field.STATUS.value, "kind": Field.KIND.value, "moves": MOVES_KEY, "name": name}
    names["unreadable"] = UNREADABLE
    return _with_watch(names, body)


def _with_watch(names: dict[str, str], source: str) -> str:
    """``source`` with the watcher first; after a function library's first line, which names it."""
    if not source.startswith("#!lua"):
        return WATCH % names + source
    first_line, rest = source.split("\n", 1)
    return first_line + "\n" + WATCH % names + rest
