"""The job dashboard at ``/ui``: pages over the JSON API, kept live by a little JavaScript.

The pages hold no data of their own and never read the store.  The server
renders each one from the API's own answers (``GET /jobs``, ``GET /jobs/{id}``,
``GET /jobs/{id}/events``, and the overview below), dispatched in-process as the caller (their
``Authorization`` header, their address), so a page shows a caller exactly
what the API would show them and no more, whatever rules the API enforces.
A plain navigation carries no API key: where the API wants one, the page
comes without data and its script (``static/ui/dashboard.js``) fetches it
with the key the user typed, kept in ``sessionStorage`` and sent as
``Authorization: Bearer``.  The script polls the same endpoints while
something runs and stops once it has ended; the list of jobs reads without
JavaScript.  The controls (cancel, a group's cap, redrive, the downloads,
the submission form at ``/ui/new``) are the script's calls of the API's own
routes, with that key.

One read is the dashboard's own: ``GET /ui/overview.json``, the live
workers (their reports, ``jobs.worker_reports``) and the job gauges per
model as the coordinator last counted them (``jobs.observed``, what
``/metrics`` serves), for the page at ``/ui/workers``.  It is not an API
operation (not in the OpenAPI document, and free to change with the
dashboard), and it asks for an API key as the API's routes do: it is not
one of ``gateway.auth.OPEN_ENDPOINTS``.  Any tenant's key reads it, so with
keys configured it names no host: each worker is an opaque id
(``worker_id``), stable while the keys stay the same; the counts per model
stay, totals over all tenants (the queue a tenant's job waits in).  With no
key configured (one tenant, a local gateway) the workers go by their names.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from flask import Blueprint, Response, current_app, jsonify, render_template, request
from werkzeug.test import Client

from gateway import internal
from gateway.services import services
from jobs import observed
from jobs.api_keys import ApiKey
from jobs.contract import TERMINAL, JobKind
from jobs.public_view import rfc3339
from jobs.queries import CHILD_STATUSES, ROOT_KINDS, ROOT_STATUSES
from jobs.worker_reports import WorkerReport
from observability.collectors import stale_after

#: Jobs on one page of the list.
LIST_PAGE = 25
#: Children the server renders in a group's grid; the script loads the rest, this many at a time
#: (the API's largest page).
GRID_PAGE = 200
#: The latest events a group's page shows.
EVENTS_SHOWN = 100
#: What the API answers a caller without a (valid) key: the page's script, which holds the key,
#: fetches the data instead.
_NEEDS_KEY = frozenset({401, 403})


@dataclass(frozen=True)
class Answer:
    """One API answer: its status and its JSON document (None if it had none)."""

    status: int
    body: Any

    @property
    def ok(self) -> bool:
        return self.status == 200

    @property
    def needs_key(self) -> bool:
        return self.status in _NEEDS_KEY

    @property
    def problem(self) -> dict[str, Any] | None:
        """The problem to show on the page: any refusal but a missing key, which the script resolves."""
        if self.ok or self.needs_key:
            return None
        if isinstance(self.body, dict) and "title" in self.body:
            return self.body
        return {"title": f"HTTP {self.status}", "detail": "The API answered without a problem document."}

    @property
    def page_status(self) -> int:
        """The page's own status: the API's, except for a missing key (the page itself needs none)."""
        return 200 if self.ok or self.needs_key else self.status


def api_get(path: str, **params: Any) -> Answer:
    """GET ``path`` from this very app, as the caller of the current request.

    An in-process WSGI call rather than a store read, so that the page goes
    through everything the API applies to a request (keys, tenants, limits,
    problems) and a rule added there holds here too.
    """
    headers = {}
    if authorization := request.headers.get("Authorization"):
        headers["Authorization"] = authorization
    client = Client(current_app._get_current_object(), use_cookies=False)  # type: ignore[attr-defined]
    query = {name: value for name, value in params.items() if value is not None}
    # Marked as the gateway's own, so that it is counted and traced as a part of the page, not on its own.
    environ = {"REMOTE_ADDR": request.remote_addr or "", internal.ENVIRON_KEY: True}
    # The same scheme, host and mount point as the page's own request.
    with client.get(
        path, base_url=request.root_url, query_string=query, headers=headers, environ_base=environ
    ) as response:
        return Answer(response.status_code, response.get_json(silent=True))


def job_path(job_id: str) -> str:
    return "/jobs/" + quote(job_id, safe="")


blueprint = Blueprint(
    "ui",
    __name__,
    url_prefix="/ui",
    template_folder="templates",
    static_folder="static/ui",
    static_url_path="/static",
)


@blueprint.get("/")
@blueprint.get("")  # registered first, so that links name /ui
def job_list() -> tuple[str, int]:
    """Recent single jobs and groups, newest first, filtered by status and kind, a page at a time."""
    filters = {name: request.args.get(name) or None for name in ("status", "kind")}
    cursor = request.args.get("cursor") or None
    answer = api_get("/jobs", **filters, cursor=cursor, limit=LIST_PAGE)
    listing = answer.body if answer.ok else None
    page = render_template(
        "ui/list.html",
        answer=answer,
        jobs=listing["jobs"] if listing else [],
        next_cursor=listing["next_cursor"] if listing else None,
        filters=filters,
        cursor=cursor,
        statuses=ROOT_STATUSES,
        kinds=ROOT_KINDS,
        list_page=LIST_PAGE,
    )
    return page, answer.page_status


@blueprint.get("/jobs/<job_id>")
def job(job_id: str) -> tuple[str, int]:
    """A group's page (grid, counts, controls, timeline, events) or a single job's or child's (runs, text or
    error); either with its downloads once it has a result."""
    answer = api_get(job_path(job_id), limit=GRID_PAGE)
    if answer.status == 404:
        return render_template("ui/not_found.html", job_id=job_id), 404
    view = answer.body if answer.ok else None
    events = None
    if view is not None and view["kind"] == JobKind.PARENT.value:
        events_answer = api_get(job_path(job_id) + "/events")
        if events_answer.ok:
            events = list(reversed(events_answer.body["events"][-EVENTS_SHOWN:]))
    page = render_template(
        "ui/job.html",
        answer=answer,
        job_id=job_id,
        view=view,
        kind=view["kind"] if view else "",
        events=events,
        child_statuses=CHILD_STATUSES,
        terminal=[s.value for s in TERMINAL],
        grid_page=GRID_PAGE,
        events_shown=EVENTS_SHOWN,
    )
    return page, answer.page_status


@blueprint.get("/new")
def submit_form() -> str:
    """A form that submits a document through ``POST /jobs``; the script reads the models and sends it."""
    return render_template("ui/submit.html", answer=None)


@blueprint.get("/workers")
def workers() -> tuple[str, int]:
    """The live workers, and the jobs held, queued and processing per model (``overview``'s document)."""
    answer = api_get("/ui/overview.json")
    page = render_template(
        "ui/workers.html",
        answer=answer,
        overview=answer.body if answer.ok else None,
        counted=[status.value for status in observed.COUNTED],
    )
    return page, answer.page_status


@blueprint.get("/overview.json")
def overview() -> Response:
    """The live workers and the last count of the job gauges; see the module's docstring."""
    store, settings = services().store, services().settings
    sample, now_ms = observed.last_sample_and_time(store.redis)
    shown_name = worker_namer(settings.api_keys)
    workers = [_worker(report, shown_name) for report in store.workers.live()]
    document = {
        "workers": sorted(workers, key=lambda worker: worker["name"]),
        "queues": _queues(sample, now_ms, stale_after(settings.gauge_interval)),
    }
    return jsonify(document)


def worker_namer(api_keys: Sequence[ApiKey]) -> Callable[[str], str]:
    """How the overview names a worker: by its name with no key configured, else by ``worker_id``."""
    if not api_keys:
        return lambda name: name
    # Keyed by the configured keys' digests, all of which only the holder of every key could work out: a
    # tenant cannot check a guessed host name against an id, and every replica of the gateway (same keys)
    # gives a worker the same id.
    secret = hashlib.sha256("\n".join(sorted(key.digest for key in api_keys)).encode()).digest()
    return lambda name: worker_id(name, secret)


def worker_id(name: str, secret: bytes) -> str:
    """A worker's opaque id: the first 8 hex digits of the HMAC-SHA256 of its name."""
    return hmac.new(secret, name.encode(), hashlib.sha256).hexdigest()[:8]


def _worker(report: WorkerReport, shown_name: Callable[[str], str]) -> dict[str, Any]:
    return {"name": shown_name(report.name), "languages": sorted(report.languages)}


def _queues(sample: observed.Sample | None, now_ms: int, stale_seconds: float) -> dict[str, Any] | None:
    """The gauges per model, when and how long ago they were counted (store time), and whether that is too
    long ago for them to be the store's (as ``/metrics`` withholds them); None before the first count."""
    if sample is None:
        return None
    counts = sample.occupancy
    age_seconds = max(0, now_ms - sample.sampled_at_ms) / 1000
    return {
        "sampled_at": rfc3339(str(sample.sampled_at_ms * 1000)),
        "age_seconds": age_seconds,
        "stale": age_seconds > stale_seconds,
        "models": [
            {"model": model, **{status: found.get(model, 0) for status, found in counts.by_status().items()}}
            for model in counts.models
        ],
    }
