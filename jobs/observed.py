"""What the metrics read from the store: the jobs held, queued and processing per model, and the workers.

(Hand-off times need no read: the claims carry them.)  The reads go
through the indexes the transitions keep, never a scan of the keyspace, so
a count costs what is in flight, not what was ever stored:

* processing jobs are the members of ``ocrgw:leases``, queued ones those of
  ``ocrgw:queued`` (single jobs and children alike, a retry waiting out its
  backoff included);
* held children sit in their parent's ``children:held`` set, counted by
  the parent's ``n_held``.  A parent with held children always has a child
  queued or processing, or is on the due index (that is what keeps it
  moving: every transition that frees a slot releases into it in the same
  script, or leaves the parent due for the sweep), so the parents of the
  jobs in flight and the due parents are every parent with held children.

A child's model is its parent's unless the group is ``mixed``; only then
are the children read one by one.

That read costs what is in flight (and a mixed group's held children one
by one), so a scrape does not make it: the coordinator does, once every
``OCRGW_GAUGE_INTERVAL`` (``record_sample``), and keeps the counts in one
key, ``ocrgw:gauges``, with the store's time of the count; a scrape reads
that key, with the store's time, in one round trip (``last_sample_and_time``),
whatever the backlog, and however often, by however many gateways, it is scraped.  Sampled rather
than counted by the transitions (a counter per model and status in every
script that moves a job): the count is the one a scrape used to make,
only older, by one interval at most, and it leaves the transitions (and
every path of every one, which a counter would have to follow exactly
forever) as they are.  The sample tells its age (``sampled_at_ms``), so
a gauge that stops moving because no coordinator runs can be told from one
that does not move (the gateway withholds a count too old: ``observability.collectors``).
The key has no expiry on purpose: a count that lapsed would take its date
with it, and an alert on the gauges' age could not fire.

The same count holds the workers that report to the store
(``jobs.worker_reports.census``): how many live, and how many stopped
renewing their report without withdrawing it, which is what tells a
worker that died or hung from one that was stopped.
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from redis.cluster import RedisCluster

from jobs import keys
from jobs.connections import StoreClient
from jobs.contract import Field, JobStatus, count_field
from jobs.keys import Keyspace
from jobs.registry import MODELS
from jobs.worker_reports import Census, census

log = logging.getLogger(__name__)

MIXED = "mixed"  # the model of a parent whose children use several
#: The statuses counted, in the order of Occupancy's fields: those of a job not ended.
COUNTED = (JobStatus.HELD, JobStatus.QUEUED, JobStatus.PROCESSING)


@dataclass(frozen=True)
class Occupancy:
    """Jobs per model in each status that is not terminal."""

    held: Counter[str] = field(default_factory=Counter)
    queued: Counter[str] = field(default_factory=Counter)
    processing: Counter[str] = field(default_factory=Counter)

    @property
    def models(self) -> list[str]:
        """Every registered model (so that each has its series, zero or not), then any other one found."""
        found = set(self.held) | set(self.queued) | set(self.processing)
        return [*MODELS, *sorted(found - set(MODELS))]

    def by_status(self) -> dict[str, Counter[str]]:
        """The counts under the statuses' names (``COUNTED``), as the sample and the dashboard spell them."""
        ordered = (self.held, self.queued, self.processing)
        return {status.value: counts for status, counts in zip(COUNTED, ordered, strict=True)}


def occupancy(client: StoreClient, keyspace: Keyspace) -> Occupancy:
    """Held, queued and processing jobs per model, in two pipelined round trips (four with a mixed group in flight)."""
    pipe = client.pipeline(transaction=False)
    indexes = (keyspace.queued, keyspace.leases, keyspace.due_parents)
    for bucket in keyspace.buckets():
        for index in indexes:
            pipe.zrange(index(bucket), 0, -1)
    replies = pipe.execute()
    queued_ids, processing_ids, due_ids = (
        [_text(m) for reply in replies[i :: len(indexes)] for m in reply] for i in range(len(indexes))
    )

    in_flight = [*queued_ids, *processing_ids]
    singles = sorted({j for j in in_flight if not _is_child(j)})
    parents = sorted({keys.root_of(j) for j in in_flight if _is_child(j)} | set(due_ids))
    pipe = client.pipeline(transaction=False)
    for job_id in singles:
        pipe.hget(keyspace.job(job_id), Field.MODEL.value)
    for parent_id in parents:
        pipe.hmget(keyspace.job(parent_id), Field.MODEL.value, count_field(JobStatus.HELD))
    replies = pipe.execute() if singles or parents else []
    model_of = {j: _text(m or b"") for j, m in zip(singles, replies[: len(singles)], strict=True)}
    rows = replies[len(singles) :]
    group_model = {p: _text(row[0] or b"") for p, row in zip(parents, rows, strict=True)}
    held_count = {p: int(row[1] or 0) for p, row in zip(parents, rows, strict=True)}

    # The children of a mixed group are read one by one for their own model: those in flight, and the held ones.
    mixed_held = [p for p in parents if group_model[p] == MIXED and held_count[p]]
    pipe = client.pipeline(transaction=False)
    for parent_id in mixed_held:
        pipe.zrange(keyspace.children(parent_id, JobStatus.HELD.value), 0, -1)
    held_children = [_text(m) for reply in (pipe.execute() if mixed_held else []) for m in reply]
    of_mixed = [j for j in in_flight if _is_child(j) and group_model[keys.root_of(j)] == MIXED]
    model_of.update(_models(client, keyspace, [*of_mixed, *held_children]))

    def model(job_id: str) -> str:
        return model_of[job_id] if job_id in model_of else group_model[keys.root_of(job_id)]

    held: Counter[str] = Counter(map(model, held_children))
    for parent_id, count in held_count.items():
        if count and group_model[parent_id] != MIXED:
            held[group_model[parent_id]] += count
    return Occupancy(held, Counter(map(model, queued_ids)), Counter(map(model, processing_ids)))


@dataclass(frozen=True)
class Sample:
    """The occupancy the coordinator last counted, and when (the store's clock, ms)."""

    occupancy: Occupancy
    sampled_at_ms: int
    # The reporting workers, live and lapsed (``jobs.worker_reports.census``); None in a count made without them.
    workers: Census | None = None


def record_sample(client: StoreClient, keyspace: Keyspace) -> Sample:
    """Counts the occupancy and keeps it in ``keys.GAUGES`` for the scrapes (the coordinator's, once an interval)."""
    seconds, micros = client.time()
    now = occupancy(client, keyspace)
    workers = census(client)
    sample = Sample(now, seconds * 1000 + micros // 1000, workers)
    counts = {**now.by_status(), "workers": {"live": workers.live, "lapsed": workers.lapsed}}
    client.set(keys.GAUGES, json.dumps({"sampled_at_ms": sample.sampled_at_ms, **counts}, separators=(",", ":")))
    return sample


def last_sample(client: StoreClient) -> Sample | None:
    """The last occupancy counted, in one command; None before the first count (no coordinator has run)."""
    return _parse_sample(client.get(keys.GAUGES))


def last_sample_and_time(client: StoreClient) -> tuple[Sample | None, int]:
    """The last occupancy counted and the store's time now (ms), in one round trip: how old the count is.

    On a cluster, whose pipeline takes no TIME, two: the time is a node's.
    """
    if isinstance(client, RedisCluster):
        raw = client.get(keys.GAUGES)
        seconds, micros = client.time()
        return _parse_sample(raw), seconds * 1000 + micros // 1000
    pipe = client.pipeline(transaction=False)
    pipe.get(keys.GAUGES)
    pipe.time()
    raw, (seconds, micros) = pipe.execute()
    return _parse_sample(raw), seconds * 1000 + micros // 1000


def _parse_sample(raw: bytes | str | None) -> Sample | None:
    if raw is None:
        return None
    try:
        found = json.loads(raw)
        counts = [Counter({str(m): int(n) for m, n in found[s.value].items()}) for s in COUNTED]
        workers = found.get("workers")
        census_ = None if workers is None else Census(int(workers["live"]), int(workers["lapsed"]))
        return Sample(Occupancy(*counts), int(found["sampled_at_ms"]), census_)
    except (ValueError, KeyError, TypeError, AttributeError):
        log.warning("%s holds no count of the gauges: %.80r", keys.GAUGES, raw)
        return None


def _models(client: StoreClient, keyspace: Keyspace, ids: Sequence[str]) -> dict[str, str]:
    """Each job's own model field, in one round trip."""
    if not ids:
        return {}
    pipe = client.pipeline(transaction=False)
    for job_id in ids:
        pipe.hget(keyspace.job(job_id), Field.MODEL.value)
    return {job_id: _text(model or b"") for job_id, model in zip(ids, pipe.execute(), strict=True)}


def _is_child(job_id: str) -> bool:
    return keys.CHILD_SEPARATOR in job_id


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def models_and_statuses(client: StoreClient, keyspace: Keyspace, job_ids: Sequence[str]) -> list[tuple[str, str]]:
    """(model, status) of each job, in one round trip; ('', '') for one that is gone."""
    if not job_ids:
        return []
    pipe = client.pipeline(transaction=False)
    for job_id in job_ids:
        pipe.hmget(keyspace.job(job_id), Field.MODEL.value, Field.STATUS.value)
    return [(_text(model or b""), _text(status or b"")) for model, status in pipe.execute()]
