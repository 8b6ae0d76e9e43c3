"""The entry of ``create``: its spec and its call (``create.lua`` beside it says what it does)."""

from collections.abc import Sequence
from contextlib import nullcontext
from dataclasses import dataclass

from jobs import keys, tenant_quota
from jobs.contract import JobKind, JobStatus, Reply
from jobs.errors import NotReplicated
from jobs.records import GroupRules, Idempotency, NewJob, Owner
from jobs.replication import write_and_wait
from jobs.transitions.context import StoreContext
from jobs.transitions.spec import RELEASE_ARGS, RELEASE_KEYS, Arg, Dispatches, Transition


@dataclass(frozen=True)
class CreateReply:
    code: Reply
    job_id: str
    released: Dispatches


CREATE = Transition(
    "create",
    keys=("idempotency", "root", "roots_queued", *RELEASE_KEYS),
    args=(
        Arg("idempotency_key"),
        Arg("fingerprint"),
        Arg("idempotency_ttl", "int"),
        Arg("root_id"),
        Arg("kind"),
        Arg("tenant"),
        Arg("key_id"),
        Arg("weight", "int"),
        Arg("traceparent"),
        *RELEASE_ARGS,
        Arg("group", "json"),
        Arg("jobs", "json"),
        Arg("source", "bytes"),
        Arg("payloads", "bytes", rest=True),
    ),
    reply=CreateReply,
)


def call(
    ctx: StoreContext,
    root_id: str,
    jobs: Sequence[NewJob],
    rules: GroupRules | None,
    idempotency: Idempotency | None,
    release: bool,
    owner: Owner,
    source: bytes | None,
    traceparent: str,
) -> CreateReply:
    """Creates a single job (``rules`` None: ``jobs`` holds it) or a group of ``rules`` with ``jobs`` its
    children, and releases the group's first children unless ``release`` is False.

    With OCRGW_MIN_REPLICAS, answers only once that many replicas have it; raises ``NotReplicated`` when
    fewer confirm within OCRGW_REPLICA_WAIT_MS (the job is then kept, and a retry with the same
    Idempotency-Key replays it).
    """
    kind = JobKind.SINGLE if rules is None else JobKind.PARENT
    root = ctx.keyspace.job(root_id)
    models = {j.model for j in jobs}
    # A group that could start none of its children now (release False) needs no room yet.
    could_start = 0
    if rules is not None and release:
        could_start = len(jobs) if rules.max_parallel <= 0 else min(len(jobs), rules.max_parallel)
    named_keys = {
        "idempotency": ctx.keyspace.idempotency(owner.tenant, idempotency.key) if idempotency else root,
        "root": root,
        "roots_queued": ctx.keyspace.roots(
            kind.value, JobStatus.QUEUED.value, keys.tag_of(root_id), ctx.keyspace.bucket_of(root_id)
        ),
    }
    args = {
        "idempotency_key": idempotency.key if idempotency else "",
        "fingerprint": idempotency.fingerprint if idempotency else "",
        "idempotency_ttl": ctx.settings.idempotency_ttl,
        "root_id": root_id,
        "kind": kind.value,
        "tenant": owner.tenant,
        "key_id": owner.key_id,
        "weight": owner.weight,
        "traceparent": traceparent,
        "group": {} if rules is None else rules.fields(models.pop() if len(models) == 1 else "mixed"),
        "jobs": [j.fields() for j in jobs],
        "source": source or b"",
        "payloads": [b"" if j.source_pages is not None else j.payload for j in jobs],
    }
    with tenant_quota.room_for(ctx, root_id, could_start) if could_start else nullcontext():
        # With 0, the release step puts the parent on the due index.
        filled_keys, filled_args = ctx.filled(CREATE, named_keys, args, root_id, None if release else 0)
        wanted = ctx.settings.min_replicas
        if wanted <= 0:
            return ctx.scripts.run(CREATE, filled_keys, filled_args)
        raw, confirmed = write_and_wait(
            ctx.redis,
            ctx.scripts,
            CREATE,
            filled_keys,
            filled_args,
            wanted,
            ctx.settings.replica_wait_ms,
            # On a cluster, the mark WAIT counts up to, in the slot of the root's keys: its bucket's.
            ctx.keyspace.replication_mark(ctx.keyspace.bucket_of(root_id)),
            root_id,
        )
    reply: CreateReply = CREATE.decode(raw, ctx.keyspace.bucket_of(root_id))
    if reply.code in (Reply.OK, Reply.REPLAYED) and confirmed < wanted:
        raise NotReplicated(
            f"job {reply.job_id}: {confirmed} of {wanted} replicas confirmed its creation "
            f"within {ctx.settings.replica_wait_ms} ms"
        )
    return reply
