"""GET /jobs: single jobs and parents newest first, filtered, paged by cursor; children are not listed."""

from __future__ import annotations

import pytest

from .support import assert_problem, echo_job, fanout


def run(store, job_id: str, outcome: dict | str) -> None:
    claim = store.claim(job_id)
    if isinstance(outcome, dict):
        store.complete(job_id, claim.attempt, outcome)
    else:
        store.fail(job_id, claim.attempt, outcome, f"{outcome} happened")


def submit(client, body) -> dict:
    response = client.post("/jobs", json=body)
    assert response.status_code == 202
    return response.get_json()


def newest_first(views: list[dict]) -> list[str]:
    return [v["id"] for v in sorted(views, key=lambda v: (v["created_at"], v["id"]), reverse=True)]


def test_an_empty_store_lists_nothing(client):
    assert client.get("/jobs").get_json() == {"jobs": [], "next_cursor": None}


def test_roots_are_listed_newest_first_and_children_never(client):
    views = [submit(client, echo_job()), submit(client, fanout(echo_job(), echo_job())), submit(client, echo_job())]

    listing = client.get("/jobs").get_json()

    assert [j["id"] for j in listing["jobs"]] == newest_first(views)
    assert listing["next_cursor"] is None
    by_id = {j["id"]: j for j in listing["jobs"]}
    parent = by_id[views[1]["id"]]
    assert (parent["kind"], parent["status"], parent["total"], parent["progress"]) == ("parent", "queued", 2, 0.0)
    assert parent["url"] == f"/jobs/{views[1]['id']}"
    single = by_id[views[0]["id"]]
    assert (single["kind"], single["status"], single["model"]) == ("single", "queued", "echo")
    assert single["created_at"] == views[0]["created_at"]
    assert "total" not in single


def test_the_listing_filters_by_status_and_kind(client, store):
    done = submit(client, echo_job())
    failed = submit(client, echo_job())
    waiting = submit(client, echo_job())
    group = submit(client, fanout(echo_job()))
    run(store, done["id"], {"text": "x", "pages": []})
    run(store, failed["id"], "echo_failed")
    run(store, f"{group['id']}-0", {"text": "y", "pages": []})

    def ids(query):
        return [j["id"] for j in client.get(f"/jobs?{query}").get_json()["jobs"]]

    assert ids("status=completed") == newest_first([done, group])
    assert ids("status=completed&kind=single") == [done["id"]]
    assert ids("kind=parent") == [group["id"]]
    assert ids("status=queued") == [waiting["id"]]
    failed_view = client.get("/jobs?status=failed").get_json()["jobs"]
    assert [(j["id"], j["error_code"]) for j in failed_view] == [(failed["id"], "echo_failed")]


def test_paging_by_cursor_lists_each_job_once_even_as_new_jobs_arrive(client):
    views = [submit(client, echo_job(f"job {i}")) for i in range(5)]

    first = client.get("/jobs?limit=2").get_json()
    views.append(submit(client, echo_job("a newer one")))
    second = client.get(f"/jobs?limit=2&cursor={first['next_cursor']}").get_json()
    third = client.get(f"/jobs?limit=2&cursor={second['next_cursor']}").get_json()

    listed = [j["id"] for page in (first, second, third) for j in page["jobs"]]
    assert listed == newest_first(views[:5])
    assert third["next_cursor"] is None
    assert client.get("/jobs").get_json()["jobs"][0]["id"] == views[5]["id"]


@pytest.mark.parametrize(
    "query, field",
    [
        ("status=held", "status"),  # a root is never held
        ("status=done", "status"),
        ("kind=child", "kind"),
        ("limit=0", "limit"),
        ("limit=201", "limit"),
        ("cursor=not-a-cursor", "cursor"),
        ("cursor=", "cursor"),
        ("kind=single&kind=parent", "kind"),
        ("sort=oldest", "sort"),
    ],
)
def test_bad_listing_values_are_invalid_fields(client, query, field):
    body = assert_problem(client.get(f"/jobs?{query}"), 422, "invalid_field")

    assert list(body["errors"]) == [field]
