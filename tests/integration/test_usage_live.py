"""Usage metering on a real stack: two tenants with keys, Tesseract reading real pages and a text layer,
a worker SIGKILLed mid-group, a redrive of a failed child; then each tenant's ``GET /usage`` equals the
sum over its jobs as their views record them.

The expected totals are read back from what the jobs themselves show, not from the meter: the pages of
each completed job's result (a text-layer page by its ``source``), every attempt's run in its ``runs``
(start to end, Redis time), the bytes of the documents sent.  The killed attempt is one of those runs
(``reclaimed``), so its seconds are counted once, and the redriven child's pages once, by its last
attempt.
"""

from __future__ import annotations

import hashlib
import signal
import time
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tests.harness import wait_until
from tests.integration.chaos_support import FAST, WAIT, b64, group
from tests.integration.live import Api, accepted, assert_problem
from tests.integration.polling import terminal, wait_for_job, wait_until_processing
from tests.pdfs import image_pdf, text_pdf

pytestmark = pytest.mark.integration

KEYS = {"alpha": "alpha-usage-N4rT8kLq2w", "beta": "beta-usage-Ws5Hm1Zc7p", "ops": "ops-usage-Gy2Lb9Xf4k"}
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def as_tenant(base_url: str, tenant: str) -> Api:
    api = Api(base_url)
    api.http.headers["Authorization"] = f"Bearer {KEYS[tenant]}"
    return api


def micros(rfc3339: str) -> int:
    moment = datetime.strptime(rfc3339, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)
    return (moment - _EPOCH) // timedelta(microseconds=1)


def echo_child(text: str, **options: Any) -> dict[str, Any]:
    return {"model": "echo", "content_type": "text/plain", "payload": b64(text), "options": options}


def settled(api: Api, job_id: str) -> dict[str, Any]:
    return dict(wait_for_job(api.job, job_id, terminal, through_outages=True))


def jobs_of(api: Api, root_id: str) -> list[dict[str, Any]]:
    """The root's single job, or its children, as their views show them."""
    root = api.job(root_id)
    if root["kind"] == "single":
        return [root]
    return [api.job(f"{root_id}-{i}") for i in range(root["total"])]


def expected_usage(jobs: Iterable[dict[str, Any]], input_bytes: int) -> dict[str, Any]:
    """What the meter must say of these jobs (of one model): from their results and runs."""
    ocr = text_layer = completed = engine_us = 0
    for job in jobs:
        engine_us += sum(micros(r["finished_at"]) - micros(r["started_at"]) for r in job["runs"])
        if job["status"] == "completed":
            completed += 1
            sources = [page["source"] for page in job["result"]["pages"]]
            text_layer += sources.count("text_layer")
            ocr += len(sources) - sources.count("text_layer")
    return {
        "ocr_pages": ocr,
        "text_layer_pages": text_layer,
        "engine_us": engine_us,
        "input_bytes": input_bytes,
        "jobs": completed,
    }


def metered(api: Api, **params: str) -> dict[str, dict[str, Any]]:
    """The tenant's totals per model, over the last day (granularity day), its seconds as µs."""
    document = api.get("/usage", params={"from": (datetime.now(UTC) - timedelta(days=1)).date().isoformat(), **params})
    out = {}
    for total in document["totals"]:
        amounts = {k: v for k, v in total.items() if k not in ("model", "engine_seconds")}
        out[total["model"]] = {**amounts, "engine_us": round(total["engine_seconds"] * 1_000_000)}
    return out


@pytest.fixture
def stack(procs, tmp_path):
    """A stack with three keys (alpha, beta, and ops with the admin policy), short leases and a fast sweep;
    its first worker is the one the test kills."""
    keys_file = tmp_path / "api-keys"
    digest = {t: hashlib.sha256(k.encode()).hexdigest() for t, k in KEYS.items()}
    keys_file.write_text(f"alpha:{digest['alpha']}\nbeta:{digest['beta']}\nops:{digest['ops']}:admin\n")
    env = {**FAST, "OCRGW_API_KEYS_FILE": str(keys_file)}
    db = procs.fresh_db()
    worker = procs.worker(db=db, concurrency=2, env=env)
    procs.coordinator(db=db, env=env)
    procs.beat(db=db, env=env)
    web = procs.web(db=db, env=env)
    return procs, db, env, worker, web


def test_usage_equals_the_jobs_pages_and_runs_after_a_killed_worker_and_a_redrive(stack):
    procs, db, env, worker, web = stack
    alpha, beta, ops = (as_tenant(web.base_url, t) for t in ("alpha", "beta", "ops"))

    # alpha: a scanned PDF split into one Tesseract child per page, and an echo group whose first child
    # fails for a few seconds (a redrive then goes through) and whose second runs slowly: its worker is killed.
    scanned = image_pdf("Metered page one", "Metered page two", "Metered page three")
    split = accepted(
        alpha.request(
            "POST",
            "/jobs",
            data=scanned,
            params={"model": "tesseract", "split_pages": "1", "max_parallel": "2"},
            headers={"Content-Type": "application/pdf"},
        )
    )
    fail_until = time.time() + 6
    echo_texts = ["fails first", "slow\fpages\fhere", "quick"]
    echo_group = accepted(
        alpha.post_json(
            group(
                [
                    echo_child(echo_texts[0], fail_until=fail_until),
                    echo_child(echo_texts[1], delay_ms=700),
                    echo_child(echo_texts[2]),
                ],
                max_parallel=0,
            )
        )
    )
    # beta: a born-digital PDF read from its text layer, and an image PDF read by Tesseract.
    layered, imaged = text_pdf("Layer one", "Layer two"), image_pdf("Beta scanned")
    tesseract_pdf = {"model": "tesseract", "content_type": "application/pdf"}
    from_layer = accepted(
        beta.post_json({**tesseract_pdf, "payload": b64(layered), "options": {"text_layer": "prefer"}})
    )
    scanned_by_beta = accepted(beta.post_json({**tesseract_pdf, "payload": b64(imaged)}))

    # The worker dies (SIGKILL, its pool with it) while it reads the slow child; another takes over,
    # and the sweep reclaims what the dead one held once its leases run out.
    wait_until_processing(alpha.job, f"{echo_group}-1")
    worker.kill(signal.SIGKILL)
    procs.worker(db=db, concurrency=2, env=env)

    group_view = settled(alpha, echo_group)
    assert group_view["status"] == "failed", group_view
    assert api_child(alpha, echo_group, 0)["error_code"] == "echo_failed"
    slow = api_child(alpha, echo_group, 1)
    assert slow["status"] == "completed"
    assert "reclaimed" in [r["outcome"] for r in slow["runs"]], slow["runs"]
    for root in (split, from_layer, scanned_by_beta):
        assert settled(alpha if root == split else beta, root)["status"] == "completed"

    # The redrive of the failed child, once its failures are over.
    wait_until(lambda: time.time() > fail_until, WAIT, message="the failing child's time never ran out")
    assert alpha.request("POST", f"/jobs/{echo_group}/retry", json={}).status_code == 202
    wait_for_job(alpha.job, echo_group, lambda v: v["status"] == "completed", what="completed after the redrive")
    redriven = api_child(alpha, echo_group, 0)
    assert [r["outcome"] for r in redriven["runs"]] == ["failed", "completed"]

    # Each tenant's meter equals its jobs, per model.
    expected_alpha = {
        "tesseract": expected_usage(jobs_of(alpha, split), len(scanned)),
        "echo": expected_usage(jobs_of(alpha, echo_group), sum(len(t.encode()) for t in echo_texts)),
    }
    assert expected_alpha["tesseract"]["ocr_pages"] == 3 and expected_alpha["echo"]["jobs"] == 3
    assert metered(alpha) == expected_alpha
    expected_beta = {
        "tesseract": {
            k: a + b
            for (k, a), b in zip(
                expected_usage(jobs_of(beta, from_layer), len(layered)).items(),
                expected_usage(jobs_of(beta, scanned_by_beta), len(imaged)).values(),
                strict=True,
            )
        }
    }
    assert (expected_beta["tesseract"]["text_layer_pages"], expected_beta["tesseract"]["ocr_pages"]) == (2, 1)
    assert metered(beta) == expected_beta

    # By the hour, the same totals.
    assert metered(alpha, granularity="hour") == expected_alpha

    # A job's view: a parent's usage is its children's sum.
    parent_usage = alpha.job(echo_group)["usage"]
    assert parent_usage["ocr_pages"] == expected_alpha["echo"]["ocr_pages"]
    assert round(parent_usage["engine_seconds"] * 1_000_000) == expected_alpha["echo"]["engine_us"]

    # A tenant reads its own usage only; the admin key reads anyone's.
    assert_problem(beta.request("GET", "/usage", params={"tenant": "alpha"}), 403, "admin_key_required")
    assert metered(ops, tenant="alpha") == expected_alpha
    assert metered(ops, tenant="beta") == expected_beta


def api_child(api: Api, parent_id: str, index: int) -> dict[str, Any]:
    return api.job(f"{parent_id}-{index}")
