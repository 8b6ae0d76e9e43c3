"""The job store's write side: every change of job state is one transition (see ``jobs/transitions``).

Each method names the keys and arguments its transition's spec declares and
turns the decoded reply into a value or a specific exception.  Callers get
back the jobs a transition queued (``Dispatch``) and publish one Celery
message for each: the store never talks to Celery.  Reads are in
``jobs.queries`` (``store.queries``); what the live workers report of
themselves is in ``jobs.worker_reports`` (``store.workers``).
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from redis.backoff import ExponentialBackoff, NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from redis.retry import Retry

from jobs import interactive_share, keys
from jobs.config import Settings
from jobs.connections import StoreClient, redis_client, text_of
from jobs.contract import Field, JobStatus, Priority, Reply
from jobs.errors import (
    CancelRequested,
    IdempotencyKeyReused,
    InteractiveLaneFull,
    JobNotFound,
    LeaseLost,
    NotProcessing,
    StoreError,
)
from jobs.ids import new_job_id
from jobs.keys import Keyspace
from jobs.pdf_outputs import DEFAULT_OUTPUT
from jobs.queries import JobQueries
from jobs.records import (
    DEFAULT_OWNER,
    Claim,
    Completion,
    Created,
    Dispatch,
    GroupRules,
    Idempotency,
    NewJob,
    Owner,
    parse_pages,
)
from jobs.sweeping import SweepTransitions
from jobs.tenant_quota import TenantQuota
from jobs.transitions import claim, claim_next, complete, create, heartbeat, record_pdf, retry
from jobs.transitions import progress as progress_entry
from jobs.transitions.claim import ClaimReply
from jobs.transitions.claim_next import ClaimNextReply
from jobs.transitions.context import StoreContext
from jobs.transitions.scripts import Scripts
from jobs.transitions.spec import PULL
from jobs.usage import JobUnits
from jobs.worker_reports import WorkerReports

log = logging.getLogger(__name__)
# The field of an Idempotency-Key's record (create.lua, reserve_key.lua) that tells its request.
_FINGERPRINT = "fingerprint"

# A refusal of an attempt's report, as the exception its caller handles.
_REFUSALS = {
    Reply.NO_JOB: JobNotFound,
    Reply.WRONG_STATUS: NotProcessing,
    Reply.LEASE_LOST: LeaseLost,
    Reply.CANCEL_REQUESTED: CancelRequested,
}


# redis-py's default: how long a reply may take before the connection counts as lost.
SOCKET_TIMEOUT_SECONDS = 5.0


def socket_timeout_for(settings: Settings) -> float:
    """The store client's socket timeout: longer than OCRGW_REPLICA_WAIT_MS when creations WAIT.

    A WAIT blocks its connection for up to that long; a socket that gave up
    first would take the wait for a lost connection and retry it, again and
    again, instead of answering 503 once the replicas are late.
    """
    if settings.min_replicas <= 0:
        return SOCKET_TIMEOUT_SECONDS
    return max(SOCKET_TIMEOUT_SECONDS, settings.replica_wait_ms / 1000 + SOCKET_TIMEOUT_SECONDS)


class JobStore(SweepTransitions):
    def __init__(self, client: StoreClient, settings: Settings | None = None, probe: StoreClient | None = None):
        self.redis = client
        settings = settings or Settings()
        #: The names of the store's keys, spread over the buckets the settings say (jobs.keys).
        self.keyspace = Keyspace(settings.store_buckets)
        self.scripts = Scripts(client, self.keyspace)
        #: What every transition's call takes (jobs/transitions): the one door to the scripts.
        self.context = StoreContext(client, self.scripts, settings, self.keyspace)
        #: The tenants' caps dealt out to the buckets (with more than one: jobs.tenant_quota).
        self.tenant_quota = TenantQuota(
            client, self.scripts, self.settings.tenant_max_inflight, self.keyspace, self.settings
        )
        self.interactive_share = interactive_share.InteractiveShare(self.context)
        #: The read side over the same client, for callers that hold a store.
        self.queries = JobQueries(client, self.keyspace)
        #: What the live workers report of themselves (their Tesseract languages).
        self.workers = WorkerReports(client)
        # Readiness must answer fast, not ride out an outage like the job calls.
        self._probe = probe or client

    @property
    def settings(self) -> Settings:
        return self.context.settings

    @settings.setter
    def settings(self, settings: Settings) -> None:
        """New settings for the transitions from now on (the tenants' ledger keeps the cap it was made with, and
        the keys their bucket count: the store's keyspace is that of the settings it was made with)."""
        self.context = StoreContext(self.redis, self.scripts, settings, self.keyspace)

    @classmethod
    def from_settings(cls, settings: Settings) -> JobStore:
        # Ride out a Redis restart of a few seconds.  Retrying a transition is
        # safe: each one checks its precondition, so a repeat of a script that
        # did run writes nothing; claim and complete recognise their own call
        # (its token) and answer it as the first time, the others answer
        # "not queued" / "not processing", which their callers take in stride.
        retry = Retry(ExponentialBackoff(cap=1.0, base=0.05), retries=12)
        # Behind sentinels, a failover is one more dropped connection: the
        # retry's new connection asks them for the new master (jobs.connections).
        # On a cluster the retry is the cluster client's: it retries on a
        # refreshed map of the slots, which names the promoted replica.
        client = redis_client(
            settings,
            health_check_interval=30,
            retry=retry,
            retry_on_error=[RedisConnectionError, RedisTimeoutError],
            socket_timeout=socket_timeout_for(settings),
        )
        probe = redis_client(settings, socket_timeout=1, socket_connect_timeout=1, retry=Retry(NoBackoff(), 0))
        return cls(client, settings, probe)

    # -- create -------------------------------------------------------------------------

    def create_single(
        self,
        job: NewJob,
        idempotency: Idempotency | None = None,
        owner: Owner = DEFAULT_OWNER,
        traceparent: str = "",
    ) -> Created:
        """Creates a single job (queued) of ``owner``'s tenant; its Idempotency-Key is that tenant's.

        ``traceparent``: the creating request's W3C trace context, kept with the job ('' keeps none).
        """
        if job.source_pages is not None:
            raise ValueError("only a child of a group reads its pages of a source document")
        return self._create(
            _new_root_id(self.keyspace, owner, idempotency), [job], None, idempotency, True, owner, None, traceparent
        )

    def create_group(
        self,
        children: Sequence[NewJob],
        rules: GroupRules,
        idempotency: Idempotency | None = None,
        release: bool = True,
        owner: Owner = DEFAULT_OWNER,
        source: bytes | None = None,
        traceparent: str = "",
    ) -> Created:
        """Creates a parent and its children (held) of ``owner``'s tenant and releases the first ones.

        Every child runs in the group's lane (``rules.priority``), whatever it says itself.  ``source``: a
        split's document, stored once as the parent's payload; its children name their pages of it
        (``NewJob.source_pages``) and store none.  ``release=False`` leaves every child held and the parent
        on the due index, as if the creating process had died right after creating; the sweep then releases
        them.  ``traceparent``: as for ``create_single``, kept with the parent and every child.
        """
        if not children:
            raise ValueError("a group needs at least one child")
        if (source is None) != all(c.source_pages is None for c in children):
            raise ValueError("a group has a source document exactly when its children name pages of it")
        return self._create(
            _new_root_id(self.keyspace, owner, idempotency),
            children,
            rules,
            idempotency,
            release,
            owner,
            source,
            traceparent,
        )

    def _create(
        self,
        root_id: str,
        jobs: Sequence[NewJob],
        rules: GroupRules | None,
        idempotency: Idempotency | None,
        release: bool,
        owner: Owner,
        source: bytes | None,
        traceparent: str,
    ) -> Created:
        """A single job (``rules`` None) or a group, with its places in the interactive lane first."""
        try:
            reserved = self._reserve_interactive(root_id, jobs, rules, owner)
        except InteractiveLaneFull:
            # A retried request whose job is there (queued, holding its own places) is answered as a replay,
            # as create.lua would answer it, not refused for want of places for a second copy.
            replayed = self._replay_of(idempotency, owner)
            if replayed is None:
                raise
            return replayed
        try:
            reply = create.call(self.context, root_id, jobs, rules, idempotency, release, owner, source, traceparent)
            if reply.code == Reply.KEY_REUSED:
                raise IdempotencyKeyReused(
                    f"this Idempotency-Key was used for a different request (job {reply.job_id})"
                )
        except IdempotencyKeyReused:
            # Nothing created.  On any other error the root may be there (not yet replicated, or a reply
            # lost): its places stay, and lapse if it is not (jobs.interactive_share).
            if reserved:
                self._give_back_interactive(root_id)
            raise
        if reply.code not in (Reply.OK, Reply.REPLAYED):
            raise StoreError(f"create answered {reply!r}")
        if reserved and reply.job_id != root_id:
            self._give_back_interactive(root_id)  # a replay of another root, which holds places of its own
        return Created(reply.job_id, reply.code == Reply.REPLAYED, reply.released)

    def _reserve_interactive(
        self, root_id: str, jobs: Sequence[NewJob], rules: GroupRules | None, owner: Owner
    ) -> bool:
        """The places of a new root in the interactive lane in its tenant's allowance (jobs.interactive_share),
        when its owner has one; whether any were reserved."""
        lane = jobs[0].priority if rules is None else rules.priority
        if lane != Priority.INTERACTIVE.value or owner.interactive_max_inflight is None:
            return False
        places = interactive_share.places_of(len(jobs), rules)
        self.interactive_share.reserve(root_id, places, owner.interactive_max_inflight)
        return True

    def _replay_of(self, idempotency: Idempotency | None, owner: Owner) -> Created | None:
        """What create.lua answers for a request whose Idempotency-Key is already recorded: the replay of its
        job, or ``IdempotencyKeyReused`` for another request's key; None with no key, or none recorded."""
        if idempotency is None:
            return None
        recorded, fingerprint = self.redis.hmget(
            self.keyspace.idempotency(owner.tenant, idempotency.key), Field.ID.value, _FINGERPRINT
        )
        if recorded is None:
            return None
        if fingerprint is None or text_of(fingerprint) != idempotency.fingerprint:
            raise IdempotencyKeyReused(
                f"this Idempotency-Key was used for a different request (job {text_of(recorded)})"
            )
        return Created(text_of(recorded), True, [])

    def _give_back_interactive(self, root_id: str) -> None:
        try:
            self.interactive_share.give_back(root_id)
        except (RedisConnectionError, RedisTimeoutError):
            log.warning("the interactive places of %s stay reserved until they lapse", root_id)

    # -- the attempt of a worker ----------------------------------------------------------

    def claim(self, job_id: str) -> Claim | None:
        """Takes a queued job for one attempt; None when it is not claimable (a duplicate message)."""
        reply = claim.call(self.context, job_id)
        if reply.code != Reply.OK:
            return None
        return _claim_of(job_id, reply)

    def withdraw_wakeups(self, unsent: Iterable[Dispatch]) -> None:
        """Takes wake-ups that were counted as on their way but never published (the broker refused them)
        off their model's count, so that the next transition answers new ones for the jobs they were for,
        rather than none until the count lapses (OCRGW_REQUEUE_SECONDS).  Any of the model's newest
        entries will do: what the count says is how many, and the newest lapse last.
        """
        counts = Counter((d.bucket, d.model, d.priority) for d in unsent if d.task == PULL)
        if not counts:
            return
        pipe = self.redis.pipeline(transaction=False)
        for (bucket, model, lane), n in counts.items():
            pipe.zpopmax(self.keyspace.wakeups(bucket, model, lane), n)
        pipe.execute()

    def claim_next(self, model: str, lane: str = "", bucket: int = 0) -> tuple[Claim | None, list[Dispatch]]:
        """Takes the next due job of ``model`` in ``bucket``'s ready index (interactive lane first, then in
        queued order), whichever group or single job it is; None when none is due.  ``lane``, ``bucket``:
        those of the wake-up that brought the caller (lane '' for none), which stops counting as on its way.
        Also answers the wake-ups the bucket's ready jobs of the model still need (publish them).
        """
        reply = claim_next.call(self.context, model, lane, bucket)
        if reply.code != Reply.OK:
            return None, reply.released
        return _claim_of(reply.job_id, reply), reply.released

    def heartbeat(self, job_id: str, attempt: int) -> bool:
        """Extends the lease; False once this attempt no longer holds the job."""
        reply = heartbeat.call(self.context, job_id, attempt)
        return reply.code in (Reply.OK, Reply.CANCEL_REQUESTED)

    def report_progress(self, job_id: str, attempt: int, stage: str, progress: float) -> bool:
        """Records the page reached; False once this attempt no longer holds the job.

        Raises ``CancelRequested`` when a client asked to cancel the job: the
        caller stops and ends it with ``end_cancelled``.
        """
        reply = progress_entry.call(self.context, job_id, attempt, stage, progress)
        if reply.code == Reply.CANCEL_REQUESTED:
            raise CancelRequested(f"job {job_id}: cancelled by a client")
        return reply.code == Reply.OK

    def complete(
        self,
        job_id: str,
        attempt: int,
        result: dict[str, Any],
        take_next: str | None = None,
        interactive_first: Sequence[str] = (),
        units: JobUnits | None = None,
    ) -> Completion:
        """Ends the attempt with its result; ``units``: what the job used (jobs.usage; the result's pages
        when not given, and no input bytes).

        ``take_next`` (a model name) asks for the next ready job of that model,
        whichever group or single job it is, to be claimed for the caller in the
        same step (``Completion.next_claim``), with no message; an interactive job
        of any model in ``interactive_first`` (those the caller also serves) comes
        before a batch one of ``take_next``.
        """
        return self._finish(
            job_id,
            attempt,
            JobStatus.COMPLETED,
            json.dumps(result),
            "",
            "",
            take_next,
            interactive_first,
            units or JobUnits.of(result),
        )

    def fail(
        self,
        job_id: str,
        attempt: int,
        error_code: str,
        error: str,
        take_next: str | None = None,
        interactive_first: Sequence[str] = (),
    ) -> Completion:
        return self._finish(job_id, attempt, JobStatus.FAILED, "", error_code, error, take_next, interactive_first)

    def end_cancelled(self, job_id: str, attempt: int) -> Completion:
        """Ends an attempt that stopped because a client cancelled its job; no slot is kept."""
        return self._finish(job_id, attempt, JobStatus.CANCELLED, "", "", "cancelled by a client", None, ())

    def _finish(
        self,
        job_id: str,
        attempt: int,
        status: JobStatus,
        result: str,
        error_code: str,
        error: str,
        take_next: str | None,
        interactive_first: Sequence[str],
        units: JobUnits | None = None,
    ) -> Completion:
        reply = complete.call(
            self.context,
            job_id,
            attempt,
            status.value,
            result,
            error_code,
            error,
            take_next,
            interactive_first,
            units or JobUnits(),
        )
        self._raise_if_refused(job_id, reply.code)
        next_claim = None
        if reply.next_job_id:
            next_claim = Claim(
                reply.next_job_id,
                reply.next_attempt,
                reply.next_try_number,
                reply.next_model,
                reply.next_content_type,
                json.loads(reply.next_options or "{}"),
                reply.next_payload,
                source_pages=parse_pages(reply.next_source_pages),
                waited_seconds=_seconds_or_none(reply.next_waited_us),
                queue_wait_seconds=_seconds_or_none(reply.next_queue_wait_us),
                traceparent=reply.next_traceparent,
            )
        return Completion(reply.finalized, reply.released, next_claim, reply.cancelled_unstarted)

    def retry(self, job_id: str, attempt: int, backoff_seconds: float, error_code: str, error: str) -> None:
        """Gives the job back after a transient error; the sweep re-publishes it after the backoff.

        Raises ``CancelRequested`` instead when a client asked to cancel the job.
        """
        reply = retry.call(self.context, job_id, attempt, backoff_seconds, error_code, error)
        self._raise_if_refused(job_id, reply.code)

    @staticmethod
    def _raise_if_refused(job_id: str, code: Reply) -> None:
        if code == Reply.OK:
            return
        refusal = _REFUSALS.get(code)
        if refusal is None:
            raise StoreError(f"job {job_id}: unexpected reply {code!r}")
        raise refusal(f"job {job_id}: {code.name.lower().replace('_', ' ')}")

    # -- the searchable PDF ------------------------------------------------------------------

    def ask_pdf(self, job_id: str, ttl_seconds: int, variant: str = DEFAULT_OUTPUT.name) -> bool:
        """Marks a build of a variant of the job's searchable PDF as asked for; False when it already was.

        The mark lapses after ``ttl_seconds``, so a build whose message was
        lost is asked for again by a later request.
        """
        return bool(self.redis.set(self.keyspace.pdf_asked(job_id, variant), "1", nx=True, ex=ttl_seconds))

    def record_pdf(
        self, job_id: str, finished_at: str, pdf: bytes = b"", error: str = "", variant: str = DEFAULT_OUTPUT.name
    ) -> bool:
        """Keeps a variant of the PDF built for the job's ending at ``finished_at`` (or ``error``, why none could
        be built).

        False when the job is gone, or no longer at that ending (a parent redriven meanwhile): nothing kept.
        """
        reply = record_pdf.call(self.context, job_id, finished_at, pdf, error, variant)
        return reply.code == Reply.OK

    # -- draining -------------------------------------------------------------------------

    def set_draining(self, draining: bool) -> None:
        if draining:
            self.redis.set(keys.DRAINING, "1")
        else:
            self.redis.delete(keys.DRAINING)

    def is_draining(self) -> bool:
        return bool(self._probe.exists(keys.DRAINING))

    def ping(self) -> bool:
        return bool(self._probe.ping())


def _new_root_id(keyspace: Keyspace, owner: Owner, idempotency: Idempotency | None) -> str:
    """A new root's id: with an Idempotency-Key, in the bucket of the key's record (one slot for both)."""
    if idempotency is None:
        return new_job_id(owner.tenant)
    bucket = keyspace.bucket_of_idempotency(owner.tenant, idempotency.key)
    return new_job_id(owner.tenant, bucket, keyspace.bucket_count)


def _claim_of(job_id: str, reply: ClaimReply | ClaimNextReply) -> Claim:
    """The claim a ``claim`` or ``claim_next`` reply holds (they answer a claimed job alike)."""
    return Claim(
        job_id,
        reply.attempt,
        reply.try_number,
        reply.model,
        reply.content_type,
        json.loads(reply.options or "{}"),
        reply.payload,
        source_pages=parse_pages(reply.source_pages),
        waited_seconds=_seconds_or_none(reply.waited_us),
        queue_wait_seconds=_seconds_or_none(reply.queue_wait_us),
        traceparent=reply.traceparent,
    )


def _seconds_or_none(us: int) -> float | None:
    """A script's µs, where -1 means none."""
    return None if us < 0 else us / 1_000_000
