"""The job state machine, declared once: every move of a job's status, by the transition that makes it.

A ``Move`` says which transition (a script of jobs/transitions, by its name) moves which kinds of job
from which statuses to which, and what the move emits: the job's audit event, its webhook (when it has a
``callback_url``) and the metric the process that ran the script counts it in.  ``MOVES`` is the whole
table; everything else is read from it:

* the scripts are held to it: tests/unit/jobs/test_state_machine.py reads each script's writes of the
  status field (a script that can write a status its rows do not give it, or that cannot write one they
  do, fails), and tests/unit/jobs/test_state_machine_runs.py runs the transitions under fakeredis,
  recording every status write with the job's kind and its status before (a write that is no edge of
  the table fails, and so does an edge no scenario makes);
* the comment each script's generated source carries after its preamble (``lua_comment``);
* the manual's state diagram (jobs/state_diagram.py) and table (``markdown_table``), which
  docs/hooks/state_diagram.py puts on the transitions page.

The statuses themselves, and the names the scripts share, stay in jobs/contract.py: the Lua preamble's
``STATUS`` table is generated from ``JobStatus``, and so are the statuses the command line and the
dashboard read (cli/statuses.py, gateway/static/ui/statuses.js: scripts/generate_statuses.py).  A job
that did not exist before the move comes ``from`` ``NEW``.

Adding a move, or a transition that moves jobs, is one row here (and a scenario that makes it in
tests/unit/jobs/test_state_machine_runs.py); a script that writes a status with no row fails the
tests, and so does a row no script makes.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from jobs.contract import JobKind, JobStatus, Operation

#: Where a job comes from when the move creates it.
NEW = None

SINGLE, PARENT, CHILD = JobKind.SINGLE, JobKind.PARENT, JobKind.CHILD
ROOTS = (SINGLE, PARENT)
RUNNABLE = (SINGLE, CHILD)  # the kinds a worker runs: a parent's status follows its children's
HELD, QUEUED, PROCESSING = JobStatus.HELD, JobStatus.QUEUED, JobStatus.PROCESSING
COMPLETED, FAILED, CANCELLED = JobStatus.COMPLETED, JobStatus.FAILED, JobStatus.CANCELLED
ENDINGS = (COMPLETED, FAILED, CANCELLED)

# The metrics a move is counted in, by the process that ran its transition (observability/metrics.py;
# tests/unit/jobs/test_state_machine.py checks the names exist).
SUBMISSIONS = "ocrgw_submissions_total"
JOB_STARTS = "ocrgw_job_starts_total"
JOB_ATTEMPTS = "ocrgw_job_attempts_total"
JOBS_FINISHED = "ocrgw_jobs_finished_total"


@dataclass(frozen=True)
class Edge:
    """One status change of one kind of job, by one transition."""

    transition: str
    kind: JobKind
    source: JobStatus | None  # NEW: the move creates the job
    target: JobStatus


@dataclass(frozen=True)
class Move:
    """A row of the table: ``transition`` moves a job of any of ``kinds`` from any of ``sources`` to any of
    ``targets``, for the reason ``why`` says.

    ``audit``: the move writes the job's one audit event (``Operation.JOB_CHILD`` for a child, ``JOB`` for a
    root: ``audit_operation``); ``webhook``: it queues the job's webhook when the job has a callback_url;
    ``metric``: what the process that ran the transition counts it in (None: nothing counts this move).
    """

    transition: str
    kinds: tuple[JobKind, ...]
    sources: tuple[JobStatus | None, ...]
    targets: tuple[JobStatus, ...]
    why: str
    audit: bool = False
    webhook: bool = False
    metric: str | None = None

    def edges(self) -> Iterator[Edge]:
        for kind in self.kinds:
            for source in self.sources:
                for target in self.targets:
                    yield Edge(self.transition, kind, source, target)


def audit_operation(kind: JobKind) -> Operation:
    """The operation of the audit event a job's ending writes."""
    return Operation.JOB_CHILD if kind is CHILD else Operation.JOB


def _ending(transition: str, kinds: tuple[JobKind, ...], sources: tuple[JobStatus, ...], targets, why: str) -> Move:
    """A move to a terminal status: it writes the job's audit event and queues its webhook; a single job's or
    a child's is counted as finished (a parent's is not: its children are)."""
    metric = JOBS_FINISHED if PARENT not in kinds else None
    return Move(transition, kinds, sources, targets, why, audit=True, webhook=True, metric=metric)


def _release(transition: str) -> Move:
    return Move(transition, (CHILD,), (HELD,), (QUEUED,), "held children released into their parent's free slots")


def _claim(transition: str, why: str) -> tuple[Move, Move]:
    return (
        Move(transition, RUNNABLE, (QUEUED,), (PROCESSING,), why, metric=JOB_STARTS),
        Move(transition, (PARENT,), (QUEUED,), (PROCESSING,), "a parent starts with its first child"),
    )


def _fail_fast(transition: str) -> Move:
    return _ending(
        transition, (CHILD,), (HELD,), (CANCELLED,), "a fail-fast group past its tolerance cancels its held children"
    )


def _finalize(transition: str, sources: tuple[JobStatus, ...], why: str) -> Move:
    return _ending(transition, (PARENT,), sources, ENDINGS, why)


MOVES: tuple[Move, ...] = (
    # create
    Move("create", ROOTS, (NEW,), (QUEUED,), "a single job or a group is accepted", metric=SUBMISSIONS),
    Move("create", (CHILD,), (NEW,), (HELD,), "a group's children wait for a slot"),
    _release("create"),
    # claim, claim_next: a worker starts an attempt (a message named the job, or a wake-up)
    *_claim("claim", "a worker starts an attempt of the job its message names"),
    *_claim("claim_next", "a worker a wake-up brought starts an attempt of its model's next ready job"),
    # complete: an attempt ends; the worker may take the next ready job in the same step
    _ending("complete", RUNNABLE, (PROCESSING,), ENDINGS, "an attempt ends the job"),
    _finalize("complete", (PROCESSING,), "the group's last child ended"),
    _fail_fast("complete"),
    _release("complete"),
    *_claim("complete", "the finishing worker takes its model's next ready job (a kept slot)"),
    # retry: a transient error gives the job back
    Move(
        "retry",
        RUNNABLE,
        (PROCESSING,),
        (QUEUED,),
        "a transient error: the job waits out its backoff",
        metric=JOB_ATTEMPTS,
    ),
    # reclaim: a lease ran out
    Move("reclaim", RUNNABLE, (PROCESSING,), (QUEUED,), "its lease ran out with attempts left", metric=JOB_ATTEMPTS),
    _ending(
        "reclaim",
        RUNNABLE,
        (PROCESSING,),
        (FAILED, CANCELLED),
        "its lease ran out on the last attempt (or on a job a client cancelled)",
    ),
    _finalize("reclaim", (PROCESSING,), "the group's last child ended"),
    _fail_fast("reclaim"),
    _release("reclaim"),
    # release: the sweep (or the gateway, after create) fills free slots
    _release("release"),
    _finalize("release", (QUEUED, PROCESSING), "every child ended and the parent was not finalized yet"),
    # cancel: a client's cancel of a job or a group; a running job only gets asked to stop
    _ending("cancel", (SINGLE,), (QUEUED,), (CANCELLED,), "a client cancels a job not yet started"),
    _ending(
        "cancel",
        (CHILD,),
        (HELD, QUEUED),
        (CANCELLED,),
        "a client cancels a child, or its group, before the child started",
    ),
    _finalize(
        "cancel",
        (QUEUED, PROCESSING),
        "a client cancels the group (cancelled), or its last child (completed or failed by tolerance)",
    ),
    _release("cancel"),
    # set_cap: a group's cap changes
    _release("set_cap"),
    # redrive: a group's failed (and cancelled) children run again
    Move("redrive", (CHILD,), (FAILED, CANCELLED), (HELD,), "a redrive sends the group's failed children again"),
    Move("redrive", (PARENT,), ENDINGS, (PROCESSING,), "a redriven group runs again"),
    _release("redrive"),
)

#: Every edge the table holds.
EDGES: frozenset[Edge] = frozenset(edge for move in MOVES for edge in move.edges())
#: The transitions that move a job's status, in the table's order.
MOVING_TRANSITIONS: tuple[str, ...] = tuple(dict.fromkeys(move.transition for move in MOVES))


def moves_of(transition: str) -> tuple[Move, ...]:
    return tuple(move for move in MOVES if move.transition == transition)


def targets_of(transition: str) -> frozenset[JobStatus]:
    """The statuses ``transition`` may write."""
    return frozenset(target for move in moves_of(transition) for target in move.targets)


def lua_comment(transition: str) -> str:
    """The moves of ``transition``, as a comment its generated source carries after the preamble (nothing
    runs: a script's cost per call stays what it was)."""
    moves = moves_of(transition)
    if not moves:
        return f"-- Moves no job's status (jobs/state_machine.py has no row for `{transition}`).\n"
    lines = [f"-- The moves of `{transition}`, from jobs/state_machine.py:"]
    for move in moves:
        sources = ", ".join("(new)" if s is NEW else s.value for s in move.sources)
        targets = ", ".join(t.value for t in move.targets)
        lines.append(f"--   {', '.join(k.value for k in move.kinds)}: {sources} -> {targets}")
    return "\n".join(lines) + "\n"


def markdown_table() -> str:
    """The table as the manual shows it: one line per row."""
    lines = [
        "| transition | kinds | from | to | audit event | webhook | metric | why |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for move in MOVES:
        audit = ", ".join(dict.fromkeys(f"`{audit_operation(k).value}`" for k in move.kinds)) if move.audit else ""
        cells = (
            f"`{move.transition}`",
            ", ".join(k.value for k in move.kinds),
            ", ".join("(new)" if s is NEW else s.value for s in move.sources),
            ", ".join(t.value for t in move.targets),
            audit,
            "if it has a `callback_url`" if move.webhook else "",
            f"`{move.metric}`" if move.metric else "",
            move.why,
        )
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
