"""The job store: every read and write of job state goes through here.

Each write is one transition script (see ``jobs/lua``); this module packs
their KEYS and ARGV, and turns their return codes into values or specific
exceptions.  Callers get back the jobs a transition queued (``Dispatch``)
and publish one Celery message for each: the store never talks to Celery.
"""

from __future__ import annotations

import hashlib
import json
import os
import uuid
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

from redis import Redis
from redis.backoff import ExponentialBackoff, NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError, TimeoutError as RedisTimeoutError
from redis.retry import Retry

from jobs import keys
from jobs.config import CALL_RECORD_MS, Settings
from jobs.errors import IdempotencyKeyReused, JobNotFound, StoreError
from jobs.scripts import Scripts
from jobs.status import JobKind, JobStatus


class LeaseLost(StoreError):
    """Raised when an attempt reports on a job that another attempt now holds."""

    code = "lease_lost"


class NotProcessing(StoreError):
    """Raised when an attempt reports on a job that is no longer processing."""

    code = "not_processing"


@dataclass(frozen=True)
class Dispatch:
    """A job that a transition moved to ``queued``: it needs a Celery message."""

    job_id: str
    model: str


@dataclass(frozen=True)
class NewJob:
    """One document to OCR, as validated by the gateway."""

    model: str
    content_type: str
    payload: bytes
    doc_hash: str = ""
    pages: int = 0
    options: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self):
        if not self.doc_hash:
            object.__setattr__(self, "doc_hash", hashlib.sha256(self.payload).hexdigest())


@dataclass(frozen=True)
class Idempotency:
    key: str
    fingerprint: str


@dataclass(frozen=True)
class Created:
    job_id: str
    replayed: bool
    dispatches: list[Dispatch]


@dataclass(frozen=True)
class Claim:
    job_id: str
    attempt: int
    model: str
    content_type: str
    options: dict[str, Any]
    payload: bytes | None


@dataclass(frozen=True)
class Completion:
    parent_finalized: bool
    dispatches: list[Dispatch]
    # The child released into the freed slot and claimed for the finishing
    # worker, when it asked for one (``take_next``): it has no message.
    next_claim: Claim | None = None


@dataclass(frozen=True)
class Reclaimed:
    requeued: list[Dispatch]
    failed: list[str]
    dispatches: list[Dispatch]


def _str(value: bytes | str | None) -> str | None:
    return value.decode() if isinstance(value, bytes) else value


def _dispatches(flat: Sequence) -> list[Dispatch]:
    return [Dispatch(_str(flat[i]), _str(flat[i + 1])) for i in range(0, len(flat), 2)]


def _claim(reply: Sequence) -> Claim:
    """A claim from its script reply: job id, attempt, model, content type, options, payload."""
    job_id, attempt, model, content_type, options, payload = reply
    return Claim(_str(job_id), int(attempt), _str(model), _str(content_type), json.loads(options or b"{}"), payload)


def call_token() -> str:
    """Names one call of a transition.  The client resends a call whose reply
    a dropped connection lost with the same arguments, token included, and
    the script answers that repeat as it answered the first time."""
    return os.urandom(8).hex()


def new_job_id() -> str:
    return uuid.uuid4().hex


class JobStore:
    def __init__(self, client: Redis, settings: Settings | None = None, probe: Redis | None = None):
        self.redis = client
        self.settings = settings or Settings()
        self.scripts = Scripts(client)
        # Readiness must answer fast, not ride out an outage like the job calls.
        self._probe = probe or client

    @classmethod
    def from_settings(cls, settings: Settings) -> "JobStore":
        # Ride out a Redis restart of a few seconds.  Retrying a transition is
        # safe: each one checks its precondition, so a repeat of a script that
        # did run writes nothing; claim and complete recognise their own call
        # (its token) and answer it as the first time, the others answer
        # "not queued" / "not processing", which their callers take in stride.
        retry = Retry(ExponentialBackoff(cap=1.0, base=0.05), retries=12)
        client = Redis.from_url(
            settings.redis_url,
            health_check_interval=30,
            retry=retry,
            retry_on_error=[RedisConnectionError, RedisTimeoutError],
        )
        probe = Redis.from_url(
            settings.redis_url, socket_timeout=1, socket_connect_timeout=1, retry=Retry(NoBackoff(), 0)
        )
        return cls(client, settings, probe)

    # -- arguments shared by several transitions --------------------------------

    @property
    def _requeue_ms(self) -> int:
        return int(self.settings.requeue_seconds * 1000)

    def _parent_key(self, job_id: str) -> str:
        """The parent's key for a child (its root differs from its id), else the job's own."""
        root = keys.root_of(job_id)
        return keys.job(root)

    # -- create -------------------------------------------------------------------

    def create_single(self, job: NewJob, idempotency: Idempotency | None = None) -> Created:
        job_id = new_job_id()
        args = self._create_header(job_id, JobKind.SINGLE, idempotency)
        args += [job.model, job.doc_hash, job.pages, job.content_type, json.dumps(job.options), job.payload]
        keys_ = self._create_keys(job_id, idempotency) + [keys.payload(job_id)]
        return self._created(self.scripts.create(keys=keys_, args=args))

    def create_group(
        self,
        children: Sequence[NewJob],
        max_parallel: int,
        idempotency: Idempotency | None = None,
        release: bool = True,
    ) -> Created:
        """Creates a parent and its children (held) and releases the first ones.

        ``release=False`` leaves every child held and the parent on the due
        index, as if the creating process had died right after creating; the
        sweep then releases them.
        """
        if not children:
            raise ValueError("a group needs at least one child")
        parent_id = new_job_id()
        child_ids = [keys.child_id(parent_id, i) for i in range(len(children))]
        models = {c.model for c in children}
        parent_model = models.pop() if len(models) == 1 else "mixed"
        args = self._create_header(parent_id, JobKind.PARENT, idempotency, release)
        args += [max_parallel, len(children), parent_model]
        for c in children:
            args += [c.model, c.doc_hash, c.pages, c.content_type, json.dumps(c.options)]
        args += [c.payload for c in children]
        keys_ = self._create_keys(parent_id, idempotency)
        keys_ += [keys.payload(cid) for cid in child_ids]
        keys_ += [keys.job(cid) for cid in child_ids]
        # With release=False the script's release step (limit 0) puts the parent on the due index.
        return self._created(self.scripts.create(keys=keys_, args=args))

    def _create_header(self, root_id, kind, idempotency, release=True) -> list:
        return [
            "1" if idempotency else "0",
            idempotency.fingerprint if idempotency else "",
            self.settings.idempotency_ttl,
            root_id,
            kind.value,
            self.settings.release_batch if release else 0,
            self._requeue_ms,
            idempotency.key if idempotency else "",
            keys.group_prefix(root_id),
        ]

    def _create_keys(self, root_id: str, idempotency: Idempotency | None) -> list[str]:
        idem_key = keys.idempotency(idempotency.key) if idempotency else keys.job(root_id)
        return [idem_key, keys.job(root_id), keys.QUEUED, keys.ACTIVE_PARENTS, keys.DUE_PARENTS]

    def _created(self, reply) -> Created:
        code, job_id = reply[0], _str(reply[1])
        if code == 1:
            return Created(job_id, False, _dispatches(reply[2:]))
        if code == 2:
            return Created(job_id, True, [])
        if code == -1:
            raise IdempotencyKeyReused(
                f"this Idempotency-Key was used for a different request (job {job_id})"
            )
        raise StoreError(f"create answered {reply!r}")

    # -- the attempt of a worker ------------------------------------------------------

    def claim(self, job_id: str) -> Claim | None:
        """Takes a queued job for one attempt; None when it is not claimable (a duplicate message)."""
        reply = self.scripts.claim(
            keys=[keys.job(job_id), keys.payload(job_id), keys.LEASES, keys.QUEUED, self._parent_key(job_id),
                  keys.call(job_id, call_token())],
            args=[job_id, self.settings.lease_ms, CALL_RECORD_MS],
        )
        if reply[0] != 1:
            return None
        return _claim([job_id] + reply[1:])

    def heartbeat(self, job_id: str, attempt: int) -> bool:
        """Extends the lease; False once this attempt no longer holds the job."""
        code = self.scripts.heartbeat(
            keys=[keys.job(job_id), keys.LEASES], args=[job_id, attempt, self.settings.lease_ms]
        )
        return code == 1

    def report_progress(self, job_id: str, attempt: int, stage: str, progress: float) -> bool:
        code = self.scripts.progress(keys=[keys.job(job_id)], args=[attempt, stage, f"{progress:.4f}"])
        return code == 1

    def complete(self, job_id: str, attempt: int, result: dict[str, Any], take_next: str | None = None) -> Completion:
        """Ends the attempt with its result.

        ``take_next`` (a model name) asks for the released child of that model
        to be claimed for the caller in the same step (``Completion.next_claim``)
        instead of being returned for publishing.
        """
        return self._finish(job_id, attempt, JobStatus.COMPLETED, json.dumps(result), "", "", take_next)

    def fail(self, job_id: str, attempt: int, error_code: str, error: str,
             take_next: str | None = None) -> Completion:
        return self._finish(job_id, attempt, JobStatus.FAILED, "", error_code, error, take_next)

    def _finish(self, job_id, attempt, status, result, error_code, error, take_next) -> Completion:
        reply = self.scripts.complete(
            keys=[
                keys.job(job_id),
                keys.result(job_id),
                keys.payload(job_id),
                keys.events(job_id),
                keys.LEASES,
                keys.QUEUED,
                keys.ACTIVE_PARENTS,
                keys.DUE_PARENTS,
                self._parent_key(job_id),
                keys.call(job_id, call_token()),
            ],
            args=[
                job_id,
                attempt,
                status.value,
                result,
                error_code,
                error,
                self.settings.release_batch,
                self._requeue_ms,
                keys.group_prefix(job_id),
                self.settings.lease_ms if take_next else 0,
                take_next or "",
                CALL_RECORD_MS,
            ],
        )
        self._raise_for_attempt(job_id, reply[0], reply[1:])
        finalized, took = bool(reply[1]), reply[2] == 1
        if not took:
            return Completion(finalized, _dispatches(reply[3:]))
        return Completion(finalized, _dispatches(reply[9:]), _claim(reply[3:9]))

    def retry(self, job_id: str, attempt: int, backoff_seconds: float, error_code: str, error: str) -> None:
        """Gives the job back after a transient error; the sweep re-publishes it after the backoff."""
        code = self.scripts.retry(
            keys=[keys.job(job_id), keys.LEASES, keys.QUEUED, self._parent_key(job_id)],
            args=[job_id, attempt, int(backoff_seconds * 1000), error_code, error],
        )
        self._raise_for_attempt(job_id, code, [])

    @staticmethod
    def _raise_for_attempt(job_id: str, code: int, detail) -> None:
        if code == 1:
            return
        if code == -1:
            raise JobNotFound(f"no job {job_id}")
        if code == -2:
            raise NotProcessing(f"job {job_id} is no longer processing")
        if code == -3:
            raise LeaseLost(f"job {job_id} is held by another attempt")
        raise StoreError(f"job {job_id}: unexpected reply {code!r} {detail!r}")

    # -- the sweep ----------------------------------------------------------------------

    def now_ms(self) -> int:
        seconds, micros = self.redis.time()
        return seconds * 1000 + micros // 1000

    def try_lock_sweep(self, token: str, ttl_ms: int) -> bool:
        """One sweep at a time: an overlapping tick finds the lock taken and does nothing."""
        return bool(self.redis.set(keys.SWEEP_LOCK, token, nx=True, px=ttl_ms))

    def unlock_sweep(self, token: str) -> None:
        # Only the holder's token deletes the lock, so a tick that overran its
        # lock cannot free the lock of the tick that followed it.
        self.redis.eval(
            "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0",
            1,
            keys.SWEEP_LOCK,
            token,
        )

    def expired_leases(self, now_ms: int, limit: int) -> list[str]:
        return self._due(keys.LEASES, now_ms, limit)

    def stale_queued(self, now_ms: int, limit: int) -> list[str]:
        return self._due(keys.QUEUED, now_ms, limit)

    def due_parents(self, now_ms: int, limit: int) -> list[str]:
        return self._due(keys.DUE_PARENTS, now_ms, limit)

    def _due(self, index: str, now_ms: int, limit: int) -> list[str]:
        return [_str(m) for m in self.redis.zrangebyscore(index, "-inf", now_ms, start=0, num=limit)]

    def reclaim(self, job_ids: Iterable[str]) -> Reclaimed:
        pipe = self.redis.pipeline(transaction=False)
        ids = list(job_ids)
        for job_id in ids:
            self.scripts.reclaim(
                keys=[
                    keys.job(job_id),
                    keys.events(job_id),
                    keys.LEASES,
                    keys.QUEUED,
                    keys.ACTIVE_PARENTS,
                    keys.DUE_PARENTS,
                    self._parent_key(job_id),
                ],
                args=[
                    job_id,
                    self.settings.max_attempts,
                    self.settings.release_batch,
                    self._requeue_ms,
                    keys.group_prefix(job_id),
                ],
                client=pipe,
            )
        requeued, failed, dispatches = [], [], []
        for job_id, reply in zip(ids, pipe.execute() if ids else []):
            if reply[0] == 1:
                requeued.append(Dispatch(_str(reply[1]), _str(reply[2])))
            elif reply[0] == 2:
                failed.append(job_id)
                dispatches += _dispatches(reply[2:])
        return Reclaimed(requeued, failed, dispatches)

    def republish(self, job_ids: Iterable[str]) -> list[Dispatch]:
        pipe = self.redis.pipeline(transaction=False)
        ids = list(job_ids)
        for job_id in ids:
            self.scripts.republish(
                keys=[keys.job(job_id), keys.QUEUED], args=[job_id, self._requeue_ms], client=pipe
            )
        return [
            Dispatch(job_id, _str(reply[1]))
            for job_id, reply in zip(ids, pipe.execute() if ids else [])
            if reply[0] == 1
        ]

    def release(self, parent_ids: Iterable[str]) -> list[Dispatch]:
        pipe = self.redis.pipeline(transaction=False)
        ids = list(parent_ids)
        for parent_id in ids:
            self.scripts.release(
                keys=[
                    keys.job(parent_id),
                    keys.events(parent_id),
                    keys.QUEUED,
                    keys.ACTIVE_PARENTS,
                    keys.DUE_PARENTS,
                ],
                args=[parent_id, self.settings.release_batch, self._requeue_ms, keys.group_prefix(parent_id)],
                client=pipe,
            )
        dispatches: list[Dispatch] = []
        for reply in pipe.execute() if ids else []:
            dispatches += _dispatches(reply[1:])
        return dispatches

    def active_parent_count(self) -> int:
        return self.redis.zcard(keys.ACTIVE_PARENTS)

    # -- reads ---------------------------------------------------------------------------

    def get(self, job_id: str) -> dict[str, str] | None:
        """The job's stored fields, or None.  Ids are checked before they become keys."""
        if not is_job_id(job_id):
            return None
        raw = self.redis.hgetall(keys.job(job_id))
        if not raw:
            return None
        return {k.decode(): v.decode() for k, v in raw.items()}

    def children(self, parent_id: str, total: int) -> list[dict[str, str]]:
        """The children of a parent in index order, with the fields a parent view shows."""
        names = CHILD_VIEW_FIELDS
        pipe = self.redis.pipeline(transaction=False)
        for i in range(total):
            pipe.hmget(keys.job(keys.child_id(parent_id, i)), names)
        return [
            {name: _str(value) for name, value in zip(names, values)}
            for values in pipe.execute()
        ]

    def result(self, job_id: str) -> dict[str, Any] | None:
        raw = self.redis.get(keys.result(job_id))
        return json.loads(raw) if raw else None

    def results(self, job_ids: Sequence[str]) -> list[dict[str, Any] | None]:
        if not job_ids:
            return []
        # MGET is one slot only under Cluster; the children of a parent share one.
        return [json.loads(raw) if raw else None for raw in self.redis.mget([keys.result(j) for j in job_ids])]

    def events(self, job_id: str) -> list[dict[str, str]]:
        """The audit events of a job, oldest first; a parent's include its children's."""
        entries = self.redis.xrange(keys.events(job_id))
        out = []
        root = keys.root_of(job_id)
        for entry_id, raw in entries:
            event = {k.decode(): v.decode() for k, v in raw.items()}
            if job_id != root and event["job_id"] != job_id:
                continue  # a child's view holds its own events only
            event["id"] = entry_id.decode()
            out.append(event)
        return out

    # -- draining ------------------------------------------------------------------------

    def set_draining(self, draining: bool) -> None:
        if draining:
            self.redis.set(keys.DRAINING, "1")
        else:
            self.redis.delete(keys.DRAINING)

    def is_draining(self) -> bool:
        return bool(self._probe.exists(keys.DRAINING))

    def ping(self) -> bool:
        return bool(self._probe.ping())


CHILD_VIEW_FIELDS = (
    "id",
    "index",
    "status",
    "model",
    "doc_hash",
    "stage",
    "progress",
    "attempts",
    "started_at",
    "finished_at",
    "error_code",
)


def is_job_id(job_id: str) -> bool:
    root, _, index = job_id.partition(keys.CHILD_SEPARATOR)
    return (
        len(root) == 32
        and all(c in "0123456789abcdef" for c in root)
        and (index == "" or (index.isdigit() and len(index) <= 6))
        and not (_ and index == "")
    )
