"""Idempotency-Key: a replay answers as the first time and creates nothing; a reused key is refused."""

from __future__ import annotations

import json

import pytest

from gateway.submission import fingerprint

from .support import assert_problem, echo_job, fanout, png

KEY = {"Idempotency-Key": "order-42"}


def test_replayed_group_answers_the_same_job_and_creates_nothing(client, store, keyspace, published):
    request = fanout(echo_job("a"), echo_job("b"), echo_job("c"), max_parallel=1)
    first = client.post("/jobs", json=request, headers=KEY)
    before = keyspace()

    again = client.post("/jobs", json=request, headers=KEY)

    assert first.status_code == again.status_code == 202
    assert again.get_json()["id"] == first.get_json()["id"]
    assert again.headers["Location"] == first.headers["Location"]
    assert again.headers["Idempotent-Replayed"] == "true"
    assert "Idempotent-Replayed" not in first.headers
    assert keyspace() == before
    assert store.active_parent_count() == 1
    assert again.get_json()["total"] == 3
    assert len(published) == 1  # only the first request released children


def test_replayed_raw_document_answers_the_same_job(client, keyspace):
    def post():
        return client.post("/jobs?model=echo&pages=1", data=b"hi", content_type="text/plain", headers=KEY)

    first = post()
    before = keyspace()

    again = post()

    assert again.status_code == 202
    assert again.get_json()["id"] == first.get_json()["id"]
    assert again.headers["Idempotent-Replayed"] == "true"
    assert keyspace() == before


def test_a_replay_shows_the_current_view(client, store):
    first = client.post("/jobs", json=echo_job(), headers=KEY).get_json()
    claim = store.claim(first["id"])
    store.complete(first["id"], claim.attempt, {"text": "hello", "pages": []})

    again = client.post("/jobs", json=echo_job(), headers=KEY).get_json()

    assert first["status"] == "queued"
    assert again["status"] == "completed"
    assert again["result"] == {"text": "hello", "pages": []}
    assert again["idempotency_key"] == "order-42"


def test_omitted_model_replays_as_the_default_model(client):
    first = client.post("/jobs", data=png(), content_type="image/png", headers=KEY)
    again = client.post("/jobs?model=tesseract", data=png(), content_type="image/png", headers=KEY)

    assert again.get_json()["id"] == first.get_json()["id"]


def test_media_type_parameters_do_not_change_the_request(client):
    body = json.dumps(echo_job()).encode()
    client.post("/jobs", data=body, content_type="application/json", headers=KEY)

    again = client.post("/jobs", data=body, content_type="application/json; charset=utf-8", headers=KEY)

    assert again.headers["Idempotent-Replayed"] == "true"


@pytest.mark.parametrize(
    "second",
    [
        {"path": "/jobs?model=echo", "data": b"other", "content_type": "text/plain"},
        {"path": "/jobs?model=echo&pages=2", "data": b"hi", "content_type": "text/plain"},
        {"path": "/jobs?model=echo&doc_hash=x", "data": b"hi", "content_type": "text/plain"},
        {"path": "/jobs?model=tesseract", "data": png(), "content_type": "image/png"},
        {"path": "/jobs", "json": echo_job("hi")},
    ],
    ids=["body", "pages", "doc_hash", "model and type", "json"],
)
def test_a_key_reused_for_a_different_request_is_refused(client, keyspace, second):
    client.post("/jobs?model=echo", data=b"hi", content_type="text/plain", headers=KEY)
    before = keyspace()

    path = second.pop("path")
    assert_problem(client.post(path, headers=KEY, **second), 422, "idempotency_key_reused")
    assert keyspace() == before


def test_a_refused_request_does_not_burn_its_key(client):
    assert_problem(client.post("/jobs", json=echo_job(payload="!"), headers=KEY), 400, "invalid_base64")

    response = client.post("/jobs", json=echo_job(), headers=KEY)

    assert response.status_code == 202
    assert "Idempotent-Replayed" not in response.headers


def test_the_same_request_under_another_key_is_another_job(client):
    first = client.post("/jobs", json=echo_job(), headers=KEY).get_json()
    second = client.post("/jobs", json=echo_job(), headers={"Idempotency-Key": "order-43"}).get_json()

    assert first["id"] != second["id"]


@pytest.mark.parametrize("key", ["", " ", "a b", "x" * 256, "tab\t", "caf\u00e9", "k1,k2", ","], ids=repr)
def test_malformed_keys_are_refused_and_store_nothing(client, keyspace, key):
    before = keyspace()

    assert_problem(
        client.post("/jobs", json=echo_job(), headers={"Idempotency-Key": key}), 400, "invalid_idempotency_key"
    )
    assert keyspace() == before


def test_a_repeated_key_header_is_refused_and_stores_nothing(client, keyspace):
    before = keyspace()
    headers = [("Idempotency-Key", "a"), ("Idempotency-Key", "b")]

    assert_problem(client.post("/jobs", json=echo_job(), headers=headers), 400, "invalid_idempotency_key")
    assert keyspace() == before


def test_keys_up_to_255_visible_characters_are_accepted(client):
    key = "!~" + "k" * 253

    assert client.post("/jobs", json=echo_job(), headers={"Idempotency-Key": key}).status_code == 202


def test_fingerprint_parts_cannot_run_into_each_other():
    assert fingerprint("ab", "c") != fingerprint("a", "bc")
    assert fingerprint("a", b"") != fingerprint("a")
    assert fingerprint("/jobs", b"x") == fingerprint("/jobs", "x")
