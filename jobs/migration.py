"""``ocrgw store migrate``: moves a store onto the layout of this process (jobs.store_layout): from the
layout before buckets (``Migration``), or from another bucket count (``Rebucketing``, further below).
Either run records the new layout in the store once its keys are moved.

The layout before buckets (ocrgw up to commit 3c6f2fd) kept a root's keys
under the root's own hash tag, ``ocrgw:{<root>}:job:<id>`` and so on, and
the indexes and a tenant's keys outside any tag: ``ocrgw:leases``,
``ocrgw:roots:<tenant tag>:<kind>:<status>``, ``ocrgw:tenant:<tag>:...``,
``ocrgw:idem:<digest>``, ``ocrgw:workers``...  It is spelled here, and only
here, as the past layout it is; the new keys come from ``jobs.keys``.

On one Redis (a single primary, or the master Sentinel names) every old key
is RENAMEd to its new name for the bucket count in use (the run's ``Keyspace``):

* a root's group keys to its root's bucket (``keys.bucket_of``);
* an index of many roots or jobs (expiring, webhooks, the listing sets, a
  ready index, a tenant's webhook claims) is split by each member's bucket:
  RENAMEd whole when every member goes to one bucket and that key does not
  exist yet, else moved a chunk at a time, each chunk's ZADD to the new sets
  and ZREM from the old one in one MULTI/EXEC;
* an Idempotency-Key's record to where the current code looks it up, a
  creation's and a redrive's alike: the bucket of (tenant, key)
  (``keys.bucket_of_idempotency``, read off the record's digest).  The root
  a record names keeps its own bucket, which may differ: a replay reads the
  record alone and answers its job id, whatever the bucket, so every record
  is kept (none is dropped);
* the wake-ups of a model and lane, and the records of ``claim_next`` calls,
  to bucket 0, where the current code takes a wake-up that names no bucket;
* the workers' reports to their hash-tagged keys; the old sweep lock, which
  no current process takes, is deleted.

Each move is atomic on the server (a RENAME, or one MULTI/EXEC), and an old
key is gone once moved, so a run cut short anywhere (SIGKILL included)
leaves a store that a second run finishes; a second run over a finished
store finds nothing to move.

Nothing may be in flight: a job queued, processing or held, a lease, a
queued or due entry, a tenant's in-flight count or waiting line refuse the
migration, with what was found.  A Redis Cluster is refused: moving a store
onto a cluster is copying it to other servers, which this does not do.
(A move between bucket counts, below, runs on a cluster too.)
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cache
from math import gcd
from typing import Any

from redis.cluster import RedisCluster
from redis.exceptions import ResponseError

from jobs import keys, store_layout
from jobs.config import Settings
from jobs.connections import StoreClient, redis_client
from jobs.contract import Field, JobStatus
from jobs.errors import OcrgwError
from jobs.keys import Keyspace
from jobs.settings_declaration import without_password

#: The commit whose layout this moves from: main before the merge of branch ``buckets``.
OLD_LAYOUT_COMMIT = "3c6f2fd"

# -- the old layout ------------------------------------------------------------------------------

_NS = keys.NAMESPACE + ":"
_OLD_GROUP = re.compile(r"ocrgw:\{([0-9a-f]{32})\}:(.+)")
_OLD_IDEMPOTENCY = re.compile(r"ocrgw:idem:([0-9a-f]{64})")
_OLD_ROOTS = re.compile(r"ocrgw:roots:([0-9a-f]{12}):([a-z]+):([a-z]+)")
_OLD_TENANT = re.compile(r"ocrgw:tenant:([0-9a-f]{12}):(in_flight|waiting|webhooks_in_flight)")
_OLD_LEASES = _NS + "leases"
_OLD_QUEUED = _NS + "queued"
_OLD_DUE_PARENTS = _NS + "parents:due"
_OLD_WEBHOOKS = _NS + "webhooks"
_OLD_EXPIRING = _NS + "expiring"
_OLD_READY = _NS + "ready:"
_OLD_WAKEUPS = _NS + "wakeups:"
_OLD_PULL_CALL = _NS + "pull_call:"
_OLD_SWEEP_LOCK = _NS + "sweep:lock"
_OLD_WORKERS = _NS + "workers"
# The group keys' kinds, as the part of the key after the root's tag starts.
_GROUP_KINDS = (
    keys.JOB,
    keys.PAYLOAD,
    keys.RESULT,
    keys.PDF_ASKED,
    keys.PDF,
    keys.CALL,
    keys.CHILDREN,
    keys.EVENTS,
)
_NOT_ENDED = (JobStatus.QUEUED.value, JobStatus.PROCESSING.value, JobStatus.HELD.value)
# How many keys a SCAN step asks for, how many commands a pipeline carries, how many members a chunk moves.
_SCAN_COUNT = 1000
_BATCH = 500
_CHUNK = 1000
# How many ids of jobs in flight a refusal names.
_NAMED = 5


class MigrationRefused(OcrgwError):
    """The store cannot be migrated as it is: why, and what to do, in a sentence or two."""


@dataclass(frozen=True)
class Old:
    """One key of the old layout and what it is: ``kind`` names it in the counts."""

    key: str
    kind: str
    # A key moved whole: its new name.  None for an index split by its members' buckets.
    to: str | None = None
    # An index split by its members: each member's new key.
    split: Callable[[str], str] | None = None


@dataclass
class Report:
    """What a run found and did (or, dry, would do)."""

    buckets: int
    dry_run: bool
    draining: bool = False
    #: Where the store is, as printed (no password).
    store: str = ""
    #: Old keys moved whole (or to be), by kind.
    moved: Counter[str] = field(default_factory=Counter)
    #: Members of split indexes moved (or to be), by kind of index.
    members: Counter[str] = field(default_factory=Counter)
    #: Old keys deleted, by kind.
    dropped: Counter[str] = field(default_factory=Counter)
    #: Idempotency-Key records by whose they are: "creation", "redrive", "job gone"; each goes to its key's bucket.
    idempotency: Counter[str] = field(default_factory=Counter)
    #: Old keys whose new name already holds a key of another type: left as they are.
    conflicts: list[str] = field(default_factory=list)
    #: Keys under ``ocrgw:`` that are of neither layout: left as they are.
    unknown: list[str] = field(default_factory=list)
    #: Keys already in the new layout (a store migrated before, or written by the new version).
    current: int = 0
    #: The bucket count moved from, when the store had another (``Rebucketing``).
    from_buckets: int | None = None

    @property
    def old_keys(self) -> int:
        return sum(self.moved.values()) + sum(self.dropped.values())


def old_key(key: str, keyspace: Keyspace) -> Old | None:
    """The old layout's key ``key`` and where it goes; None for a key of the new layout or none."""
    group = _OLD_GROUP.fullmatch(key)
    if group is not None:
        root, rest = group.groups()
        kind = next((k.rstrip(":") for k in _GROUP_KINDS if rest.startswith(k)), None)
        if kind is None:
            return None
        return Old(key, kind, f"{keyspace.group_prefix(root)}{rest}")
    if _OLD_IDEMPOTENCY.fullmatch(key):
        return Old(key, "idempotency")  # where to: decided by ``_idempotency_targets``, which reads its job
    roots = _OLD_ROOTS.fullmatch(key)
    if roots is not None:
        tag, kind, status = roots.groups()
        return Old(key, "roots", split=lambda member: keyspace.roots(kind, status, tag, keyspace.bucket_of(member)))
    tenant = _OLD_TENANT.fullmatch(key)
    if tenant is not None:
        tag, what = tenant.groups()
        if what == "webhooks_in_flight":
            return Old(
                key, "tenant webhook claims", split=lambda m: keyspace.tenant_webhooks(tag, keyspace.bucket_of(m))
            )
        # Either means something in flight: the run is refused before anything moves (``in_flight``).
        return Old(key, f"tenant {what}")
    fixed = {
        _OLD_LEASES: (Old(key, "leases", split=lambda m: keyspace.leases(keyspace.bucket_of(m)))),
        _OLD_QUEUED: (Old(key, "queued", split=lambda m: keyspace.queued(keyspace.bucket_of(m)))),
        _OLD_DUE_PARENTS: (Old(key, "parents:due", split=lambda m: keyspace.due_parents(keyspace.bucket_of(m)))),
        _OLD_WEBHOOKS: Old(key, "webhooks", split=lambda m: keyspace.webhooks(keyspace.bucket_of(m))),
        _OLD_EXPIRING: Old(key, "expiring", split=lambda m: keyspace.expiring(keyspace.bucket_of(m))),
        _OLD_SWEEP_LOCK: Old(key, "sweep lock"),  # deleted: no current process takes it
        _OLD_WORKERS: Old(key, "worker reports", keys.WORKERS),
    }
    if key in fixed:
        return fixed[key]
    if key.startswith(_OLD_WORKERS + ":"):
        return Old(key, "worker reports", keys.worker_report(key[len(_OLD_WORKERS) + 1 :]))
    if key.startswith(_OLD_READY):
        model, _, lane = key[len(_OLD_READY) :].rpartition(":")
        return Old(key, "ready", split=lambda m: keyspace.ready(keyspace.bucket_of(m), model, lane))
    if key.startswith(_OLD_WAKEUPS):
        # A wake-up of the old layout names no bucket: the current pull task takes it from bucket 0.
        model, _, lane = key[len(_OLD_WAKEUPS) :].rpartition(":")
        return Old(key, "wakeups", keyspace.wakeups(0, model, lane))
    if key.startswith(_OLD_PULL_CALL):
        return Old(key, "pull_call", keyspace.pull_call(0, key[len(_OLD_PULL_CALL) :]))
    return None


def is_current_key(key: str, keyspace: Keyspace) -> bool:
    """A key of the current layout: a bucket's, or one of the global keys."""
    if key in (keys.DRAINING, keys.GAUGES, keys.LAYOUT) or keys.is_worker_report(key):
        return True
    if not key.startswith(_NS + "{"):
        return False
    tag = key[len(_NS) + 1 :].partition("}")[0]
    return tag in keys.bucket_tags(keyspace.bucket_count)


# -- the run -------------------------------------------------------------------------------------


class Migration:
    """A run over one Redis client; ``step`` is called before every write, a pipeline of ``batch`` RENAMEs
    or a chunk of an index (tests cut a run short with it)."""

    def __init__(
        self,
        client: StoreClient,
        dry_run: bool = False,
        step: Callable[[], None] | None = None,
        batch: int = _BATCH,
        *,
        keyspace: Keyspace,
    ):
        self.redis = client
        #: The layout the run moves the keys onto.
        self.keyspace = keyspace
        self.on_cluster = isinstance(client, RedisCluster)
        self.dry_run = dry_run
        self._step = step or (lambda: None)
        self._batch = batch  # how many keys one pipeline of RENAMEs moves

    def run(self) -> Report:
        refuse_cluster(self.redis)
        report = Report(self.keyspace.bucket_count, self.dry_run, draining=bool(self.redis.exists(keys.DRAINING)))
        olds: list[Old] = []
        job_keys: list[str] = []
        for key in self._scan():
            old = old_key(key, self.keyspace)
            if old is not None:
                olds.append(old)
                if old.kind == "job":
                    job_keys.append(key)
            elif is_current_key(key, self.keyspace):
                report.current += 1
                if _is_current_job_key(key):
                    job_keys.append(key)
            else:
                report.unknown.append(key)
        if not olds:
            return report
        in_flight = self.in_flight(olds, job_keys)
        if in_flight:
            raise MigrationRefused(
                "something is in flight ("
                + "; ".join(in_flight)
                + "), and nothing may be. Drain the gateways (python -m gateway.drain on), wait until "
                "GET /jobs?status=queued and ?status=processing are empty, stop every ocrgw process, then run "
                "`ocrgw store migrate` again."
            )
        idem_targets = self._idempotency_targets([o.key for o in olds if o.kind == "idempotency"], report)
        whole: list[Old] = []
        for old in olds:
            if old.kind == "idempotency":
                old = Old(old.key, old.kind, idem_targets[old.key])
            if old.kind == "sweep lock":
                report.dropped[old.kind] += 1
                if not self.dry_run:
                    self._step()
                    self.redis.delete(old.key)
            elif old.to is not None:
                whole.append(old)
            elif old.split is not None:
                self._split(old, report)
        for start in range(0, len(whole), self._batch):
            self._move_keys(whole[start : start + self._batch], report)
        return report

    def _scan(self) -> Iterator[str]:
        seen: set[str] = set()
        for raw in self.redis.scan_iter(match=_NS + "*", count=_SCAN_COUNT):
            key = raw.decode() if isinstance(raw, bytes) else raw
            if key not in seen:  # SCAN may return a key twice
                seen.add(key)
                yield key

    def in_flight(self, olds: list[Old], job_keys: list[str]) -> list[str]:
        """What is in flight, one phrase each; empty when nothing is."""
        found: list[str] = []
        counted = {"leases": "lease", "queued": "queued entry", "parents:due": "due parent"}  # an index's entries
        index_keys = [(o.key, counted[o.kind]) for o in olds if o.kind in counted]
        index_keys += [(self.keyspace.leases(b), "lease") for b in self.keyspace.buckets()]
        index_keys += [(self.keyspace.queued(b), "queued entry") for b in self.keyspace.buckets()]
        index_keys += [(self.keyspace.due_parents(b), "due parent") for b in self.keyspace.buckets()]
        sizes = Counter[str]()
        pipe = self.redis.pipeline(transaction=False)
        for key, _ in index_keys:
            pipe.zcard(key)
        for (_, what), size in zip(index_keys, pipe.execute(), strict=True):
            sizes[what] += int(size)
        for what, size in sizes.items():
            if size:
                found.append(f"{_count(size, what)} in the store")
        for old in olds:
            if old.kind == "tenant in_flight":
                found.append(f"tenant {old.key.split(':')[2]} counts {_text(self.redis.get(old.key))} jobs in flight")
            elif old.kind == "tenant waiting":
                found.append(f"tenant {old.key.split(':')[2]} has {self.redis.zcard(old.key)} groups waiting")
        by_status: dict[str, list[str]] = {}
        for start in range(0, len(job_keys), _BATCH):
            batch = job_keys[start : start + _BATCH]
            pipe = self.redis.pipeline(transaction=False)
            for key in batch:
                pipe.hmget(key, Field.ID.value, Field.STATUS.value)
            for job_id, status in pipe.execute():
                status = _text(status)
                if status in _NOT_ENDED:
                    by_status.setdefault(status, []).append(_text(job_id))
        for status in _NOT_ENDED:
            ids = by_status.get(status, [])
            if ids:
                named = ", ".join(ids[:_NAMED]) + (", ..." if len(ids) > _NAMED else "")
                found.append(f"{_count(len(ids), 'job')} {status} ({named})")
        return found

    def _idempotency_targets(self, records: list[str], report: Report) -> dict[str, str]:
        """Each old Idempotency-Key record's new key: in its key's bucket, where a creation and a redrive
        with the key both look it up.

        A record names its root (``id``); the root's hash says whether the record is its creation's (its
        tenant and Idempotency-Key hash to the record's digest) or a redrive's (any other key), which the
        report counts apart.
        """
        targets: dict[str, str] = {}
        for start in range(0, len(records), _BATCH):
            batch = records[start : start + _BATCH]
            pipe = self.redis.pipeline(transaction=False)
            for key in batch:
                pipe.hget(key, Field.ID.value)
            roots = [_text(v) for v in pipe.execute()]
            pipe = self.redis.pipeline(transaction=False)
            for root in roots:
                for job_key in _job_keys_of(self.keyspace, root):
                    pipe.hmget(job_key, Field.TENANT.value, Field.IDEMPOTENCY_KEY.value)
            fields = pipe.execute()
            for i, (key, root) in enumerate(zip(batch, roots, strict=True)):
                digest = key.rpartition(":")[2]
                # As keys.bucket_of_idempotency has it, from the digest the old key already carries.
                key_bucket = int(digest[:8], 16) % self.keyspace.bucket_count
                tenant, idem = next(((t, k) for t, k in fields[2 * i : 2 * i + 2] if t is not None), (None, None))
                if not root or tenant is None:
                    whose = "job gone"
                elif self.keyspace.idempotency(_text(tenant), _text(idem), key_bucket) == _bucket_record(
                    self.keyspace, digest, key_bucket
                ):
                    whose = "creation"
                else:
                    whose = "redrive"
                report.idempotency[whose] += 1
                targets[key] = _bucket_record(self.keyspace, digest, key_bucket)
        return targets

    def _move_keys(self, olds: list[Old], report: Report) -> None:
        """RENAMEs each key to its new name, a pipeline of them at a time (each RENAME atomic on its own)."""
        if self.dry_run:
            report.moved.update(old.kind for old in olds)
            return
        self._step()
        pipe = self.redis.pipeline(transaction=False)
        for old in olds:
            pipe.renamenx(old.key, old.to or "")
        for old, renamed in zip(olds, pipe.execute(raise_on_error=False), strict=True):
            to = old.to or ""
            if isinstance(renamed, Exception):
                if "no such key" not in str(renamed).lower():
                    raise renamed
                continue  # lapsed since the scan (a call record's TTL): nothing to move
            if renamed:
                report.moved[old.kind] += 1
            elif self.redis.type(old.key) == self.redis.type(to) == b"zset":
                # Begun by a run cut short (or written since by the new version): the members join it.
                self._merge(old.key, _always(to), report, old.kind)
                report.moved[old.kind] += 1
            else:
                report.conflicts.append(f"{old.key} -> {old.to}")

    def _split(self, old: Old, report: Report) -> None:
        assert old.split is not None
        if self.dry_run:
            report.moved[old.kind] += 1
            report.members[old.kind] += int(self.redis.zcard(old.key))
            return
        if self.keyspace.bucket_count == 1:
            # Every member goes to bucket 0 (any id's): one key, renamed whole unless a cut run began it.
            to = old.split("0" * 32)
            size = int(self.redis.zcard(old.key))
            self._step()
            if self.redis.renamenx(old.key, to):
                report.moved[old.kind] += 1
                report.members[old.kind] += size
                return
        self._merge(old.key, old.split, report, old.kind)
        report.moved[old.kind] += 1

    def _merge(self, source: str, to: Callable[[str], str], report: Report, kind: str) -> None:
        """Moves the sorted set ``source`` a chunk at a time, each member to ``to(member)``, keeping its TTL.

        A member whose key is ``source`` itself (a bucket whose tag two counts share) stays; the chunks
        then start past those that stayed.
        """
        stayed = 0
        while True:
            chunk: list[Any] = list(self.redis.zrange(source, stayed, stayed + _CHUNK - 1, withscores=True))
            if not chunk:
                return
            ttl = int(self.redis.pttl(source))
            by_key: dict[str, dict[bytes, float]] = {}
            for member, score in chunk:
                target = to(_text(member))
                if target == source:
                    stayed += 1
                else:
                    by_key.setdefault(target, {})[member] = score
            if not by_key:
                continue
            self._step()
            # On a cluster the sets are in several slots, which no MULTI spans: the ZADDs first, then the
            # ZREM, so that a run cut between them leaves the members in both, which the next run finishes.
            pipe = self.redis.pipeline(transaction=not self.on_cluster)
            for key, members in by_key.items():
                pipe.zadd(key, members)
                if ttl > 0:
                    pipe.pexpire(key, ttl)
            moved = [m for members in by_key.values() for m in members]
            if self.on_cluster:
                pipe.execute()
                self.redis.zrem(source, *moved)
            else:
                pipe.zrem(source, *moved)
                pipe.execute()
            report.members[kind] += len(moved)


# -- from one bucket count to another ------------------------------------------------------------

_ROOT_REST = re.compile(r"([0-9a-f]{32}):(.+)")
_TENANT_REST = re.compile(r"([0-9a-f]{12})(:in_flight|:waiting|:webhooks_in_flight|:quota)")
# A bucket's keys whose entries lapse on their own and that no stopped stack needs: deleted, not moved.
_EPHEMERAL = (keys.WAKEUPS, keys.PULL_CALL, keys.SWEEP_LOCK, "replication-mark")
# What a cut run on a cluster leaves beside a usage record it added into its new bucket's (``_move_usage``).
_USAGE_MOVED = "usage-moved:"


class Rebucketing(Migration):
    """A run from the ``old`` bucket count (the store's recorded one) to the count in use (the run's ``Keyspace``).

    Every key of a bucket of the old count goes to its bucket of the new one:
    a group's keys whole, to its root's bucket; each index split by its
    members' buckets (as ``Migration`` splits the layout before buckets'); an
    Idempotency-Key's record (a creation's or a redrive's) to the bucket of
    its (tenant, key), read off its digest; the entries that lapse on their
    own (wake-ups, call records of ``claim_next``, the sweep lock) are
    deleted; a redrive's mark goes to the bucket of the group it names.
    The retries waiting out their backoff (``later``) are an index like the
    others, each keeping when its backoff ends.  The lanes' turns are merged
    (``_merge_turns``) so that the ready entries, which keep their turns,
    are taken in the same order per tenant; a tenant's usage records are
    added into their new bucket's, never twice (``_move_usage``).  A
    tenant's own slot (``{t<tag>}``: its interactive places, its streams)
    knows no bucket and stays.
    What counts the moved keys is then counted again from them: a tenant's
    in-flight children per bucket, and with a tenant cap over more than one
    bucket its quota ledger, whose grants are set to what each bucket has in
    flight (the sweep deals out the rest).  The layout is
    recorded last, so a run cut short is still the old count's, and a second
    run finishes it.  On a Redis Cluster, where a key's new bucket is in
    another slot, keys are copied and then deleted (``_move_keys``), and a
    chunk's members added and then removed (``_merge``), in that order, so
    that a run cut short leaves nothing lost, which the next run finishes.

    Jobs of every status move as they are (held, queued, processing too): a
    processing job's lease runs out while the stack is stopped, and the sweep
    takes it back; a queued one's message is published again.  Nothing may
    run meanwhile: a run is refused while another client is connected to the
    store's database (``connected``).
    """

    def __init__(self, client: StoreClient, old: int, cap: int = 0, *, keyspace: Keyspace, **options: Any):
        super().__init__(client, keyspace=keyspace, **options)
        self.old = old
        self.cap = cap

    def run(self) -> Report:
        new = self.keyspace.bucket_count
        report = Report(new, self.dry_run, draining=bool(self.redis.exists(keys.DRAINING)))
        others = connected(self.redis)
        if others:
            raise MigrationRefused(
                f"{_count(len(others), 'other client')} connected to the store ({', '.join(others[:_NAMED])}"
                + (", ..." if len(others) > _NAMED else "")
                + "): stop every ocrgw process (gateways, workers, coordinators, beat) first, then run "
                "`ocrgw store migrate` again."
            )
        old_tags = dict(_buckets_by_tag(self.old))
        whole: list[Old] = []
        splits: list[Old] = []
        doomed: list[Old] = []
        usage: list[Old] = []
        turns: dict[int, str] = {}  # each old bucket's turns
        markers: list[str] = []  # usage records a cut run merged and had not yet deleted (``_move_usage``)
        for key in self._scan():
            tag, _, rest = key[len(_NS) + 1 :].partition("}:")
            if rest.startswith(_USAGE_MOVED):
                markers.append(key)
                continue
            if tag in old_tags and rest == keys.TURNS:
                turns[old_tags[tag]] = key
                continue
            if tag not in old_tags:
                if is_current_key(key, self.keyspace) or key in (keys.LAYOUT, keys.LEDGERS) or tag.startswith("t"):
                    report.current += 1
                else:
                    report.unknown.append(key)
                continue
            old = self._where(key, rest)
            if old is None:
                report.unknown.append(key)
            elif old.to == key:
                report.current += 1  # a bucket whose tag both counts share, and a key that stays in it
            elif old.kind == "usage":
                usage.append(old)
            elif old.to is not None:
                whole.append(old)
            elif old.split is not None:
                splits.append(old)
            else:
                doomed.append(old)
        for old in doomed:
            report.dropped[old.kind] += 1
        if not self.dry_run:
            for old in doomed:
                self.redis.delete(old.key)
        for start in range(0, len(whole), self._batch):
            self._move_keys(whole[start : start + self._batch], report)
        for old in splits:
            self._split_by_members(old, report)
        self._merge_turns(turns, report)
        self._move_usage(usage, report)
        if not self.dry_run:
            for marker in markers:
                self._step()
                self.redis.delete(marker)
            self._count_again()
        return report

    def _where(self, key: str, rest: str) -> Old | None:
        """Where a key of a bucket of the old count goes: whole (``to``), split (``split``), or deleted."""
        group = _ROOT_REST.fullmatch(rest)
        if group is not None:
            root, tail = group.groups()
            kind = next((k.rstrip(":") for k in _GROUP_KINDS if tail.startswith(k)), "group key")
            return Old(key, kind, self.keyspace.group_prefix(root) + tail)
        by_member: dict[str, Callable[[str], str]] = {
            keys.LEASES: lambda m: self.keyspace.leases(self.keyspace.bucket_of(m)),
            keys.QUEUED: lambda m: self.keyspace.queued(self.keyspace.bucket_of(m)),
            keys.DUE_PARENTS: lambda m: self.keyspace.due_parents(self.keyspace.bucket_of(m)),
            keys.WEBHOOKS: lambda m: self.keyspace.webhooks(self.keyspace.bucket_of(m)),
            keys.EXPIRING: lambda m: self.keyspace.expiring(self.keyspace.bucket_of(m)),
            keys.LATER: lambda m: self.keyspace.later(self.keyspace.bucket_of(m)),
        }
        if rest in by_member:
            return Old(key, rest, split=by_member[rest])
        if rest.startswith(keys.READY):
            model, _, lane = rest[len(keys.READY) :].rpartition(":")
            return Old(key, "ready", split=lambda m: self.keyspace.ready(self.keyspace.bucket_of(m), model, lane))
        if rest.startswith(keys.ROOTS):
            tag, kind, status = rest[len(keys.ROOTS) :].split(":")
            return Old(key, "roots", split=lambda m: self.keyspace.roots(kind, status, tag, self.keyspace.bucket_of(m)))
        if rest.startswith(keys.IDEMPOTENCY):
            digest = rest[len(keys.IDEMPOTENCY) :]
            # A creation's and a redrive's alike: where both look the key up.
            return Old(
                key,
                "idempotency",
                _bucket_record(self.keyspace, digest, int(digest[:8], 16) % self.keyspace.bucket_count),
            )
        if rest.startswith(keys.USAGE):
            tag, _, day = rest[len(keys.USAGE) :].partition(":")
            old_bucket = _buckets_by_tag(self.old)[key[len(_NS) + 1 :].partition("}")[0]]
            return Old(key, "usage", self.keyspace.usage(tag, _usage_bucket(self.keyspace, old_bucket), int(day)))
        if rest.startswith(keys.REDRIVEN):
            # A redrive's mark (keys.redrive_mark) is in its group's bucket: the group it names.
            parent = _text(self.redis.hget(key, Field.ID.value))
            if not parent:
                return Old(key, "redrive mark")  # lapsed since the scan, or of no group: deleted
            return Old(key, "redrive mark", self.keyspace.bucket_prefix(self.keyspace.bucket_of(parent)) + rest)
        if rest.startswith(keys.TENANT):
            tenant = _TENANT_REST.fullmatch(rest[len(keys.TENANT) :])
            if tenant is None:
                return None
            tag, what = tenant.groups()
            if what == keys.WAITING:
                return Old(
                    key, "tenant waiting", split=lambda m: self.keyspace.tenant_waiting(tag, self.keyspace.bucket_of(m))
                )
            if what == keys.WEBHOOKS_IN_FLIGHT:
                return Old(
                    key,
                    "tenant webhook claims",
                    split=lambda m: self.keyspace.tenant_webhooks(tag, self.keyspace.bucket_of(m)),
                )
            return Old(key, f"tenant {what.lstrip(':')}")  # counted again from the moved keys
        if any(rest.startswith(e) for e in _EPHEMERAL):
            return Old(key, rest.partition(":")[0])
        return None

    def _move_keys(self, olds: list[Old], report: Report) -> None:
        """RENAMEs on one Redis (``Migration._move_keys``).  On a cluster, where a key's new name is in
        another slot, each key is copied (DUMP, then RESTORE with its TTL) and then deleted: a run cut
        between the two leaves the same key under both names, and the next run, finding the copy made
        (the same DUMP), deletes the old one; a new name holding anything else is a conflict, as above."""
        if not self.on_cluster or self.dry_run:
            super()._move_keys(olds, report)
            return
        self._step()
        for old in olds:
            to = old.to or ""
            dumped = self.redis.dump(old.key)
            if dumped is None:
                continue  # lapsed since the scan
            try:
                self.redis.restore(to, max(int(self.redis.pttl(old.key)), 0), dumped)
            except ResponseError as error:
                if "BUSYKEY" not in str(error):
                    raise
                if self.redis.type(old.key) == self.redis.type(to) == b"zset":
                    self._merge(old.key, _always(to), report, old.kind)
                elif self.redis.dump(to) != dumped:
                    report.conflicts.append(f"{old.key} -> {to}")
                    continue
            self.redis.delete(old.key)
            report.moved[old.kind] += 1

    def _split_by_members(self, old: Old, report: Report) -> None:
        assert old.split is not None
        if self.dry_run:
            report.moved[old.kind] += 1
            report.members[old.kind] += int(self.redis.zcard(old.key))
            return
        self._merge(old.key, old.split, report, old.kind)
        report.moved[old.kind] += 1

    def _merge_turns(self, turns: dict[int, str], report: Report) -> None:
        """Each new bucket's turns from the old buckets whose ready entries may land in it: the latest clock
        of each lane, the latest finish of each tenant in it, the greater weight.

        A ready entry keeps its score, a turn on its old bucket's clock; with
        the latest of the clocks, the entries that came from a bucket whose
        clock was behind are still the first taken (a take takes the least
        turn and never moves a clock back), and with the latest of a tenant's
        finishes its next job goes behind every entry of its own that moved.
        Old bucket ``i`` sends roots to new bucket ``j`` only if ``i`` and ``j``
        are equal modulo the gcd of the counts, and those are merged.  Taking
        the greatest values is idempotent, so a run cut short merges the same
        again; the old keys are deleted once every new bucket's is written.
        """
        if not turns:
            return
        read = self.redis.pipeline(transaction=False)
        for key in turns.values():
            read.hgetall(key)
        old = dict(zip(turns, read.execute(), strict=True))
        step = gcd(self.old, self.keyspace.bucket_count)
        targets = {self.keyspace.turns(j) for j in self.keyspace.buckets()}
        for j in self.keyspace.buckets():
            merged: dict[bytes, tuple[float, bytes]] = {}
            for i, fields in old.items():
                if i % step == j % step:
                    _take_greater(merged, fields)
            if not merged or self.dry_run:
                continue
            target = self.keyspace.turns(j)
            written = self.redis.hgetall(target)
            _take_greater(merged, written)
            changed = {f: raw for f, (_, raw) in merged.items() if written.get(f) != raw}
            if changed:
                self._step()
                self.redis.hset(target, mapping=changed)  # type: ignore[arg-type]
        for key in turns.values():
            if key in targets:
                report.current += 1  # a bucket whose tag both counts share: its turns stay, merged
                continue
            report.moved["turns"] += 1
            if not self.dry_run:
                self._step()
                self.redis.delete(key)

    def _move_usage(self, olds: list[Old], report: Report) -> None:
        """Adds each old usage record (a tenant's day in an old bucket) into its new bucket's, field by field
        (HINCRBY: two old buckets may land in one), keeping the later of the two expiries.

        On one Redis the addition and the old record's deletion are one
        MULTI/EXEC.  On a cluster the two records are in different slots: the
        addition and a marker (``_usage_marker``, in the new record's slot)
        are one MULTI/EXEC, then the old record is deleted, then the marker.
        A run cut after the addition finds the marker beside the old record
        and only deletes it; one cut after the deletion finds the marker
        alone and deletes it: no record is ever added twice.
        """
        for old in olds:
            to = old.to or ""
            if self.dry_run:
                report.moved[old.kind] += 1
                continue
            marker = _usage_marker(old.key, to)
            if not (self.on_cluster and self.redis.exists(marker)):
                amounts = self.redis.hgetall(old.key)
                if not amounts:
                    continue  # lapsed since the scan
                # When each expires (ms since the epoch; -1: never, -2: no such key), kept as it was set.
                old_end, new_end = int(self.redis.pexpiretime(old.key)), int(self.redis.pexpiretime(to))
                self._step()
                pipe = self.redis.pipeline(transaction=True)
                for unit, amount in amounts.items():
                    pipe.hincrby(to, unit, int(amount))
                if old_end == -1 or new_end == -1:
                    pipe.persist(to)  # either kept for good: so is the sum
                else:
                    pipe.pexpireat(to, max(old_end, new_end))
                if self.on_cluster:
                    pipe.set(marker, old.key)
                else:
                    pipe.delete(old.key)
                pipe.execute()
            if self.on_cluster:
                self._step()
                self.redis.delete(old.key)
                self._step()
                self.redis.delete(marker)
            report.moved[old.kind] += 1

    def _count_again(self) -> None:
        """Each tenant's in-flight children per bucket, from the moved groups' per-status sets; with a cap
        over several buckets, its ledger and its buckets' quotas to match (grants = what is in flight)."""
        in_flight: Counter[tuple[str, int]] = Counter()
        for status in (JobStatus.QUEUED.value, JobStatus.PROCESSING.value):
            found = [_text(k) for k in self.redis.scan_iter(match=f"{_NS}{{*}}:*:{keys.CHILDREN}{status}")]
            pipe = self.redis.pipeline(transaction=False)
            for key in found:
                pipe.zcard(key)
            for key, size in zip(found, pipe.execute(), strict=True):
                root = key.partition("}:")[2].partition(":")[0]
                in_flight[(keys.tag_of(root), self.keyspace.bucket_of(root))] += int(size)
        stale = [_text(k) for k in self.redis.scan_iter(match=f"{_NS}{{*}}:{keys.TENANT}*")]
        stale = [k for k in stale if k.endswith((keys.IN_FLIGHT, keys.QUOTA))]
        stale += [_text(k) for k in self.redis.scan_iter(match=f"{_NS}{{t*}}:ledger*")]
        for key in stale:
            self.redis.delete(key)
        self.redis.delete(keys.LEDGERS)
        ledgers = self.cap > 0 and self.keyspace.bucket_count > 1
        for (tag, bucket), n in in_flight.items():
            if n:
                self.redis.set(self.keyspace.tenant_in_flight(tag, bucket), n)
                if ledgers:
                    self.redis.hset(keys.ledger(tag), f"b{bucket}", n)
                    self.redis.hset(self.keyspace.tenant_quota(tag, bucket), keys.QUOTA_FIELD, n)
                    self.redis.zincrby(keys.LEDGERS, 1, tag)


@cache
def _buckets_by_tag(count: int) -> dict[str, int]:
    return {tag: i for i, tag in enumerate(keys.bucket_tags(count))}


#: The name the run's own connections carry (CLIENT SETNAME), so that ``connected`` leaves them out.
CLIENT_NAME = "ocrgw-store-migrate"


def connected(client: Any) -> list[str]:
    """The other clients connected to the store's database (on a cluster, to any of its primaries): their
    addresses and names.  A stopped stack leaves none."""
    if isinstance(client, RedisCluster):
        listed: list[dict[str, Any]] = []
        for node in client.get_primaries():
            listed += client.client_list(target_nodes=node)
        db = "0"
    else:
        listed = client.client_list()
        db = str(client.connection_pool.connection_kwargs.get("db", 0))
    return [
        f"{c['addr']}{' ' + c['name'] if c.get('name') else ''}"
        for c in listed
        # Not a replica's link to its primary (flag S): a cluster's replicas are no clients of the store.
        if str(c.get("db")) == db and c.get("name") != CLIENT_NAME and "S" not in str(c.get("flags", ""))
    ]


def run_from_env(dry_run: bool = False) -> Report:
    """A run on the store the environment names (REDIS_URL, or Sentinel's), for OCRGW_STORE_BUCKETS buckets."""
    settings = Settings.from_env()
    keyspace = Keyspace(settings.store_buckets)
    client = redis_client(settings, socket_timeout=60, client_name=CLIENT_NAME)
    if not settings.redis_cluster:
        # A node of a cluster reached as one Redis answers for its own slots only.
        refuse_cluster(client)
    try:
        found = store_layout.recorded(client) or store_layout.found_in_keys(client, keyspace)
    except store_layout.LayoutMismatch as unreadable:
        raise MigrationRefused(str(unreadable)) from None
    wanted = store_layout.configured(keyspace)
    if found is None or found.schema == store_layout.BEFORE_BUCKETS or found == wanted:
        report = Migration(client, dry_run, keyspace=keyspace).run()
    else:
        report = Rebucketing(
            client, found.buckets, settings.tenant_max_inflight, dry_run=dry_run, keyspace=keyspace
        ).run()
        report.from_buckets = found.buckets
    if not dry_run:
        store_layout.record(client, wanted)
    if settings.redis_sentinels:
        report.store = f"the master {settings.redis_sentinel_master} of sentinels {settings.redis_sentinels}"
    elif settings.redis_cluster:
        report.store = "the cluster of OCRGW_REDIS_CLUSTER"
    else:
        report.store = without_password(settings.redis_url)
    return report


_UNUSED = "no current process uses it"
# Why a move between bucket counts deletes a key rather than moving it.
_WHY_DELETED = {
    "tenant in_flight": "counted again from the moved jobs",
    "tenant quota": "dealt out again from the moved jobs",
    "wakeups": "lapses on its own; the sweep publishes a queued job again",
    "pull_call": "lapses on its own",
    "sweep": "taken again by the next sweep",
    "replication-mark": "set again by the next creation",
}


# How a move between bucket counts carries a key that is not moved whole.
_HOW_MOVED = {
    "turns": " merged into the new buckets' (the latest clock and turn of each lane and tenant)",
    "usage": " added into the new buckets' records (field by field, the later expiry kept)",
}


def describe(report: Report) -> list[str]:
    """The run's report as lines to print."""
    lines = [f"store: {report.store} ({_count(report.buckets, 'bucket')})"]
    if report.from_buckets is not None:
        lines[0] = f"store: {report.store} (from {_count(report.from_buckets, 'bucket')} to {report.buckets})"
    if not report.old_keys and not report.conflicts:
        lines.append(f"nothing to migrate: no key of the old layout ({_count(report.current, 'key')} of the new one)")
    else:
        lines.append("would move (dry run, nothing moved):" if report.dry_run else "moved:")
        width = max(len(kind) for kind in report.moved | report.dropped)
        for kind, count in sorted(report.moved.items()):
            members = report.members.get(kind)
            split = f" ({_count(members, 'member')}, each to its bucket's)" if members is not None else ""
            split = split or _HOW_MOVED.get(kind, "")
            lines.append(f"  {kind:<{width}}  {_count(count, 'key')}{split}")
        for kind, count in sorted(report.dropped.items()):
            lines.append(f"  {kind:<{width}}  {_count(count, 'key')} deleted ({_WHY_DELETED.get(kind, _UNUSED)})")
        if report.idempotency:
            parts = {"creation": "a creation's", "redrive": "a redrive's", "job gone": "of a job no longer stored"}
            said = ", ".join(f"{n} {parts[w]}" for w, n in sorted(report.idempotency.items()))
            lines.append(
                f"Idempotency-Key records: {sum(report.idempotency.values())} to the bucket of their (tenant, key) "
                f"({said}); none dropped"
            )
    for conflict in report.conflicts:
        lines.append(f"not moved, the new key exists already: {conflict}")
    if report.unknown:
        named = ", ".join(report.unknown[:_NAMED]) + (", ..." if len(report.unknown) > _NAMED else "")
        lines.append(
            f"left alone, of neither layout: {_count(len(report.unknown), 'key')} ({named}); keys of buckets "
            "of another OCRGW_STORE_BUCKETS would be among them"
        )
    if report.draining:
        lines.append("the drain flag is set: once the new version runs, `python -m gateway.drain off`")
    return lines


def refuse_cluster(client: Any) -> None:
    """Refuses a Redis Cluster: a cluster client, or a server with cluster mode on."""
    enabled = isinstance(client, RedisCluster)
    if not enabled:
        try:
            enabled = bool(client.info("cluster").get("cluster_enabled"))
        except ResponseError:  # a server without INFO (a fake one) is no cluster node
            enabled = False
    if enabled:
        raise MigrationRefused(CLUSTER_REFUSAL)


CLUSTER_REFUSAL = (
    "the store is a Redis Cluster. `ocrgw store migrate` renames keys within one Redis (a single primary, "
    "or the master Sentinel names); moving a store onto a cluster, or between bucket counts on one (a key's "
    "new bucket is in another slot), is copying it to other servers, which it does not do. Migrate on a "
    "single primary, with OCRGW_STORE_BUCKETS as the cluster will have it; copying the keys onto the "
    "cluster is then yours to do."
)


def _is_current_job_key(key: str) -> bool:
    """A job's hash of the current layout: ``ocrgw:{<bucket tag>}:<root>:job:<id>``."""
    parts = key.partition("}:")[2].split(":", 2)
    return len(parts) == 3 and parts[1] == keys.JOB.rstrip(":")


def _job_keys_of(keyspace: Keyspace, root: str) -> tuple[str, str]:
    """A root's hash in the old layout and in the new one (a cut run may have moved it already)."""
    if not root:
        return ("", "")
    return (f"{_NS}{{{root}}}:{keys.JOB}{root}", keyspace.job(root))


def _bucket_record(keyspace: Keyspace, digest: str, bucket: int) -> str:
    """The new key of the Idempotency-Key record with ``digest``, in ``bucket``."""
    return f"{keyspace.bucket_prefix(bucket)}{keys.IDEMPOTENCY}{digest}"


def _usage_bucket(keyspace: Keyspace, old_bucket: int) -> int:
    """The new bucket of an old bucket's usage records: a reader sums every bucket's, so any one does; this
    one keeps records of different old buckets apart when the new count allows it."""
    return old_bucket % keyspace.bucket_count


def _usage_marker(old: str, to: str) -> str:
    """That the usage record ``old`` was added into ``to`` (on a cluster, until ``old`` is deleted): in the
    slot of ``to``, named by the old record's bucket tag and its tenant's day."""
    old_tag, _, rest = old[len(_NS) + 1 :].partition("}:")
    return to.partition("}:")[0] + "}:" + _USAGE_MOVED + old_tag + ":" + rest[len(keys.USAGE) :]


def _take_greater(merged: dict[bytes, tuple[float, bytes]], fields: dict[Any, Any]) -> None:
    """Merges a turns hash into ``merged``: each field's greater value, kept as written."""
    for name, raw in fields.items():
        value = float(raw)
        if name not in merged or value > merged[name][0]:
            merged[name] = (value, raw)


def _always(key: str) -> Callable[[str], str]:
    return lambda _member: key


def _count(n: int, what: str) -> str:
    if n == 1:
        return f"{n} {what}"
    if what.endswith("y") and what[-2:-1] not in ("a", "e", "o", "u"):
        return f"{n} {what[:-1]}ies"
    return f"{n} {what}s"


def _text(value: bytes | str | None) -> str:
    if value is None:
        return ""
    return value.decode() if isinstance(value, bytes) else value
