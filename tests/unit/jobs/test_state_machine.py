"""The scripts, read, write only the statuses jobs/state_machine.py gives their transition, and every
status the table gives a transition is one its script can write.

Each script is read as Redis runs it (its includes inlined, comments dropped) and cut into its named
functions and its top level.  Every mention of the status field (``F.status``) must be one of:

* a read: an argument of ``redis.call('HGET' | 'HMGET', ...)``;
* a write: ``redis.call('HSET' | 'HMSET' | 'HSETNX', ..., F.status, <target>, ...)``, or a field list
  ``{F.status, <target>, ...}`` (written with ``unpack`` by the same function).

Anything else (another command, a helper taking the field's name, ``F['status']``) fails, so a script
cannot write a status in a way this reading misses.  A write's target is a ``STATUS.<name>``; or a local
variable, read off its assignments in the same function; or a parameter, read off the arguments of every
call of that function the script can reach; or an argument of the script (``A.<name>``), whose statuses
``ARGUMENT_STATUSES`` gives.  The writes a script can reach (from its top level, through the functions it
calls) give the statuses it may write, which must be exactly the table's targets for that transition.

The statuses a move comes from depend on what the script reads at run time; tests/unit/jobs/
test_state_machine_runs.py runs every transition and holds each write, from and to, to the table's edges.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import pytest

from jobs.contract import JobStatus
from jobs.state_machine import MOVES, MOVING_TRANSITIONS, targets_of
from jobs.transitions import TRANSITIONS
from jobs.transitions.spec import Transition
from observability import metrics

SCRIPTS = {t.name: t for t in TRANSITIONS}

#: The statuses an argument of a script may carry, which the Python side chooses.
ARGUMENT_STATUSES: dict[tuple[str, str], frozenset[JobStatus]] = {
    # store._finish: an attempt ends completed, failed, or cancelled (its job was cancelled while it ran)
    ("complete", "status"): frozenset({JobStatus.COMPLETED, JobStatus.FAILED, JobStatus.CANCELLED}),
}

READS = {"HGET", "HMGET"}
WRITES = {"HSET", "HMSET", "HSETNX"}
TOP = "<top level>"


class Unreadable(AssertionError):
    """Raised when a mention of the status field, or a write's target, is of no form this reading knows."""


@dataclass
class Chunk:
    """A named function of a script (or its top level): its parameters and its text."""

    name: str
    params: list[str]
    text: str
    calls: set[str] = field(default_factory=set)


def strip_comments(lua: str) -> str:
    return re.sub(r"--[^\n]*", "", re.sub(r"--\[(=*)\[.*?\]\1\]", "", lua, flags=re.S))


_DEF = re.compile(r"^local function (\w+)\(([^)]*)\)(.*)$")


def chunks_of(lua: str) -> dict[str, Chunk]:
    """The named functions (defined at column 0, ``local function``) and the top level of a script."""
    chunks: dict[str, Chunk] = {}
    top: list[str] = []
    current: Chunk | None = None
    for line in lua.splitlines():
        if current is None:
            match = _DEF.match(line)
            if match is None:
                top.append(line)
                continue
            name, params, rest = match.groups()
            current = Chunk(name, [p.strip() for p in params.split(",") if p.strip()], "")
            chunks[name] = current
            if re.search(r"\bend\s*$", rest):  # a one-line function
                current.text = rest
                current = None
            continue
        if re.match(r"^end\b", line):
            current = None
        else:
            current.text += line + "\n"
    chunks[TOP] = Chunk(TOP, [], "\n".join(top))
    for chunk in chunks.values():
        chunk.calls = {name for name in chunks if name != TOP and re.search(rf"\b{name}\(", chunk.text)}
    return chunks


def reachable(chunks: dict[str, Chunk]) -> list[Chunk]:
    seen, todo = [TOP], [TOP]
    while todo:
        for name in sorted(chunks[todo.pop()].calls):
            if name not in seen:
                seen.append(name)
                todo.append(name)
    return [chunks[name] for name in seen]


def _opener(text: str, position: int) -> int:
    """The position of the innermost bracket, ( or {, still open at ``position`` (-1: none)."""
    depth = 0
    for i in range(position - 1, -1, -1):
        if text[i] in ")}":
            depth += 1
        elif text[i] in "({":
            if depth == 0:
                return i
            depth -= 1
    return -1


def _arguments(text: str, opener: int) -> list[str]:
    """The arguments of the call (or the items of the table) whose bracket opens at ``opener``."""
    depth, start, parts = 0, opener + 1, []
    for i in range(opener + 1, len(text)):
        c = text[i]
        if c in "({[":
            depth += 1
        elif c in ")}]":
            if depth == 0:
                parts.append(text[start:i].strip())
                return parts
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    raise Unreadable(f"no closing bracket after: {text[opener : opener + 60]!r}")


def status_writes(chunk: Chunk) -> list[str]:
    """The targets of the status writes in ``chunk``, as written; raises Unreadable on any other mention."""
    if re.search(r"\bF\s*\[", chunk.text):
        raise Unreadable(f"{chunk.name}: a field of F read by index")
    targets = []
    for mention in re.finditer(r"\bF\.status\b", chunk.text):
        opener = _opener(chunk.text, mention.start())
        where = f"{chunk.name}: {chunk.text[max(0, mention.start() - 60) : mention.end() + 30]!r}"
        if opener < 0:
            raise Unreadable(f"the status field outside a call or a field list, in {where}")
        items = _arguments(chunk.text, opener)
        at = items.index("F.status") if "F.status" in items else -1
        if chunk.text[opener] == "(":
            command = re.match(r"'(\w+)'", items[0]) if re.search(r"redis\.p?call\s*$", chunk.text[:opener]) else None
            if command is None or command.group(1).upper() not in READS | WRITES:
                raise Unreadable(f"the status field given to something else than HGET, HMGET or HSET, in {where}")
            if command.group(1).upper() in READS:
                continue
        if at < 0 or at + 1 >= len(items):
            raise Unreadable(f"a status write of no readable target, in {where}")
        targets.append(items[at + 1])
    return targets


def _assigned(name: str, chunk: Chunk) -> list[str]:
    """The expressions ``name`` is given in ``chunk``: ``[local] a, name = x, y`` on one line, at its start
    or after ``then``, ``else`` or ``do``."""
    found = []
    assignment = (
        r"(?:^|\bthen\b|\belse\b|\bdo\b)\s*(?:local\s+)?((?:\w+\s*,\s*)*\w+)\s*=(?!=)\s*(.*?)\s*(?:\bend\b.*)?$"
    )
    for match in re.finditer(assignment, chunk.text, re.M):
        names = [n.strip() for n in match.group(1).split(",")]
        if name in names:
            values = _arguments("(" + match.group(2) + ")", 0)
            position = names.index(name)
            if position < len(values):
                found.append(values[position])
    return found


def resolve(expression: str, chunk: Chunk, script: Transition, chunks: list[Chunk], depth: int = 0) -> set[JobStatus]:
    """The statuses ``expression`` may hold in ``chunk`` of ``script``."""
    if depth > 8:
        raise Unreadable(f"{script.name}: {expression} passes through too many functions")
    if match := re.fullmatch(r"STATUS\.(\w+)", expression):
        return {JobStatus(match.group(1))}
    if match := re.fullmatch(r"A\.(\w+)", expression):
        if (script.name, match.group(1)) not in ARGUMENT_STATUSES:
            raise Unreadable(
                f"{script.name}: a status from its argument {match.group(1)}; say which in ARGUMENT_STATUSES"
            )
        return set(ARGUMENT_STATUSES[script.name, match.group(1)])
    if not re.fullmatch(r"[a-z_]\w*", expression):
        raise Unreadable(f"{script.name}, {chunk.name}: a status write of {expression!r}")
    found: set[JobStatus] = set()
    assigned = _assigned(expression, chunk)
    for value in assigned:
        found |= resolve(value, chunk, script, chunks, depth + 1)
    if expression in chunk.params:
        position = chunk.params.index(expression)
        for caller in chunks:
            for call in re.finditer(rf"\b{chunk.name}\(", caller.text):
                argument = _arguments(caller.text, call.end() - 1)[position]
                found |= resolve(argument, caller, script, chunks, depth + 1)
    elif not assigned:
        raise Unreadable(f"{script.name}, {chunk.name}: {expression} is neither assigned nor a parameter")
    return found


def written_statuses(script: Transition) -> set[JobStatus]:
    chunks = reachable(chunks_of(strip_comments(script.source())))
    statuses: set[JobStatus] = set()
    for chunk in chunks:
        for target in status_writes(chunk):
            statuses |= resolve(target, chunk, script, chunks)
    return statuses


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_a_script_writes_exactly_the_statuses_the_table_gives_its_transition(name):
    written = written_statuses(SCRIPTS[name])
    declared = set(targets_of(name))
    assert written == declared, (
        f"{name} may write {sorted(s.value for s in written)}, the state machine gives it "
        f"{sorted(s.value for s in declared)}"
    )


def test_every_transition_of_the_table_is_a_script():
    assert set(MOVING_TRANSITIONS) <= set(SCRIPTS)


def test_every_metric_a_move_names_is_one_the_processes_count():
    names = {m.name for m in vars(metrics).values() if isinstance(m, metrics.Metric)}
    assert {m.metric for m in MOVES if m.metric} <= names


# -- the reading itself ---------------------------------------------------------------------------------

FAULTY = {
    "a literal status the table does not give": (
        "redis.call('HSET', K.job, F.status, STATUS.held)\n",
        {JobStatus.HELD},
    ),
    "a status passed through a helper": (
        "local function park(key, to)\n  redis.call('HSET', key, F.stage, '', F.status, to)\nend\n"
        "park(K.job, STATUS.failed)\n",
        {JobStatus.FAILED},
    ),
    "a status chosen in a local": (
        "local to = STATUS.queued\nif A.x then to = STATUS.cancelled end\nredis.call('HSET', K.job, F.status, to)\n",
        {JobStatus.QUEUED, JobStatus.CANCELLED},
    ),
}


@pytest.mark.parametrize("case", sorted(FAULTY))
def test_the_reading_finds_a_status_however_a_script_passes_it(case, monkeypatch):
    body, expected = FAULTY[case]
    heartbeat = SCRIPTS["heartbeat"]
    monkeypatch.setattr(Transition, "source", lambda self: body)
    assert written_statuses(heartbeat) == expected
    assert not expected <= set(targets_of("heartbeat"))


UNREADABLE = {
    "the field's name in a variable": "local name = F.status\nredis.call('HSET', K.job, name, STATUS.held)\n",
    "another command": "redis.call('HDEL', K.job, F.status)\n",
    "a field by index": "redis.call('HSET', K.job, F['status'], STATUS.held)\n",
    "a helper taking the field": "write(K.job, F.status, STATUS.held)\n",
    "a target of no readable form": "redis.call('HSET', K.job, F.status, f[1])\n",
}


@pytest.mark.parametrize("case", sorted(UNREADABLE))
def test_a_status_written_any_other_way_fails_the_reading(case, monkeypatch):
    monkeypatch.setattr(Transition, "source", lambda self: UNREADABLE[case])
    with pytest.raises(Unreadable):
        written_statuses(SCRIPTS["heartbeat"])
