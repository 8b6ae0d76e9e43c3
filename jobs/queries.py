"""The read side of the job store: a job, a page of a parent's children, a listing, results, events.

What a read costs follows what the caller shows, never the size of a group:
a page of children is its ``limit`` rows, found by id (children are
``<parent>-<index>``) or through the parent's per-status child sets, and a
listing reads the per-(kind, status) sets of roots newest first.  Each
read pipelines its commands: one round trip per page, two when a page of
children is filtered by status (the set yields the ids to read).

Ids are checked (``jobs.ids.is_job_id``) before they become keys.  Reads
for a client name its tenant: a job is that tenant's when its root's stored
tenant says so (the id's tag only routes: tags could collide), and a listing
reads the tenant's own sets.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from redis.cluster import RedisCluster

from jobs import keys
from jobs.connections import StoreClient
from jobs.contract import ROOT_KINDS as _ROOT_KINDS
from jobs.contract import ROOT_STATUSES as _ROOT_STATUSES
from jobs.contract import Field, JobStatus, count_field
from jobs.ids import DEFAULT_TENANT, is_job_id, tenant_tag
from jobs.keys import Keyspace
from jobs.pdf_outputs import DEFAULT_OUTPUT

#: What a listing may be filtered by, and a page of children.
ROOT_KINDS = tuple(k.value for k in _ROOT_KINDS)
ROOT_STATUSES = tuple(s.value for s in _ROOT_STATUSES)
CHILD_STATUSES = tuple(s.value for s in JobStatus)

#: What a parent's page of children shows of each child.
CHILD_VIEW_FIELDS = (
    Field.INTERVALS.value,
    Field.ID.value,
    Field.INDEX.value,
    Field.STATUS.value,
    Field.MODEL.value,
    Field.DOC_HASH.value,
    Field.STAGE.value,
    Field.PROGRESS.value,
    Field.ATTEMPTS.value,
    Field.STARTED_AT.value,
    Field.FINISHED_AT.value,
    Field.ERROR_CODE.value,
)
#: What a listing shows of each root, with the counts a parent's progress is derived from and the
#: tenant the listing checks.
LIST_FIELDS = (
    Field.ID.value,
    Field.KIND.value,
    Field.STATUS.value,
    Field.MODEL.value,
    Field.CREATED_AT.value,
    Field.STARTED_AT.value,
    Field.FINISHED_AT.value,
    Field.ERROR_CODE.value,
    Field.TOTAL.value,
    Field.TENANT.value,
    *(count_field(s) for s in JobStatus),
)
#: What says where a child would run: its model, and whether its document must stay on premises.
_LOCATION_FIELDS = (Field.ID.value, Field.INDEX.value, Field.MODEL.value, Field.ON_PREM.value)
_MERGE_FIELDS = (
    Field.ID.value,
    Field.INDEX.value,
    Field.STATUS.value,
    Field.ERROR_CODE.value,
    Field.CONTENT_TYPE.value,
    Field.OPTIONS.value,
    Field.MODEL.value,
    Field.SOURCE_PAGES.value,
)

Row = dict[str, str | None]


class InvalidCursor(ValueError):
    """Raised when a listing cursor was not made by ``list_jobs``."""


@dataclass(frozen=True)
class ChildrenPage:
    children: list[Row]  # index order
    offset: int
    limit: int
    total: int  # children matching the filter

    @property
    def next_offset(self) -> int | None:
        end = self.offset + self.limit
        return end if end < self.total else None


@dataclass(frozen=True)
class JobList:
    jobs: list[Row]  # newest first
    next_cursor: str | None


@dataclass(frozen=True)
class StoredPdf:
    """A searchable PDF as kept: the document, or the reason none could be built."""

    pdf: bytes | None
    error: str | None


class JobQueries:
    def __init__(self, client: StoreClient, keyspace: Keyspace):
        self.redis = client
        self.keyspace = keyspace
        self.on_cluster = isinstance(client, RedisCluster)

    def get(self, job_id: str, tenant: str | None = None) -> dict[str, str] | None:
        """The job's stored fields, or None; with ``tenant``, None too unless the job is that tenant's.

        A child's tenant is its root's (read in the same round trip): no
        child stores one.
        """
        if not is_job_id(job_id):
            return None
        if tenant is not None and keys.tag_of(job_id) != tenant_tag(tenant):
            return None
        root = keys.root_of(job_id)
        pipe = self.redis.pipeline(transaction=False)
        pipe.hgetall(self.keyspace.job(job_id))
        if tenant is not None and root != job_id:
            pipe.hget(self.keyspace.job(root), Field.TENANT.value)
        raw, *root_tenant = pipe.execute()
        if not raw:
            return None
        record = {k.decode(): v.decode() for k, v in raw.items()}
        owner = _str(root_tenant[0]) if root_tenant else record.get(Field.TENANT.value)
        if tenant is not None and owner != tenant:
            return None
        return record

    # -- a parent's children -----------------------------------------------------------------

    def children_page(self, parent_id: str, offset: int, limit: int, status: str | None = None) -> ChildrenPage:
        """Children ``offset`` .. ``offset + limit - 1`` of the parent (in index order), all or in one status."""
        if status is None:
            pipe = self.redis.pipeline(transaction=False)
            pipe.hget(self.keyspace.job(parent_id), "total")
            for index in range(offset, offset + limit):
                pipe.hmget(self.keyspace.job(keys.child_id(parent_id, index)), CHILD_VIEW_FIELDS)
            total, *rows = pipe.execute()
            children = [_row(CHILD_VIEW_FIELDS, values) for values in rows]
            return ChildrenPage([c for c in children if c["id"] is not None], offset, limit, int(total or 0))
        index_key = self.keyspace.children(parent_id, status)
        pipe = self.redis.pipeline(transaction=False)
        pipe.zcard(index_key)
        pipe.zrange(index_key, offset, offset + limit - 1)
        total, members = pipe.execute()
        return ChildrenPage(self._rows([_text(m) for m in members], CHILD_VIEW_FIELDS), offset, limit, total)

    def children_in(self, parent_id: str, statuses: Sequence[str]) -> list[Row]:
        """Every child of the parent in one of ``statuses``, by index: its id, index, model and on_prem mark.

        What a control reads to know which models a change would start (see ``gateway.api.controls``).
        """
        pipe = self.redis.pipeline(transaction=False)
        for status in statuses:
            pipe.zrange(self.keyspace.children(parent_id, status), 0, -1)
        ids = [_text(member) for members in pipe.execute() for member in members]
        return sorted(self._rows(ids, _LOCATION_FIELDS), key=lambda row: int(row["index"] or 0))

    def children_with_results(self, parent_id: str, total: int) -> list[tuple[Row, dict[str, Any] | None]]:
        """Every child (id, index, status, error_code, content_type, options, model, source_pages) with its
        stored result: what a merged result (or a parent's searchable PDF) is made of."""
        ids = [keys.child_id(parent_id, i) for i in range(total)]
        pipe = self.redis.pipeline(transaction=False)
        for child_id in ids:
            pipe.hmget(self.keyspace.job(child_id), _MERGE_FIELDS)
        # MGET is one slot only under Cluster; the children of a parent share one (their bucket's).  A
        # cluster's pipeline takes no MGET: there it is a round trip of its own.
        results_in_pipe = bool(ids) and not self.on_cluster
        if results_in_pipe:
            pipe.mget([self.keyspace.result(c) for c in ids])
        replies = pipe.execute() if ids else []
        rows = [_row(_MERGE_FIELDS, values) for values in replies[: len(ids)]]
        raws = replies[len(ids)] if results_in_pipe else self._mget([self.keyspace.result(c) for c in ids])
        results = [json.loads(raw) if raw else None for raw in raws]
        return list(zip(rows, results, strict=True))

    # -- the listing -------------------------------------------------------------------------------

    def list_jobs(
        self,
        status: str | None = None,
        kind: str | None = None,
        limit: int = 20,
        cursor: str | None = None,
        tenant: str = DEFAULT_TENANT,
    ) -> JobList:
        """A tenant's roots (single jobs and parents) newest first, from its per-(kind, status) indexes.

        Each index is read newest first up to ``limit + 1`` members past the
        cursor and the reads are merged, so a page costs the same however
        many jobs exist.  The cursor is the (created_at, id) of a page's last
        job: jobs created since are newer, so they never shift later pages.
        A root another tenant stored under a colliding tag is left out.  The
        sets are per bucket (``jobs.keys``): a page reads ``limit + 1`` of each
        set of every bucket, the same merge.
        """
        tag = tenant_tag(tenant)
        # Every bucket's share of the tenant's sets: the merge below takes the newest of them all.
        indexes = [
            self.keyspace.roots(k, s, tag, bucket)
            for bucket in self.keyspace.buckets()
            for k in ([kind] if kind else ROOT_KINDS)
            for s in ([status] if status else ROOT_STATUSES)
        ]
        after = decode_cursor(cursor) if cursor is not None else None
        pipe = self.redis.pipeline(transaction=False)
        for index in indexes:
            if after is None:
                pipe.zrevrangebyscore(index, "+inf", "-inf", start=0, num=limit + 1, withscores=True)
            else:
                # Jobs created in the cursor's very microsecond sort by id, as in the index itself.
                pipe.zrevrangebyscore(index, after[0], after[0], withscores=True)
                pipe.zrevrangebyscore(index, f"({after[0]}", "-inf", start=0, num=limit + 1, withscores=True)
        candidates = {(int(score), _text(member)) for reply in pipe.execute() for member, score in reply}
        if after is not None:
            candidates = {c for c in candidates if c < after}
        newest = sorted(candidates, reverse=True)
        page, more = newest[:limit], len(newest) > limit
        rows = self._rows([job_id for _, job_id in page], LIST_FIELDS)
        rows = [row for row in rows if row[Field.TENANT.value] == tenant]
        return JobList(rows, encode_cursor(*page[-1]) if more else None)

    # -- results and events ------------------------------------------------------------------------

    def result(self, job_id: str) -> dict[str, Any] | None:
        raw = self.redis.get(self.keyspace.result(job_id))
        return json.loads(raw) if raw else None

    def payloads(self, job_ids: Sequence[str]) -> list[bytes | None]:
        """The stored documents of jobs (of one group: MGET is one slot under Cluster)."""
        if not job_ids:
            return []
        return [
            value if isinstance(value, bytes) else None
            for value in self._mget([self.keyspace.payload(j) for j in job_ids])
        ]

    def stored_pdf(self, job_id: str, variant: str = DEFAULT_OUTPUT.name) -> StoredPdf | None:
        """A variant of the job's searchable PDF as built (or why it could not be), or None while none is kept."""
        pdf, error = self.redis.hmget(self.keyspace.pdf(job_id), keys.pdf_fields(variant))
        if pdf is None and error is None:
            return None
        return StoredPdf(pdf if isinstance(pdf, bytes) else None, error.decode() if isinstance(error, bytes) else None)

    def source_document(self, job_id: str) -> bytes | None:
        """The document a split's child reads its pages of: its parent's payload (None once gone)."""
        value = self.redis.get(self.keyspace.payload(keys.root_of(job_id)))
        return value if isinstance(value, bytes) else None

    def results(self, job_ids: Sequence[str]) -> list[dict[str, Any] | None]:
        if not job_ids:
            return []
        return [json.loads(raw) if raw else None for raw in self._mget([self.keyspace.result(j) for j in job_ids])]

    def _mget(self, names: Sequence[str]) -> list[Any]:
        """The values of keys of any buckets, in the order asked: one MGET per bucket (MGET is one slot only
        under Cluster), in a pipeline; on a cluster, whose pipeline takes no MGET, one round trip each."""
        by_bucket: dict[int, list[int]] = {}
        for position, name in enumerate(names):
            by_bucket.setdefault(self.keyspace.bucket_of_key(name), []).append(position)
        if self.on_cluster:
            replies = [self.redis.mget([names[p] for p in positions]) for positions in by_bucket.values()]
        else:
            pipe = self.redis.pipeline(transaction=False)
            for positions in by_bucket.values():
                pipe.mget([names[p] for p in positions])
            replies = pipe.execute()
        values: list[Any] = [None] * len(names)
        for positions, reply in zip(by_bucket.values(), replies, strict=True):
            for position, value in zip(positions, reply, strict=True):
                values[position] = value
        return values

    def events(self, job_id: str) -> list[dict[str, str]]:
        """The audit events of a job, oldest first; a parent's include its children's."""
        root = keys.root_of(job_id)
        out = []
        entries: list[tuple[bytes, dict[bytes, bytes]]] = self.redis.xrange(self.keyspace.events(job_id))  # type: ignore[assignment]
        for entry_id, raw in entries:
            event = {k.decode(): v.decode() for k, v in raw.items()}
            if job_id != root and event["job_id"] != job_id:
                continue  # a child's view holds its own events only
            event["id"] = entry_id.decode()
            out.append(event)
        return out

    def _rows(self, job_ids: list[str], fields: Sequence[str]) -> list[Row]:
        """The fields of each job, in the given order; a job whose record is gone is left out."""
        if not job_ids:
            return []
        pipe = self.redis.pipeline(transaction=False)
        for job_id in job_ids:
            pipe.hmget(self.keyspace.job(job_id), fields)
        rows = [_row(fields, values) for values in pipe.execute()]
        return [r for r in rows if r["id"] is not None]


# -- the listing cursor -------------------------------------------------------------------------

_CURSOR = re.compile(r"([0-9]{1,19}):([0-9a-f]{32})")


def encode_cursor(created_at: int, job_id: str) -> str:
    return base64.urlsafe_b64encode(f"{created_at}:{job_id}".encode()).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[int, str]:
    """(created_at µs, id) of the last job of the previous page; ``InvalidCursor`` for anything else."""
    try:
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode("ascii")
    except (ValueError, UnicodeError):
        raise InvalidCursor("not a cursor of this listing") from None
    match = _CURSOR.fullmatch(text)
    if match is None:
        raise InvalidCursor("not a cursor of this listing")
    return int(match[1]), match[2]


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def _str(value: bytes | str | None) -> str | None:
    return value.decode() if isinstance(value, bytes) else value


def _row(fields: Sequence[str], values: Sequence[bytes | None]) -> Row:
    return {name: _str(value) for name, value in zip(fields, values, strict=True)}
