"""A tenant's usage: GET /usage, what its jobs used per model and period (jobs.usage)."""

from __future__ import annotations

from datetime import datetime

from gateway import views
from gateway.api.common import ALWAYS, blueprint
from gateway.auth import current_principal
from gateway.openapi import operation, problems
from gateway.problems import Problem
from gateway.responses import UsageSchema
from gateway.schemas import UsageQuery
from gateway.services import services
from jobs.api_keys import ADMIN
from jobs.usage import UsageQueries, floor_to


@blueprint.route("/usage", methods=["GET"])
@operation("getUsage", "usage")
@blueprint.arguments(UsageQuery, location="query", as_kwargs=True)
@blueprint.response(200, UsageSchema)
@problems(blueprint, "invalid_field", "admin_key_required", *ALWAYS)
def usage(from_: datetime, to: datetime, granularity: str, tenant: str | None = None):
    """What a tenant's jobs used (pages by engine and from text layers, engine seconds, bytes, jobs), per model and
    period"""
    principal = current_principal()
    if tenant is not None and tenant != principal.tenant and ADMIN not in principal.policies:
        raise Problem("admin_key_required", "Only a key with the admin policy may read another tenant's usage.")
    whose = tenant or principal.tenant
    periods = UsageQueries(services().store.redis, services().store.keyspace).periods(whose, from_, to, granularity)
    return views.usage(whose, floor_to(from_, "hour"), to, granularity, periods)
