"""The only module that spells a Redis key.

The store's keys are spread over ``OCRGW_STORE_BUCKETS`` *buckets*.  Every
key of a bucket carries the bucket's Redis Cluster hash tag ``{<bucket
tag>}``, so that a transition, which touches one bucket's keys only, touches
one hash slot.  Bucket i's tag is chosen so that its slot falls near the
centre of the i-th of N equal ranges of slots (``bucket_tags``): a cluster
whose slots are split evenly among its primaries has an equal share of
buckets on each.

A single job and a fan-out group each own a *root* id; the root's bucket is
a function of its id alone (``bucket_of``), and every key of the root is in
that bucket (``ocrgw:{<bucket tag>}:<root>:...``).  A child's id is
``<parent id>-<index>``, so its keys, and the parent's, are derived from the
id alone: no lookup table is needed and a child can never be created twice.

Each bucket has its own indexes (leases, queued, due parents, webhooks,
expiring, the ready indexes and wake-ups, the lanes' turns and the retries
waiting out their backoff, the sweep lock) and its own share
of each tenant's keys (listing sets, in-flight count, waiting line, webhook
claims): a root's transitions move it between its own bucket's.  An
Idempotency-Key's record is in the bucket of (tenant, key), and the root it
creates is given an id in that bucket (``jobs.ids.new_job_id``).

The scripts derive the keys of a group's other jobs (the children a release
moves, the job a worker takes from the ready index) from the bucket's
prefix, which they read off their first declared key, with the Lua
functions ``lua_key_shapes`` generates from the shapes below, so both sides
build them from one definition.

A root id starts with its tenant's tag (``jobs.ids.new_job_id``), so a
tenant's own keys (its listing sets, its in-flight count, its waiting line)
derive from any of its jobs' ids too, in Python and in a script, with no
lookup.

With more than one bucket, a tenant's cap (OCRGW_TENANT_MAX_INFLIGHT) is
dealt out to the buckets by the tenant's *ledger*, in a slot of its own
(``ledger``, ``{t<tenant tag>}``): each bucket holds a quota of the
tenant's (``tenant_quota``) that its releases never exceed (jobs.tenant_quota).
Its webhook claims are counted in that slot too (``tenant_webhook_claims``,
jobs.webhooks), so OCRGW_WEBHOOK_TENANT_CONCURRENCY holds across buckets.

A few keys no script combines with a bucket's stay global: draining, the
gauges, the workers' reports, and the store's layout (``LAYOUT``): the bucket
count and key schema the store was written with, which every process checks
its own against at start (jobs.store_layout).
"""

import hashlib
from binascii import crc_hqx
from functools import cache

from jobs import contract
from jobs.contract import ROOT_STATUSES, JobKind
from jobs.pdf_outputs import ALL_OUTPUTS, DEFAULT_OUTPUT

NAMESPACE = "ocrgw"
CHILD_SEPARATOR = "-"
# How many leading hex digits of a root id are its tenant's tag.
TENANT_TAG_LENGTH = 12
# The parts of a group's keys after its prefix.
JOB = "job:"
PAYLOAD = "payload:"
RESULT = "result:"
CALL = "call:"
PDF = "pdf:"
PDF_ASKED = "pdf_asked:"
CHILDREN = "children:"
EVENTS = "events"
# A tenant's keys in a bucket: the bucket's prefix, TENANT, its tag, then one of the suffixes.
TENANT = "tenant:"
IN_FLIGHT = ":in_flight"
WAITING = ":waiting"
WEBHOOKS_IN_FLIGHT = ":webhooks_in_flight"
# The tenant's quota in a bucket (jobs.tenant_quota): a hash of these fields.
QUOTA = ":quota"
QUOTA_FIELD, FENCE_FIELD, CEILING_FIELD = "quota", "fence", "ceiling"
ROOTS = "roots:"

# Each bucket's indexes, each a sorted set of job or parent ids: the part after the bucket's prefix.
LEASES = "leases"  # processing jobs, scored by lease deadline (ms)
QUEUED = "queued"  # queued jobs, scored by when the sweep must (re)publish them if unclaimed (ms)
DUE_PARENTS = "parents:due"  # parents a transition left with work for the sweep
WEBHOOKS = "webhooks"  # terminal jobs with a callback_url, scored by when to (re)try delivery (ms)
# Terminal roots, scored by when they ended (ms): the sweep deletes each, with
# every key of its group, OCRGW_RESULT_TTL later (the expire transition).
EXPIRING = "expiring"
# A model's queued jobs a worker may take, per lane (``ready``), and the wake-ups published for them
# and not yet started (``wakeups``): then ``<model>:<lane>``.
READY = "ready:"
WAKEUPS = "wakeups:"
# Whose turn it is in each lane (``turns``, a hash of the fields below) and the jobs whose retry waits out
# its backoff before it enters a ready index (``later``): one each per bucket.
TURNS = "turns"
LATER = "later"
TURN_CLOCK = "clock:"  # then ``<model>:<lane>``: the lane's virtual clock, the turn of the job last taken
TURN_FINISH = "finish:"  # then ``<model>:<lane>:<tenant tag>``: where the tenant's next turn starts at the earliest
TURN_WEIGHT = "weight:"  # then the tenant's tag: its weight, when not 1
PULL_CALL = "pull_call:"
SWEEP_LOCK = "sweep:lock"  # one sweep of the bucket at a time
IDEMPOTENCY = "idem:"
# A tenant's usage of one UTC day in the bucket (jobs.usage): the bucket's prefix, USAGE, its tag, ':', the day.
USAGE = "usage:"
REDRIVEN = "redriven:"

# Global keys, which no script combines with a bucket's.
DRAINING = f"{NAMESPACE}:draining"  # set while gateways must refuse new work
# The job gauges as the sweep last counted them (``jobs.observed``): one JSON value a scrape reads.
GAUGES = f"{NAMESPACE}:gauges"
# A pub/sub channel nobody listens on: a creation publishes to it before WAIT
# (OCRGW_MIN_REPLICAS) so that even a replay, which writes nothing, has a
# write of its own for WAIT to count replicas up to.  On a Redis Cluster,
# where a PUBLISH is no write a replica acknowledges, the mark is a key in the
# creation's slot instead (``replication_mark``).
REPLICATION_MARK = f"{NAMESPACE}:replication-mark"
# What the live OCR workers report of themselves (``jobs.worker_reports``): their names, scored
# by when each one's report lapses (ms), and under ``worker_report`` one value per worker that
# Redis expires with it.
# Both hash-tagged alike, so that a report and its index change in one transaction on a cluster too.
WORKERS = f"{NAMESPACE}:{{workers}}"

# The store's layout (jobs.store_layout): the bucket count and key schema its keys were written with.
# A slot of its own, named by its own hash tag, whatever the bucket count.
LAYOUT = f"{NAMESPACE}:{{layout}}:layout"

# -- buckets -----------------------------------------------------------------------------------

#: Redis Cluster's hash slots.
SLOTS = 16384
#: The most buckets OCRGW_STORE_BUCKETS allows.
MAX_BUCKETS = 1024
# How many hex digits of a root id, after its tenant's tag, choose its bucket.
BUCKET_DIGITS = 4
BUCKET_SPACE = 16**BUCKET_DIGITS


def slot_of(text: str) -> int:
    """Redis Cluster's hash slot of a hash tag (of a key without one: of the key)."""
    return crc_hqx(text.encode(), 0) % SLOTS


@cache
def bucket_tags(count: int) -> tuple[str, ...]:
    """The hash tags of ``count`` buckets: bucket i's slot is in the middle half of the i-th of ``count``
    equal ranges of slots.  Deterministic: ``b<i>.<n>``, the first ``n`` (hex) that lands there."""
    tags = []
    for i in range(count):
        n = 0
        while not in_bucket_range(slot_of(f"b{i:02d}.{n:x}"), i, count):
            n += 1
        tags.append(f"b{i:02d}.{n:x}")
    return tuple(tags)


def in_bucket_range(slot: int, bucket: int, count: int) -> bool:
    """Whether ``slot`` is in the middle half of the ``bucket``-th of ``count`` equal ranges of slots."""
    low, high = bucket * SLOTS / count, (bucket + 1) * SLOTS / count
    centre, tolerance = (low + high) / 2, max((high - low) / 4, 0.5)
    return abs(slot + 0.5 - centre) <= tolerance


@cache
def _buckets_by_tag(count: int) -> dict[str, int]:
    return {tag: i for i, tag in enumerate(bucket_tags(count))}


def _idempotency_digest(tenant: str, key: str) -> str:
    # Hashed so that any client-chosen string (up to 255 chars) makes a tidy key; a
    # tenant's name has no ':', so no other (tenant, key) pair hashes the same text.
    return hashlib.sha256(f"{tenant}:{key}".encode()).hexdigest()


def is_sweep_lock(key: str | bytes) -> bool:
    """A bucket's sweep lock: set and deleted by every sweep tick, whatever else happens."""
    name = key.decode() if isinstance(key, bytes) else key
    return name.startswith(f"{NAMESPACE}:{{") and name.endswith("}:" + SWEEP_LOCK)


def tag_of(job_id: str) -> str:
    """The tag of the tenant whose job this is: the first digits of its root id (``jobs.ids.tenant_tag``)."""
    return root_of(job_id)[:TENANT_TAG_LENGTH]


def child_id(parent_id: str, index: int) -> str:
    return f"{parent_id}{CHILD_SEPARATOR}{index}"


def root_of(job_id: str) -> str:
    return job_id.split(CHILD_SEPARATOR, 1)[0]


def pdf_fields(variant: str = DEFAULT_OUTPUT.name) -> tuple[str, str]:
    """The fields of ``pdf`` that keep a variant (``jobs.pdf_outputs``): its document, or why it could not be built.

    The default variant's are ``pdf`` and ``failure``, as they were before there were others.
    """
    if variant == DEFAULT_OUTPUT.name:
        return "pdf", "failure"
    return f"pdf:{variant}", f"failure:{variant}"


def is_call_record(key: str) -> bool:
    if not key.startswith(f"{NAMESPACE}:{{"):
        return False
    return key.partition("}:")[2].partition(":")[2].startswith(CALL) or key.partition("}:")[2].startswith(PULL_CALL)


def is_wakeup_count(key: str) -> bool:
    """A bucket's count of a model's wake-ups on their way: it changes as woken workers start, whatever else
    happens."""
    return key.startswith(f"{NAMESPACE}:{{") and key.partition("}:")[2].startswith(WAKEUPS)


def is_turns(key: str | bytes) -> bool:
    """A bucket's turns: the lanes' state, no job's, kept while the bucket lives (a few fields per tenant)."""
    name = key.decode() if isinstance(key, bytes) else key
    return name.startswith(f"{NAMESPACE}:{{") and name.partition("}:")[2] == TURNS


def ledger_tag(tag: str) -> str:
    """The hash tag of a tenant's ledger: a slot of its own, no bucket's."""
    return f"t{tag}"


def ledger(tag: str) -> str:
    """The tenant's ledger (a hash): ``epoch``, ``seq`` (one more at each grant or return) and, per bucket
    ``b<i>``, the quota it granted that bucket.  Its grants never sum above the tenant's cap."""
    return f"{NAMESPACE}:{{{ledger_tag(tag)}}}:ledger"


def ledger_lock(tag: str) -> str:
    """One rebalance (or reconcile) of the tenant's quota at a time."""
    return f"{NAMESPACE}:{{{ledger_tag(tag)}}}:ledger:lock"


def tenant_webhook_claims(tag: str) -> str:
    """With more than one bucket, the tenant's webhook claims across every bucket (a sorted set in its
    ledger's slot): job id, scored by when the claim runs out (ms), the same deadline as the claim in the
    job's bucket.  OCRGW_WEBHOOK_TENANT_CONCURRENCY caps how many it holds (``reserve_webhook``)."""
    return f"{NAMESPACE}:{{{ledger_tag(tag)}}}:webhook_claims"


def is_usage_record(key: str) -> bool:
    """A tenant's usage of a day: it outlives every job it counts (it expires on its own)."""
    return key.startswith(f"{NAMESPACE}:{{") and key.partition("}:")[2].startswith(USAGE)


def tenant_streams(tag: str) -> str:
    """The tenant's open live event streams on every gateway (a sorted set in its ledger's slot): a stream's
    id, scored by when its lease runs out (ms); OCRGW_STREAM_MAX_PER_TENANT caps it (jobs.stream_leases)."""
    return f"{NAMESPACE}:{{{ledger_tag(tag)}}}:streams"


def tenant_interactive(tag: str) -> str:
    """The tenant's interactive jobs queued or processing, across every bucket (a hash in its ledger's slot):
    root id -> ``<places>|<reserved at, ms>``, a place per job the root may run at once.  A key's
    interactive_max_inflight caps the places (``reserve_interactive``, jobs.interactive_share)."""
    return f"{NAMESPACE}:{{{ledger_tag(tag)}}}:interactive"


#: The tags of the tenants with a ledger, which the sweep rebalances (a set; no script reads it).
LEDGERS = f"{NAMESPACE}:ledgers"


def worker_report(name: str) -> str:
    """What the worker ``name`` (its Celery hostname and pid) last reported; it expires unless renewed."""
    return f"{WORKERS}:{name}"


def is_worker_report(key: str) -> bool:
    """The index of the workers' reports or one of them: keys that live workers renew on their own."""
    return key == WORKERS or key.startswith(WORKERS + ":")


class Keyspace:
    """The store's keys, spread over ``bucket_count`` buckets: every key builder that needs the count.

    Each process builds one from its settings (``Keyspace(settings.store_buckets)``,
    held by the store as ``store.keyspace``) and hands it down, so that two stores of
    different counts (a migration's old and new, a test's) live side by side in one
    process.  The builders that need no count stay module functions.
    """

    def __init__(self, bucket_count: int) -> None:
        if not 1 <= bucket_count <= MAX_BUCKETS:
            raise ValueError(f"a bucket count is from 1 to {MAX_BUCKETS}, got {bucket_count}")
        #: How many buckets the store's keys are spread over (OCRGW_STORE_BUCKETS).
        self.bucket_count = bucket_count

    def __repr__(self) -> str:
        return f"Keyspace({self.bucket_count})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Keyspace) and other.bucket_count == self.bucket_count

    def __hash__(self) -> int:
        return hash(self.bucket_count)

    def buckets(self) -> range:
        """Every bucket's number."""
        return range(self.bucket_count)

    def bucket_tag(self, bucket: int) -> str:
        return bucket_tags(self.bucket_count)[bucket]

    def bucket_prefix(self, bucket: int) -> str:
        """What every key of the bucket starts with: ``ocrgw:{<bucket tag>}:``."""
        return f"{NAMESPACE}:{{{self.bucket_tag(bucket)}}}:"

    def bucket_of(self, job_id: str) -> int:
        """The bucket of a job's root: the digits after its tenant's tag, modulo the bucket count."""
        root = root_of(job_id)
        return int(root[TENANT_TAG_LENGTH : TENANT_TAG_LENGTH + BUCKET_DIGITS], 16) % self.bucket_count

    def bucket_of_key(self, key: str) -> int:
        """The bucket of one of this module's bucketed keys (KeyError for a key of no bucket)."""
        return _buckets_by_tag(self.bucket_count)[key.partition("{")[2].partition("}")[0]]

    def bucket_of_idempotency(self, tenant: str, key: str) -> int:
        """The bucket of a tenant's Idempotency-Key's record, and of the root a creation with it makes."""
        return int(_idempotency_digest(tenant, key)[:8], 16) % self.bucket_count

    def leases(self, bucket: int) -> str:
        return self.bucket_prefix(bucket) + LEASES

    def queued(self, bucket: int) -> str:
        return self.bucket_prefix(bucket) + QUEUED

    def due_parents(self, bucket: int) -> str:
        return self.bucket_prefix(bucket) + DUE_PARENTS

    def webhooks(self, bucket: int) -> str:
        return self.bucket_prefix(bucket) + WEBHOOKS

    def expiring(self, bucket: int) -> str:
        return self.bucket_prefix(bucket) + EXPIRING

    def sweep_lock(self, bucket: int) -> str:
        return self.bucket_prefix(bucket) + SWEEP_LOCK

    def replication_mark(self, bucket: int) -> str:
        """The key a creation sets before WAIT on a Redis Cluster: in the slot of the bucket's keys."""
        return self.bucket_prefix(bucket) + "replication-mark"

    def roots(self, kind: str, status: str, tag: str, bucket: int) -> str:
        """One tenant's single jobs or parents (``kind``) in one status in one bucket, scored by
        ``created_at`` (µs): the listing's index.

        Each root is in exactly one of these sets, its tenant's (``tag``, see
        ``tag_of``) in its bucket; the transition that changes its status moves
        it, so listing newest-first never scans (it merges the buckets' sets).
        """
        return f"{self.bucket_prefix(bucket)}{ROOTS}{tag}:{kind}:{status}"

    def roots_by_status(self, job_id: str, kind: JobKind | None = None) -> dict[str, str]:
        """The listing sets (its tenant's) a transition on ``job_id`` may move a root between, as the scripts
        name them, and the expiring index a root enters when it ends.

        Unless ``kind`` says otherwise, a root that is claimed or finished is a
        single job, and a child's transitions move its parent.
        """
        if kind is None:
            kind = JobKind.PARENT if CHILD_SEPARATOR in job_id else JobKind.SINGLE
        tag, bucket = tag_of(job_id), self.bucket_of(job_id)
        return {
            **{f"roots_{s.value}": self.roots(kind.value, s.value, tag, bucket) for s in ROOT_STATUSES},
            "expiring": self.expiring(bucket),
        }

    def of_running_job(self, job_id: str) -> dict[str, str]:
        """The keys every transition on a queued or running job names alike (see the transitions' specs)."""
        return {
            "job": self.job(job_id),
            "parent": self.parent_or_self(job_id),
            "leases": self.leases(self.bucket_of(job_id)),
            "queued": self.queued(self.bucket_of(job_id)),
            **self.roots_by_status(job_id),
        }

    def group_prefix(self, job_id: str) -> str:
        """What every key of the job's group starts with: its bucket's prefix, then its root's id."""
        return f"{self.bucket_prefix(self.bucket_of(job_id))}{root_of(job_id)}:"

    def job(self, job_id: str) -> str:
        return f"{self.group_prefix(job_id)}{JOB}{job_id}"

    def payload(self, job_id: str) -> str:
        return f"{self.group_prefix(job_id)}{PAYLOAD}{job_id}"

    def result(self, job_id: str) -> str:
        return f"{self.group_prefix(job_id)}{RESULT}{job_id}"

    def pdf(self, job_id: str) -> str:
        """A terminal job's searchable PDFs once built: a hash of two fields per variant (``pdf_fields``)."""
        return f"{self.group_prefix(job_id)}{PDF}{job_id}"

    def pdf_asked(self, job_id: str, variant: str = DEFAULT_OUTPUT.name) -> str:
        """Set (with a TTL) while a build of a variant of the job's searchable PDF is asked for, so it is asked once."""
        asked = f"{self.group_prefix(job_id)}{PDF_ASKED}{job_id}"
        return asked if variant == DEFAULT_OUTPUT.name else f"{asked}:{variant}"

    def parent_or_self(self, job_id: str) -> str:
        """The parent's key for a child, else the job's own: what a script's ``parent`` key is."""
        return self.job(root_of(job_id))

    def call(self, job_id: str, token: str) -> str:
        """What one call of a transition on a job answered, kept briefly so that
        the same call sent again (same token) can be answered alike."""
        return f"{self.group_prefix(job_id)}{CALL}{token}"

    def ready(self, bucket: int, model: str, lane: str) -> str:
        """The queued jobs of ``model`` in ``lane`` a worker may take, scored by turn: each job's virtual start in
        its lane (``turns``), so that tenants take turns, by weight; a tenant's own jobs in the order they came.

        A finishing worker (``complete``) or a woken one (``claim_next``) takes
        the first, the interactive lane's before the batch lane's; an entry whose
        job is no longer queued (claimed by its own message, cancelled) is
        dropped when met.  A retry in its backoff waits in ``later`` instead.
        """
        return f"{self.bucket_prefix(bucket)}{READY}{model}:{lane}"

    def wakeups(self, bucket: int, model: str, lane: str) -> str:
        """The wake-ups (``ocrgw.pull`` messages) of ``model`` in ``lane`` published and not yet started, each a
        member scored by when it no longer counts (ms): a lost message stops counting then."""
        return f"{self.bucket_prefix(bucket)}{WAKEUPS}{model}:{lane}"

    def turns(self, bucket: int) -> str:
        """Whose turn it is in each model's lanes in ``bucket`` (a hash): each lane's virtual clock, each tenant's
        next turn in it and each tenant's weight (ready.lua: start-time fair queueing)."""
        return f"{self.bucket_prefix(bucket)}{TURNS}"

    def later(self, bucket: int) -> str:
        """The queued jobs of ``bucket`` whose retry waits out its backoff, scored by when it ends (µs): the next
        take after that moves each into its ready index, where it gets its tenant's next turn."""
        return f"{self.bucket_prefix(bucket)}{LATER}"

    def pull_call(self, bucket: int, token: str) -> str:
        """What one ``claim_next`` call answered (it names no job before it runs), kept briefly like ``call``."""
        return f"{self.bucket_prefix(bucket)}{PULL_CALL}{token}"

    def children(self, parent_id: str, status: str) -> str:
        """The children of a parent in one status, scored by index: a page of them, or all failed ones, is one read."""
        return f"{self.group_prefix(parent_id)}{CHILDREN}{status}"

    def events(self, job_id: str) -> str:
        """The audit stream of a root: a single job's events, or a parent's and all its children's."""
        return f"{self.group_prefix(job_id)}{EVENTS}"

    def tenant_in_flight(self, tag: str, bucket: int) -> str:
        """How many children of the tenant tagged ``tag`` are queued or processing, across all its groups in
        ``bucket`` (the bucket's share: exact for the tenant with one bucket, see OCRGW_STORE_BUCKETS).

        Moved by every transition that moves a child into or out of those
        statuses (the scripts' ``move_child``); OCRGW_TENANT_MAX_INFLIGHT caps it.
        """
        return f"{self.bucket_prefix(bucket)}{TENANT}{tag}{IN_FLIGHT}"

    def tenant_waiting(self, tag: str, bucket: int) -> str:
        """The tenant's groups (in ``bucket``) that its cap alone holds back (held children, room under their own cap).

        Scored by turn: the next slot the tenant frees goes to the first, which
        then goes to the back if it still waits, so the tenant's groups take turns.
        """
        return f"{self.bucket_prefix(bucket)}{TENANT}{tag}{WAITING}"

    def tenant_webhooks(self, tag: str, bucket: int) -> str:
        """The tenant's jobs with a webhook attempt claimed and not yet answered, scored by when the claim
        runs out (ms): OCRGW_WEBHOOK_TENANT_CONCURRENCY caps how many it holds at once (``claim_webhook``).
        Each claim sets it to expire when its latest claim runs out, so a tenant without webhooks has none."""
        return f"{self.bucket_prefix(bucket)}{TENANT}{tag}{WEBHOOKS_IN_FLIGHT}"

    def tenant_quota(self, tag: str, bucket: int) -> str:
        """The tenant's quota in ``bucket`` (a hash; with more than one bucket only, see jobs.tenant_quota):
        ``quota``, how many of its children may be in flight in the bucket (granted by its ledger);
        ``fence``, the latest ledger epoch a reconcile fenced it with (a grant of an older one is refused);
        ``ceiling``, while set, a lower bound the bucket's releases keep to as the sweep takes quota back."""
        return f"{self.bucket_prefix(bucket)}{TENANT}{tag}{QUOTA}"

    def usage(self, tag: str, bucket: int, day: int) -> str:
        """What the tenant tagged ``tag`` used in ``bucket`` on UTC day ``day`` (days since the epoch): a hash of
        ``<hour>|<model>|<unit>`` -> amount, written by the transitions that end attempts (jobs.usage).

        Kept for OCRGW_USAGE_RETENTION after its day ends, whatever becomes of the jobs it counts.
        """
        return f"{self.bucket_prefix(bucket)}{USAGE}{tag}:{day}"

    def idempotency(self, tenant: str, key: str, bucket: int | None = None) -> str:
        """A tenant's Idempotency-Key: the same key sent by two tenants names two records.

        In the key's own bucket (``bucket_of_idempotency``), where a creation with
        it makes its root, and where a redrive with it takes it first
        (``reserve_key``), whichever group's bucket the redrive runs in; unless
        ``bucket`` says otherwise.
        """
        if bucket is None:
            bucket = self.bucket_of_idempotency(tenant, key)
        return f"{self.bucket_prefix(bucket)}{IDEMPOTENCY}{_idempotency_digest(tenant, key)}"

    def redrive_mark(self, tenant: str, key: str, parent_id: str) -> str:
        """That a redrive of the group ``parent_id`` with a tenant's Idempotency-Key ran: in the group's bucket,
        written by the redrive itself, so that the same request sent again replays rather than runs again,
        whatever became of the key's record (``idempotency``) in its own bucket.  It lapses with the record."""
        return f"{self.bucket_prefix(self.bucket_of(parent_id))}{REDRIVEN}{_idempotency_digest(tenant, key)}"


#: What each call of a transition does first: the prefix of its bucket, read off its first key.
BUCKET_PREFIX_OF_CALL = f"BUCKET_PREFIX = string.match(KEYS[1], '^{NAMESPACE}:{{[^}}]*}}:')"


def lua_key_shapes() -> str:
    """The Lua functions that derive a bucket's keys from its prefix (read off the script's first key)
    and a group's from the group's prefix, as the functions above do."""
    return (
        "\n".join(
            [
                # Every key a script touches is in the bucket of its first declared key: the rest derive from it
                # (BUCKET_PREFIX_OF_CALL sets it as each call begins).
                "local BUCKET_PREFIX",
                f"local function job_key_of(prefix, id) return prefix .. '{JOB}' .. id end",
                f"local function payload_key_of(prefix, id) return prefix .. '{PAYLOAD}' .. id end",
                f"local function result_key_of(prefix, id) return prefix .. '{RESULT}' .. id end",
                f"local function pdf_key_of(prefix, id) return prefix .. '{PDF}' .. id end",
                # Every variant's mark: the default's, then each other's with its name after the id.
                f"local function pdf_asked_keys_of(prefix, id) local asked = prefix .. '{PDF_ASKED}' .. id"
                "  return {asked"
                + "".join(f", asked .. ':{v.name}'" for v in ALL_OUTPUTS if not v.is_default)
                + "} end",
                f"local function children_key_of(prefix, status) return prefix .. '{CHILDREN}' .. status end",
                f"local function child_id_of(parent_id, index) return parent_id .. '{CHILD_SEPARATOR}' "
                "  .. string.format('%d', index) end",
                f"local function root_of(id) local cut = string.find(id, '{CHILD_SEPARATOR}', 1, true)"
                "  if cut then return string.sub(id, 1, cut - 1) end return id end",
                "local function group_prefix_of(id) return BUCKET_PREFIX .. root_of(id) .. ':' end",
                f"local function tenant_tag_of(id) return string.sub(id, 1, {TENANT_TAG_LENGTH}) end",
                f"local function tenant_in_flight_key_of(tag) return BUCKET_PREFIX .. '{TENANT}' .. tag"
                f"  .. '{IN_FLIGHT}' end",
                f"local function tenant_waiting_key_of(tag) return BUCKET_PREFIX .. '{TENANT}' .. tag"
                f"  .. '{WAITING}' end",
                f"local function tenant_quota_key_of(tag) return BUCKET_PREFIX .. '{TENANT}' .. tag  .. '{QUOTA}' end",
                f"local function roots_key_of(tag, kind, status) return BUCKET_PREFIX .. '{ROOTS}' .. tag"
                "  .. ':' .. kind .. ':' .. status end",
                f"local function usage_key_of(tag, day) return BUCKET_PREFIX .. '{USAGE}' .. tag .. ':' .. day end",
                f"local function ready_key_of(model, lane) return BUCKET_PREFIX .. '{READY}' .. model"
                "  .. ':' .. lane end",
                f"local function wakeups_key_of(model, lane) return BUCKET_PREFIX .. '{WAKEUPS}' .. model"
                "  .. ':' .. lane end",
                f"local function turns_key_of() return BUCKET_PREFIX .. '{TURNS}' end",
                f"local function later_key_of() return BUCKET_PREFIX .. '{LATER}' end",
                f"local function turn_clock_field(model, lane) return '{TURN_CLOCK}' .. model .. ':' .. lane end",
                f"local function turn_finish_field(model, lane, tag) return '{TURN_FINISH}' .. model .. ':' .. lane"
                "  .. ':' .. tag end",
                f"local function turn_weight_field(tag) return '{TURN_WEIGHT}' .. tag end",
            ]
        )
        + "\n"
    )


@cache
def lua_preamble() -> str:
    """What every script opens with: the names it shares with Python (jobs.contract) and the key shapes above.

    Assembled here, not in jobs.contract, so that the contract imports nothing of the store's."""
    return contract.lua_preamble() + lua_key_shapes()
