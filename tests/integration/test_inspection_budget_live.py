"""What one request may spend checking its documents, on a real gunicorn gateway with two tenants' keys.

The gateway checks every document of a submission before it stores
anything, in the thread that answers it, within a budget
(``gateway.document_checks``): ten copies of the sub-kilobyte PDF whose
cross-reference stream inflates to 200 MB are refused at the first, after one
check (by the memory bound, or by the time budget on a machine too loaded to
reach the bound within it); 200 copies of one page are accepted after one check; and a PDF that
would take PDFium seconds to open is refused ``413
inspection_budget_exceeded`` once the budget is spent, while another
tenant's requests on other connections are answered meanwhile, before it.
Nothing refused is stored.  How many checks ran is read from the gateway's
``/metrics`` (``ocrgw_document_checks_total``).
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
import requests
from prometheus_client.parser import text_string_to_metric_families

from tests import bad_documents as bad
from tests.harness import wait_until
from tests.integration.chaos_support import FAST
from tests.integration.live import Api, accepted, assert_problem, b64, ocrgw_keyspace
from tests.integration.polling import wait_for_job

pytestmark = pytest.mark.integration

ALPHA_KEY = "alpha-live-3Jd9QwZr7k"
BETA_KEY = "beta-live-Xc81mNpL0s"
ENV = {**FAST, "OCRGW_API_KEYS": f"alpha:{ALPHA_KEY},beta:{BETA_KEY}"}
PDF = "application/pdf"
#: A PDF whose cross-reference table PDFium rebuilds by scanning 24 MB: seconds, against a budget of one.
SLOW_PDF_BYTES = 24 << 20
#: How long a request that must not hang may take at most on a loaded machine (a bound, not a speed check).
ANSWER_TIMEOUT = 120.0


@pytest.fixture(scope="module")
def deployment(stack_factory):
    return stack_factory(env=ENV, concurrency=1)


def as_tenant(base_url: str, key: str) -> Api:
    api = Api(base_url, timeout=ANSWER_TIMEOUT)
    api.http.headers["Authorization"] = f"Bearer {key}"
    return api


@pytest.fixture
def alpha(current_deployment) -> Api:
    return as_tenant(current_deployment.web().base_url, ALPHA_KEY)


@pytest.fixture
def beta(current_deployment) -> Api:
    return as_tenant(current_deployment.web().base_url, BETA_KEY)


def checks(api: Api) -> dict[str, float]:
    """The gateway's ``ocrgw_document_checks_total``, by outcome."""
    response = api.request("GET", "/metrics")
    assert response.status_code == 200, response.text
    counts = {"checked": 0.0, "reused": 0.0, "over_budget": 0.0}
    for family in text_string_to_metric_families(response.text):
        for sample in family.samples:
            if sample.name == "ocrgw_document_checks_total":
                counts[sample.labels["outcome"]] = sample.value
    return counts


def checked_since(api: Api, before: dict[str, float]) -> dict[str, float]:
    return {outcome: count - before[outcome] for outcome, count in checks(api).items()}


def added_keys(db, before: dict[bytes, bytes | None]) -> set[bytes]:
    """The store's keys that were not there ``before``.  Not a comparison of values: the group an earlier test
    cancelled may still have its wake-up keys taken or expired by the workers meanwhile."""
    return set(ocrgw_keyspace(db)) - set(before)


def pdf_group(*documents: bytes) -> dict:
    children = [{"model": "tesseract", "content_type": PDF, "payload": b64(data)} for data in documents]
    return {"fanout": {"max_parallel": 1, "children": children}}


def test_ten_copies_of_the_200_mb_bomb_are_refused_at_the_first_after_one_check_storing_nothing(alpha, db):
    before, counted = ocrgw_keyspace(db), checks(alpha)

    response = alpha.post_json(pdf_group(*[bad.pdf_xref_stream_bomb()] * 10))

    # The memory bound strikes first, unless a loaded machine makes the bomb outlast the time budget.
    if response.status_code == 413:
        problem = assert_problem(response, 413, "inspection_budget_exceeded")
        assert checked_since(alpha, counted) == {"checked": 0, "reused": 0, "over_budget": 1}
    else:
        problem = assert_problem(response, 422, "invalid_document")
        assert "opening the PDF ended the process reading it" in problem["detail"]
        assert checked_since(alpha, counted) == {"checked": 1, "reused": 0, "over_budget": 0}
    assert problem["child_index"] == 0
    assert added_keys(db, before) == set()


def test_two_hundred_copies_of_a_page_are_accepted_after_one_check(alpha):
    counted = checks(alpha)

    group = accepted(alpha.post_json(pdf_group(*[bad.real_pdf(1)] * 200)))

    assert alpha.job(group)["total"] == 200
    assert checked_since(alpha, counted) == {"checked": 1, "reused": 199, "over_budget": 0}
    assert alpha.request("DELETE", f"/jobs/{group}").status_code in (200, 202)  # no need to read 200 blank pages
    assert wait_for_job(alpha.job, group)["status"] == "cancelled"  # its running child ended too: the store is still


def test_a_pdf_slow_to_open_is_refused_when_the_budget_is_spent_and_other_requests_are_answered_first(
    current_deployment, alpha, beta, db
):
    web = current_deployment.web()
    before, counted = ocrgw_keyspace(db), checks(alpha)
    answers: list[tuple[str, requests.Response]] = []  # in the order they arrived
    slow = bad.pdf_without_xref(SLOW_PDF_BYTES)

    def submit_slow() -> None:
        answers.append(("slow", alpha.post_raw(slow, PDF, model="tesseract")))

    submitter = threading.Thread(target=submit_slow)
    submitter.start()
    try:
        # Once the gateway has forked the process that opens the PDF, the request is in its checks.
        inspecting = wait_until(
            lambda: forked_children(gateway_worker(web.pid)), ANSWER_TIMEOUT, interval=0.01,
            message="the gateway never began to open the PDF",
        )  # fmt: skip
        answers.append(("health", beta.request("GET", "/healthz")))
        answers.append(("models", beta.request("GET", "/models")))
    finally:
        submitter.join(ANSWER_TIMEOUT)

    assert [name for name, _ in answers] == ["health", "models", "slow"]
    statuses = {name: response.status_code for name, response in answers}
    assert (statuses["health"], statuses["models"]) == (200, 200)
    problem = assert_problem(dict(answers)["slow"], 413, "inspection_budget_exceeded")
    assert problem["inspection_seconds"] == 1.0
    assert not any(Path(f"/proc/{pid}").exists() for pid in inspecting)  # its opener was killed, not left running
    assert checked_since(alpha, counted)["over_budget"] == 1
    assert added_keys(db, before) == set()


# -- the gateway's processes, from /proc --------------------------------------------------------------


def children_of(pid: int) -> list[int]:
    """Every child of every thread of ``pid`` (a process forked by a thread is listed under that thread)."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            found += [int(child) for child in (task / "children").read_text().split()]
        except FileNotFoundError:  # the thread ended meanwhile
            continue
    return found


def gateway_worker(master: int) -> int:
    """The gunicorn worker of the gateway (it runs one)."""
    workers = children_of(master)
    assert len(workers) == 1, workers
    return workers[0]


def forked_children(worker: int) -> list[int]:
    return children_of(worker)
