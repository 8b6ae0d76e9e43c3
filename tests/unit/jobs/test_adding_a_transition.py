"""A transition added as one folder entry, and nothing else: found, registered and run.

Given a folder holding one entry (``note_stage.py``: its spec and its call; ``note_stage.lua``
beside it), as docs/internals/adding-a-transition.md writes it; when the catalogue looks at
the folder, it finds the entry by itself (no list edited); then its call fills its own keys
and arguments, and runs it through the store's context, under fakeredis with Lua and under
a real redis-server alike.
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

from jobs.contract import Reply
from jobs.records import NewJob
from jobs.store import JobStore
from jobs.transitions import TRANSITIONS
from jobs.transitions.catalogue import discover
from jobs.transitions.scripts import Scripts
from jobs.transitions.spec import LUA_DIR

from .conftest import SETTINGS

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


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A package of its own (a fresh name: nothing cached) holding the one new entry."""
    name = f"added_transitions_{uuid.uuid4().hex[:8]}"
    package = tmp_path / name
    package.mkdir()
    (package / "__init__.py").write_text('"""Transitions added by a test."""\n')
    (package / "note_stage.py").write_text(SPEC_AND_CALL)
    (package / "note_stage.lua").write_text(SCRIPT)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield name
    for module in [m for m in sys.modules if m == name or m.startswith(f"{name}.")]:
        del sys.modules[module]


def entry_of(folder: str) -> ModuleType:
    return importlib.import_module(f"{folder}.note_stage")


def test_the_catalogue_finds_a_new_entry_by_itself(folder):
    found = discover(folder)

    assert [t.name for t in found] == ["note_stage"]
    assert found[0] is entry_of(folder).NOTE_STAGE
    assert found[0].path.read_text() == SCRIPT


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
