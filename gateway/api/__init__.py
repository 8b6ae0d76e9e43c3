"""The API's routes, one module per concern, all on one blueprint (``gateway.api.common``).

* ``jobs``: submitting jobs and reading them (a view, the listing, a page of children);
* ``results``: a job's result and its searchable PDF;
* ``result_formats``: a job's result as hOCR and as ALTO;
* ``events``: a job's audit events;
* ``controls``: cancel, a group's new cap, redrive;
* ``usage``: what a tenant's jobs used;
* ``meta``: the models and the probes.

Importing this package registers every route on ``blueprint``, which
``create_app`` registers on each app; the routes get what they work with
from the app (``gateway.services``).
"""

from __future__ import annotations

# The modules register their routes as they are imported, and the OpenAPI document lists
# the operations in that order: keep it.
# isort: off
from gateway.api import jobs, results, result_formats, events, controls, usage, meta
from gateway.api.common import blueprint

# isort: on

__all__ = ["blueprint", "controls", "events", "jobs", "meta", "result_formats", "results", "usage"]
