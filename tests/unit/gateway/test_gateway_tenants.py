"""Tenant isolation over HTTP: another tenant's job is 404 on every read and control, listings and
Idempotency-Keys are per tenant, and audit events name the tenant and key id, never the key."""

from __future__ import annotations

import pytest

from .keyed import (
    ACME_KEY,
    ACME_ROTATED_KEY,
    GLOBEX_KEY,
    PLAIN_KEYS,
    bearer,
    everything_stored,
    key_id,
    keyed_settings,
)
from .support import assert_problem, echo_job, fanout

ACME, ACME_ROTATED, GLOBEX = bearer(ACME_KEY), bearer(ACME_ROTATED_KEY), bearer(GLOBEX_KEY)


@pytest.fixture
def settings(settings, tmp_path):
    return keyed_settings(settings, tmp_path)


def submit(client, who: dict, body: dict, **headers) -> str:
    response = client.post("/jobs", json=body, headers={**who, **headers})
    assert response.status_code == 202, response.get_data(as_text=True)
    return response.get_json()["id"]


def run(store, job_id: str, ok: bool = True) -> None:
    """What a worker does: claim, then complete or fail, knowing the job's id only."""
    claim = store.claim(job_id)
    assert claim is not None, job_id
    if ok:
        store.complete(job_id, claim.attempt, {"text": job_id, "pages": []})
    else:
        store.fail(job_id, claim.attempt, "echo_failed", "asked to")


def failed_group(client, store, who: dict, **headers) -> str:
    parent = submit(client, who, fanout(echo_job("a"), echo_job("b"), max_parallel=2), **headers)
    run(store, f"{parent}-0", ok=False)
    run(store, f"{parent}-1")
    return parent


def every_request(job_id: str) -> list[tuple[str, str, dict | None]]:
    return [
        ("GET", f"/jobs/{job_id}", None),
        ("GET", f"/jobs/{job_id}/children", None),
        ("GET", f"/jobs/{job_id}/result", None),
        ("GET", f"/jobs/{job_id}/result.pdf", None),
        ("GET", f"/jobs/{job_id}/result.hocr", None),
        ("GET", f"/jobs/{job_id}/result.alto", None),
        ("GET", f"/jobs/{job_id}/events", None),
        ("DELETE", f"/jobs/{job_id}", None),
        ("PATCH", f"/jobs/{job_id}", {"max_parallel": 5}),
        ("POST", f"/jobs/{job_id}/retry", {}),
    ]


def test_another_tenants_jobs_and_children_are_not_found_on_every_endpoint(client, store, keyspace):
    single = submit(client, ACME, echo_job())
    run(store, single)
    finished = failed_group(client, store, ACME)
    running = submit(client, ACME, fanout(echo_job("a"), echo_job("b"), echo_job("c"), max_parallel=1))
    ids = [single, finished, f"{finished}-0", running, f"{running}-0", f"{running}-2"]
    records = {job_id: store.queries.get(job_id) for job_id in ids}
    before = keyspace()

    for job_id in ids:
        for method, path, body in every_request(job_id):
            response = client.open(path, method=method, json=body, headers=GLOBEX)
            assert_problem(response, 404, "job_not_found")

    assert keyspace() == before
    assert {job_id: store.queries.get(job_id) for job_id in ids} == records  # nothing changed either
    # Its own tenant, with either of its keys, sees and controls them.
    assert client.get(f"/jobs/{running}-2", headers=ACME_ROTATED).status_code == 200
    assert client.patch(f"/jobs/{running}", json={"max_parallel": 2}, headers=ACME_ROTATED).status_code == 200
    assert client.post(f"/jobs/{finished}/retry", json={}, headers=ACME).status_code == 202
    assert client.delete(f"/jobs/{running}", headers=ACME).status_code in (200, 202)


def test_a_listing_shows_the_tenants_own_roots_only(client, store):
    acme_single = submit(client, ACME, echo_job())
    acme_group = submit(client, ACME_ROTATED, fanout(echo_job("a"), max_parallel=1))
    globex_single = submit(client, GLOBEX, echo_job())
    run(store, globex_single)

    def listed(who: dict, **query) -> list[str]:
        response = client.get("/jobs", query_string=query, headers=who)
        assert response.status_code == 200
        return [job["id"] for job in response.get_json()["jobs"]]

    assert listed(ACME) == [acme_group, acme_single]
    assert listed(ACME_ROTATED, kind="parent") == [acme_group]
    assert listed(ACME, status="completed") == []
    assert listed(GLOBEX) == [globex_single]
    assert listed(GLOBEX, status="completed", kind="single") == [globex_single]
    assert listed(GLOBEX, kind="parent") == []


def test_a_listing_pages_within_the_tenant(client):
    mine = [submit(client, ACME, echo_job(f"{i}")) for i in range(3)]
    for i in range(3):
        submit(client, GLOBEX, echo_job(f"g{i}"))

    first = client.get("/jobs", query_string={"limit": 2}, headers=ACME).get_json()
    second = client.get("/jobs", query_string={"limit": 2, "cursor": first["next_cursor"]}, headers=ACME).get_json()

    assert [j["id"] for j in first["jobs"] + second["jobs"]] == mine[::-1]
    assert second["next_cursor"] is None


def test_the_same_idempotency_key_from_two_tenants_makes_two_jobs(client):
    body = echo_job("same request")
    first = client.post("/jobs", json=body, headers={**ACME, "Idempotency-Key": "order-42"})
    other = client.post("/jobs", json=body, headers={**GLOBEX, "Idempotency-Key": "order-42"})
    again = client.post("/jobs", json=body, headers={**ACME_ROTATED, "Idempotency-Key": "order-42"})

    assert (first.status_code, other.status_code, again.status_code) == (202, 202, 202)
    assert other.get_json()["id"] != first.get_json()["id"]
    assert "Idempotent-Replayed" not in other.headers
    # The key is the tenant's, whichever of its keys sends it.
    assert (again.get_json()["id"], again.headers["Idempotent-Replayed"]) == (first.get_json()["id"], "true")


def test_the_same_idempotency_key_on_two_tenants_retries_redrives_both(client, store):
    acme_group = failed_group(client, store, ACME)
    globex_group = failed_group(client, store, GLOBEX)

    acme = client.post(f"/jobs/{acme_group}/retry", json={}, headers={**ACME, "Idempotency-Key": "redo-1"})
    globex = client.post(f"/jobs/{globex_group}/retry", json={}, headers={**GLOBEX, "Idempotency-Key": "redo-1"})

    assert (acme.status_code, globex.status_code) == (202, 202), globex.get_data(as_text=True)
    assert "Idempotent-Replayed" not in globex.headers
    assert store.queries.get(globex_group)["redrives"] == "1"


def test_audit_events_name_the_tenant_and_key_id_and_nothing_stores_a_key(client, store, redis):
    group = submit(client, ACME_ROTATED, fanout(echo_job("a"), echo_job("b"), max_parallel=1))
    run(store, f"{group}-0")
    assert client.delete(f"/jobs/{group}-1", headers=ACME).status_code == 200
    single = submit(client, GLOBEX, echo_job())
    run(store, single, ok=False)

    events = client.get(f"/jobs/{group}/events", headers=ACME).get_json()["events"]
    assert [(e["operation"], e["job_id"], e["status"]) for e in events] == [
        ("job_child", f"{group}-0", "completed"),
        ("job_child", f"{group}-1", "cancelled"),
        ("job", group, "failed"),  # a child cancelled one by one, past a tolerance of 0
    ]
    # The key that submitted the group, for each of its events (the worker knew no tenant).
    assert {(e["tenant"], e["key_id"]) for e in events} == {("acme", key_id(ACME_ROTATED_KEY))}
    globex_events = client.get(f"/jobs/{single}/events", headers=GLOBEX).get_json()["events"]
    assert [(e["tenant"], e["key_id"]) for e in globex_events] == [("globex", key_id(GLOBEX_KEY))]

    stored = everything_stored(redis)
    assert key_id(ACME_ROTATED_KEY).encode() in stored
    assert not any(key.encode() in stored for key in PLAIN_KEYS)
