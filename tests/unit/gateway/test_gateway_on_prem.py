"""POST /jobs and on-prem documents: a cloud model never takes one; the mark goes on with each job."""

from __future__ import annotations

import json
from typing import Any

import pytest

from gateway import create_app
from gateway.problems import Problem
from gateway.submission import Parser
from jobs.config import Settings
from jobs.records import Dispatch, GroupRules, NewJob, Owner
from jobs.registry import RemoteModel, install_remote_models
from jobs.transitions.spec import PULL
from tests.keyspace import keys
from tests.pdfs import text_pdf
from tests.unit.conftest import PINNED_BUCKET
from tests.unit.remote_models import registry_restored

from .conftest import MAX_BODY_BYTES, MAX_CHILDREN, MAX_PAGES
from .documented import documented_client
from .keyed import ACME_KEY, ACME_ROTATED_KEY, bearer, everything_stored, keyed_settings
from .support import assert_problem, b64, echo_job, fanout, png

CLOUD = RemoteModel("cloudocr", "tesseract", "http://ocr.example:8000")
PNG = png()


@pytest.fixture(autouse=True)
def restored():
    with registry_restored():
        yield


@pytest.fixture
def settings() -> Settings:
    return Settings(
        max_children=MAX_CHILDREN, max_pages=MAX_PAGES, max_body_bytes=MAX_BODY_BYTES, remote_models=(CLOUD,)
    )


def cloud_job(**fields) -> dict:
    return {"model": "cloudocr", "payload": b64(PNG), "content_type": "image/png", **fields}


def marks(redis) -> dict[str, str]:
    """Every stored job's on_prem mark, by job id."""
    found = {}
    for key in redis.scan_iter(match=f"{keys.NAMESPACE}:*:{keys.JOB}*"):
        record = redis.hgetall(key)
        if record[b"kind"] != b"parent":
            found[record[b"id"].decode()] = record[b"on_prem"].decode()
    return found


def test_the_remote_model_is_listed_as_a_cloud_model(client):
    models = {m["name"]: m for m in client.get("/models").get_json()["models"]}

    assert models["cloudocr"]["location"] == "cloud"
    assert models["tesseract"]["location"] == "on_prem"
    openapi = client.get("/openapi.json").get_json()
    assert "cloudocr" in openapi["components"]["schemas"]["Job"]["properties"]["model"]["enum"]


# -- refused: 403 on_prem_required, nothing stored --------------------------------------------


#: name -> (path, the request's keywords, the index of the child refused or None)
REFUSED: dict[str, tuple[str, dict[str, Any], int | None]] = {
    "json job": ("/jobs", {"json": cloud_job(on_prem=True)}, None),
    "raw document": ("/jobs?model=cloudocr&on_prem=true", {"data": PNG, "content_type": "image/png"}, None),
    "json split": (
        "/jobs",
        {
            "json": cloud_job(
                content_type="application/pdf", payload=b64(text_pdf("a", "b")), split_pages=1, on_prem=True
            )
        },
        None,
    ),
    "a child": ("/jobs", {"json": fanout(echo_job(), echo_job(), cloud_job(on_prem=True))}, 2),
    "the group": (
        "/jobs",
        {"json": {"fanout": {**fanout(echo_job(), cloud_job(), echo_job())["fanout"], "on_prem": True}}},
        1,
    ),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_an_on_prem_document_naming_a_cloud_model_is_403_and_stores_nothing(client, keyspace, published, name):
    path, request, child_index = REFUSED[name]
    client.post("/jobs", json=echo_job("already there"))
    before, sent = keyspace(), len(published)

    response = client.post(path, headers={"Idempotency-Key": f"on-prem-{name.replace(' ', '-')}"}, **request)

    problem = assert_problem(response, 403, "on_prem_required")
    assert problem.get("child_index") == child_index
    assert "model cloudocr runs in the cloud" in problem["detail"]
    assert keyspace() == before
    assert len(published) == sent


def test_a_group_with_one_such_child_is_refused_whole_whatever_its_place(client, keyspace):
    before = keyspace()

    response = client.post("/jobs", json=fanout(cloud_job(on_prem=True), echo_job(), echo_job()))

    assert assert_problem(response, 403, "on_prem_required")["child_index"] == 0
    assert keyspace() == before


# -- accepted, and marked --------------------------------------------------------------------


def test_a_cloud_model_takes_a_document_that_may_leave(client, redis, published):
    response = client.post("/jobs", json=cloud_job())

    assert response.status_code == 202
    job_id = response.get_json()["id"]
    assert published == [[Dispatch("", "cloudocr", PULL, "batch", PINNED_BUCKET)]]
    assert marks(redis) == {job_id: "0"}


@pytest.mark.parametrize("value, mark", [("true", "1"), ("false", "0")])
def test_a_raw_documents_query_marks_it(client, redis, value, mark):
    response = client.post(f"/jobs?model=echo&on_prem={value}", data=b"hello", content_type="text/plain")

    assert response.status_code == 202
    assert marks(redis) == {response.get_json()["id"]: mark}


@pytest.mark.parametrize("value", ["yes", "1", "True", ""])
def test_a_query_flag_other_than_true_or_false_is_invalid_field(client, keyspace, value):
    before = keyspace()

    response = client.post(f"/jobs?model=echo&on_prem={value}", data=b"hello", content_type="text/plain")

    assert assert_problem(response, 422, "invalid_field")["errors"].keys() == {"on_prem"}
    assert keyspace() == before


@pytest.mark.parametrize("value", ["true", 1, None])
def test_a_json_flag_must_be_a_boolean(client, value):
    response = client.post("/jobs", json=echo_job(on_prem=value))

    assert assert_problem(response, 422, "invalid_field")["errors"].keys() == {"on_prem"}


def test_the_marks_go_on_with_every_child_the_groups_to_all(client, redis):
    children = [echo_job("a"), echo_job("b", on_prem=True), cloud_job(on_prem=False)]
    mixed = client.post("/jobs", json=fanout(*children)).get_json()["id"]
    marked_group = client.post(
        "/jobs", json={"fanout": {**fanout(echo_job("c"), echo_job("d"))["fanout"], "on_prem": True}}
    ).get_json()["id"]

    stored = marks(redis)
    assert [stored[keys.child_id(mixed, i)] for i in range(3)] == ["0", "1", "0"]
    assert [stored[keys.child_id(marked_group, i)] for i in range(2)] == ["1", "1"]


def test_the_flag_is_part_of_a_raw_requests_idempotency(client):
    headers = {"Idempotency-Key": "raw-on-prem"}
    first = client.post("/jobs?model=echo", data=b"hello", content_type="text/plain", headers=headers)

    again = client.post("/jobs?model=echo&on_prem=true", data=b"hello", content_type="text/plain", headers=headers)

    assert first.status_code == 202
    assert_problem(again, 422, "idempotency_key_reused")


# -- a caller's policy: require_on_prem --------------------------------------------------------


def parser_of(settings: Settings) -> Parser:
    install_remote_models(settings.remotes)  # as create_app does
    return Parser(settings)


def parse_json(parser: Parser, body: dict, *, require_on_prem: bool):
    return parser.parse(
        path="/jobs",
        content_type="application/json",
        args={},
        body=json.dumps(body).encode(),
        require_on_prem=require_on_prem,
    )


def test_require_on_prem_marks_every_document_of_the_request(settings):
    parser = parser_of(settings)

    single = parse_json(parser, echo_job(), require_on_prem=True)
    group = parse_json(parser, fanout(echo_job(), echo_job(on_prem=False)), require_on_prem=True)
    raw = parser.parse(
        path="/jobs", content_type="text/plain", args={"model": ["echo"]}, body=b"x", require_on_prem=True
    )

    assert [job.on_prem for job in single.jobs + group.jobs + raw.jobs] == [True] * 4


@pytest.mark.parametrize(
    "body, child_index",
    [(cloud_job(), None), (cloud_job(on_prem=False), None), (fanout(echo_job(), cloud_job(on_prem=False)), 1)],
)
def test_require_on_prem_refuses_a_cloud_model_whatever_the_request_says(settings, body, child_index):
    with pytest.raises(Problem) as caught:
        parse_json(parser_of(settings), body, require_on_prem=True)

    assert (caught.value.code, caught.value.status) == ("on_prem_required", 403)
    assert caught.value.extra.get("child_index") == child_index


def test_a_key_with_the_on_prem_only_policy_never_reaches_a_cloud_model(settings, store, tmp_path):
    app = create_app(keyed_settings(settings, tmp_path), store, lambda dispatches: len(dispatches))
    client = documented_client(app)

    refused = client.post("/jobs", json=cloud_job(), headers=bearer(ACME_ROTATED_KEY))
    allowed = client.post("/jobs", json=cloud_job(), headers=bearer(ACME_KEY))

    assert_problem(refused, 403, "on_prem_required")
    assert allowed.status_code == 202
    assert client.post("/jobs", json=echo_job(), headers=bearer(ACME_ROTATED_KEY)).status_code == 202


# -- the controls: an on_prem_only key starts no cloud model on any route --------------------------------


@pytest.fixture
def keyed(settings, store, tmp_path, published):
    app = create_app(keyed_settings(settings, tmp_path), store, lambda dispatches: published.append(dispatches))
    return documented_client(app)


OPEN, RESTRICTED = bearer(ACME_KEY), bearer(ACME_ROTATED_KEY)


def group_of(client, *children, max_parallel: int) -> str:
    """A group acme submits with its unrestricted key."""
    response = client.post("/jobs", json=fanout(*children, max_parallel=max_parallel), headers=OPEN)
    assert response.status_code == 202, response.get_data(as_text=True)
    return response.get_json()["id"]


def failed_group(client, store, *children) -> str:
    """A group whose children all ran, the ``fail``-marked ones failing: it ended failed."""
    parent = group_of(client, *(child for child, _ in children), max_parallel=len(children))
    for index, (_, fails) in enumerate(children):
        claim = store.claim(f"{parent}-{index}")
        assert claim is not None
        if fails:
            store.fail(f"{parent}-{index}", claim.attempt, "upstream_rejected", "refused")
        else:
            store.complete(f"{parent}-{index}", claim.attempt, {"text": "t", "pages": []})
    return parent


def test_an_on_prem_only_key_cannot_redrive_a_failed_cloud_child(keyed, store, redis, published):
    parent = failed_group(keyed, store, (echo_job("here"), False), (cloud_job(), True))
    before, sent = everything_stored(redis), len(published)

    refused = keyed.post(f"/jobs/{parent}/retry", json={}, headers=RESTRICTED)

    assert assert_problem(refused, 403, "on_prem_required")["child_index"] == 1
    assert everything_stored(redis) == before and len(published) == sent
    assert keyed.post(f"/jobs/{parent}/retry", json={}, headers=OPEN).status_code == 202


def test_an_on_prem_only_key_may_redrive_what_stays_on_premises(keyed, store):
    parent = failed_group(keyed, store, (echo_job("here"), True), (cloud_job(), False))

    assert keyed.post(f"/jobs/{parent}/retry", json={}, headers=RESTRICTED).status_code == 202


def test_redriving_cancelled_cloud_children_is_refused_only_when_asked_for(keyed, store, redis):
    parent = group_of(keyed, echo_job("a"), echo_job("b"), cloud_job(), max_parallel=1)
    claim = store.claim(f"{parent}-0")
    assert claim is not None
    store.fail(f"{parent}-0", claim.attempt, "echo_failed", "asked to")  # fail-fast off: the others stay held
    assert keyed.delete(f"/jobs/{parent}", headers=RESTRICTED).status_code == 200  # starts nothing: allowed
    before = everything_stored(redis)

    refused = keyed.post(f"/jobs/{parent}/retry", json={"include_cancelled": True}, headers=RESTRICTED)

    assert assert_problem(refused, 403, "on_prem_required")["child_index"] == 2
    assert everything_stored(redis) == before
    assert keyed.post(f"/jobs/{parent}/retry", json={}, headers=RESTRICTED).status_code == 202  # the failed echo


def test_an_on_prem_only_key_cannot_release_a_held_cloud_child(keyed, store, redis, published):
    parent = group_of(keyed, echo_job("running"), cloud_job(), max_parallel=1)
    store.claim(f"{parent}-0")
    before, sent = everything_stored(redis), len(published)

    raised = keyed.patch(f"/jobs/{parent}", json={"max_parallel": 2}, headers=RESTRICTED)
    lowered = keyed.patch(f"/jobs/{parent}", json={"max_parallel": 1}, headers=RESTRICTED)
    freeing = keyed.delete(f"/jobs/{parent}-0", headers=RESTRICTED)

    for refused in (raised, lowered, freeing):
        assert assert_problem(refused, 403, "on_prem_required")["child_index"] == 1
    assert everything_stored(redis) == before and len(published) == sent
    assert keyed.get(f"/jobs/{parent}-1", headers=RESTRICTED).get_json()["status"] == "held"
    # What starts nothing stays allowed: cancelling the held cloud child itself, or the whole group.
    assert keyed.delete(f"/jobs/{parent}-1", headers=RESTRICTED).status_code == 200
    assert keyed.delete(f"/jobs/{parent}", headers=RESTRICTED).status_code == 202


def unreleased_group(store, *models: str, max_parallel: int) -> str:
    """An acme group whose children are all still held though it has room: its release was cut short
    (``release_limit`` reached; the sweep would go on with it), as when a cancel freed many slots at once."""
    children = [NewJob(model=m, content_type="image/png", payload=PNG) for m in models]
    return store.create_group(children, GroupRules(max_parallel), release=False, owner=Owner("acme")).job_id


@pytest.mark.parametrize("max_parallel", [0, 2], ids=["uncapped", "capped-with-room"])
def test_cancelling_a_held_child_of_a_group_with_room_cannot_release_a_cloud_sibling(
    keyed, store, redis, published, max_parallel
):
    """The cancel ends the child, and the release it runs would start the cloud child held beside it."""
    parent = unreleased_group(store, "echo", "cloudocr", max_parallel=max_parallel)
    before, sent = everything_stored(redis), len(published)

    refused = keyed.delete(f"/jobs/{parent}-0", headers=RESTRICTED)

    assert assert_problem(refused, 403, "on_prem_required")["child_index"] == 1
    assert "the release this cancel runs" in refused.get_json()["detail"]
    assert everything_stored(redis) == before and len(published) == sent
    allowed = keyed.delete(f"/jobs/{parent}-0", headers=OPEN)
    assert allowed.status_code == 200 and [d.model for d in published[-1]] == ["cloudocr"]  # its wake-up
    assert store.queries.get(f"{parent}-1")["status"] == "queued"


def test_cancelling_the_held_cloud_child_itself_is_allowed_in_a_group_with_room(keyed, store, published):
    parent = unreleased_group(store, "echo", "cloudocr", max_parallel=0)

    response = keyed.delete(f"/jobs/{parent}-1", headers=RESTRICTED)

    assert response.status_code == 200
    assert [d.model for d in published[-1]] == ["echo"]  # what its release starts stays on premises
    assert store.queries.get(f"{parent}-0")["status"] == "queued"


def test_cancelling_a_held_child_of_a_full_group_starts_nothing_and_is_allowed(keyed, store, published):
    parent = group_of(keyed, echo_job("running"), echo_job("held"), cloud_job(), max_parallel=1)
    store.claim(f"{parent}-0")
    sent = len(published)

    response = keyed.delete(f"/jobs/{parent}-1", headers=RESTRICTED)

    assert response.status_code == 200 and len(published) == sent
    assert keyed.get(f"/jobs/{parent}-2", headers=RESTRICTED).get_json()["status"] == "held"


def test_an_unrestricted_key_changes_the_cap_as_before(keyed, store, published):
    parent = group_of(keyed, echo_job("running"), cloud_job(), max_parallel=1)
    store.claim(f"{parent}-0")

    response = keyed.patch(f"/jobs/{parent}", json={"max_parallel": 2}, headers=OPEN)

    assert response.status_code == 200
    assert [d.model for d in published[-1]] == ["cloudocr"]  # its wake-up
    assert store.queries.get(f"{parent}-1")["status"] == "queued"
