"""A client's controls over its jobs: cancel (DELETE), a group's new cap (PATCH), redrive (POST .../retry).

Each is one transition in ``jobs.controls``; what it queued is published
like a submission's, and the answer is the job's view after the change.
Each finds the job with ``record_of`` first, so another tenant's job is a
``404`` before anything changes.

A key with the ``on_prem_only`` policy keeps its tenant's documents on
premises on these routes too, not only at submission: a control that would
start a child of the same group whose model runs in the cloud (and whose
document is not marked ``on_prem``, which the worker would refuse anyway)
is ``403 on_prem_required`` before anything changes.  Such a control is a
redrive that would send one again (a failed child, or a cancelled one with
``include_cancelled``), a cap change on a group holding one back (any
change: each runs the release of held children), the cancel of a child
that holds a slot (queued or processing) in a group holding one back, since
its slot goes to the next held child, and the cancel of a held child in a
group holding another one back while it has room (uncapped, or fewer in
flight than its cap: its release was cut short, or its tenant's cap held
it), since the cancel runs the group's release.  Cancelling a whole group
(all its held children end with it) or a single job starts nothing of that
group, and stays allowed.

What is not checked: the tenant's other groups.  A cancel that frees
tenant slots (a group's, or a queued child's, under
``OCRGW_TENANT_MAX_INFLIGHT``) gives them to the tenant's waiting groups,
whose held cloud children may start, as they would have when those slots
freed on their own; reading every waiting group's held children on every
cancel is not done.
"""

from __future__ import annotations

from flask import request

from gateway.api.common import (
    ALWAYS,
    JOB_VIEW,
    ORIGIN_CHECK,
    PARENT_VIEW,
    WITH_A_BODY,
    blueprint,
    job_view,
    record_of,
)
from gateway.api.jobs import interactive_limit, interactive_limit_reached
from gateway.auth import current_principal
from gateway.openapi import operation, problems
from gateway.problems import Problem
from gateway.publishing import publish_quietly
from gateway.schemas import CapSchema, RetrySchema
from gateway.services import services
from gateway.submission import fingerprint, idempotency_key
from jobs import controls
from jobs.api_keys import ON_PREM_ONLY
from jobs.contract import ErrorCode, Field, JobKind, JobStatus, count_field
from jobs.errors import (
    GroupNotFinished,
    IdempotencyKeyReused,
    InteractiveLaneFull,
    JobFinished,
    NotAGroup,
    NothingToRetry,
)
from jobs.records import Idempotency
from jobs.registry import MODELS
from observability import metrics

# What each refusal of jobs.controls is, to a client.
_REFUSALS: dict[type[Exception], str] = {
    JobFinished: "job_finished",
    NotAGroup: "not_a_group",
    GroupNotFinished: "group_not_finished",
    NothingToRetry: "nothing_to_retry",
    IdempotencyKeyReused: "idempotency_key_reused",
}


def _refused(error: Exception, job_id: str | None = None) -> Problem:
    if isinstance(error, JobFinished) and job_id is not None:
        # The status tells a client whose DELETE is a retry after a lost answer that its cancel went through.
        return Problem("job_finished", str(error) + ".", job_status=record_of(job_id)["status"])
    return Problem(_REFUSALS[type(error)], str(error) + ".")


# -- on premises ---------------------------------------------------------------------------------

#: The statuses of the children a control would start: held ones (a cap change, a freed slot)...
_HELD = (JobStatus.HELD.value,)
#: ...and, for a redrive, those it sends again.
_REDRIVEN = (JobStatus.FAILED.value,)
_REDRIVEN_WITH_CANCELLED = (JobStatus.FAILED.value, JobStatus.CANCELLED.value)
#: A child in these statuses holds one of its group's slots; cancelling it frees that slot.
_HOLDING_A_SLOT = frozenset({JobStatus.QUEUED.value, JobStatus.PROCESSING.value})


def _keep_on_premises(group_id: str, statuses: tuple[str, ...], what: str, sparing: str = "") -> None:
    """``403 on_prem_required`` when the caller's key is ``on_prem_only`` and a child of ``group_id``
    in one of ``statuses`` (but ``sparing``, a child the control ends) runs a cloud model (or one this
    gateway does not know) unmarked."""
    if not _on_prem_only():
        return
    for child in services().queries.children_in(group_id, statuses):
        if child[Field.ID.value] == sparing:
            continue
        model = MODELS.get(child[Field.MODEL.value] or "")
        if child[Field.ON_PREM.value] != "1" and (model is None or not model.may_take(on_prem=True)):
            index = int(child[Field.INDEX.value] or 0)
            raise Problem(
                ErrorCode.ON_PREM_REQUIRED,
                f"This key's documents must stay on premises, and {what} would start child {index} of group "
                f"{group_id}, whose model {child[Field.MODEL.value]} runs in the cloud.",
                child_index=index,
            )


def _on_prem_only() -> bool:
    return ON_PREM_ONLY in current_principal().policies


def _has_room(group_id: str) -> bool:
    """Whether the group's own cap lets its release start a held child now (its tenant's cap aside,
    which may still hold it back: then the check refuses more than it must, never less)."""
    group = services().queries.get(group_id) or {}
    cap = int(group.get(Field.MAX_PARALLEL.value) or 0)
    in_flight = sum(int(group.get(count_field(s)) or 0) for s in (JobStatus.QUEUED, JobStatus.PROCESSING))
    return cap <= 0 or in_flight < cap


def _keep_a_cancel_on_premises(record: dict[str, str]) -> None:
    """A child's cancel runs its group's release: refused when that could start a held cloud child."""
    if record["kind"] != JobKind.CHILD.value or not _on_prem_only():
        return
    group_id = record[Field.PARENT_ID.value]
    if record["status"] in _HOLDING_A_SLOT:
        _keep_on_premises(group_id, _HELD, "the slot this cancel frees")
    elif record["status"] == JobStatus.HELD.value and _has_room(group_id):
        _keep_on_premises(group_id, _HELD, "the release this cancel runs", sparing=record[Field.ID.value])


@blueprint.route("/jobs/<job_id>", methods=["DELETE"])
@operation("cancelJob", "jobs")
@blueprint.response(200, JOB_VIEW, description="Cancelled: nothing of it runs any more.")
@blueprint.alt_response(
    202, schema=JOB_VIEW, description="Asked to stop: a running job ends cancelled at its next page."
)
@problems(blueprint, "on_prem_required", "job_not_found", "job_finished", *ORIGIN_CHECK, *ALWAYS)
def cancel(job_id: str):
    """Cancel a job, a child or a whole group; completed children keep their results"""
    record = record_of(job_id)  # 404, and keeps unchecked ids away from the keys
    _keep_a_cancel_on_premises(record)
    try:
        cancelled = controls.cancel(services().store, job_id)
    except JobFinished as error:
        raise _refused(error, job_id) from None
    metrics.cancelled_unstarted(cancelled.cancelled_unstarted)  # no worker sees these end
    publish_quietly(services().publish, cancelled.dispatches)
    return job_view(record_of(job_id)), 200 if cancelled.status == JobStatus.CANCELLED.value else 202


@blueprint.route("/jobs/<job_id>", methods=["PATCH"])
@operation("setJobCap", "groups")
@blueprint.arguments(CapSchema, as_kwargs=True)
@blueprint.response(200, PARENT_VIEW, description="The group with its new cap.")
@problems(
    blueprint,
    "on_prem_required",
    "job_not_found",
    "not_a_group",
    "job_finished",
    "interactive_limit_reached",
    "malformed_json",
    "json_content_type_required",
    "invalid_field",
    *WITH_A_BODY,
    *ORIGIN_CHECK,
    *ALWAYS,
)
def set_cap(job_id: str, max_parallel: int):
    """Change a running group's cap: a higher one starts children at once, a lower one as children end"""
    record_of(job_id)
    _keep_on_premises(job_id, _HELD, "a new cap")
    try:
        released = controls.set_cap(services().store, job_id, max_parallel, interactive_limit())
    except (NotAGroup, JobFinished) as error:
        raise _refused(error, job_id) from None
    except InteractiveLaneFull as full:
        raise interactive_limit_reached(full) from None
    publish_quietly(services().publish, released)
    return job_view(record_of(job_id))


@blueprint.route("/jobs/<job_id>/retry", methods=["POST"])
@operation("retryJob", "groups")
@blueprint.arguments(RetrySchema, as_kwargs=True)
@blueprint.response(202, PARENT_VIEW, description="The group, running its failed children again.")
@problems(
    blueprint,
    "on_prem_required",
    "job_not_found",
    "not_a_group",
    "group_not_finished",
    "nothing_to_retry",
    "invalid_idempotency_key",
    "idempotency_key_reused",
    "interactive_limit_reached",
    "malformed_json",
    "json_content_type_required",
    "invalid_field",
    *WITH_A_BODY,
    *ORIGIN_CHECK,
    *ALWAYS,
)
def retry(job_id: str, include_cancelled: bool):
    """Run a finished group's failed children again (and its cancelled ones, if asked), under its cap"""
    key = idempotency_key(request.headers.getlist("Idempotency-Key"))
    record = record_of(job_id)
    if record["kind"] != JobKind.PARENT.value:
        raise Problem("not_a_group", f"Job {job_id} is not a fan-out group.")
    _keep_on_premises(job_id, _REDRIVEN_WITH_CANCELLED if include_cancelled else _REDRIVEN, "this retry")
    idempotency = Idempotency(key, fingerprint(request.path, str(include_cancelled))) if key else None
    try:
        redriven = controls.redrive(
            services().store,
            job_id,
            include_cancelled,
            idempotency,
            current_principal().tenant,
            interactive_limit(),
        )
    except (NotAGroup, GroupNotFinished, NothingToRetry, IdempotencyKeyReused) as error:
        raise _refused(error) from None
    except InteractiveLaneFull as full:
        raise interactive_limit_reached(full) from None
    # The group as the redrive left it: read before the wake-ups go out, so that a worker quick enough
    # to run the redriven children meanwhile does not answer for them.
    view = job_view(record_of(job_id))
    publish_quietly(services().publish, redriven.dispatches)
    return view, 202, {"Idempotent-Replayed": "true"} if redriven.replayed else {}
