"""An on_prem_only key keeps its tenant's documents on premises on the controls too, end to end.

A real stack (gateway, worker, coordinator, beat) whose remote model ``cloudecho`` sends its documents
to a stand-in upstream that records every request.  A group of the tenant, made by its unrestricted
key, holds cloud children; the tenant's on_prem_only key then tries to start them through the controls
(a redrive, a cap change, a cancel that frees a slot): each is ``403 on_prem_required``, the group is
as it was, and the upstream saw nothing of it.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterator
from typing import Any

import pytest
import requests

from tests.harness import Stack
from tests.integration.fanout_support import echo_child
from tests.integration.polling import wait_for_job
from tests.unit.workers.fake_upstream import FakeUpstream

pytestmark = pytest.mark.integration

OPEN_KEY = "acme-open-Hq83mZx1"
RESTRICTED_KEY = "acme-onprem-Vd02pLs7"  # the same tenant's key with the on_prem_only policy
WAIT = 90.0  # bounds a hang; asserts no speed
# The upstream refuses every document: a cloud child fails at once, upstream_rejected, never retried.
REFUSING = (422, {"code": "invalid_document", "detail": "refused by the stand-in"})


def sha(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def cloud_child(text: str) -> dict[str, Any]:
    return {"model": "cloudecho", "content_type": "text/plain", "payload": base64.b64encode(text.encode()).decode()}


class Client:
    """The gateway as one of acme's keys sees it."""

    def __init__(self, base_url: str, key: str):
        self.base_url = base_url
        self.http = requests.Session()
        self.http.trust_env = False  # loopback: no proxy
        self.http.headers["Authorization"] = f"Bearer {key}"

    def call(self, method: str, path: str, **kwargs: Any) -> requests.Response:
        return self.http.request(method, f"{self.base_url}{path}", timeout=30, **kwargs)

    def job(self, job_id: str) -> dict[str, Any]:
        response = self.call("GET", f"/jobs/{job_id}")
        assert response.status_code == 200, response.text
        return response.json()

    def group(self, children: list[dict[str, Any]], max_parallel: int) -> str:
        response = self.call("POST", "/jobs", json={"fanout": {"max_parallel": max_parallel, "children": children}})
        assert response.status_code == 202, response.text
        return response.json()["id"]


@pytest.fixture
def upstream() -> Iterator[FakeUpstream]:
    with FakeUpstream(submit=REFUSING) as recording:
        yield recording


@pytest.fixture
def stack(procs, upstream, tmp_path) -> Stack:
    keys = tmp_path / "api-keys"
    keys.write_text(f"acme:{sha(OPEN_KEY)}\nacme:{sha(RESTRICTED_KEY)}:on_prem_only\n")
    env = {
        "OCRGW_API_KEYS_FILE": str(keys),
        "OCRGW_REMOTE_MODELS": f"cloudecho=echo@{upstream.url}",
        "OCRGW_SWEEP_INTERVAL": "0.2",
        "NO_PROXY": "127.0.0.1,localhost",  # loopback: no proxy from the environment applies
    }
    return procs.stack(db=procs.fresh_db(), env=env, web=True)


@pytest.fixture
def clients(stack) -> tuple[Client, Client]:
    base_url = stack.web().base_url
    return Client(base_url, OPEN_KEY), Client(base_url, RESTRICTED_KEY)


def assert_on_prem_required(response: requests.Response, child_index: int) -> None:
    assert response.status_code == 403, response.text
    assert response.headers["Content-Type"] == "application/problem+json"
    problem = response.json()
    assert (problem["code"], problem["child_index"]) == ("on_prem_required", child_index), problem


def test_an_on_prem_only_key_cannot_redrive_a_cloud_child_its_tenant_sent_away(clients, upstream):
    unrestricted, restricted = clients
    # Given a group of the tenant, sent by its unrestricted key, whose cloud child the upstream refused
    parent = unrestricted.group([echo_child("stays here"), cloud_child("went away")], max_parallel=2)
    ended = wait_for_job(unrestricted.job, parent, timeout=WAIT)
    assert ended["status"] == "failed" and [c["status"] for c in ended["children"]] == ["completed", "failed"]
    sent = list(upstream.requests)
    assert [r.method for r in sent] == ["POST"]

    # When the on_prem_only key asks for it again, with or without the cancelled ones
    refused = [
        restricted.call("POST", f"/jobs/{parent}/retry", json=body) for body in ({}, {"include_cancelled": True})
    ]

    # Then each is refused, the group is as it was, and the upstream got nothing more
    for response in refused:
        assert_on_prem_required(response, 1)
    assert restricted.job(parent) == ended
    assert upstream.requests == sent
    # And the unrestricted key still may: the cloud child goes to the upstream once more
    assert unrestricted.call("POST", f"/jobs/{parent}/retry", json={}).status_code == 202
    again = wait_for_job(unrestricted.job, parent, lambda view: view["redrives"] == 1 and view["finished_at"])
    assert again["status"] == "failed" and [r.method for r in upstream.requests] == ["POST", "POST"]


def test_an_on_prem_only_key_cannot_release_a_held_cloud_child(clients, upstream):
    unrestricted, restricted = clients
    # Given a group of one slot: an on-prem child running (many short pages: a cancel ends it at the
    # next one), and a cloud child held behind it
    pages = "\f".join(f"page {n}" for n in range(120))
    parent = unrestricted.group(
        [echo_child(pages, delay_ms=500, doc_hash="doc-many-pages"), cloud_child("held")], max_parallel=1
    )
    wait_for_job(unrestricted.job, f"{parent}-0", lambda view: view["status"] == "processing")
    before = restricted.job(parent)

    # When the on_prem_only key raises the cap, lowers it, or cancels the running child (its slot would
    # go to the cloud child)
    refused = [
        restricted.call("PATCH", f"/jobs/{parent}", json={"max_parallel": 2}),
        restricted.call("PATCH", f"/jobs/{parent}", json={"max_parallel": 1}),
        restricted.call("DELETE", f"/jobs/{parent}-0"),
    ]

    # Then each is refused and changed nothing: the cap, the held child, the running one
    for response in refused:
        assert_on_prem_required(response, 1)
    after = restricted.job(parent)
    assert (after["max_parallel"], after["cancel_requested"]) == (1, False)
    assert [c["status"] for c in after["children"]] == ["processing", "held"]
    assert after["children"][1] == before["children"][1]
    # And cancelling the whole group, which starts nothing, is allowed: it ends with the cloud child
    # cancelled, and the upstream never heard of it
    assert restricted.call("DELETE", f"/jobs/{parent}").status_code == 202
    ended = wait_for_job(restricted.job, parent, timeout=WAIT)
    assert ended["status"] == "cancelled" and ended["children"][1]["status"] == "cancelled"
    assert upstream.requests == []
