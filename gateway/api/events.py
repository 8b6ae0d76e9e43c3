"""A job's audit trail: GET /jobs/{id}/events, its terminal events and its webhook attempts.

Asked for as ``text/event-stream`` (``Accept``), the same route is the
job's live stream (``gateway.streaming``): the audit entries as they come,
a group's children as they start and end, until the job has ended.  Any
other ``Accept`` gets the JSON list.
"""

from __future__ import annotations

import threading

from flask import Response, current_app, request

from gateway import streaming, views
from gateway.api.common import ALWAYS, blueprint, record_of
from gateway.auth import current_principal
from gateway.openapi import operation, problems
from gateway.problems import Problem
from gateway.responses import EventsSchema
from gateway.services import services
from jobs import watching
from jobs.stream_leases import StreamLeases

#: The key of ``app.extensions`` the app's count of open streams is kept under.
OPEN_STREAMS = "ocrgw.open_streams"
_open_streams_lock = threading.Lock()

_STREAM_EVENT = {
    "type": "object",
    "description": "Each event of the stream (UTF-8 Server-Sent Events): `id` is the position "
    "to resume from, `data` one line of JSON: an `audit` event as the JSON list shows it, "
    "`progress` (`id`, `kind`, `status`, a group's `total`, `counts` and `progress`, a job's "
    "`stage` and `progress`), `child` (`job_id`, `index`, `status`), and last `end` "
    "(`job_id`, `reason`: `terminal`, `max_duration`, `gone` or `shutdown`, `status`).",
    "required": ["id", "event", "data"],
    "properties": {
        "id": {"type": "string", "pattern": "^[0-9]+-[0-9]+$"},
        "event": {"type": "string", "enum": ["audit", "progress", "child", "end"]},
        "data": {"type": "string"},
    },
}
_STREAM_DOC = {
    "parameters": [
        {
            "in": "header",
            "name": "Last-Event-ID",
            "required": False,
            "schema": {"type": "string", "pattern": "^[0-9]+-[0-9]+$"},
            "description": "With `Accept: text/event-stream`: the `id` of the last event read, to get the events "
            "after it (a reconnecting EventSource sends it by itself).",
        }
    ],
}


@blueprint.route("/jobs/<job_id>/events", methods=["GET"])
@operation("listJobEvents", "jobs")
@blueprint.doc(**_STREAM_DOC)
@blueprint.response(200, EventsSchema)
@blueprint.alt_response(
    200,
    schema=_STREAM_EVENT,
    content_type=streaming.EVENT_STREAM,
    description="The job's audit events (JSON), or with `Accept: text/event-stream` its live stream: `audit`, "
    "`progress` and `child` events as they happen, then `end` (see the manual's Live progress).",
)
@problems(blueprint, "job_not_found", "invalid_last_event_id", "too_many_streams", *ALWAYS)
def job_events(job_id: str):
    """A job's audit events, oldest first (a parent's include its children's); or its live stream"""
    record = record_of(job_id)
    if request.accept_mimetypes.best_match(["application/json", streaming.EVENT_STREAM]) == streaming.EVENT_STREAM:
        if request.method == "HEAD":  # a stream's head, with no stream behind it to count or serve
            return Response(b"", status=200, mimetype=streaming.EVENT_STREAM, headers=streaming.HEADERS)
        return _live(record["id"])
    return views.events(services().queries.events(record["id"]))


def _live(job_id: str) -> Response:
    position = _resume_from(request.headers.get("Last-Event-ID"))
    settings = services().settings
    can_hand_off = bool(request.environ.get(streaming.CAN_HAND_OFF))
    # A stream no hub takes holds its request thread for its life: a process keeps few of those.
    cap = None if can_hand_off else streaming.request_thread_cap(request.environ)
    ticket = _open_streams().admit(current_principal().tenant, cap)
    session = streaming.session_for(job_id, position, ticket, settings)
    client, keyspace = services().queries.redis, services().queries.keyspace
    headers = {**streaming.HEADERS}
    if can_hand_off:
        # The worker sends this head, then gives the connection to the process's hub (gateway.gunicorn_worker).
        request.environ[streaming.HANDED_OFF] = streaming.HandOff(
            session, client, keyspace, settings.stream_poll_seconds
        )
        return Response(iter(()), status=200, mimetype=streaming.EVENT_STREAM, headers=headers)
    body = streaming.in_request_thread(session, client, keyspace, settings.stream_poll_seconds)
    return Response(body, status=200, mimetype=streaming.EVENT_STREAM, headers=headers)


def _resume_from(last_event_id: str | None) -> watching.Position:
    if last_event_id is None or not last_event_id.strip():
        return watching.START
    try:
        return watching.position_of(last_event_id.strip())
    except watching.InvalidPosition as error:
        raise Problem("invalid_last_event_id", f"Last-Event-ID: {error}.") from None


def _open_streams() -> streaming.OpenStreams:
    """The app's count of open streams (one app per gateway process), made with its limits."""
    extensions = current_app.extensions
    with _open_streams_lock:
        if OPEN_STREAMS not in extensions:
            settings = services().settings
            leases = StreamLeases(services().queries.redis)  # a tenant's streams counted across the gateways
            per_process = streaming.fit_to_open_files(settings.stream_max_per_process)
            extensions[OPEN_STREAMS] = streaming.OpenStreams(per_process, settings.stream_max_per_tenant, leases)
        found: streaming.OpenStreams = extensions[OPEN_STREAMS]
        return found
