"""The dashboard's pages at /ui, rendered from the API's answers: the list with its filters and paging, a group's
page, a job's page, an unknown job, and a caller the API wants a key from.  The script that keeps them live is
driven in a real browser by tests/integration/test_dashboard_browser.py."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from flask import request

from gateway import create_app, dashboard
from gateway.problems import render
from jobs import observed
from jobs.api_keys import parse_plain_keys
from tests.keyspace import keys

from .html_page import Page
from .support import echo_job, fanout
from .test_gateway_views import result, run

STATIC = Path(dashboard.__file__).parent / "static" / "ui"
TEMPLATES = Path(dashboard.__file__).parent / "templates" / "ui"


def get_page(client, path: str, status: int = 200, **kwargs) -> Page:
    response = client.get(path, **kwargs)
    assert response.status_code == status, response.get_data(as_text=True)[:500]
    assert response.mimetype == "text/html"
    return Page(response.get_data(as_text=True))


def submit(client, body: dict) -> str:
    response = client.post("/jobs", json=body)
    assert response.status_code == 202, response.get_data(as_text=True)
    return response.get_json()["id"]


def listed(page: Page) -> list[str | None]:
    return [row.attrs["data-id"] for row in page.rows("job-rows") if "job" in row.classes]


# -- the list ------------------------------------------------------------------------------------------


def test_the_list_shows_recent_jobs_newest_first_with_status_kind_and_progress(client, store):
    single = submit(client, echo_job("one"))
    group = submit(client, fanout(echo_job("a"), echo_job("b"), max_parallel=1))
    run(store, f"{group}-0", result("a"))

    page = get_page(client, "/ui")

    assert listed(page) == [group, single]
    group_row, single_row = page.rows("job-rows")
    assert group_row.attrs["data-status"] == "processing"
    assert group_row.text.startswith(f"{group} group processing echo 50% of 2 ")
    assert single_row.text.startswith(f"{single} single queued echo ")
    link = next(e for e in page.elements if e.tag == "a" and e.text == group)
    assert link.attrs["href"] == f"/ui/jobs/{group}"
    assert page.by_id("problem").hidden and page.by_id("needs-key").hidden
    assert page.by_id("older").hidden and page.by_id("newest").hidden


def test_the_filters_reach_the_listing_and_stay_selected(client, store):
    single = submit(client, echo_job("one"))
    queued_group = submit(client, fanout(echo_job("a"), max_parallel=1))
    done_group = submit(client, fanout(echo_job("b"), max_parallel=1))
    run(store, f"{done_group}-0", result("b"))

    page = get_page(client, "/ui?status=queued&kind=parent")

    assert listed(page) == [queued_group]
    selected = {e.attrs["value"] for e in page.elements if e.tag == "option" and "selected" in e.attrs}
    assert selected == {"queued", "parent"}
    assert listed(get_page(client, "/ui?status=completed")) == [done_group]
    assert listed(get_page(client, "/ui?kind=single")) == [single]
    assert listed(get_page(client, "/ui?status=&kind=")) == [done_group, queued_group, single]  # "any"


def test_paging_follows_the_listing_cursor_and_keeps_the_filters(client, monkeypatch):
    monkeypatch.setattr(dashboard, "LIST_PAGE", 2)
    groups = [submit(client, fanout(echo_job(f"g{i}"), max_parallel=1)) for i in range(3)]
    submit(client, echo_job("not a group"))

    first = get_page(client, "/ui?kind=parent")
    assert listed(first) == groups[:0:-1]
    older = first.by_id("older")
    assert not older.hidden and first.by_id("newest").hidden
    older_href = older.attrs["href"]
    assert older_href is not None, "the older link has an href"
    second = get_page(client, older_href)

    assert older_href.startswith("/ui?kind=parent&cursor=")
    assert listed(second) == [groups[0]]
    assert second.by_id("older").hidden
    newest = second.by_id("newest")
    assert not newest.hidden and newest.attrs["href"] == "/ui?kind=parent"


def test_a_bad_filter_is_the_apis_problem_on_the_page(client):
    page = get_page(client, "/ui?status=sideways", status=422)

    problem = page.by_id("problem")
    assert not problem.hidden and problem.text.startswith("Invalid field: ")
    assert listed(page) == []
    assert get_page(client, "/ui?cursor=not-one-of-ours", status=422).by_id("problem").text.startswith("Invalid")


# -- a group -------------------------------------------------------------------------------------------


def test_a_groups_page_shows_its_grid_counts_events_and_a_cancel_button(client, store):
    group = submit(client, fanout(*[echo_job(f"c{i}") for i in range(4)], max_parallel=2))
    run(store, f"{group}-0", result("c0"))
    run(store, f"{group}-1", "engine_error")

    page = get_page(client, f"/ui/jobs/{group}")

    assert page.by_id("single").hidden and not page.by_id("group").hidden
    cells = page.having("cell")
    assert [(c.attrs["data-index"], c.attrs["data-id"]) for c in cells] == [(str(i), f"{group}-{i}") for i in range(4)]
    assert [c.classes - {"cell"} for c in cells] == [
        {"status-completed"},
        {"status-failed"},
        {"status-queued"},
        {"status-queued"},
    ]
    assert cells[0].attrs["href"] == f"/ui/jobs/{group}-0"
    counts = {e.attrs["data-count"]: e.text for e in page.elements if "data-count" in e.attrs}
    assert counts == {"held": "0", "queued": "2", "processing": "0", "completed": "1", "failed": "1", "cancelled": "0"}
    assert page.by_id("group-progress").attrs["value"] == "0.5"
    assert "2 of 4 ended (50%)" in page.by_id("group").text
    assert [row.text for row in page.rows("event-rows")][0].endswith("job_child #1 failed engine_error")
    assert len(page.rows("event-rows")) == 2
    assert page.by_id("cancel-group").hidden  # the script shows it while the group runs: cancelling takes it


def test_a_cancelled_groups_events_are_the_latest_first_and_its_own_is_named(client, store):
    group = submit(client, fanout(echo_job("a"), echo_job("b"), max_parallel=1))
    run(store, f"{group}-0", result("a"))
    assert client.delete(f"/jobs/{group}").status_code == 200

    page = get_page(client, f"/ui/jobs/{group}")

    events = [row.text for row in page.rows("event-rows")]
    assert [e.split(" ", 2)[2] for e in events] == [
        "job group cancelled",
        "job_child #1 cancelled",
        "job_child #0 completed",
    ]
    assert [c.classes - {"cell"} for c in page.having("cell")] == [{"status-completed"}, {"status-cancelled"}]


def test_a_large_groups_page_renders_one_grid_page_and_leaves_the_rest_to_the_script(
    client, store, monkeypatch, settings
):
    monkeypatch.setattr(dashboard, "GRID_PAGE", 3)
    group = submit(client, fanout(*[echo_job(f"c{i}") for i in range(settings.max_children)], max_parallel=1))

    page = get_page(client, f"/ui/jobs/{group}")

    assert len(page.having("cell")) == 3
    body = next(e for e in page.elements if e.tag == "body")
    assert body.attrs["data-grid-page"] == "3"


# -- a job ---------------------------------------------------------------------------------------------


def test_a_completed_jobs_page_shows_its_runs_and_text(client, store):
    job = submit(client, echo_job("hello"))
    run(store, job, result("hello", "world"))

    page = get_page(client, f"/ui/jobs/{job}")

    assert page.by_id("group").hidden and not page.by_id("single").hidden
    assert page.by_id("job-text").text == "hello world" and not page.by_id("job-text").hidden
    assert page.by_id("job-error").hidden and page.by_id("job-waiting").hidden
    (only_run,) = page.rows("run-rows")
    assert only_run.text.startswith("1 ") and only_run.text.endswith(" completed")


def test_a_failed_childs_page_shows_its_error_and_its_group(client, store):
    group = submit(client, fanout(echo_job("a"), max_parallel=1))
    run(store, f"{group}-0", "engine_error")

    page = get_page(client, f"/ui/jobs/{group}-0")

    error = page.by_id("job-error")
    assert not error.hidden and error.text == "engine_error: engine_error happened"
    assert page.by_id("job-text").hidden
    parent_link = next(e for e in page.elements if e.tag == "a" and e.text == group)
    assert parent_link.attrs["href"] == f"/ui/jobs/{group}"
    assert "Child" in page.by_id("single").text


def test_a_running_jobs_page_says_its_text_is_not_there_yet(client):
    job = submit(client, echo_job("later"))

    waiting = get_page(client, f"/ui/jobs/{job}").by_id("job-waiting")

    assert not waiting.hidden and waiting.text == "Not there yet: the job is queued."


def test_an_unknown_job_is_a_404_page(client):
    page = get_page(client, "/ui/jobs/no-such-job", status=404)

    assert "There is no job no-such-job" in " ".join(e.text for e in page.having("problem"))


def test_under_a_mount_point_the_pages_and_their_api_calls_keep_it(client):
    job = submit(client, echo_job("mounted"))

    page = get_page(client, "/ui", base_url="http://localhost/ocr")

    assert listed(page) == [job]
    body = next(e for e in page.elements if e.tag == "body")
    assert body.attrs["data-root"] == "/ocr"
    assert next(e for e in page.elements if e.tag == "a" and e.text == job).attrs["href"] == f"/ocr/ui/jobs/{job}"
    assert [e.attrs["src"] for e in page.elements if e.tag == "script"] == ["/ocr/ui/static/dashboard.js"]
    assert not get_page(client, f"/ui/jobs/{job}", base_url="http://localhost/ocr").by_id("single").hidden


# -- keys, and what the pages load ------------------------------------------------------------------------


KEY = "right-key"


@pytest.fixture
def keyed_client(app):
    """A client of an API that wants ``Bearer right-key`` on /jobs, as API keys will have it; /ui wants none."""

    @app.before_request
    def require_key():
        if request.path.startswith("/jobs") and request.headers.get("Authorization") != f"Bearer {KEY}":
            return render(401, "unauthorized", "Unauthorized", "Send an API key.")
        return None

    return app.test_client()


def test_without_a_key_the_page_comes_without_data_for_the_script_to_fetch(keyed_client):
    client = keyed_client
    headers = {"Authorization": f"Bearer {KEY}"}
    job = client.post("/jobs", json=echo_job("secret"), headers=headers).get_json()["id"]

    listing = get_page(client, "/ui")
    job_page = get_page(client, f"/ui/jobs/{job}")

    for page in (listing, job_page):
        assert not page.by_id("needs-key").hidden and page.by_id("problem").hidden
        assert not any(
            job in e.text or job in (e.attrs.get("href") or "") for e in page.elements if e.tag in ("a", "tr")
        )
    assert listed(listing) == []
    assert job_page.by_id("single").hidden and job_page.by_id("group").hidden
    assert "secret" not in job_page.by_id("job-text").text


def test_the_callers_key_goes_with_the_pages_own_api_calls(keyed_client):
    client = keyed_client
    headers = {"Authorization": f"Bearer {KEY}"}
    job = client.post("/jobs", json=echo_job("mine"), headers=headers).get_json()["id"]

    assert listed(get_page(client, "/ui", headers=headers)) == [job]
    assert not get_page(client, f"/ui/jobs/{job}", headers=headers).by_id("single").hidden
    assert get_page(client, "/ui", headers={"Authorization": "Bearer wrong"}).by_id("job-rows").text == ""


def test_the_pages_load_nothing_from_elsewhere(client):
    page = get_page(client, "/ui")
    scripts = [e.attrs["src"] for e in page.elements if e.tag == "script"]
    styles = [e.attrs["href"] for e in page.elements if e.tag == "link"]

    assert scripts == ["/ui/static/dashboard.js"] and styles == ["/ui/static/dashboard.css"]
    for path in scripts + styles:
        response = client.get(path)
        assert response.status_code == 200 and response.get_data()
        response.close()
    for source in [*STATIC.iterdir(), *TEMPLATES.iterdir()]:
        text = source.read_text()
        assert "http://" not in text and "https://" not in text and "//cdn" not in text, source.name


# -- the workers and queues, and the submission form ------------------------------------------------------


def queue_rows(page: Page) -> dict[str | None, list[str]]:
    return {row.attrs["data-model"]: row.text.split()[1:] for row in page.rows("queue-rows")}


def test_the_workers_page_shows_the_live_workers_and_the_coordinators_last_count(client, store):
    store.workers.report("worker-a", ["eng", "deu"], lifetime_seconds=30)
    store.workers.report("worker-b", [], lifetime_seconds=30)
    submit(client, fanout(echo_job("a"), echo_job("b"), echo_job("c"), max_parallel=1))
    observed.record_sample(store.redis, keys)

    overview = client.get("/ui/overview.json").get_json()
    page = get_page(client, "/ui/workers")

    assert overview["workers"] == [
        {"name": "worker-a", "languages": ["deu", "eng"]},
        {"name": "worker-b", "languages": []},
    ]
    queues = overview["queues"]
    assert not queues["stale"] and queues["age_seconds"] >= 0 and queues["sampled_at"].endswith("Z")
    assert {"model": "echo", "held": 2, "queued": 1, "processing": 0} in queues["models"]
    assert [row.text for row in page.rows("worker-rows")] == ["worker-a deu, eng", "worker-b —"]
    assert queue_rows(page)["echo"] == ["2", "1", "0"]
    assert page.by_id("queues-stale").hidden
    assert page.by_id("queues-sampled").text.startswith("Counted at ")


def test_before_any_worker_reports_or_any_count_the_workers_page_says_so(client):
    overview = client.get("/ui/overview.json").get_json()
    page = get_page(client, "/ui/workers")

    assert overview == {"workers": [], "queues": None}
    assert page.by_id("worker-rows").text == "No worker has reported."
    assert page.by_id("queues-sampled").text.startswith("Not counted yet")
    assert page.rows("queue-rows") == []


def test_a_count_too_old_to_be_the_stores_is_shown_as_such(client, store):
    seconds, _ = store.redis.time()
    store.redis.set(keys.GAUGES, json.dumps({"sampled_at_ms": (seconds - 3600) * 1000, "held": {}, "queued": {},
                                            "processing": {"echo": 4}}))  # fmt: skip

    queues = client.get("/ui/overview.json").get_json()["queues"]
    page = get_page(client, "/ui/workers")

    assert queues["stale"] and queues["age_seconds"] >= 3600
    assert not page.by_id("queues-stale").hidden
    assert queue_rows(page)["echo"] == ["0", "0", "4"]


@pytest.fixture
def keyed_app(settings, store):
    """An app with one API key, as OCRGW_API_KEYS gives it."""
    keyed = replace(settings, plain_api_keys=parse_plain_keys(f"acme:{KEY}"))
    return create_app(keyed, store, lambda dispatches: len(dispatches))


def test_the_overview_wants_an_api_key_as_the_apis_routes_do_and_its_pages_none(keyed_app):
    client = keyed_app.test_client()

    assert client.get("/ui/overview.json").status_code == 401
    assert client.get("/ui/overview.json", headers={"Authorization": "Bearer wrong"}).status_code == 401
    assert client.get("/ui/overview.json", headers={"Authorization": f"Bearer {KEY}"}).status_code == 200
    workers_page = get_page(client, "/ui/workers")
    assert not workers_page.by_id("needs-key").hidden and workers_page.rows("worker-rows")[0].text == ""
    assert get_page(client, "/ui/new").by_id("submit-form").tag == "form"


def test_with_keys_the_overview_names_no_host_but_keeps_the_counts_over_all_tenants(keyed_app, store):
    client = keyed_app.test_client()
    headers = {"Authorization": f"Bearer {KEY}"}
    store.workers.report("worker-1@ocr-host-a.internal", ["eng"], lifetime_seconds=30)
    store.workers.report("worker-2@ocr-host-b.internal", [], lifetime_seconds=30)
    client.post("/jobs", json=fanout(echo_job("a"), echo_job("b"), echo_job("c"), max_parallel=1), headers=headers)
    observed.record_sample(store.redis, keys)

    answer = client.get("/ui/overview.json", headers=headers)
    again = client.get("/ui/overview.json", headers=headers).get_json()
    html = client.get("/ui/workers", headers=headers).get_data(as_text=True)
    page = Page(html)

    overview = answer.get_json()
    names = [worker["name"] for worker in overview["workers"]]
    assert len(set(names)) == 2 and all(len(name) == 8 and int(name, 16) >= 0 for name in names)
    assert sorted(worker["languages"] for worker in overview["workers"]) == [[], ["eng"]]
    assert again["workers"] == overview["workers"]  # the same ids from one read to the next
    assert "ocr-host" not in answer.get_data(as_text=True) and "ocr-host" not in html
    assert [row.attrs["data-name"] for row in page.rows("worker-rows")] == names
    assert {"model": "echo", "held": 2, "queued": 1, "processing": 0} in overview["queues"]["models"]


def test_a_workers_id_is_the_same_on_every_replica_and_new_only_with_other_keys():
    acme, globex = parse_plain_keys(f"acme:{KEY},globex:other-key")

    same_keys = dashboard.worker_namer([acme, globex]), dashboard.worker_namer([globex, acme])
    other_keys = dashboard.worker_namer([acme])

    assert same_keys[0]("worker-1@host") == same_keys[1]("worker-1@host") != other_keys("worker-1@host")
    assert same_keys[0]("worker-1@host") != same_keys[0]("worker-2@host")
    assert dashboard.worker_namer([])("worker-1@host") == "worker-1@host"


def test_the_overview_is_not_an_api_operation(client):
    document = client.get("/openapi.json").get_json()

    assert not [path for path in document["paths"] if path.startswith("/ui")]
