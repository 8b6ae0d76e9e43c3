"""What the API says of itself: the models (GET /models) and the probes (GET /healthz, GET /readyz)."""

from __future__ import annotations

import logging

from redis.exceptions import RedisError

from gateway import drain, views
from gateway.api.common import HOST_CHECK, SERVER_LIMITS, blueprint
from gateway.auth import AUTH_PROBLEMS
from gateway.openapi import operation, problems
from gateway.problems import RETRY_AFTER_SECONDS, Problem
from gateway.responses import ModelsSchema, StatusSchema
from gateway.services import services

log = logging.getLogger(__name__)


@blueprint.route("/models", methods=["GET"])
@operation("listModels", "models")
@blueprint.response(200, ModelsSchema)
@problems(blueprint, *AUTH_PROBLEMS, "internal_error", *SERVER_LIMITS, *HOST_CHECK)
def models():
    """The models: engine, where it runs, the content types and options it takes, the languages of the live workers"""
    return views.with_languages(services().models, services().languages.get())


@blueprint.route("/healthz", methods=["GET"])
@operation("getHealth", "health")
@blueprint.doc(security=[])  # open: no API key
@blueprint.response(200, StatusSchema)
@problems(blueprint, "internal_error", *SERVER_LIMITS)
def healthz():
    """Liveness: the process answers.  Never touches Redis, so a Redis outage restarts nothing."""
    return views.status("ok")


@blueprint.route("/readyz", methods=["GET"])
@operation("getReadiness", "health")
@blueprint.doc(security=[])  # open: no API key
@blueprint.response(200, StatusSchema)
@problems(blueprint, "draining", "store_unavailable", "internal_error", *SERVER_LIMITS)
def readyz():
    """Readiness: out of rotation while this replica drains or cannot reach Redis"""
    if drain.is_draining():
        raise Problem("draining", "This gateway is shutting down.")
    store = services().store
    try:
        store.ping()
        draining = store.is_draining()
    except (RedisError, OSError) as error:
        # The probe is open to anyone: where Redis is, and how it failed, go to the log only.
        log.warning("readiness: the job store does not answer: %s", error)
        raise Problem(
            "store_unavailable",
            "The job store does not answer.",
            headers={"Retry-After": str(RETRY_AFTER_SECONDS)},
        ) from None
    if draining:
        raise Problem("draining", "The gateways are draining.")
    return views.status("ready")
