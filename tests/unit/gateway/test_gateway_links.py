"""The URLs in a job's view: ``Links`` spells them as Flask's ``url_for`` builds them for the API's routes,
so that a view rendered without the app (a webhook's body) links as the API's own answer does."""

from __future__ import annotations

import pytest
from flask import request, url_for

from jobs.links import Links

ODD_IDS = ["01HZX3V9K2", "a b", "a/b", "ü?#&=%", "!$&'()*+,:;=@"]


@pytest.mark.parametrize("base_url", ["http://localhost", "http://localhost/ocr", "http://localhost/ocr/gw"])
@pytest.mark.parametrize("job_id", ODD_IDS)
def test_the_links_are_url_for_s_urls_under_the_mount_point(app, base_url, job_id):
    with app.test_request_context("/jobs", base_url=base_url):
        links = Links(request.root_path)

        assert links.job(job_id) == url_for("api.job", job_id=job_id)
        assert links.result(job_id) == url_for("api.job_result", job_id=job_id)
        for status in (None, "failed"):
            assert links.children(job_id, status=status, offset=20, limit=7) == url_for(
                "api.job_children", job_id=job_id, status=status, offset=20, limit=7
            )


def test_at_the_root_the_links_are_the_paths():
    links = Links()

    assert links.job("j1") == "/jobs/j1"
    assert links.result("j1") == "/jobs/j1/result"
    assert links.children("j1", offset=20, limit=20) == "/jobs/j1/children?offset=20&limit=20"
    assert (
        links.children("j1", status="failed", offset=0, limit=5) == "/jobs/j1/children?status=failed&offset=0&limit=5"
    )


def test_a_view_under_a_mount_point_links_under_it(client):
    job_id = client.post(
        "/jobs",
        base_url="http://localhost/ocr",
        json={"model": "echo", "payload": "aGk=", "content_type": "text/plain"},
    ).get_json()["id"]

    listed = client.get("/jobs", base_url="http://localhost/ocr").get_json()["jobs"]

    assert [job["url"] for job in listed] == [f"/ocr/jobs/{job_id}"]
