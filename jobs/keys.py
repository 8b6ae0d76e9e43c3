"""The only module that spells a Redis key.

A single job and a fan-out group each own a *root* id.  Every key of that root
carries the Redis Cluster hash tag ``{root}`` so that the group's scripts touch
one slot.  A child's id is ``<parent id>-<index>``, so its keys, and the
parent's, are derived from the id alone: no lookup table is needed and a
child can never be created twice.

The scripts derive the keys of a group's other jobs (the children a release
moves, the child a kept slot claims) from the group's hash-tagged prefix
(``ocrgw:{root}:``) with the Lua functions ``lua_key_shapes`` generates from
the shapes below, so both sides build them from one definition.

A root id starts with its tenant's tag (``jobs.ids.new_job_id``), so a
tenant's own keys (its listing sets, its in-flight count, its waiting line)
derive from any of its jobs' ids too, in Python and in a script, with no
lookup.  Like the global indexes, they are outside every group's hash slot.
"""

import hashlib

from jobs.contract import ROOT_STATUSES, JobKind

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
# A tenant's keys: the prefix, its tag, then one of the suffixes.
TENANT = f"{NAMESPACE}:tenant:"
IN_FLIGHT = ":in_flight"
WAITING = ":waiting"
WEBHOOKS_IN_FLIGHT = ":webhooks_in_flight"

# Global indexes, each a sorted set of job or parent ids.
LEASES = f"{NAMESPACE}:leases"  # processing jobs, scored by lease deadline (ms)
QUEUED = f"{NAMESPACE}:queued"  # queued jobs, scored by when the sweep must (re)publish them if unclaimed (ms)
DUE_PARENTS = f"{NAMESPACE}:parents:due"  # parents a transition left with work for the sweep
WEBHOOKS = f"{NAMESPACE}:webhooks"  # terminal jobs with a callback_url, scored by when to (re)try delivery (ms)
# Terminal roots, scored by when they ended (ms): the sweep deletes each, with
# every key of its group, OCRGW_RESULT_TTL later (the expire transition).
EXPIRING = f"{NAMESPACE}:expiring"
# A model's queued jobs a worker may take, per lane (``ready``), and the wake-ups published for them
# and not yet started (``wakeups``): the prefixes, then ``<model>:<lane>``.
READY = f"{NAMESPACE}:ready:"
WAKEUPS = f"{NAMESPACE}:wakeups:"
SWEEP_LOCK = f"{NAMESPACE}:sweep:lock"
DRAINING = f"{NAMESPACE}:draining"  # set while gateways must refuse new work
# The job gauges as the sweep last counted them (``jobs.observed``): one JSON value a scrape reads.
GAUGES = f"{NAMESPACE}:gauges"
# A pub/sub channel nobody listens on: a creation publishes to it before WAIT
# (OCRGW_MIN_REPLICAS) so that even a replay, which writes nothing, has a
# write of its own for WAIT to count replicas up to.
REPLICATION_MARK = f"{NAMESPACE}:replication-mark"
# What the live OCR workers report of themselves (``jobs.worker_reports``): their names, scored
# by when each one's report lapses (ms), and under ``worker_report`` one value per worker that
# Redis expires with it.
WORKERS = f"{NAMESPACE}:workers"


def roots(kind: str, status: str, tag: str | None = None) -> str:
    """One tenant's single jobs or parents (``kind``) in one status, scored by ``created_at`` (µs): the
    listing's index.

    Each root is in exactly one of these sets, its tenant's (``tag``, see
    ``tag_of``; the default tenant's when not given); the transition that
    changes its status moves it, so listing newest-first never scans.
    """
    if tag is None:
        from jobs.ids import DEFAULT_TENANT, tenant_tag  # jobs.ids imports this module

        tag = tenant_tag(DEFAULT_TENANT)
    return f"{NAMESPACE}:roots:{tag}:{kind}:{status}"


def tag_of(job_id: str) -> str:
    """The tag of the tenant whose job this is: the first digits of its root id (``jobs.ids.tenant_tag``)."""
    return root_of(job_id)[:TENANT_TAG_LENGTH]


def roots_by_status(job_id: str, kind: JobKind | None = None) -> dict[str, str]:
    """The listing sets (its tenant's) a transition on ``job_id`` may move a root between, as the scripts
    name them, and the expiring index a root enters when it ends.

    Unless ``kind`` says otherwise, a root that is claimed or finished is a
    single job, and a child's transitions move its parent.
    """
    if kind is None:
        kind = JobKind.PARENT if CHILD_SEPARATOR in job_id else JobKind.SINGLE
    tag = tag_of(job_id)
    return {**{f"roots_{s.value}": roots(kind.value, s.value, tag) for s in ROOT_STATUSES}, "expiring": EXPIRING}


def of_running_job(job_id: str) -> dict[str, str]:
    """The keys every transition on a queued or running job names alike (see the transitions' specs)."""
    return {
        "job": job(job_id),
        "parent": parent_or_self(job_id),
        "leases": LEASES,
        "queued": QUEUED,
        **roots_by_status(job_id),
    }


def child_id(parent_id: str, index: int) -> str:
    return f"{parent_id}{CHILD_SEPARATOR}{index}"


def root_of(job_id: str) -> str:
    return job_id.split(CHILD_SEPARATOR, 1)[0]


def group_prefix(job_id: str) -> str:
    return f"{NAMESPACE}:{{{root_of(job_id)}}}:"


def job(job_id: str) -> str:
    return f"{group_prefix(job_id)}{JOB}{job_id}"


def payload(job_id: str) -> str:
    return f"{group_prefix(job_id)}{PAYLOAD}{job_id}"


def result(job_id: str) -> str:
    return f"{group_prefix(job_id)}{RESULT}{job_id}"


def pdf(job_id: str) -> str:
    """A terminal job's searchable PDF once built (a hash: ``pdf``, or ``failure`` when it could not be built)."""
    return f"{group_prefix(job_id)}{PDF}{job_id}"


def pdf_asked(job_id: str) -> str:
    """Set (with a TTL) while a build of the job's searchable PDF is asked for, so it is asked once."""
    return f"{group_prefix(job_id)}{PDF_ASKED}{job_id}"


def parent_or_self(job_id: str) -> str:
    """The parent's key for a child, else the job's own: what a script's ``parent`` key is."""
    return job(root_of(job_id))


def call(job_id: str, token: str) -> str:
    """What one call of a transition on a job answered, kept briefly so that
    the same call sent again (same token) can be answered alike."""
    return f"{group_prefix(job_id)}{CALL}{token}"


def is_call_record(key: str) -> bool:
    return key.startswith(f"{NAMESPACE}:{{") and key.partition("}")[2].startswith(":" + CALL)


def ready(model: str, lane: str) -> str:
    """The queued jobs of ``model`` in ``lane`` a worker may take, scored by when each may run (µs: its
    release, or its retry's backoff end; the jobs of one release a µs apart, in order).

    A finishing worker (``complete``) or a woken one (``claim_next``) takes
    the first that is due, the interactive lane's before the batch lane's;
    an entry whose job is no longer queued (claimed by its own message,
    cancelled) is dropped when met.
    """
    return f"{READY}{model}:{lane}"


def wakeups(model: str, lane: str) -> str:
    """The wake-ups (``ocrgw.pull`` messages) of ``model`` in ``lane`` published and not yet started, each a
    member scored by when it no longer counts (ms): a lost message stops counting then."""
    return f"{WAKEUPS}{model}:{lane}"


def pull_call(token: str) -> str:
    """What one ``claim_next`` call answered (it names no job before it runs), kept briefly like ``call``."""
    return f"{NAMESPACE}:pull_call:{token}"


def children(parent_id: str, status: str) -> str:
    """The children of a parent in one status, scored by index: a page of them, or all failed ones, is one read."""
    return f"{group_prefix(parent_id)}{CHILDREN}{status}"


def events(job_id: str) -> str:
    """The audit stream of a root: a single job's events, or a parent's and all its children's."""
    return f"{group_prefix(job_id)}{EVENTS}"


def tenant_in_flight(tag: str) -> str:
    """How many children of the tenant tagged ``tag`` are queued or processing, across all its groups.

    Moved by every transition that moves a child into or out of those
    statuses (the scripts' ``move_child``); OCRGW_TENANT_MAX_INFLIGHT caps it.
    """
    return f"{TENANT}{tag}{IN_FLIGHT}"


def tenant_waiting(tag: str) -> str:
    """The tenant's groups that its cap alone holds back (held children, room under their own cap).

    Scored by turn: the next slot the tenant frees goes to the first, which
    then goes to the back if it still waits, so the tenant's groups take turns.
    """
    return f"{TENANT}{tag}{WAITING}"


def tenant_webhooks(tag: str) -> str:
    """The tenant's jobs with a webhook attempt claimed and not yet answered, scored by when the claim
    runs out (ms): OCRGW_WEBHOOK_TENANT_CONCURRENCY caps how many it holds at once (``claim_webhook``).
    Each claim sets it to expire when its latest claim runs out, so a tenant without webhooks has none."""
    return f"{TENANT}{tag}{WEBHOOKS_IN_FLIGHT}"


def idempotency(tenant: str, key: str) -> str:
    """A tenant's Idempotency-Key: the same key sent by two tenants names two records."""
    # Hashed so that any client-chosen string (up to 255 chars) makes a tidy key; a
    # tenant's name has no ':', so no other (tenant, key) pair hashes the same text.
    digest = hashlib.sha256(f"{tenant}:{key}".encode()).hexdigest()
    return f"{NAMESPACE}:idem:{digest}"


def worker_report(name: str) -> str:
    """What the worker ``name`` (its Celery hostname and pid) last reported; it expires unless renewed."""
    return f"{WORKERS}:{name}"


def is_worker_report(key: str) -> bool:
    """The index of the workers' reports or one of them: keys that live workers renew on their own."""
    return key == WORKERS or key.startswith(WORKERS + ":")


def lua_key_shapes() -> str:
    """The Lua functions that derive a group's keys from its prefix, as the functions above do."""
    from jobs.ids import TENANT_TAG_LENGTH  # ids imports this module

    return (
        "\n".join(
            [
                f"local function job_key_of(prefix, id) return prefix .. '{JOB}' .. id end",
                f"local function payload_key_of(prefix, id) return prefix .. '{PAYLOAD}' .. id end",
                f"local function result_key_of(prefix, id) return prefix .. '{RESULT}' .. id end",
                f"local function pdf_key_of(prefix, id) return prefix .. '{PDF}' .. id end",
                f"local function pdf_asked_key_of(prefix, id) return prefix .. '{PDF_ASKED}' .. id end",
                f"local function children_key_of(prefix, status) return prefix .. '{CHILDREN}' .. status end",
                f"local function child_id_of(parent_id, index) return parent_id .. '{CHILD_SEPARATOR}' "
                "  .. string.format('%d', index) end",
                f"local function root_of(id) local cut = string.find(id, '{CHILD_SEPARATOR}', 1, true)"
                "  if cut then return string.sub(id, 1, cut - 1) end return id end",
                f"local function group_prefix_of(id) return '{NAMESPACE}:{{' .. root_of(id) .. '}}:' end",
                f"local function tenant_tag_of(id) return string.sub(id, 1, {TENANT_TAG_LENGTH}) end",
                f"local function tenant_in_flight_key_of(tag) return '{TENANT}' .. tag .. '{IN_FLIGHT}' end",
                f"local function tenant_waiting_key_of(tag) return '{TENANT}' .. tag .. '{WAITING}' end",
                f"local function roots_key_of(tag, kind, status) return '{NAMESPACE}:roots:' .. tag .. ':' .. kind"
                "  .. ':' .. status end",
                f"local function ready_key_of(model, lane) return '{READY}' .. model .. ':' .. lane end",
                f"local function wakeups_key_of(model, lane) return '{WAKEUPS}' .. model .. ':' .. lane end",
            ]
        )
        + "\n"
    )
