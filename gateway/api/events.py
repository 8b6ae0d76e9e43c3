"""A job's audit trail: GET /jobs/{id}/events, its terminal events and its webhook attempts."""

from __future__ import annotations

from flask import jsonify

from gateway import views
from gateway.api.common import ALWAYS, blueprint, record_of
from gateway.openapi import operation, problems
from gateway.responses import EventsSchema
from gateway.services import services


@blueprint.route("/jobs/<job_id>/events", methods=["GET"])
@operation("listJobEvents", "jobs")
@blueprint.response(200, EventsSchema)
@problems(blueprint, "job_not_found", *ALWAYS)
def job_events(job_id: str):
    """A job's audit events, oldest first (a parent's include its children's)"""
    record = record_of(job_id)
    return jsonify(views.events(services().queries.events(record["id"])))
