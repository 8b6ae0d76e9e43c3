"""The gateway's HTTP metrics: each answer counted by method, route template (not the raw path) and status."""

from __future__ import annotations

from gateway import create_app
from tests.unit.observability.support import Counts

from .keyed import keyed_settings
from .support import echo_job, fanout

REQUESTS, DURATION = "ocrgw_http_requests_total", "ocrgw_http_request_duration_seconds"


def test_a_submission_and_an_unknown_job_are_counted_under_their_route_templates(client):
    counts = Counts()

    assert client.post("/jobs", json=echo_job("one")).status_code == 202
    assert client.get("/jobs/0123456789abcdef0123456789abcdef").status_code == 404
    assert client.get("/jobs/fedcba9876543210fedcba9876543210").status_code == 404

    assert counts.delta(REQUESTS, method="POST", route="/jobs", status="202") == 1
    assert counts.delta(REQUESTS, method="GET", route="/jobs/<job_id>", status="404") == 2
    assert counts.delta(f"{DURATION}_count", method="POST", route="/jobs") == 1
    assert counts.delta(f"{DURATION}_count", method="GET", route="/jobs/<job_id>") == 2
    assert counts.delta(f"{DURATION}_sum", method="POST", route="/jobs") > 0


def test_paths_no_route_matches_and_odd_methods_share_one_label_each(client):
    counts = Counts()

    assert client.get("/no/such/path/1").status_code == 404
    assert client.get("/no/such/path/2").status_code == 404
    assert client.open("/jobs", method="BREW").status_code == 405

    assert counts.delta(REQUESTS, method="GET", route="unmatched", status="404") == 2
    assert counts.delta(REQUESTS, method="other", route="unmatched", status="405") == 1
    assert counts.delta(REQUESTS, method="GET", route="/no/such/path/1", status="404") == 0


def test_a_bad_submission_is_counted_with_its_problem_s_status(client):
    counts = Counts()

    assert client.post("/jobs", json={"model": "no-such-model"}).status_code == 422

    assert counts.delta(REQUESTS, method="POST", route="/jobs", status="422") == 1


def test_metrics_scrapes_are_counted_too(client):
    counts = Counts()

    assert client.get("/metrics").status_code == 200

    assert counts.delta(REQUESTS, method="GET", route="/metrics", status="200") == 1


def test_a_request_refused_for_its_missing_key_is_counted_and_timed(settings, tmp_path, store):
    app = create_app(keyed_settings(settings, tmp_path), store, publish=lambda dispatches: len(dispatches))
    counts = Counts()

    assert app.test_client().post("/jobs", json=echo_job("one")).status_code == 401

    assert counts.delta(REQUESTS, method="POST", route="/jobs", status="401") == 1
    assert counts.delta(f"{DURATION}_count", method="POST", route="/jobs") == 1


# -- a dashboard page: one request, whatever API reads it makes in-process --------------------------------


def test_a_dashboard_page_is_one_request_under_its_own_route_not_its_api_reads(client):
    group = client.post("/jobs", json=fanout(echo_job("a"), echo_job("b"))).get_json()["id"]
    counts = Counts()

    # The list reads GET /jobs; a group's page its view and its events; the workers page the overview.
    assert client.get("/ui/").status_code == 200
    assert client.get(f"/ui/jobs/{group}").status_code == 200
    assert client.get("/ui/workers").status_code == 200

    assert counts.total_delta(REQUESTS) == 3
    assert counts.total_delta(f"{DURATION}_count") == 3
    for route in ("/ui/", "/ui/jobs/<job_id>", "/ui/workers"):
        assert counts.delta(REQUESTS, method="GET", route=route, status="200") == 1


def test_a_page_whose_api_reads_want_a_key_is_counted_once_with_its_own_status(settings, tmp_path, store):
    app = create_app(keyed_settings(settings, tmp_path), store, publish=lambda dispatches: len(dispatches))
    counts = Counts()

    assert app.test_client().get("/ui/").status_code == 200
    assert app.test_client().get("/ui/workers").status_code == 200

    assert counts.total_delta(REQUESTS) == 2
    assert counts.delta(REQUESTS, method="GET", route="/ui/", status="200") == 1
    assert counts.delta(REQUESTS, method="GET", route="/ui/workers", status="200") == 1
    assert counts.delta(REQUESTS, method="GET", route="/jobs", status="401") == 0
    assert counts.delta(REQUESTS, method="GET", route="/ui/overview.json", status="401") == 0


def test_a_page_whose_api_read_fails_is_counted_once_with_the_failure(app):
    def overview_fails():
        raise RuntimeError("the store is gone")

    app.view_functions["ui.overview"] = overview_fails
    counts = Counts()

    assert app.test_client().get("/ui/workers").status_code == 500

    assert counts.total_delta(REQUESTS) == 1
    assert counts.delta(REQUESTS, method="GET", route="/ui/workers", status="500") == 1
