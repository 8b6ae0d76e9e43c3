"""Fixtures for the transition tests: a FakeRedis (which runs the real Lua
scripts), a JobStore over it with small settings, and a ``kit`` of helpers
that read the raw Redis state and record what each script answered.

* ``settings``: release_batch 4, max_attempts 2, so that batch limits and the
  last attempt are reached by small groups.
* ``store`` / ``r``: a JobStore over a FakeRedis of its own; ``r`` is the raw client.
* ``kit``: helpers over ``store`` (documents, groups, statuses, index members,
  a snapshot of every key, lease and deadline manipulation); at the end of
  each test it checks that every tenant's in-flight count matches its
  queued and processing children.
* ``replies``: the raw reply of every script call made through ``store``,
  by transition name (pipelined calls included).
* ``new_kit``: builds a fresh ``Kit`` with settings overrides; session-scoped,
  so that hypothesis tests may use it.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import fakeredis
import pytest

from jobs.config import Settings
from jobs.contract import ROOT_STATUSES, JobKind, JobStatus
from jobs.ids import DEFAULT_TENANT, TENANT_TAG_LENGTH, tenant_tag
from jobs.records import Claim, Created, GroupRules, NewJob, Owner
from jobs.store import JobStore
from jobs.transitions.spec import PULL, Dispatch, Transition
from tests.keyspace import keys
from tests.unit.conftest import PINNED_BUCKET, TEST_BUCKETS

SETTINGS = Settings(
    store_buckets=TEST_BUCKETS,
    release_batch=4,
    max_attempts=2,
    lease_seconds=30.0,
    requeue_seconds=60.0,
    idempotency_ttl=3600,
)

DEFAULT_TAG = tenant_tag(DEFAULT_TENANT)


def roots_of(kind: str, status: str, tag: str = DEFAULT_TAG) -> Callable[[int], str]:
    """A tenant's listing set of ``kind`` and ``status`` (the default tenant's), as a bucket's index."""
    return lambda bucket: keys.roots(kind, status, tag, bucket)


# The sorted-set indexes every transition maintains, and the sets of parents not yet terminal: each a
# function of the bucket, which the kit reads in every bucket (``members``) or in a job's (``score``).
ACTIVE_PARENTS = (roots_of(JobKind.PARENT.value, "queued"), roots_of(JobKind.PARENT.value, "processing"))
INDEXES = (keys.queued, keys.leases, keys.due_parents, *ACTIVE_PARENTS)

#: An index of every bucket: a function of the bucket's number; a key: one index.
Index = Callable[[int], str] | str

PAST_MS = 1  # a score long before any Redis TIME


def text(value):
    """Bytes from Redis (also inside lists) as str; everything else unchanged."""
    if isinstance(value, bytes):
        return value.decode()
    if isinstance(value, list):
        return [text(v) for v in value]
    return value


def parse_intervals(recorded: str | None) -> list[tuple[int, int, int, str]]:
    """A job's ``intervals`` field: (attempt, started µs, ended µs, how it ended) per ended attempt."""
    runs = []
    for run in filter(None, (recorded or "").split(",")):
        attempt, started, ended, outcome = run.split(":")
        runs.append((int(attempt), int(started), int(ended), outcome))
    return runs


class Kit:
    def __init__(self, store: JobStore):
        self.store = store
        # The kits read raw replies of every shape, which redis-py's stubs type as unions.
        self.r: Any = store.redis

    # -- building jobs ---------------------------------------------------------------

    @staticmethod
    def doc(i: int = 0, model: str = "echo", **options) -> NewJob:
        return NewJob(model=model, content_type="text/plain", payload=f"page {i}".encode(), options=options)

    def docs(self, n: int, model: str = "echo") -> list[NewJob]:
        return [self.doc(i, model) for i in range(n)]

    def single(self, tenant: str | None = None, **kw) -> Created:
        if tenant is not None:
            kw["owner"] = Owner(tenant)
        return self.store.create_single(self.doc(), **kw)

    def group(self, n: int, max_parallel: int, tenant: str | None = None, **kw) -> Created:
        if tenant is not None:
            kw["owner"] = Owner(tenant)
        return self.store.create_group(self.docs(n), GroupRules(max_parallel), **kw)

    @staticmethod
    def child_ids(parent_id: str, n: int) -> list[str]:
        return [keys.child_id(parent_id, i) for i in range(n)]

    def claim(self, job_id: str) -> Claim:
        claim = self.store.claim(job_id)
        assert claim is not None, f"{job_id} was not claimable: {self.job(job_id)}"
        return claim

    # -- reading raw state ---------------------------------------------------------------

    def ready(self, model: str = "echo", lane: str = "batch", bucket: int | None = None) -> list[str]:
        """The model's ready index of ``lane`` (keys.ready) in ``bucket``, in the order a worker takes it;
        with no bucket, of every bucket (each in its order, bucket after bucket)."""
        found = [bucket] if bucket is not None else keys.buckets()
        return [text(m) for b in found for m in self.r.zrange(keys.ready(b, model, lane), 0, -1)]

    @staticmethod
    def wake_ups(n: int, model: str = "echo", lane: str = "batch", bucket: int = PINNED_BUCKET) -> list[Dispatch]:
        """What a transition answers for ``n`` wake-ups of ``model``'s ``lane`` (spec.py: a job id '')."""
        return [Dispatch("", model, PULL, lane, bucket)] * n

    def job(self, job_id: str) -> dict[str, str]:
        return {text(k): text(v) for k, v in self.r.hgetall(keys.job(job_id)).items()}

    def status(self, job_id: str) -> str | None:
        return text(self.r.hget(keys.job(job_id), "status"))

    def statuses(self, parent_id: str, n: int) -> list[str]:
        return [text(s) for s in self.fields(self.child_ids(parent_id, n), "status")]

    def fields(self, job_ids: list[str], name: str) -> list:
        """One field of many jobs, in one round trip."""
        pipe = self.r.pipeline(transaction=False)
        for job_id in job_ids:
            pipe.hget(keys.job(job_id), name)
        return pipe.execute()

    def counts(self, parent_id: str) -> dict[str, int]:
        parent = self.job(parent_id)
        return {s.value: int(parent[f"n_{s.value}"]) for s in JobStatus}

    def members(self, index: Index) -> set[str]:
        """The members of an index; of a per-bucket index, of every bucket's."""
        if isinstance(index, str):
            return {text(m) for m in self.r.zrange(index, 0, -1)}
        return {text(m) for b in keys.buckets() for m in self.r.zrange(index(b), 0, -1)}

    def active_parents(self) -> set[str]:
        """Parents in the listing's queued or processing sets: those not yet terminal."""
        return self.members(ACTIVE_PARENTS[0]) | self.members(ACTIVE_PARENTS[1])

    def score(self, index: Index, member: str) -> float | None:
        """A member's score in an index; in a per-bucket index, in its own bucket's."""
        return self.r.zscore(index if isinstance(index, str) else index(keys.bucket_of(member)), member)

    def events(self, root_id: str) -> list[dict[str, str]]:
        return [{text(k): text(v) for k, v in raw.items()} for _, raw in self.r.xrange(keys.events(root_id))]

    def events_of(self, job_id: str) -> list[dict[str, str]]:
        return [e for e in self.events(keys.root_of(job_id)) if e["job_id"] == job_id]

    def group_state(self, parent_id: str, n: int) -> dict:
        """A group as one round trip reads it: the parent, each child's status,
        attempts and recorded intervals, the members of every index (the
        parent's per-status children sets and the listing's parent sets
        included), and the root's events."""
        children = self.child_ids(parent_id, n)
        child_sets = {s.value: keys.children(parent_id, s.value) for s in JobStatus}
        bucket = keys.bucket_of(parent_id)
        root_sets = {
            s: keys.roots(JobKind.PARENT.value, s.value, keys.tag_of(parent_id), bucket) for s in ROOT_STATUSES
        }
        indexes = (*(i(bucket) for i in INDEXES), *child_sets.values(), *root_sets.values())
        pipe = self.r.pipeline(transaction=False)
        pipe.hgetall(keys.job(parent_id))
        for child in children:
            pipe.hmget(keys.job(child), "status", "attempts", "intervals")
        for index in indexes:
            pipe.zrange(index, 0, -1)
        pipe.xrange(keys.events(parent_id))
        replies = pipe.execute()
        parent, fields, members, events = replies[0], replies[1 : n + 1], replies[n + 1 : -1], replies[-1]
        by_index = {name: {text(m) for m in found} for name, found in zip(indexes, members, strict=True)}
        return {
            "parent": {text(k): text(v) for k, v in parent.items()},
            "statuses": [text(f[0]) for f in fields],
            "attempts": [int(f[1]) for f in fields],
            "intervals": [parse_intervals(text(f[2])) for f in fields],
            "indexes": by_index,
            "children_by_status": {status: by_index[key] for status, key in child_sets.items()},
            "parent_listed_as": {s.value for s, key in root_sets.items() if parent_id in by_index[key]},
            "events": [{text(k): text(v) for k, v in raw.items()} for _, raw in events],
        }

    def now_ms(self) -> int:
        return self.store.now_ms()

    def assert_tenant_in_flight(self) -> None:
        """Each tenant's in-flight count equals its queued + processing children, across all its groups."""
        # Per bucket: each counts its own share of the tenant's children.
        counted: Counter[tuple[int, str]] = Counter()
        recorded: Counter[tuple[int, str]] = Counter()
        for bucket in keys.buckets():
            prefix = keys.bucket_prefix(bucket)
            for status in ("queued", "processing"):
                for key in self.r.keys(f"{prefix}*:{keys.CHILDREN}{status}"):
                    root = text(key)[len(prefix) :].split(":", 1)[0]
                    counted[bucket, root[:TENANT_TAG_LENGTH]] += self.r.zcard(key)
            for key in self.r.keys(keys.tenant_in_flight("*", bucket)):
                tag = text(key)[len(prefix + keys.TENANT) :].split(":", 1)[0]
                recorded[bucket, tag] = int(self.r.get(key))
        assert +recorded == +counted, f"tenant in-flight counts {dict(recorded)} != children {dict(counted)}"
        assert all(n >= 0 for n in recorded.values()), recorded

    def snapshot(self) -> dict:
        """Every key with its type and content: equal snapshots mean nothing was written."""
        names = sorted(self.r.keys("*"))
        pipe = self.r.pipeline(transaction=False)
        for key in names:
            pipe.type(key)
        kinds = [text(k) for k in pipe.execute()]
        readers = {
            "hash": pipe.hgetall,
            "string": pipe.get,
            "zset": lambda key: pipe.zrange(key, 0, -1, withscores=True),
            "stream": pipe.xrange,
            "set": pipe.smembers,
        }
        for key, kind in zip(names, kinds, strict=True):
            readers.get(kind, pipe.type)(key)
        return {text(key): (kind, value) for key, kind, value in zip(names, kinds, pipe.execute(), strict=True)}

    # -- moving time, without sleeping ------------------------------------------------

    def expire_lease(self, job_id: str) -> None:
        leases = keys.leases(keys.bucket_of(job_id))
        assert self.r.zadd(leases, {job_id: PAST_MS}, xx=True, ch=True) == 1, f"{job_id} holds no lease"

    def make_stale(self, job_id: str) -> None:
        """Moves a queued job's publish deadline into the past."""
        assert self.r.zadd(keys.queued(keys.bucket_of(job_id)), {job_id: PAST_MS}, xx=True, ch=True) == 1, (
            f"{job_id} is not in the queued index"
        )


class Replies:
    """Records the decoded reply of every transition script run (pipelined calls included), by name."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch):
        self.by_name: dict[str, list] = defaultdict(list)
        real_decode = Transition.decode

        def decode(transition, raw, bucket=0):
            reply = real_decode(transition, raw, bucket)
            self.by_name[transition.name].append(reply)
            return reply

        monkeypatch.setattr(Transition, "decode", decode)

    def __getitem__(self, name: str) -> list:
        return self.by_name[name]

    def last(self, name: str):
        assert self.by_name[name], f"no {name} script ran"
        return self.by_name[name][-1]


def make_kit(**overrides) -> Kit:
    client = fakeredis.FakeRedis(server=fakeredis.FakeServer())
    # Of the bucket count the test names its keys with (a test of many buckets sets its own first).
    return Kit(JobStore(client, replace(SETTINGS, **{"store_buckets": keys.bucket_count, **overrides})))


@pytest.fixture(scope="session")
def new_kit():
    return make_kit


@pytest.fixture
def settings() -> Settings:
    return SETTINGS


@pytest.fixture
def kit():
    """A Kit; once the test is done, every tenant's in-flight count must still match its children."""
    kit = make_kit()
    yield kit
    kit.assert_tenant_in_flight()


@pytest.fixture
def store(kit) -> JobStore:
    return kit.store


@pytest.fixture
def r(kit):
    return kit.r


@pytest.fixture
def replies(monkeypatch) -> Replies:
    return Replies(monkeypatch)
