"""A parent's view and its pages of children, and GET /jobs/{id}/result, with jobs driven by the store."""

from __future__ import annotations

import pytest

from jobs.records import GroupRules, NewJob
from tests.unit.redis_spy import round_trips

from .support import assert_problem, echo_job, fanout


def group(store, n: int, max_parallel: int = 2) -> str:
    """A group of ``n`` echo children created through the store (past the app's own child limit)."""
    return store.create_group(
        [NewJob("echo", "text/plain", f"c{i}".encode()) for i in range(n)], GroupRules(max_parallel)
    ).job_id


def run(store, job_id: str, outcome: dict | str) -> None:
    claim = store.claim(job_id)
    if isinstance(outcome, dict):
        store.complete(job_id, claim.attempt, outcome)
    else:
        store.fail(job_id, claim.attempt, outcome, f"{outcome} happened")


# -- the parent's view --------------------------------------------------------------------------


def test_a_parent_view_shows_its_first_page_of_children(client, store):
    parent_id = group(store, 45)

    view = client.get(f"/jobs/{parent_id}").get_json()

    assert [c["index"] for c in view["children"]] == list(range(20))
    assert view["children_page"] == {
        "offset": 0,
        "limit": 20,
        "total": 45,
        "next": f"/jobs/{parent_id}/children?offset=20&limit=20",
    }
    assert view["total"] == 45 and view["counts"]["held"] == 43


def test_a_parent_view_pages_on_request_or_leaves_children_out(client, store):
    parent_id = group(store, 45)

    last = client.get(f"/jobs/{parent_id}?offset=40&limit=10").get_json()
    bare = client.get(f"/jobs/{parent_id}?children=none").get_json()

    assert [c["index"] for c in last["children"]] == list(range(40, 45))
    assert last["children_page"] == {"offset": 40, "limit": 10, "total": 45, "next": None}
    assert "children" not in bare and "children_page" not in bare
    assert bare["counts"] == last["counts"]


def test_a_thousand_child_parents_view_stays_small_and_reads_only_its_page(client, store, monkeypatch):
    parent_id = group(store, 1000)

    with round_trips(monkeypatch) as trips:
        response = client.get(f"/jobs/{parent_id}")

    assert len(response.get_data()) < 8 * 1024
    assert trips == [["HGETALL"], ["HGET"] + ["HMGET"] * 20]


# -- pages of children ------------------------------------------------------------------------------


def test_following_next_visits_every_child_once_in_index_order(client, store):
    parent_id = group(store, 45)

    indexes, url = [], f"/jobs/{parent_id}/children?limit=7"
    while url:
        page = client.get(url).get_json()
        indexes += [c["index"] for c in page["children"]]
        url = page["children_page"]["next"]

    assert indexes == list(range(45))


def test_children_in_one_status(client, store):
    parent_id = group(store, 6, max_parallel=3)
    run(store, f"{parent_id}-1", "echo_failed")
    run(store, f"{parent_id}-2", {"text": "two", "pages": []})

    failed = client.get(f"/jobs/{parent_id}/children?status=failed").get_json()
    held = client.get(f"/jobs/{parent_id}/children?status=held&limit=1").get_json()

    assert failed["status"] == "failed"
    assert [(c["index"], c["error_code"]) for c in failed["children"]] == [(1, "echo_failed")]
    assert failed["children_page"] == {"offset": 0, "limit": 20, "total": 1, "next": None}
    assert [c["index"] for c in held["children"]] == [5]  # 3 and 4 were released by the two ends
    assert held["children_page"]["total"] == 1


def test_a_filtered_page_links_to_the_next_filtered_page(client, store):
    parent_id = group(store, 8, max_parallel=1)

    page = client.get(f"/jobs/{parent_id}/children?status=held&limit=3").get_json()
    following = client.get(page["children_page"]["next"]).get_json()

    assert page["children_page"]["next"] == f"/jobs/{parent_id}/children?status=held&offset=3&limit=3"
    assert [c["index"] for c in following["children"]] == [4, 5, 6]


def test_a_job_without_children_has_an_empty_page(client, store):
    job_id = client.post("/jobs", json=echo_job()).get_json()["id"]
    parent_id = group(store, 2)

    for owner in (job_id, f"{parent_id}-0"):
        page = client.get(f"/jobs/{owner}/children").get_json()
        assert (page["children"], page["children_page"]["total"]) == ([], 0)


def test_children_of_an_unknown_job_are_404(client):
    assert_problem(client.get(f"/jobs/{'0' * 32}/children"), 404, "job_not_found")


@pytest.mark.parametrize(
    "query, field",
    [
        ("limit=0", "limit"),
        ("limit=201", "limit"),
        ("limit=ten", "limit"),
        ("offset=-1", "offset"),
        ("offset=1.5", "offset"),
        ("children=all", "children"),
        ("limit=5&limit=6", "limit"),
        ("page=2", "page"),
    ],
)
def test_bad_paging_values_are_invalid_fields(client, store, query, field):
    parent_id = group(store, 3)

    body = assert_problem(client.get(f"/jobs/{parent_id}?{query}"), 422, "invalid_field")

    assert list(body["errors"]) == [field]


@pytest.mark.parametrize("query", ["status=running", "status=", "limit=201", "children=page"])
def test_bad_children_page_values_are_invalid_fields(client, store, query):
    parent_id = group(store, 3)

    assert_problem(client.get(f"/jobs/{parent_id}/children?{query}"), 422, "invalid_field")


# -- results ------------------------------------------------------------------------------------------


def test_a_completed_jobs_result(client, store):
    job_id = client.post("/jobs", json=echo_job()).get_json()["id"]
    run(store, job_id, {"text": "hello", "pages": []})

    response = client.get(f"/jobs/{job_id}/result")

    assert (response.status_code, response.get_json()) == (200, {"text": "hello", "pages": []})


def test_a_result_before_the_end_is_409_result_not_ready(client, store):
    job_id = client.post("/jobs", json=echo_job()).get_json()["id"]
    parent_id = client.post("/jobs", json=fanout(echo_job(), echo_job())).get_json()["id"]
    run(store, f"{parent_id}-0", {"text": "a", "pages": []})

    single = assert_problem(client.get(f"/jobs/{job_id}/result"), 409, "result_not_ready")
    group_ = assert_problem(client.get(f"/jobs/{parent_id}/result"), 409, "result_not_ready")
    child = assert_problem(client.get(f"/jobs/{parent_id}-1/result"), 409, "result_not_ready")

    assert (single["job_status"], group_["job_status"], child["job_status"]) == ("queued", "processing", "queued")


def test_a_failed_jobs_result_is_409_no_result(client, store):
    job_id = client.post("/jobs", json=echo_job()).get_json()["id"]
    run(store, job_id, "echo_failed")

    body = assert_problem(client.get(f"/jobs/{job_id}/result"), 409, "no_result")

    assert (body["job_status"], body["error_code"]) == ("failed", "echo_failed")


def test_a_childs_result_and_its_terminal_parents_merged_result(client, store):
    parent_id = client.post("/jobs", json=fanout(echo_job(), echo_job())).get_json()["id"]
    run(store, f"{parent_id}-0", {"text": "a", "pages": []})
    run(store, f"{parent_id}-1", "echo_failed")

    child = client.get(f"/jobs/{parent_id}-0/result").get_json()
    merged = client.get(f"/jobs/{parent_id}/result").get_json()

    assert child == {"text": "a", "pages": []}
    assert merged["text"] == "a"
    assert [(c["index"], c["status"], c["text"]) for c in merged["children"]] == [
        (0, "completed", "a"),
        (1, "failed", None),
    ]


def test_the_result_of_an_unknown_job_is_404(client):
    assert_problem(client.get(f"/jobs/{'0' * 32}/result"), 404, "job_not_found")
