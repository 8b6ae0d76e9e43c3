"""JSON logs end to end: every process of the Procfile writes one JSON object per line, about the job it
names, and none of them ever shows a document, a result, a key or the webhook secret.

The stack runs with ``OCRGW_LOG_FORMAT=json`` (gateway, worker, coordinator,
beat and webhook deliverer, as the Procfile starts them), kept slots off so
that every child starts from a wake-up of its own.  A wake-up's task lines
name a model, not a job: the worker's line about each attempt names the job
it ran.  A group with a failing child
and a webhook, and a single job sent with an ``Authorization`` header, run to
their end; then every line of every process's output is read.
"""

from __future__ import annotations

import base64
import json
import re
import uuid

import pytest

from tests.harness import wait_until
from tests.integration.fanout_support import Gateway, echo_child
from tests.integration.observability_support import WAIT, ProcfileStack
from tests.integration.polling import wait_for_job
from tests.webhook_receiver import Receiver

pytestmark = pytest.mark.integration

SECRET = "a-webhook-secret-nobody-may-read"
API_KEY = "ocrgw-test-key-" + uuid.uuid4().hex
MARKER = "PAYLOAD-" + uuid.uuid4().hex  # in every document, so in every result too
JOB_ID = re.compile(r"[0-9a-f]{32}(?:-[0-9]{1,6})?")


@pytest.fixture(scope="module")
def procfile_stack(module_procs):
    env = {
        "OCRGW_LOG_FORMAT": "json",
        "OCRGW_SWEEP_INTERVAL": "0.2",
        "OCRGW_KEEP_SLOT_SECONDS": "0",
        "OCRGW_WEBHOOK_SECRET": SECRET,
        "OCRGW_WEBHOOK_ALLOW_PRIVATE": "1",
    }
    stack = ProcfileStack(module_procs, module_procs.fresh_db(), env)
    for name in ("worker", "coordinator", "beat", "webhooks"):
        stack.celery(name)
    stack.web(workers=2, extra_args=["--access-logfile", "-"])
    return stack.ready()


@pytest.fixture(scope="module")
def ran(procfile_stack):
    """A group (one child failing, its webhook delivered) and a single job sent with a key, both ended."""
    children = [echo_child(f"{MARKER} child {i}", fail=i == 1) for i in range(4)]
    with Receiver() as receiver, Gateway(procfile_stack.procs["web"].base_url) as gateway:
        body = {"fanout": {"max_parallel": 2, "children": children, "callback_url": receiver.url("/group")}}
        parent_id = gateway.post_json(body).json()["id"]
        single = gateway.post_json(
            echo_child(f"{MARKER} single"), headers={"Authorization": f"Bearer {API_KEY}", "Idempotency-Key": "k-1"}
        ).json()["id"]
        group_view = wait_for_job(gateway.job, parent_id, timeout=WAIT)
        wait_for_job(gateway.job, single, timeout=WAIT)
        receiver.wait_for("/group", 1, WAIT)
        gateway.events(parent_id)
        # The deliverer writes its line once it has recorded the answer.
        wait_until(lambda: parent_id in procfile_stack.logs()["webhooks"], WAIT, message="the deliverer never logged")
    assert group_view["status"] == "failed"
    return {"parent": parent_id, "children": [c["id"] for c in group_view["children"]], "single": single}


def records(text: str) -> list[dict]:
    out = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            raise AssertionError(f"line {number} is not JSON: {line!r}") from None
        assert isinstance(record, dict) and {"time", "level", "logger", "message"} <= set(record), line
        out.append(record)
    return out


def test_every_line_of_every_process_is_a_json_record(procfile_stack, ran):
    for name, text in procfile_stack.logs().items():
        assert records(text), f"{name} wrote nothing"


def test_a_line_about_a_job_carries_its_id_and_its_parent_s(procfile_stack, ran):
    logs = {name: records(text) for name, text in procfile_stack.logs().items()}
    parent, children = ran["parent"], ran["children"]

    # Every line that names a job in its message carries that job (or, for a task line, its own).
    for name, lines in logs.items():
        for record in lines:
            named = JOB_ID.findall(record["message"])
            if named and "job_id" in record:
                assert record["job_id"] in named, (name, record)
            if "parent_id" in record:
                assert record["job_id"].startswith(record["parent_id"] + "-"), (name, record)

    worker_jobs = {(r["job_id"], r.get("parent_id")) for r in logs["worker"] if "job_id" in r}
    assert {(c, parent) for c in children} <= worker_jobs  # each child's attempt, whichever task ran it
    [accepted] = [r for r in logs["web"] if r["message"].startswith(f"accepted {parent}")]
    assert accepted["job_id"] == parent and "parent_id" not in accepted
    polls = [r for r in logs["web"] if r["logger"] == "gunicorn.access" and f"/jobs/{parent}" in r["message"]]
    assert polls and all(r["job_id"] == parent for r in polls)
    delivered = [r for r in logs["webhooks"] if "delivered" in r["message"]]
    assert delivered and all(r["job_id"] == parent for r in delivered)


def test_no_document_result_key_or_secret_appears_in_any_log(procfile_stack, ran):
    payloads = [f"{MARKER} child {i}" for i in range(4)] + [f"{MARKER} single"]
    forbidden = [MARKER, SECRET, API_KEY] + [base64.b64encode(p.encode()).decode() for p in payloads]

    for name, text in procfile_stack.logs().items():
        for secret in forbidden:
            assert secret not in text, f"{name}'s log shows {secret[:24]}..."
