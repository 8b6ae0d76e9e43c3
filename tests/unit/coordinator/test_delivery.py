"""One webhook POST: its signature, what each answer means, redirects, timeouts, and the address check."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from standardwebhooks import Webhook
from standardwebhooks.webhooks import WebhookVerificationError

from coordinator import delivery
from coordinator.delivery import AttemptError, answer_to, post
from tests.harness import free_port
from tests.silent_resolver import SilentResolver, resolving_with
from tests.webhook_receiver import Receiver, verify

SECRET = "test-secret-0123456789"
BODY = b'{"id":"abc","status":"completed"}'
TENANT_SECRET = "whsec_" + base64.b64encode(b"t" * 32).decode()
OTHER_SECRET = "whsec_" + base64.b64encode(b"o" * 32).decode()


def test_the_signature_is_the_hmac_sha256_of_the_timestamp_a_dot_and_the_body():
    expected = hmac.new(SECRET.encode(), b"1700000000." + BODY, hashlib.sha256).hexdigest()

    assert delivery.signature(SECRET, BODY, 1700000000) == f"t=1700000000,v1={expected}"


def test_the_headers_carry_the_signatures_the_message_id_and_the_attempt():
    headers = delivery.headers(BODY, 3, SECRET, 1700000000, "msg_abc_0")

    assert headers == {
        "Content-Type": "application/json",
        "User-Agent": delivery.USER_AGENT,
        "X-Ocrgw-Attempt": "3",
        "X-Ocrgw-Signature": delivery.signature(SECRET, BODY, 1700000000),
        "webhook-id": "msg_abc_0",
        "webhook-timestamp": "1700000000",
        "webhook-signature": delivery.standard_signature(SECRET.encode(), "msg_abc_0", 1700000000, BODY),
    }


def test_the_standard_webhooks_signature_is_the_base64_hmac_of_id_timestamp_and_body():
    key = b"k" * 32
    expected = base64.b64encode(hmac.new(key, b"msg_1.1700000000." + BODY, hashlib.sha256).digest()).decode()

    assert delivery.standard_signature(key, "msg_1", 1700000000, BODY) == f"v1,{expected}"


def test_a_tenant_s_whsec_secret_signs_what_the_standard_webhooks_library_verifies():
    headers = delivery.headers(BODY, 1, TENANT_SECRET, int(time.time()), "msg_job_0")

    assert Webhook(TENANT_SECRET).verify(BODY, headers) == json.loads(BODY)
    with pytest.raises(WebhookVerificationError):
        Webhook(OTHER_SECRET).verify(BODY, headers)
    with pytest.raises(WebhookVerificationError):
        Webhook(TENANT_SECRET).verify(BODY.replace(b"completed", b"failed"), headers)


def test_a_secret_that_is_not_whsec_signs_with_its_text_as_the_key():
    headers = delivery.headers(BODY, 1, SECRET, int(time.time()), "msg_job_0")

    Webhook(SECRET.encode()).verify(BODY, headers)


def test_without_a_secret_the_webhook_goes_unsigned():
    headers = delivery.headers(BODY, 1, "", 1700000000, "msg_job_0")

    assert "X-Ocrgw-Signature" not in headers and "webhook-signature" not in headers
    assert (headers["webhook-id"], headers["webhook-timestamp"]) == ("msg_job_0", "1700000000")


@pytest.mark.parametrize(
    ("status", "delivered", "error_code"),
    [
        (200, True, ""),
        (202, True, ""),
        (204, True, ""),
        (301, False, AttemptError.REDIRECT),
        (307, False, AttemptError.REDIRECT),
        (400, False, AttemptError.HTTP_ERROR),
        (410, False, AttemptError.HTTP_ERROR),
        (500, False, AttemptError.HTTP_ERROR),
        (101, False, AttemptError.HTTP_ERROR),
    ],
)
def test_only_a_2xx_delivers(status, delivered, error_code):
    answer = answer_to(status)

    assert (answer.status, answer.delivered, answer.error_code) == (status, delivered, error_code)


def send(url: str, *, allow_private: bool = True, timeout: float = 5.0):
    headers = delivery.headers(BODY, 1, SECRET, 1700000000, "msg_job_0")
    return post(url, BODY, headers, timeout=timeout, allow_private=allow_private)


def test_a_post_reaches_the_receiver_signed_and_its_2xx_is_delivered():
    with Receiver() as receiver:
        answer = send(receiver.url("/hook?x=1"))

        [got] = receiver.received
    assert answer.delivered and answer.status == 200
    assert (got.path, got.body) == ("/hook?x=1", BODY)
    assert got.headers["Content-Type"] == "application/json"
    assert got.headers["Host"] == f"127.0.0.1:{receiver.port}"
    assert got.headers["X-Ocrgw-Signature"].startswith("t=1700000000,v1=")
    assert verify(SECRET, got, tolerance_seconds=float("inf"))


def test_an_error_status_is_a_failed_attempt():
    with Receiver([500]) as receiver:
        answer = send(receiver.url())

    assert (answer.status, answer.error_code, answer.error) == (500, AttemptError.HTTP_ERROR, "answered 500")


def test_a_redirect_is_a_failed_attempt_and_is_not_followed():
    with Receiver([302], redirect_to="/elsewhere") as receiver:
        answer = send(receiver.url("/hook"))

        paths = [r.path for r in receiver.received]
    assert (answer.status, answer.error_code) == (302, AttemptError.REDIRECT)
    assert "/elsewhere" in answer.error
    assert paths == ["/hook"]


def test_a_receiver_that_never_answers_times_out():
    listener = socket.create_server(("127.0.0.1", 0))  # accepts (in its backlog) and never answers
    try:
        answer = send(f"http://127.0.0.1:{listener.getsockname()[1]}/", timeout=0.2)
    finally:
        listener.close()

    assert (answer.status, answer.error_code) == (None, AttemptError.TIMEOUT)


def test_nothing_listening_is_a_failed_connection():
    answer = send(f"http://127.0.0.1:{free_port()}/")

    assert (answer.status, answer.error_code) == (None, AttemptError.CONNECTION_FAILED)


def test_a_failed_connection_to_a_name_does_not_say_which_address_it_resolved_to(monkeypatch):
    port = free_port()
    fake_resolver(monkeypatch, {"hooks.example": ["127.0.0.1"]})

    answer = send(f"http://hooks.example:{port}/")

    assert (answer.status, answer.error_code) == (None, AttemptError.CONNECTION_FAILED)
    assert "127.0.0.1" not in answer.error
    assert "127.0.0.1" in answer.detail  # the deliverer's log keeps it


def test_a_name_that_does_not_resolve_says_so_and_no_more(monkeypatch):
    fake_resolver(monkeypatch, {})

    answer = send("https://nowhere.example/hook")

    assert answer.error == "the callback's host name does not resolve"


def test_a_private_address_is_refused_at_delivery_and_nothing_is_sent():
    with Receiver() as receiver:
        answer = send(receiver.url(), allow_private=False)

        assert receiver.received == []
    assert (answer.status, answer.error_code) == (None, AttemptError.PRIVATE_ADDRESS)
    assert "loopback" in answer.detail


def test_a_name_that_resolves_to_a_private_address_is_refused(monkeypatch):
    resolved = fake_resolver(monkeypatch, {"hooks.example": ["93.184.215.14", "10.0.0.8"]})

    answer = send("https://hooks.example/hook", allow_private=False)

    assert (answer.status, answer.error_code) == (None, AttemptError.PRIVATE_ADDRESS)
    assert resolved == ["hooks.example"]
    # What was refused, not where the name led: a client could otherwise map internal names to addresses.
    assert answer.error == "callback address refused: not a public address"
    assert "10.0.0.8" in answer.detail  # the deliverer's log keeps it, for the operator


def test_the_connection_goes_to_the_address_that_was_checked_under_the_host_s_name(monkeypatch):
    with Receiver() as receiver:
        fake_resolver(monkeypatch, {"hooks.example": ["127.0.0.1"]})
        connected_to = record_connections(monkeypatch)

        answer = send(f"http://hooks.example:{receiver.port}/hook")

        [got] = receiver.received
    assert answer.delivered
    assert connected_to == [("127.0.0.1", receiver.port)]  # no second lookup that could answer otherwise
    assert got.headers["Host"] == f"hooks.example:{receiver.port}"


def test_a_name_that_does_not_resolve_is_a_failed_attempt(monkeypatch):
    fake_resolver(monkeypatch, {})

    answer = send("https://nowhere.example/hook")

    assert (answer.status, answer.error_code) == (None, AttemptError.UNRESOLVABLE)


def test_a_stored_url_the_policy_no_longer_takes_is_a_failed_attempt():
    answer = send("ftp://hooks.example/")

    assert (answer.status, answer.error_code) == (None, AttemptError.INVALID_URL)


# -- helpers ----------------------------------------------------------------------------------------


def fake_resolver(monkeypatch, names: dict[str, list[str]]) -> list[str]:
    """getaddrinfo answering ``names`` (and refusing any other name); returns the names looked up."""
    asked: list[str] = []
    real = socket.getaddrinfo

    def getaddrinfo(host, port, *args, **kwargs):
        if host in names:
            asked.append(host)
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (a, port)) for a in names[host]]
        if host in ("127.0.0.1", "::1"):
            return real(host, port, *args, **kwargs)
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return asked


def record_connections(monkeypatch) -> list[tuple[str, int]]:
    made: list[tuple[str, int]] = []
    real = socket.create_connection
    lock = threading.Lock()

    def create_connection(address, *args, **kwargs):
        with lock:
            made.append(address)
        return real(address, *args, **kwargs)

    monkeypatch.setattr(socket, "create_connection", create_connection)
    return made


# -- the host name's lookup, within the attempt's deadline ------------------------------------------

# Run under the silent resolver: one attempt at a name, its answer as JSON on stdout.
_ATTEMPT_AT_A_NAME = """
import json, sys
from coordinator import delivery
answer = delivery.post(sys.argv[1], b"{}", {}, timeout=float(sys.argv[2]), allow_private=True)
print(json.dumps({"status": answer.status, "error_code": answer.error_code, "error": answer.error}))
"""


def test_a_name_whose_resolver_never_answers_fails_as_a_timeout_at_the_attempt_s_deadline(tmp_path):
    # glibc's own getaddrinfo, in a process whose /etc/resolv.conf names a server that never answers and
    # waits 2 x 30 s for it: only the attempt's deadline (1 s) can end the lookup with a timeout.  Without
    # it the attempt would wait out the resolver and record the name as unresolvable.
    with SilentResolver(tmp_path) as resolver:
        run = subprocess.run(
            resolving_with(
                resolver,
                [sys.executable, "-c", _ATTEMPT_AT_A_NAME, "http://hooks.never-answers.example/hook", "1"],
            ),
            capture_output=True,
            text=True,
            timeout=120,  # bounds a hang only
            cwd=Path(__file__).parents[3],
        )
        asked = resolver.asked

    assert run.returncode == 0, run.stderr
    answer = json.loads(run.stdout)
    assert answer == {
        "status": None,
        "error_code": AttemptError.TIMEOUT,
        "error": "the host name did not resolve within 1 s",
    }
    assert "hooks.never-answers.example" in asked  # the lookup went to the silent server


def _lookup_threads() -> list[threading.Thread]:
    return [thread for thread in threading.enumerate() if thread.name.startswith("webhook-lookup ")]


def test_lookups_that_never_end_hold_at_most_a_tenant_s_share_of_a_bounded_pool(monkeypatch):
    # Each attempt at a name whose resolver never answers leaves its lookup running after the deadline.
    # Without the pool every attempt would leave one more thread behind; with it, a tenant holds at most
    # its share, the process at most its bound, and an attempt past them fails at once as a timeout.
    never = threading.Event()
    real = socket.getaddrinfo

    def getaddrinfo(host, port, *args, **kwargs):
        if host.endswith(".silent.example"):
            never.wait(60)  # until the test is done with it
            raise socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")
        if host == "quick.example":
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", port))]
        return real(host, port, *args, **kwargs)

    pool = delivery.LookupThreads(size=3, per_tenant=2)
    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    monkeypatch.setattr(delivery, "LOOKUPS", pool)
    headers = delivery.headers(BODY, 1, SECRET, 1700000000, "msg_job_0")

    def attempt(tenant: str, host: str = "hooks.silent.example", timeout: float = 0.05):
        return post(f"http://{host}/hook", BODY, headers, timeout=timeout, allow_private=True, tenant=tenant)

    earlier = set(_lookup_threads())
    try:
        alpha = [attempt("alpha") for _ in range(6)]
        beta = [attempt("beta") for _ in range(3)]
        held = (pool.running("alpha"), pool.running("beta"), pool.running(), len(set(_lookup_threads()) - earlier))
        with Receiver() as receiver:
            # A name that resolves still waits for a slot: none is free in the process.
            busy = attempt("gamma", f"quick.example:{receiver.port}", timeout=5)
    finally:
        never.set()
    for thread in set(_lookup_threads()) - earlier:
        thread.join(10)

    # Two of alpha's lookups ran into the deadline and hold their threads; the four after them were refused.
    assert [a.error for a in alpha] == [
        "the host name did not resolve within 0.05 s",
        "the host name did not resolve within 0.05 s",
        *[delivery.LOOKUPS_BUSY_ERROR] * 4,
    ]
    assert {a.error_code for a in alpha + beta + [busy]} == {AttemptError.TIMEOUT}
    assert [a.error for a in beta] == [
        "the host name did not resolve within 0.05 s",
        *[delivery.LOOKUPS_BUSY_ERROR] * 2,  # the process's bound, 3, is reached
    ]
    assert held == (2, 1, 3, 3)
    assert busy.error == delivery.LOOKUPS_BUSY_ERROR and "3 lookups are still running" in busy.detail
    # Once the resolver has given up, every slot is free again and a name that resolves is delivered.
    assert (pool.running(), set(_lookup_threads()) - earlier) == (0, set())
    with Receiver() as receiver:
        assert attempt("alpha", f"quick.example:{receiver.port}", timeout=5).delivered


def test_a_lookup_past_the_deadline_is_a_timeout_and_one_that_answers_in_time_is_used(monkeypatch):
    release = threading.Event()
    real = socket.getaddrinfo

    def getaddrinfo(host, port, *args, **kwargs):
        if host == "slow.example":
            release.wait(30)  # answers only once the test is done with it
            raise socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")
        return (
            [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", port))]
            if host == "quick.example"
            else real(host, port, *args, **kwargs)
        )

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    try:
        with Receiver() as receiver:
            late = send("http://slow.example/hook", timeout=0.3)
            quick = send(f"http://quick.example:{receiver.port}/hook", timeout=5)
            [got] = receiver.received
    finally:
        release.set()

    assert (late.status, late.error_code) == (None, AttemptError.TIMEOUT)
    assert late.error == "the host name did not resolve within 0.3 s"
    assert "slow.example" in late.detail
    assert quick.delivered and got.headers["Host"] == f"quick.example:{receiver.port}"
