"""POST /jobs with ``priority``: the lane of a job or a group, as a JSON field or a raw upload's query
parameter; a bad value is 422 invalid_field and stores nothing."""

from __future__ import annotations

import pytest

from jobs.records import Dispatch
from jobs.transitions.spec import BUILD_PDF, PULL
from tests.keyspace import keys
from tests.pdfs import text_pdf
from tests.unit.conftest import PINNED_BUCKET

from .support import assert_problem, b64, echo_job, fanout, png


def stored_priority(redis, job_id: str) -> str:
    stored = redis.hget(keys.job(job_id), "priority")
    return "batch" if stored is None else stored.decode()  # a batch job stores no field


def test_a_raw_upload_asks_for_the_interactive_lane_in_its_query(client, redis, published):
    response = client.post("/jobs?model=echo&priority=interactive", data=b"hi", content_type="text/plain")

    assert response.status_code == 202
    job_id = response.get_json()["id"]
    assert published == [[Dispatch("", "echo", PULL, "interactive", PINNED_BUCKET)]]
    assert stored_priority(redis, job_id) == "interactive"


def test_a_json_job_asks_for_the_interactive_lane(client, redis, published):
    response = client.post("/jobs", json=echo_job(priority="interactive"))

    assert response.status_code == 202
    job_id = response.get_json()["id"]
    assert published == [[Dispatch("", "echo", PULL, "interactive", PINNED_BUCKET)]]
    assert stored_priority(redis, job_id) == "interactive"


def test_a_job_that_names_no_lane_is_batch(client, redis, published):
    response = client.post("/jobs", json=echo_job())

    job_id = response.get_json()["id"]
    assert published == [[Dispatch("", "echo", PULL, "batch", PINNED_BUCKET)]]
    assert stored_priority(redis, job_id) == "batch"


def test_a_group_and_its_children_take_the_groups_lane(client, redis, published):
    body = fanout(echo_job("a"), echo_job("b"), max_parallel=0)
    body["fanout"]["priority"] = "interactive"

    response = client.post("/jobs", json=body)

    assert response.status_code == 202
    parent = response.get_json()["id"]
    children = [keys.child_id(parent, i) for i in range(2)]
    assert published == [[Dispatch("", "echo", PULL, "interactive", PINNED_BUCKET) for _ in children]]
    assert [stored_priority(redis, j) for j in [parent, *children]] == ["interactive"] * 3


@pytest.mark.parametrize("as_query", [True, False])
def test_a_split_pdfs_parts_take_its_lane(client, redis, published, as_query):
    pdf = text_pdf("one", "two")
    if as_query:
        response = client.post(
            "/jobs?model=tesseract&split_pages=1&priority=interactive", data=pdf, content_type="application/pdf"
        )
    else:
        job = {"model": "tesseract", "content_type": "application/pdf", "payload": b64(pdf), "split_pages": 1}
        response = client.post("/jobs", json={**job, "priority": "interactive"})

    assert response.status_code == 202, response.get_json()
    parent = response.get_json()["id"]
    assert {d.priority for d in published[0]} == {"interactive"} and len(published[0]) == 2
    assert stored_priority(redis, parent) == "interactive"


def test_the_same_raw_upload_in_another_lane_is_another_request(client):
    first = client.post("/jobs?model=echo", data=b"hi", content_type="text/plain", headers={"Idempotency-Key": "k1"})
    again = client.post(
        "/jobs?model=echo&priority=interactive",
        data=b"hi",
        content_type="text/plain",
        headers={"Idempotency-Key": "k1"},
    )

    assert first.status_code == 202
    assert_problem(again, 422, "idempotency_key_reused")


def test_an_interactive_jobs_searchable_pdf_is_built_in_its_lane(client, store, published):
    job_id = client.post("/jobs?priority=interactive", data=png(), content_type="image/png").get_json()["id"]
    claim = store.claim(job_id)
    page = {"page": 1, "text": "x", "source": "ocr", "width": 8, "height": 8, "lines": []}
    store.complete(job_id, claim.attempt, {"text": "x", "pages": [page]})
    published.clear()

    assert client.get(f"/jobs/{job_id}/result.pdf").status_code == 202
    assert published == [[Dispatch(job_id, "tesseract", BUILD_PDF, priority="interactive")]]


# -- refused: 422 invalid_field, nothing stored ------------------------------------------------

BAD_VALUES = ["urgent", "", "INTERACTIVE", 1, None, True, ["interactive"]]


@pytest.mark.parametrize("value", BAD_VALUES)
def test_a_bad_priority_of_a_json_job_is_refused(client, keyspace, published, value):
    before = keyspace()

    response = client.post("/jobs", json=echo_job(priority=value))

    assert assert_problem(response, 422, "invalid_field")["errors"].keys() == {"priority"}
    assert keyspace() == before and published == []


@pytest.mark.parametrize("value", BAD_VALUES)
def test_a_bad_priority_of_a_group_is_refused(client, keyspace, published, value):
    body = fanout(echo_job("a"), echo_job("b"))
    body["fanout"]["priority"] = value
    before = keyspace()

    response = client.post("/jobs", json=body)

    assert assert_problem(response, 422, "invalid_field")["errors"]["fanout"].keys() == {"priority"}
    assert keyspace() == before and published == []


@pytest.mark.parametrize("value", ["urgent", "", "Interactive", "interactive%00"])
def test_a_bad_priority_in_a_raw_uploads_query_is_refused(client, keyspace, published, value):
    before = keyspace()

    response = client.post(f"/jobs?model=echo&priority={value}", data=b"hi", content_type="text/plain")

    assert assert_problem(response, 422, "invalid_field")["errors"].keys() == {"priority"}
    assert keyspace() == before and published == []


def test_a_repeated_priority_in_the_query_is_refused(client, keyspace, published):
    before = keyspace()

    response = client.post("/jobs?model=echo&priority=batch&priority=interactive", data=b"x", content_type="text/plain")

    assert assert_problem(response, 422, "invalid_field")["errors"].keys() == {"priority"}
    assert keyspace() == before and published == []


def test_a_child_of_a_group_cannot_ask_for_a_lane_of_its_own(client, keyspace, published):
    before = keyspace()

    response = client.post("/jobs", json=fanout(echo_job("a"), echo_job("b", priority="interactive")))

    problem = assert_problem(response, 422, "invalid_field")
    assert problem["errors"].keys() == {"priority"} and problem["child_index"] == 1
    assert keyspace() == before and published == []


def test_the_lane_is_documented_on_a_job_a_group_and_a_raw_uploads_query(client):
    spec = client.get("/openapi.json").get_json()

    schemas = spec["components"]["schemas"]
    query = {p["name"]: p for p in spec["paths"]["/jobs"]["post"]["parameters"] if p["in"] == "query"}
    fanout_schema = next(s for name, s in schemas.items() if "children" in s.get("properties", {}))
    for documented in (schemas["Job"]["properties"]["priority"], query["priority"]["schema"]):
        assert documented["enum"] == ["interactive", "batch"]
    assert fanout_schema["properties"]["priority"]["enum"] == ["interactive", "batch"]
