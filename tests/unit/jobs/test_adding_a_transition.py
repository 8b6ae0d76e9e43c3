"""A transition added as one folder entry (and, when it moves jobs, its rows in the state machine's table):
found, held to the table, registered and run.

Two entries, as docs/internals/adding-a-transition.md writes them, each in a folder of its own:

* ``note_stage`` moves no status.  When the catalogue looks at the folder, it finds the entry by
  itself (no list edited); its call fills its own keys and arguments and runs through the store's
  context, under fakeredis with Lua and under a real redis-server alike.
* ``skip_child`` moves one: a group's held child ends ``cancelled`` before it starts, through the
  includes cancel.lua ends a child with (its audit event, its per-status set, its parent's counts,
  a fail-fast group's held siblings, the release of free slots, the parent's one finalization).
  Without its rows in jobs/state_machine.py, the house's own checks of the table
  (tests/unit/jobs/test_state_machine.py) fail on it; with them, they pass, and so do those of its
  header (tests/unit/jobs/test_contract.py).  Run under the watcher of
  tests/unit/jobs/test_state_machine_runs.py, every status it writes is an edge of the table with its
  rows; the job and its parent, read back through the store's queries, end as the page says.
"""

from __future__ import annotations

import importlib
import sys
import uuid
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from types import ModuleType

import fakeredis
import pytest
from redis import Redis

from jobs import state_diagram, state_machine
from jobs.contract import ErrorCode, JobKind, JobStatus, Reply
from jobs.records import GroupRules, NewJob
from jobs.state_machine import (
    CANCELLED,
    CHILD,
    COMPLETED,
    FAILED,
    HELD,
    PARENT,
    PROCESSING,
    QUEUED,
    Edge,
    Move,
    _ending,
    _fail_fast,
    _release,
    targets_of,
)
from jobs.store import JobStore
from jobs.transitions import TRANSITIONS
from jobs.transitions.catalogue import discover
from jobs.transitions.context import StoreContext
from jobs.transitions.scripts import Scripts
from jobs.transitions.spec import LUA_DIR, Transition
from tests.unit.jobs import test_contract as contract_checks
from tests.unit.jobs import test_state_machine as table_checks
from tests.unit.jobs import test_state_machine_runs as run_checks

from .conftest import SETTINGS, Kit

# -- a transition that moves no status ------------------------------------------------------------

SPEC_AND_CALL = '''
"""The entry of ``note_stage``: its spec and its call (``note_stage.lua`` beside it says what it does)."""

from dataclasses import dataclass
from pathlib import Path

from jobs.contract import Reply
from jobs.transitions.context import StoreContext
from jobs.transitions.spec import Arg, Transition


@dataclass(frozen=True)
class NoteStageReply:
    code: Reply
    status: str  # the job's status, when refused for having ended


NOTE_STAGE = Transition(
    "note_stage",
    keys=("job",),
    args=(Arg("stage"),),
    reply=NoteStageReply,
    home=Path(__file__).parent,
)


def call(ctx: StoreContext, job_id: str, stage: str) -> NoteStageReply:
    """Notes the stage a job not yet ended has reached."""
    return ctx.run(NOTE_STAGE, {"job": ctx.keyspace.job(job_id)}, {"stage": stage}, job_id)
'''

SCRIPT = """--[[
  note_stage: notes the stage a job not yet ended has reached.

  Keys:
    job            the job's key

  Args:
    stage          what it has reached

  Reply:
    {OK}                   noted
    {NO_JOB}               no such job
    {WRONG_STATUS, status} the job has ended: nothing written
]]

local status = redis.call('HGET', K.job, F.status)
if not status then return reply{code = REPLY.NO_JOB} end
if TERMINAL[status] then return reply{code = REPLY.WRONG_STATUS, status = status} end
redis.call('HSET', K.job, F.stage, A.stage)
return reply{code = REPLY.OK}
"""

# -- a transition that moves a job ---------------------------------------------------------------

SKIP_SPEC_AND_CALL = '''
"""The entry of ``skip_child``: its spec and its call (``skip_child.lua`` beside it says what it does)."""

from dataclasses import dataclass
from pathlib import Path

from jobs.contract import Reply
from jobs.transitions.context import StoreContext
from jobs.transitions.spec import RELEASE_ARGS, RELEASE_KEYS, ROOT_KEYS, Arg, Dispatches, ModelCounts, Transition


@dataclass(frozen=True)
class SkipChildReply:
    code: Reply
    status: str  # the child's status, when refused for not being held
    finalized: bool  # the skip ended the group: its parent was finalized
    cancelled_unstarted: ModelCounts  # the jobs it ended before they started, by model (a fail-fast group's too)
    released: Dispatches  # the wake-ups of the children it released, for the caller to publish


SKIP_CHILD = Transition(
    "skip_child",
    keys=("job", "events", "webhooks", *RELEASE_KEYS, *ROOT_KEYS),
    args=(Arg("job_id"), Arg("why"), *RELEASE_ARGS),
    reply=SkipChildReply,
    home=Path(__file__).parent,
)


def call(ctx: StoreContext, job_id: str, why: str) -> SkipChildReply:
    """Ends a group's held child ``cancelled`` before it starts, ``why`` kept as its error."""
    return ctx.run(
        SKIP_CHILD,
        {
            "job": ctx.keyspace.job(job_id),
            "events": ctx.keyspace.events(job_id),
            "webhooks": ctx.keyspace.webhooks(ctx.keyspace.bucket_of(job_id)),
            **ctx.keyspace.roots_by_status(job_id),
        },
        {"job_id": job_id, "why": why},
        job_id,
    )
'''

SKIP_SCRIPT = """--[[
  skip_child: a group's child still held (waiting for a slot) ends `cancelled`
  before it starts, its reason kept as its error.

  It ends as a child a client cancels does (cancel.lua), through the same
  includes: finish_job writes its status, its audit event, its per-status
  set and its webhook; child_finished moves its count on the parent,
  cancels the held children of a fail-fast group past its tolerance, fills
  the group's free slots, and finalizes the parent when this was its last
  open child.  A held child holds no slot, so the skip frees none; the
  release only fills slots already free.

  Keys:
    job            the child's hash
    events         the audit stream of its group
    webhooks       the index of terminal jobs whose callback is due
    RELEASE_KEYS   (spec.py) parent: the child's parent
    ROOT_KEYS      (spec.py) the listing's sets of a parent
  Derived from A.prefix: the group's children and their per-status sets;
  from the ids, the tenant's keys and its waiting groups (release.lua).

  Args:
    job_id
    why            the reason, kept as the child's error
    RELEASE_ARGS   (spec.py)

  Reply:
    {OK, finalized, cancelled_unstarted, released...}  finalized: the
        parent ended with it
    {NO_JOB}                no such job, or not a child
    {WRONG_STATUS, status}  not held (released, running or ended): nothing written
]]
-- @include finish

local f = redis.call('HMGET', K.job, F.status, F.kind, F.parent_id, F.index, F.model)
if not f[1] or f[2] ~= KIND.child then return reply{code = REPLY.NO_JOB} end
if f[1] ~= STATUS.held then return reply{code = REPLY.WRONG_STATUS, status = f[1]} end
local now = now_us()
local job = {id = A.job_id, kind = KIND.child, parent_id = f[3], index = f[4], model = f[5]}
finish_job(K.job, job, A.prefix, STATUS.held, STATUS.cancelled, '', A.why, now)
local finalized = child_finished(A.prefix, job.parent_id, STATUS.held, STATUS.cancelled,
  A.release_limit, A.requeue_ms, now)
return reply{code = REPLY.OK, finalized = finalized, cancelled_unstarted = cancelled_unstarted(),
             released = wake_ups(now, A.requeue_ms)}
"""

#: Its rows in the state machine's table (jobs/state_machine.py), as the page adds them to ``MOVES``.
SKIP_ROWS = (
    _ending("skip_child", (CHILD,), (HELD,), (CANCELLED,), "a group's held child is skipped before it starts"),
    _ending(
        "skip_child",
        (PARENT,),
        (QUEUED, PROCESSING),
        (COMPLETED, FAILED),
        "the group's last open child was skipped (failed past its tolerance)",
    ),
    _fail_fast("skip_child"),
    _release("skip_child"),
)


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A package of its own (a fresh name: nothing cached) holding the new entries."""
    name = f"added_transitions_{uuid.uuid4().hex[:8]}"
    package = tmp_path / name
    package.mkdir()
    (package / "__init__.py").write_text('"""Transitions added by a test."""\n')
    (package / "note_stage.py").write_text(SPEC_AND_CALL)
    (package / "note_stage.lua").write_text(SCRIPT)
    (package / "skip_child.py").write_text(SKIP_SPEC_AND_CALL)
    (package / "skip_child.lua").write_text(SKIP_SCRIPT)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield name
    for module in [m for m in sys.modules if m == name or m.startswith(f"{name}.")]:
        del sys.modules[module]


def entry_of(folder: str, name: str = "note_stage") -> ModuleType:
    return importlib.import_module(f"{folder}.{name}")


def test_the_catalogue_finds_a_new_entry_by_itself(folder):
    found = discover(folder)

    assert [t.name for t in found] == ["note_stage", "skip_child"]
    assert found[0] is entry_of(folder).NOTE_STAGE
    assert found[0].path.read_text() == SCRIPT
    assert found[1] is entry_of(folder, "skip_child").SKIP_CHILD
    assert found[1].path.read_text() == SKIP_SCRIPT


def test_the_house_entries_are_found_the_same_way():
    assert {t.name for t in TRANSITIONS} == {p.stem for p in LUA_DIR.glob("*.lua")}


@pytest.fixture(params=["fakeredis", "redis-server"])
def store(request) -> Iterator[JobStore]:
    """A store on fakeredis (with Lua), or on the session's real redis-server."""
    if request.param == "fakeredis":
        client: Redis = fakeredis.FakeRedis(server=fakeredis.FakeServer())
    else:
        client = Redis.from_url(request.getfixturevalue("redis_url"))
    yield JobStore(client, SETTINGS)
    client.close()


def stage_of(store: JobStore, job_id: str) -> str:
    record = store.queries.get(job_id)
    assert record is not None
    return record["stage"]


def test_a_new_entry_runs_through_the_stores_context(folder, store):
    entry = entry_of(folder)
    # The store's context, with the house's scripts and the new one registered on its client.
    context = replace(store.context, scripts=Scripts(store.redis, store.keyspace, (*TRANSITIONS, *discover(folder))))
    job_id = store.create_single(NewJob("echo", "text/plain", b"hello")).job_id

    assert entry.call(context, job_id, "page 1/3").code == Reply.OK
    assert stage_of(store, job_id) == "page 1/3"

    claim = store.claim(job_id)
    assert claim is not None
    store.complete(job_id, claim.attempt, {"text": "hello"})
    refused = entry.call(context, job_id, "page 2/3")
    assert (refused.code, refused.status) == (Reply.WRONG_STATUS, "completed")
    assert stage_of(store, job_id) != "page 2/3"

    assert entry.call(context, "f" * 32, "page 1/1").code == Reply.NO_JOB


# -- a transition that moves a job: its rows in the table, and the checks that hold it to them ----------


def with_rows(monkeypatch: pytest.MonkeyPatch, rows: tuple[Move, ...]) -> None:
    """The table with ``rows`` added, as if written in ``MOVES``: the table itself and what is read from it,
    where the checks read it (the modules that imported the names)."""
    moves = (*state_machine.MOVES, *rows)
    derived = {
        "MOVES": moves,
        "EDGES": frozenset(edge for move in moves for edge in move.edges()),
        "MOVING_TRANSITIONS": tuple(dict.fromkeys(move.transition for move in moves)),
    }
    for module in (state_machine, state_diagram, table_checks, run_checks):
        for name, value in derived.items():
            if hasattr(module, name):
                monkeypatch.setattr(module, name, value)


def skip_child_of(folder: str) -> Transition:
    return entry_of(folder, "skip_child").SKIP_CHILD


def test_a_transition_that_moves_no_status_needs_no_row(folder, monkeypatch):
    note_stage = entry_of(folder).NOTE_STAGE
    monkeypatch.setitem(table_checks.SCRIPTS, "note_stage", note_stage)

    assert table_checks.written_statuses(note_stage) == set() == set(targets_of("note_stage"))
    table_checks.test_a_script_writes_exactly_the_statuses_the_table_gives_its_transition("note_stage")


def test_without_its_rows_the_tables_checks_fail_on_the_new_script(folder, monkeypatch):
    monkeypatch.setitem(table_checks.SCRIPTS, "skip_child", skip_child_of(folder))
    check = table_checks.test_a_script_writes_exactly_the_statuses_the_table_gives_its_transition

    with pytest.raises(AssertionError, match=r"skip_child may write \['cancelled', 'completed', 'failed', 'queued'\]"):
        check("skip_child")
    # The child's own row is not enough: through the includes, the script also finalizes the parent and
    # fills free slots.
    with_rows(monkeypatch, SKIP_ROWS[:1])
    with pytest.raises(AssertionError, match=r"the state machine gives it \['cancelled'\]"):
        check("skip_child")


def test_with_its_rows_the_tables_checks_pass(folder, monkeypatch):
    skip_child = skip_child_of(folder)
    with_rows(monkeypatch, SKIP_ROWS)
    monkeypatch.setitem(table_checks.SCRIPTS, "skip_child", skip_child)

    assert table_checks.written_statuses(skip_child) == set(targets_of("skip_child"))
    assert targets_of("skip_child") == {CANCELLED, COMPLETED, FAILED, QUEUED}
    table_checks.test_a_script_writes_exactly_the_statuses_the_table_gives_its_transition("skip_child")
    table_checks.test_every_transition_of_the_table_is_a_script()
    table_checks.test_every_metric_a_move_names_is_one_the_processes_count()
    held_to_cancelled = next(
        arrow
        for arrow in state_diagram.arrows(state_diagram.EDGES)
        if (arrow.source, arrow.target) == (HELD, CANCELLED)
    )
    assert "skip_child" in held_to_cancelled.transitions
    assert "skip_child" in state_diagram.svg(edges=state_diagram.EDGES)


def test_rows_with_no_script_fail_the_tables_checks(folder, monkeypatch):
    with_rows(monkeypatch, SKIP_ROWS)  # the rows written, the entry not (or not found)

    with pytest.raises(AssertionError):
        table_checks.test_every_transition_of_the_table_is_a_script()


@pytest.mark.parametrize("name", ["note_stage", "skip_child"])
def test_a_new_entrys_header_is_held_to_its_spec(folder, monkeypatch, name):
    transition = next(t for t in discover(folder) if t.name == name)
    monkeypatch.setitem(contract_checks.SCRIPTS, name, transition)

    contract_checks.test_a_header_lists_exactly_the_keys_and_args_of_its_spec(name)
    contract_checks.test_a_header_names_the_replies_as_its_spec_does(name)
    contract_checks.test_a_script_that_releases_children_takes_the_release_inputs(name)
    contract_checks.test_a_script_reads_exactly_the_keys_and_args_its_spec_declares(name)
    contract_checks.test_lua_spells_no_status_field_or_code_that_python_defines(transition.path)


# -- skip_child, run -------------------------------------------------------------------------------


def skips(kit: Kit, context: StoreContext, skip_child: ModuleType) -> None:
    """Every way ``skip_child`` ends, read back through the store's queries."""
    store, queries = kit.store, kit.store.queries

    def status(job_id: str) -> str:
        record = queries.get(job_id)
        assert record is not None
        return record["status"]

    # One child at a time: the held middle one is skipped; the group goes on without it.
    parent = store.create_group(kit.docs(3), GroupRules(max_parallel=1, tolerated_failures=1)).job_id
    first, second, third = kit.child_ids(parent, 3)
    reply = skip_child.call(context, second, "not needed")
    assert (reply.code, reply.finalized, reply.released) == (Reply.OK, False, [])
    assert reply.cancelled_unstarted == {"echo": 1}
    child = queries.get(second)
    assert child is not None
    assert (child["status"], child["error"], child["started_at"]) == ("cancelled", "not needed", "")
    assert child["finished_at"] != ""
    group = queries.get(parent)
    assert group is not None
    assert (group["status"], group["n_queued"], group["n_held"], group["n_cancelled"]) == ("queued", "1", "1", "1")
    assert [row["id"] for row in queries.children_in(parent, [JobStatus.CANCELLED.value])] == [second]
    assert [row["id"] for row in queries.children_in(parent, [JobStatus.HELD.value])] == [third]
    assert [(e["operation"], e["status"]) for e in queries.events(second)] == [("job_child", "cancelled")]

    # Refused, writing nothing: a child released, a child ended, a single job, no job.
    refused = skip_child.call(context, first, "late")
    assert (refused.code, refused.status) == (Reply.WRONG_STATUS, "queued")
    refused = skip_child.call(context, second, "twice")
    assert (refused.code, refused.status) == (Reply.WRONG_STATUS, "cancelled")
    single = store.create_single(kit.doc()).job_id
    assert skip_child.call(context, single, "not a child").code == Reply.NO_JOB
    assert skip_child.call(context, kit.child_ids("f" * 32, 1)[0], "no job").code == Reply.NO_JOB
    assert (status(first), status(single)) == ("queued", "queued")
    assert len(queries.events(second)) == 1

    # The slot the first child frees goes to the third, passing over the skipped one; the group completes
    # (it tolerates one child cancelled), once.
    store.complete(first, kit.claim(first).attempt, {"text": ""})
    assert status(third) == "queued"
    store.complete(third, kit.claim(third).attempt, {"text": ""})
    assert status(parent) == "completed"
    assert [e["status"] for e in queries.events(parent) if e["operation"] == "job"] == ["completed"]

    # The group's last open child skipped: the skip finalizes the group, once, as its tolerance says.
    for tolerated, ending, error_code in ((0, "failed", ErrorCode.CHILD_CANCELLED.value), (1, "completed", "")):
        parent = store.create_group(kit.docs(1), GroupRules(tolerated_failures=tolerated), release=False).job_id
        (only,) = kit.child_ids(parent, 1)
        reply = skip_child.call(context, only, "not needed")
        assert (reply.code, reply.finalized) == (Reply.OK, True)
        group = queries.get(parent)
        assert group is not None
        assert (group["status"], group["error_code"], group["n_cancelled"]) == (ending, error_code, "1")
        assert [(e["operation"], e["job_id"], e["status"]) for e in queries.events(parent)] == [
            ("job_child", only, "cancelled"),
            ("job", parent, ending),
        ]

    # A fail-fast group past its tolerance: its held children are cancelled with the skipped one.
    parent = store.create_group(kit.docs(3), GroupRules(max_parallel=1, fail_fast=True), release=False).job_id
    children = kit.child_ids(parent, 3)
    reply = skip_child.call(context, children[0], "not needed")
    assert (reply.code, reply.finalized, reply.cancelled_unstarted) == (Reply.OK, True, {"echo": 3})
    assert status(parent) == "failed"
    assert [row["id"] for row in queries.children_in(parent, [JobStatus.CANCELLED.value])] == children

    # A group whose slots were left free (created by a process that died before releasing): the skip
    # fills them (its reply's ``released``: the wake-ups, if any, its caller publishes).
    parent = store.create_group(kit.docs(2), GroupRules(max_parallel=1), release=False).job_id
    skipped, next_one = kit.child_ids(parent, 2)
    assert skip_child.call(context, skipped, "not needed").code == Reply.OK
    assert status(next_one) == "queued"
    assert kit.claim(next_one).job_id == next_one


def context_with(store: JobStore, folder: str) -> StoreContext:
    """The store's context, with the house's scripts and the folder's registered on its client."""
    return replace(store.context, scripts=Scripts(store.redis, store.keyspace, (*TRANSITIONS, *discover(folder))))


def test_a_skipped_child_ends_and_its_group_goes_on(folder, store):
    skips(Kit(store), context_with(store, folder), entry_of(folder, "skip_child"))


def test_every_status_it_writes_is_an_edge_of_the_table_with_its_rows(folder, monkeypatch):
    """Under the watcher of tests/unit/jobs/test_state_machine_runs.py: every status write of every script
    is recorded with the job's kind and its status before."""
    house_edges = state_machine.EDGES
    with_rows(monkeypatch, SKIP_ROWS)
    real_source = Transition.source
    monkeypatch.setattr(Transition, "source", lambda t: run_checks._watched_source(t.name, real_source(t)))
    kit = Kit(JobStore(fakeredis.FakeRedis(server=fakeredis.FakeServer()), SETTINGS))

    skips(kit, context_with(kit.store, folder), entry_of(folder, "skip_child"))

    writes = run_checks.recorded(kit)
    assert [w for w in writes if run_checks.as_edge(*w) not in state_machine.EDGES] == []
    made = {run_checks.as_edge(*w) for w in writes if w[0] == "skip_child"}
    child, parent = JobKind.CHILD, JobKind.PARENT
    assert made == {
        Edge("skip_child", child, HELD, CANCELLED),
        Edge("skip_child", child, HELD, QUEUED),
        Edge("skip_child", parent, QUEUED, FAILED),
        Edge("skip_child", parent, QUEUED, COMPLETED),
    }
    assert not made & house_edges  # without its rows, none of these is an edge


# -- the page ----------------------------------------------------------------------------------------

PAGE = Path(__file__).parents[3] / "docs" / "internals" / "adding-a-transition.md"


def as_in_the_house(spec_and_call: str) -> str:
    """An entry's module as it reads in jobs/transitions/: the test's copy less where its script is."""
    kept = [line for line in spec_and_call.strip("\n").splitlines() if "Path" not in line]
    return "\n".join(kept) + "\n"


def test_the_page_shows_the_entries_and_rows_this_test_adds():
    page = PAGE.read_text()

    for spec_and_call in (SPEC_AND_CALL, SKIP_SPEC_AND_CALL):
        assert f"```python\n{as_in_the_house(spec_and_call)}```" in page
    for script in (SCRIPT, SKIP_SCRIPT):
        assert f"```lua\n{script}```" in page
    shown = page.split("MOVES: tuple[Move, ...] = (\n    ...\n", 1)[1].split(")\n```", 1)[0]
    namespace = vars(state_machine)
    assert eval(f"({shown})", dict(namespace)) == SKIP_ROWS  # noqa: S307 - the page's own rows, read back
