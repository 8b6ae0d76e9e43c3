"""Webhooks when things go wrong, on the real stack: a name server that never answers, a deliverer killed.

The deployment is this module's own (a gateway, a worker, the coordinator and
beat), and its webhook deliverer, the Procfile's ``webhooks`` process, runs
in a mount namespace of its own whose ``/etc/resolv.conf`` names a name
server that takes queries and never answers (``tests.silent_resolver``),
waiting 2 x 30 s for it as glibc is told to.  That is the deliverer's real
code path: Celery's thread pool, ``getaddrinfo`` of the system's C library
reading the system's files, the store's claims and records; nothing in the
process is replaced.  Receivers on 127.0.0.1 need no lookup, so the same
deliverer delivers to them meanwhile.

The deliverer can be killed (SIGKILL, its whole process group) and started
again; an attempt it had sent but not recorded is claimed again once its
claim runs out (``OCRGW_WEBHOOK_TIMEOUT`` + ``OCRGW_WEBHOOK_CLAIM_MARGIN``,
7 s here) and sent again, with the same ``webhook-id``.
"""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from standardwebhooks import Webhook

from tests.harness import wait_until
from tests.integration.fanout_support import Gateway, echo_child, group_body
from tests.silent_resolver import SilentResolver, resolving_with
from tests.webhook_receiver import Received, Receiver, verify

pytestmark = pytest.mark.integration

KEY = "gamma-webhook-faults-key-5c1d"
SECRET = "whsec_" + base64.b64encode(b"gamma's webhook secret, 32 bytes").decode()
TIMEOUT_SECONDS = 5
WAIT = 90.0  # bounds a hang; asserts no speed


@pytest.fixture(scope="module")
def resolver(tmp_path_factory) -> Iterator[SilentResolver]:
    with SilentResolver(tmp_path_factory.mktemp("resolver")) as silent:
        yield silent


@pytest.fixture(scope="module")
def env(tmp_path_factory) -> dict[str, str]:
    secrets = tmp_path_factory.mktemp("webhook-faults") / "webhook-secrets"
    secrets.write_text(f"gamma:{SECRET}\n")
    return {
        "OCRGW_SWEEP_INTERVAL": "0.2",
        "OCRGW_API_KEYS": f"gamma:{KEY}",
        "OCRGW_WEBHOOK_SECRETS_FILE": str(secrets),
        "OCRGW_WEBHOOK_ALLOW_PRIVATE": "1",
        "OCRGW_WEBHOOK_BACKOFF": "0.5",
        "OCRGW_WEBHOOK_TIMEOUT": str(TIMEOUT_SECONDS),
        "OCRGW_WEBHOOK_CLAIM_MARGIN": "2",
        "OCRGW_WEBHOOK_TENANT_CONCURRENCY": "2",
    }


class Deliverers:
    """The deployment's one webhook deliverer at a time, always under the silent resolver."""

    def __init__(self, procs, stack, env, resolver):
        self.procs, self.stack, self.env, self.resolver = procs, stack, env, resolver
        self.current = self.start()

    def start(self):
        return self.procs.webhooks(db=self.stack.db, env=self.env, wrapped_in=resolving_with(self.resolver, []))

    def kill_and_restart(self) -> None:
        self.current.kill()
        self.current = self.start()


@pytest.fixture(scope="module")
def deployment(stack_factory, env):
    """Without a deliverer of its own: ``deliverers`` runs it, under the silent resolver."""
    return stack_factory(env=env, concurrency=2)


@pytest.fixture(scope="module")
def deliverers(deployment, module_procs, env, resolver) -> Deliverers:
    return Deliverers(module_procs, deployment, env, resolver)


@pytest.fixture
def gateway(current_deployment) -> Iterator[Gateway]:
    with Gateway(current_deployment.web().base_url) as client:
        client.http.headers["Authorization"] = f"Bearer {KEY}"
        yield client


def submitted(gateway: Gateway, body: dict) -> str:
    resp = gateway.post_json(body)
    assert resp.status_code == 202, resp.text
    return resp.json()["id"]


def webhook_events(gateway: Gateway, job_id: str) -> list[dict]:
    return [e for e in gateway.events(job_id) if e["operation"] == "webhook" and e["job_id"] == job_id]


def test_a_callback_whose_name_server_never_answers_fails_as_a_timeout_and_others_are_delivered_meanwhile(
    gateway, deliverers, resolver
):
    host = "ocr-done.never-answers.example"
    with Receiver() as receiver:
        stuck = submitted(gateway, {**echo_child("nowhere"), "callback_url": f"http://{host}/hook"})
        wait_until(
            lambda: webhook_events(gateway, stuck) or None,
            WAIT,
            message=lambda: f"no attempt recorded: {gateway.events(stuck)}",
        )
        reachable = submitted(gateway, {**echo_child("somewhere"), "callback_url": receiver.url("/ok")})
        [got] = receiver.wait_for("/ok", 1, WAIT)
        first, second = wait_until(
            lambda: webhook_events(gateway, stuck)[:2] if len(webhook_events(gateway, stuck)) >= 2 else None,
            WAIT,
            message=lambda: f"no second attempt recorded: {gateway.events(stuck)}",
        )

    # The lookup went to the name server, which never answered; the attempt's deadline ended it, not glibc's
    # 2 x 30 s (which would have recorded unresolvable), and it is tried again as any failed attempt is.
    assert host in resolver.asked
    assert (first["attempt"], first["outcome"], first["error_code"], first["response_status"]) == (
        1,
        "retrying",
        "timeout",
        None,
    )
    assert first["error"] == f"the host name did not resolve within {TIMEOUT_SECONDS} s"
    assert (second["attempt"], second["error_code"]) == (2, "timeout")
    assert json.loads(got.body)["id"] == reachable and verify(SECRET, got)


def delivered(gateway: Gateway, job_id: str) -> Callable[[], bool]:
    """Whether the job's webhook was delivered, asked each time the result is called."""
    return lambda: any(e["outcome"] == "delivered" for e in webhook_events(gateway, job_id))


class HoldingReceiver:
    """Records every request and answers 200 only once opened; until then each request is held unanswered."""

    def __init__(self):
        self.received: list[Received] = []
        self.opened = threading.Event()
        self._changed = threading.Condition()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 (http.server's naming)
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with receiver._changed:
                    receiver.received.append(Received(self.path, dict(self.headers.items()), body, 0.0))
                    receiver._changed.notify_all()
                receiver.opened.wait(WAIT)
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/pages"
        threading.Thread(target=self.server.serve_forever, name="holding-receiver", daemon=True).start()

    def close(self) -> None:
        self.opened.set()
        self.server.shutdown()
        self.server.server_close()

    def wait_for(self, count: int) -> list[Received]:
        with self._changed:
            if not self._changed.wait_for(lambda: len(self.received) >= count, WAIT):
                raise AssertionError(f"{len(self.received)} of {count} webhooks arrived")
            return list(self.received)


def test_a_deliverer_killed_mid_group_leaves_each_child_s_webhook_delivered_once_on_record(gateway, deliverers):
    receiver = HoldingReceiver()
    try:
        body = group_body([echo_child(f"part {i}") for i in range(6)], max_parallel=0)
        body["fanout"].update(callback_url=receiver.url, webhook_events=["child.completed", "job.completed"])
        parent = submitted(gateway, body)
        jobs = [parent, *(f"{parent}-{i}" for i in range(6))]

        # The tenant's share (2) of attempts is sent and held unanswered: the deliverer dies holding them.
        held = receiver.wait_for(2)
        deliverers.kill_and_restart()
        receiver.opened.set()
        for job_id in jobs:
            wait_until(delivered(gateway, job_id), WAIT, message=f"the webhook of {job_id} not delivered")
        received = list(receiver.received)
    finally:
        receiver.close()

    views = {json.loads(r.body)["id"]: r for r in received}
    assert sorted(views) == sorted(jobs)  # every child's view and the group's arrived
    for request in received:
        Webhook(SECRET).verify(request.body, request.headers)
    # Each job's webhook is delivered once on record; a repeat is only one the killed deliverer had sent,
    # sent again with its webhook-id, so a receiver that drops seen ids takes each once.
    for job_id in jobs:
        outcomes = [e["outcome"] for e in webhook_events(gateway, job_id)]
        assert outcomes.count("delivered") == 1, (job_id, outcomes)
    ids_of: dict[str, set[str]] = {}
    for request in received:
        ids_of.setdefault(json.loads(request.body)["id"], set()).add(request.headers["webhook-id"])
    assert all(len(ids) == 1 for ids in ids_of.values())
    repeated = sorted(job_id for job_id in views if sum(json.loads(r.body)["id"] == job_id for r in received) > 1)
    assert repeated == sorted(json.loads(r.body)["id"] for r in held[:2])
