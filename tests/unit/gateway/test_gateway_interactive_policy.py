"""Who may use the interactive lane, and how much of it: a key's ``interactive_max_inflight`` (or
OCRGW_INTERACTIVE_MAX_INFLIGHT) caps its tenant's interactive jobs queued or processing.  A key allowed none
gets 403 interactive_not_allowed, a tenant at its allowance 429 interactive_limit_reached with Retry-After;
either way nothing is stored.  Batch submissions are never counted nor refused by it."""

from __future__ import annotations

import hashlib
from dataclasses import replace

import pytest

from jobs import controls
from jobs.api_keys import read_keys_file
from jobs.ids import tenant_tag
from tests.keyspace import keys

from .support import assert_problem, echo_job, fanout

ZERO_KEY = "acme-batch-only-4Hq8"  # interactive_max_inflight=0
TWO_KEY = "acme-two-at-once-9Xr1"  # interactive_max_inflight=2, weight=3
GLOBEX_KEY = "globex-default-2Pz7"  # no policy: the setting's default
DEFAULT_ALLOWANCE = 3


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


@pytest.fixture
def settings(settings, tmp_path):
    path = tmp_path / "api-keys"
    path.write_text(
        f"acme:{digest(ZERO_KEY)}:interactive_max_inflight=0,weight=3\n"
        f"acme:{digest(TWO_KEY)}:interactive_max_inflight=2,weight=3\n"
        f"globex:{digest(GLOBEX_KEY)}\n"
    )
    return replace(settings, file_api_keys=read_keys_file(str(path)), interactive_max_inflight=DEFAULT_ALLOWANCE)


def interactive(text: str = "hi") -> dict:
    return echo_job(text, priority="interactive")


def test_a_key_allowed_no_interactive_jobs_is_refused_and_nothing_is_stored(client, keyspace):
    before = keyspace()

    response = client.post("/jobs", json=interactive(), headers=bearer(ZERO_KEY))

    assert_problem(response, 403, "interactive_not_allowed")
    assert keyspace() == before
    # The same key's batch work is as welcome as ever.
    assert client.post("/jobs", json=echo_job(), headers=bearer(ZERO_KEY)).status_code == 202


def test_a_tenant_at_its_allowance_gets_429_with_retry_after_and_nothing_is_stored(client, keyspace):
    for _ in range(2):
        assert client.post("/jobs", json=interactive(), headers=bearer(TWO_KEY)).status_code == 202
    before = keyspace()

    response = client.post("/jobs", json=interactive(), headers=bearer(TWO_KEY))

    body = assert_problem(response, 429, "interactive_limit_reached")
    assert response.headers["Retry-After"] == "1"
    assert (body["in_use"], body["interactive_max_inflight"]) == (2, 2)
    assert keyspace() == before


def test_an_ended_job_gives_its_place_back(client, store):
    first = client.post("/jobs", json=interactive(), headers=bearer(TWO_KEY)).get_json()["id"]
    client.post("/jobs", json=interactive(), headers=bearer(TWO_KEY))
    assert client.post("/jobs", json=interactive(), headers=bearer(TWO_KEY)).status_code == 429

    controls.cancel(store, first)

    assert client.post("/jobs", json=interactive(), headers=bearer(TWO_KEY)).status_code == 202


def test_a_group_counts_as_many_as_it_may_run_at_once(client):
    group = fanout(echo_job("a"), echo_job("b"), echo_job("c"), max_parallel=0)
    group["fanout"]["priority"] = "interactive"
    # Three at once: more than the allowance of two, with nothing else in flight.
    assert_problem(client.post("/jobs", json=group, headers=bearer(TWO_KEY)), 429, "interactive_limit_reached")

    group["fanout"]["max_parallel"] = 2
    assert client.post("/jobs", json=group, headers=bearer(TWO_KEY)).status_code == 202
    assert_problem(client.post("/jobs", json=interactive(), headers=bearer(TWO_KEY)), 429, "interactive_limit_reached")


def test_a_key_without_a_policy_has_the_setting_s_allowance_per_tenant(client):
    for _ in range(DEFAULT_ALLOWANCE):
        assert client.post("/jobs", json=interactive(), headers=bearer(GLOBEX_KEY)).status_code == 202

    assert_problem(
        client.post("/jobs", json=interactive(), headers=bearer(GLOBEX_KEY)), 429, "interactive_limit_reached"
    )
    # Another tenant's allowance is its own.
    assert client.post("/jobs", json=interactive(), headers=bearer(TWO_KEY)).status_code == 202


def test_batch_submissions_take_no_place(client, redis):
    for _ in range(5):
        assert client.post("/jobs", json=echo_job(), headers=bearer(TWO_KEY)).status_code == 202

    assert redis.exists(keys.tenant_interactive(tenant_tag("acme"))) == 0


def test_the_tenant_s_weight_is_recorded_with_its_jobs(client, redis):
    job_id = client.post("/jobs", json=echo_job(), headers=bearer(TWO_KEY)).get_json()["id"]

    recorded = redis.hget(keys.turns(keys.bucket_of(job_id)), f"{keys.TURN_WEIGHT}{keys.tag_of(job_id)}")
    assert recorded == b"3"


def test_a_retried_submission_is_replayed_while_its_job_holds_the_allowance(client):
    headers = {**bearer(TWO_KEY), "Idempotency-Key": "order-77"}
    client.post("/jobs", json=interactive(), headers=bearer(TWO_KEY))
    first = client.post("/jobs", json=interactive(), headers=headers)
    assert first.status_code == 202

    again = client.post("/jobs", json=interactive(), headers=headers)

    assert again.status_code == 202 and again.get_json()["id"] == first.get_json()["id"]
    assert again.headers.get("Idempotent-Replayed") == "true"


def test_a_higher_cap_on_an_interactive_group_needs_room_in_the_allowance(client):
    group = fanout(*(echo_job(str(i)) for i in range(4)), max_parallel=1)
    group["fanout"]["priority"] = "interactive"
    created = client.post("/jobs", json=group, headers=bearer(TWO_KEY))
    assert created.status_code == 202, created.get_json()
    job_id = created.get_json()["id"]

    response = client.patch(f"/jobs/{job_id}", json={"max_parallel": 100}, headers=bearer(TWO_KEY))

    assert_problem(response, 429, "interactive_limit_reached")
    view = client.get(f"/jobs/{job_id}", headers=bearer(TWO_KEY)).get_json()
    assert view["max_parallel"] == 1, view
    assert client.patch(f"/jobs/{job_id}", json={"max_parallel": 2}, headers=bearer(TWO_KEY)).status_code == 200
