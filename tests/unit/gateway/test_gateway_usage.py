"""GET /usage: a tenant reads its own usage, an admin key any tenant's, and a bad range is a 422 naming it;
a job's view carries what it used (a parent's: its children's sum)."""

from __future__ import annotations

import hashlib
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from jobs.api_keys import read_keys_file
from jobs.usage import JobUnits

from .support import assert_problem, echo_job, fanout

ACME_KEY = "acme-usage-5Hq8Lw2Nbc"
GLOBEX_KEY = "globex-usage-Vr3Xk7Tp0a"
OPERATOR_KEY = "ops-admin-Jd6Ym1Qs4e"  # the operator's tenant, with the admin policy
ACME, GLOBEX, OPERATOR = ({"Authorization": f"Bearer {k}"} for k in (ACME_KEY, GLOBEX_KEY, OPERATOR_KEY))


@pytest.fixture
def settings(settings, tmp_path):
    path = tmp_path / "api-keys"
    digest = {k: hashlib.sha256(k.encode()).hexdigest() for k in (ACME_KEY, GLOBEX_KEY, OPERATOR_KEY)}
    path.write_text(f"acme:{digest[ACME_KEY]}\nglobex:{digest[GLOBEX_KEY]}\nops:{digest[OPERATOR_KEY]}:admin\n")
    return replace(settings, file_api_keys=read_keys_file(str(path)))


def submit(client, who: dict, body: dict) -> str:
    response = client.post("/jobs", json=body, headers=who)
    assert response.status_code == 202, response.get_data(as_text=True)
    return response.get_json()["id"]


def complete(store, job_id: str, units: JobUnits) -> None:
    claim = store.claim(job_id)
    assert claim is not None
    store.complete(job_id, claim.attempt, {"text": "x", "pages": []}, units=units)


def test_a_tenant_reads_its_own_usage_per_model_and_a_job_view_carries_its_own(client, store):
    single = submit(client, ACME, echo_job("a"))
    complete(store, single, JobUnits(ocr_pages=2, text_layer_pages=1, input_bytes=100))
    parent = submit(client, ACME, fanout(echo_job("b"), echo_job("c"), max_parallel=2))
    for index, pages in enumerate((3, 4)):
        complete(store, f"{parent}-{index}", JobUnits(ocr_pages=pages, input_bytes=10))
    other = submit(client, GLOBEX, echo_job("z"))
    complete(store, other, JobUnits(ocr_pages=50))

    response = client.get("/usage", headers=ACME)
    assert response.status_code == 200
    body = response.get_json()
    assert (body["tenant"], body["granularity"]) == ("acme", "day")
    [total] = body["totals"]
    assert {k: total[k] for k in ("model", "ocr_pages", "text_layer_pages", "input_bytes", "jobs")} == {
        "model": "echo",
        "ocr_pages": 9,
        "text_layer_pages": 1,
        "input_bytes": 120,
        "jobs": 3,
    }
    [today] = body["periods"]
    assert today["start"] == datetime.now(UTC).strftime("%Y-%m-%dT00:00:00.000000Z")

    views = {job_id: client.get(f"/jobs/{job_id}", headers=ACME).get_json()["usage"] for job_id in (single, parent)}
    assert views[single]["ocr_pages"] == 2 and views[single]["input_bytes"] == 100
    assert (views[parent]["ocr_pages"], views[parent]["input_bytes"]) == (7, 20)
    child = client.get(f"/jobs/{parent}-1", headers=ACME).get_json()["usage"]
    assert child["ocr_pages"] == 4
    # The engine seconds of the three jobs' attempts add up to the tenant's.
    seconds = views[single]["engine_seconds"] + views[parent]["engine_seconds"]
    assert seconds == pytest.approx(total["engine_seconds"], abs=1e-6) and seconds > 0

    hourly = client.get("/usage?granularity=hour", headers=ACME).get_json()
    assert [p["ocr_pages"] for p in hourly["periods"]] == [9]


def test_another_tenant_s_usage_needs_an_admin_key(client, store):
    complete(store, submit(client, GLOBEX, echo_job()), JobUnits(ocr_pages=5))

    assert_problem(client.get("/usage?tenant=globex", headers=ACME), 403, "admin_key_required")
    assert client.get("/usage?tenant=acme", headers=ACME).status_code == 200  # its own, named
    assert client.get("/usage", headers=ACME).get_json()["totals"] == []

    read = client.get("/usage?tenant=globex", headers=OPERATOR).get_json()
    assert (read["tenant"], read["totals"][0]["ocr_pages"]) == ("globex", 5)


@pytest.mark.parametrize(
    "query",
    [
        "from=yesterday",
        "from=2026-13-01",
        "to=2026-12-01T25:00:00Z",
        "from=2026-12-05&to=2026-12-01",
        "from=2026-12-01&to=2026-12-01",
        "granularity=minute",
        "granularity=hour&from=2026-01-01&to=2026-03-01",
        "from=2020-01-01&to=2026-01-01",
        "from=1960-01-01",
        "tenant=",
        # Past the last moment a date-time holds once in UTC, or at its very edge.
        "from=9999-12-31T19:00:00-05:00&to=9999-12-31T20:00:00-05:00",
        "granularity=hour&from=9999-12-31T22:00:00Z&to=9999-12-31T23:59:59Z",
        "to=9999-12-31",
        "from=1971-01-01T00:00:00%2B23:59&to=1971-01-02",
    ],
)
def test_a_bad_range_is_an_invalid_field(client, query, keyspace):
    before = keyspace()
    assert_problem(client.get(f"/usage?{query}", headers=ACME), 422, "invalid_field")
    assert keyspace() == before


def test_a_range_starts_at_the_hour_of_from_and_ends_at_to(client):
    start = (datetime.now(UTC) - timedelta(days=2)).replace(minute=17, second=5, microsecond=0)
    end = start + timedelta(days=1)
    body = client.get(
        f"/usage?from={start.strftime('%Y-%m-%dT%H:%M:%SZ')}&to={end.strftime('%Y-%m-%dT%H:%M:%SZ')}", headers=ACME
    ).get_json()
    assert body["from"] == start.replace(minute=0, second=0).strftime("%Y-%m-%dT%H:%M:%S.000000Z")
    assert body["to"] == end.strftime("%Y-%m-%dT%H:%M:%S.000000Z")
