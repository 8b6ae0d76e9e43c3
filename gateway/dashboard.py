"""The job dashboard at ``/ui``: pages over the JSON API, kept live by a little JavaScript.

The pages hold no data of their own and never read the store.  The server
renders each one from the API's own answers (``GET /jobs``, ``GET /jobs/{id}``,
``GET /jobs/{id}/events``), dispatched in-process as the caller (their
``Authorization`` header, their address), so a page shows a caller exactly
what the API would show them and no more, whatever rules the API enforces.
A plain navigation carries no API key: where the API wants one, the page
comes without data and its script (``static/ui/dashboard.js``) fetches it
with the key the user typed, kept in ``sessionStorage`` and sent as
``Authorization: Bearer``.  The script polls the same endpoints while
something runs and stops once it has ended; the list of jobs reads without
JavaScript.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from flask import Blueprint, current_app, render_template, request
from werkzeug.test import Client

from jobs.contract import TERMINAL, JobKind
from jobs.queries import CHILD_STATUSES, ROOT_KINDS, ROOT_STATUSES

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
    environ = {"REMOTE_ADDR": request.remote_addr or ""}
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
    """A group's page (grid, counts, events, cancel) or a single job's or child's (runs, text or error)."""
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
