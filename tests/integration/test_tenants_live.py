"""Two tenants on a real stack: a gunicorn gateway with API keys in front of the shared workers.

Each tenant submits and its jobs run to their end through workers that know
nothing of tenants; neither can see, list or control the other's jobs, and
the job store keeps no plain key.
"""

from __future__ import annotations

import hashlib

import pytest

from tests.integration.live import (
    ECHO_TIMEOUT,
    Api,
    accepted,
    assert_problem,
    b64,
    ocrgw_keyspace,
)
from tests.integration.polling import wait_for_job

pytestmark = pytest.mark.integration

ACME_KEY = "acme-live-Vq3u8RkZ1m"
GLOBEX_KEY = "globex-dev-0sLw7HcN2e"


def key_id(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()[:12]


def echo_job(text: str) -> dict:
    return {"model": "echo", "content_type": "text/plain", "payload": b64(text)}


def as_tenant(base_url: str, key: str) -> Api:
    api = Api(base_url)
    api.http.headers["Authorization"] = f"Bearer {key}"
    return api


@pytest.fixture
def web(current_deployment, procs, tmp_path):
    """A gateway with acme's key in a keys file and globex's as a development key, on the shared stack's
    database (emptied for this test)."""
    keys_file = tmp_path / "api-keys"
    keys_file.write_text(f"# ocrgw API keys\nacme:{hashlib.sha256(ACME_KEY.encode()).hexdigest()}\n")
    return procs.web(
        db=current_deployment.db, env={"OCRGW_API_KEYS_FILE": str(keys_file), "OCRGW_API_KEYS": f"globex:{GLOBEX_KEY}"}
    )


def stored_text(client) -> bytes:
    """Every job-store key with its fields, members and values, as one blob (read as stored, not DUMPed)."""
    parts: list[bytes] = []
    for key in ocrgw_keyspace(client):
        kind = client.type(key)
        parts.append(key)
        if kind == b"string":
            parts.append(client.get(key) or b"")
        elif kind == b"hash":
            parts += [b for pair in client.hgetall(key).items() for b in pair]
        elif kind == b"zset":
            parts += client.zrange(key, 0, -1)
        elif kind == b"stream":
            parts += [b for _, entry in client.xrange(key) for pair in entry.items() for b in pair]
    return b"\n".join(parts)


def test_two_tenants_run_their_jobs_and_cannot_see_each_others(web, db):
    acme, globex, nobody = as_tenant(web.base_url, ACME_KEY), as_tenant(web.base_url, GLOBEX_KEY), Api(web.base_url)

    # No key, or a wrong one: 401 with the challenge, and nothing stored. The probes stay open.
    before = ocrgw_keyspace(db)
    missing = nobody.post_json(echo_job("x"))
    assert_problem(missing, 401, "missing_api_key")
    assert missing.headers["WWW-Authenticate"].startswith("Bearer")
    assert_problem(as_tenant(web.base_url, ACME_KEY + "!").request("GET", "/jobs"), 401, "invalid_api_key")
    assert ocrgw_keyspace(db) == before
    assert nobody.request("GET", "/healthz").status_code == 200
    assert nobody.request("GET", "/openapi.json").status_code == 200

    # Each tenant submits; the same Idempotency-Key from both makes two jobs.
    same_key = {"Idempotency-Key": "batch-7"}
    acme_single = accepted(acme.post_json(echo_job("acme's page"), headers=same_key))
    acme_group = accepted(acme.post_json({"fanout": {"max_parallel": 1, "children": [echo_job("a0"), echo_job("a1")]}}))
    globex_single = accepted(globex.post_json(echo_job("acme's page"), headers=same_key))
    assert globex_single != acme_single

    for api, job_id in ((acme, acme_single), (acme, acme_group), (globex, globex_single)):
        assert wait_for_job(api.job, job_id, timeout=ECHO_TIMEOUT)["status"] == "completed"

    # Neither sees, lists or controls the other's jobs.
    for api, job_id in (
        (globex, acme_single),
        (globex, acme_group),
        (globex, f"{acme_group}-1"),
        (acme, globex_single),
    ):
        for method, path in (
            ("GET", f"/jobs/{job_id}"),
            ("GET", f"/jobs/{job_id}/children"),
            ("GET", f"/jobs/{job_id}/result"),
            ("GET", f"/jobs/{job_id}/events"),
            ("DELETE", f"/jobs/{job_id}"),
            ("POST", f"/jobs/{job_id}/retry"),
        ):
            assert_problem(api.request(method, path), 404, "job_not_found")
    assert {j["id"] for j in acme.get("/jobs")["jobs"]} == {acme_single, acme_group}
    assert [j["id"] for j in globex.get("/jobs")["jobs"]] == [globex_single]
    assert acme.result(acme_single)["text"] == "acme's page"

    # The audit events name each job's tenant and key id, the children's through their parent.
    events = acme.events(acme_group)
    assert [e["operation"] for e in events] == ["job_child", "job_child", "job"]
    assert {(e["tenant"], e["key_id"]) for e in events} == {("acme", key_id(ACME_KEY))}
    assert [(e["tenant"], e["key_id"]) for e in globex.events(globex_single)] == [("globex", key_id(GLOBEX_KEY))]

    # No plain key anywhere in the job store.
    stored = stored_text(db)
    assert key_id(ACME_KEY).encode() in stored
    assert ACME_KEY.encode() not in stored and GLOBEX_KEY.encode() not in stored
