"""What a live view of a job reads each time it looks: how far the job got, and its audit entries since a position.

A job's live stream (``GET /jobs/{id}/events`` as ``text/event-stream``)
is made of reads, never of writes on the job's path: a transition costs
the same whether anybody watches or not.  Each look at a watched job is a
few commands, pipelined with the looks at every other watched job:

- the job's status, and what its progress shows (a parent's total and
  count per status; a single job's or a child's stage and progress);
- for a parent, the children in flight (queued, processing), from the
  parent's per-status child sets, at most ``IN_FLIGHT_SHOWN`` of each:
  a child's start is seen there, its end in its audit event;
- the audit entries of the job's root after the position the watcher has
  (the stream's entry ids are the positions), at most ``count`` of them.
  A child's look keeps the child's own entries only, but says how far it
  read (``read_to``): a watcher moves past its siblings' entries too, so
  that a group with thousands of them behind a child's end reaches it,
  ``count`` entries a look, rather than reading the same ones again.

The status is read before the entries, in one round trip to one slot (the
root's keys share their bucket's): a job seen terminal has its terminal
event among the entries read, since one script sets both.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from jobs import keys
from jobs.connections import StoreClient
from jobs.contract import Field, JobStatus, count_field
from jobs.ids import is_job_id
from jobs.keys import Keyspace

#: Children shown in flight per status and look: a parent without a cap may have thousands queued.
IN_FLIGHT_SHOWN = 1000
#: The statuses a child is in flight in: its start is seen there, as no audit event marks it.
IN_FLIGHT = (JobStatus.QUEUED.value, JobStatus.PROCESSING.value)

_ENTRY_ID = re.compile(r"(0|[1-9][0-9]{0,19})-(0|[1-9][0-9]{0,19})")
_MAX_PART = 2**64 - 1
_SUMMARY_FIELDS = (
    Field.STATUS.value,
    Field.KIND.value,
    Field.STAGE.value,
    Field.PROGRESS.value,
    Field.TOTAL.value,
    *(count_field(s) for s in JobStatus),
)

Position = tuple[int, int]
#: Before the first entry of any stream.
START: Position = (0, 0)


class InvalidPosition(ValueError):
    """Raised when a position is not an audit entry id (``<ms>-<seq>``)."""


def position_of(entry_id: str) -> Position:
    """The position an entry id names; ``InvalidPosition`` for anything but ``<ms>-<seq>``."""
    match = _ENTRY_ID.fullmatch(entry_id)
    if match is None or int(match[1]) > _MAX_PART or int(match[2]) > _MAX_PART:
        raise InvalidPosition(f"{entry_id!r} is not an event id (<milliseconds>-<sequence>)")
    return int(match[1]), int(match[2])


def entry_id_of(position: Position) -> str:
    return f"{position[0]}-{position[1]}"


@dataclass(frozen=True)
class Look:
    """What one look at a watched job saw."""

    job_id: str
    # None once the job is gone (expired, or never was).
    status: str | None
    kind: str = ""
    stage: str = ""
    progress: float = 0.0
    total: int = 0
    counts: dict[str, int] = field(default_factory=dict)
    # A parent's children in flight: id -> (index, status).
    in_flight: dict[str, tuple[int, str]] = field(default_factory=dict)
    # The audit entries after the position looked from, oldest first (a child's: its own only).
    entries: list[tuple[Position, dict[str, str]]] = field(default_factory=list)
    # False when more entries than asked were there: the rest come at the next look.
    read_to_end: bool = True
    # The last entry read, kept or not (a child's look skips its siblings'); None when none was.
    read_to: Position | None = None

    @property
    def terminal(self) -> bool:
        return self.status is None or JobStatus(self.status).terminal


def look(
    client: StoreClient, keyspace: Keyspace, watched: Sequence[tuple[str, Position]], count: int = 500
) -> list[Look]:
    """One look at each (job id, position) in one pipeline, in the order given."""
    if not watched:
        return []
    pipe = client.pipeline(transaction=False)
    shapes: list[bool] = []
    for job_id, after in watched:
        if not is_job_id(job_id):
            raise ValueError(f"not a job id: {job_id!r}")
        is_root = keys.root_of(job_id) == job_id
        pipe.hmget(keyspace.job(job_id), _SUMMARY_FIELDS)
        if is_root:
            for status in IN_FLIGHT:
                pipe.zrange(keyspace.children(job_id, status), 0, IN_FLIGHT_SHOWN - 1, withscores=True)
        start = "-" if after == START else entry_id_of((after[0], after[1] + 1))
        pipe.xrange(keyspace.events(job_id), start, "+", count=count)
        shapes.append(is_root)
    replies = iter(pipe.execute())
    looks = []
    for (job_id, _), is_root in zip(watched, shapes, strict=True):
        summary = dict(zip(_SUMMARY_FIELDS, (_text(v) for v in next(replies)), strict=True))
        in_flight: dict[str, tuple[int, str]] = {}
        if is_root:
            for status in IN_FLIGHT:
                for member, score in next(replies):
                    in_flight[_text(member) or ""] = (int(score), status)
        raw_entries = next(replies)
        entries = []
        read_to: Position | None = None
        for entry_id, raw in raw_entries:
            read_to = position_of(_text(entry_id) or "")
            event = {_text(k) or "": _text(v) or "" for k, v in raw.items()}
            if not is_root and event.get("job_id") != job_id:
                continue  # a child's stream holds its own events only
            entries.append((read_to, event))
        looks.append(_look(job_id, summary, in_flight, entries, len(raw_entries) < count, read_to))
    return looks


def _look(
    job_id: str,
    summary: dict[str, str | None],
    in_flight: dict[str, tuple[int, str]],
    entries: list[tuple[Position, dict[str, str]]],
    read_to_end: bool,
    read_to: Position | None,
) -> Look:
    status = summary[Field.STATUS.value]
    if not status:
        return Look(job_id, None, entries=entries, read_to_end=read_to_end, read_to=read_to)
    kind = summary[Field.KIND.value] or ""
    return Look(
        job_id,
        status,
        kind=kind,
        stage=summary[Field.STAGE.value] or "",
        progress=float(summary[Field.PROGRESS.value] or 0),
        total=int(summary[Field.TOTAL.value] or 0),
        counts={s.value: int(summary[count_field(s)] or 0) for s in JobStatus} if kind == "parent" else {},
        in_flight=in_flight,
        entries=entries,
        read_to_end=read_to_end,
        read_to=read_to,
    )


def _text(value: bytes | str | None) -> str | None:
    return value.decode() if isinstance(value, bytes) else value
