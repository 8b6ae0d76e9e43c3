"""A job's live stream on the real stack: gunicorn (its gthread worker handing streams to its hub), a Celery
worker, the coordinator and beat, Redis; two tenants with keys.

A client watching a group of slow echo children leaves mid-group and comes
back with ``Last-Event-ID``: the audit events of its two streams are the
group's events as the JSON list gives them, none twice, none missing.  More
streams than gunicorn has threads stay open while the gateway answers other
requests.  The limits answer ``429``; a stream ends at its maximum duration
and the client carries on from there; ``ocrgw submit --wait`` follows the
stream rather than polling.  A ``Version: 2`` header does not keep a
stream in a request thread.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator

import pytest
import requests

from cli.event_stream import Event, follow, lines, parse
from tests.harness import ROOT, wait_until
from tests.integration.live import ECHO_TIMEOUT, Api, accepted, assert_problem, b64

pytestmark = pytest.mark.integration

ALPHA_KEY = "alpha-stream-Zq81xW3"
BETA_KEY = "beta-stream-Pm27vK0"
PER_TENANT = 12
PER_PROCESS = 20
MAX_SECONDS = 3
HEARTBEAT_SECONDS = 0.5
ENV = {
    "OCRGW_API_KEYS": f"alpha:{ALPHA_KEY},beta:{BETA_KEY}",
    "OCRGW_STREAM_MAX_PER_TENANT": str(PER_TENANT),
    "OCRGW_STREAM_MAX_PER_PROCESS": str(PER_PROCESS),
    "OCRGW_STREAM_MAX_SECONDS": str(MAX_SECONDS),
    "OCRGW_STREAM_HEARTBEAT_SECONDS": str(HEARTBEAT_SECONDS),
    "OCRGW_STREAM_POLL_SECONDS": "0.1",
}
STREAM = {"Accept": "text/event-stream"}


@pytest.fixture(scope="module")
def deployment(stack_factory):
    return stack_factory(env=ENV, concurrency=2)


def as_tenant(base_url: str, key: str) -> Api:
    api = Api(base_url, timeout=ECHO_TIMEOUT)
    api.http.headers["Authorization"] = f"Bearer {key}"
    return api


@pytest.fixture
def alpha(current_deployment) -> Api:
    return as_tenant(current_deployment.web().base_url, ALPHA_KEY)


@pytest.fixture
def beta(current_deployment) -> Api:
    return as_tenant(current_deployment.web().base_url, BETA_KEY)


def slow_echo(text: str, delay_ms: int) -> dict:
    return {"model": "echo", "content_type": "text/plain", "payload": b64(text), "options": {"delay_ms": delay_ms}}


def slow_group(api: Api, n: int, delay_ms: int, max_parallel: int = 2) -> str:
    children = [slow_echo(f"child {i}", delay_ms) for i in range(n)]
    return accepted(api.post_json({"fanout": {"max_parallel": max_parallel, "children": children}}))


def open_stream(
    api: Api, job_id: str, last_event_id: str | None = None, more: dict[str, str] | None = None
) -> requests.Response:
    headers = {**STREAM, **({"Last-Event-ID": last_event_id} if last_event_id else {}), **(more or {})}
    response = api.http.get(api.url(f"/jobs/{job_id}/events"), headers=headers, stream=True, timeout=ECHO_TIMEOUT)
    return response


def lines_of(response: requests.Response) -> Iterator[str]:
    assert response.status_code == 200, response.text
    assert response.headers["Content-Type"].startswith("text/event-stream")
    yield from lines(response.raw)


def audit(events: list[Event]) -> list[Event]:
    return [e for e in events if e.event == "audit"]


def test_a_client_that_leaves_mid_group_and_resumes_gets_every_event_once(alpha):
    group = slow_group(alpha, 20, 250)

    # Given a client that read part of the group's stream and left.
    first: list[Event] = []
    with open_stream(alpha, group) as response:
        for event in parse(lines_of(response)):
            first.append(event)
            if len(audit(first)) == 5:
                break
    assert first[-1].event == "audit"

    # When it comes back from the last id it read (again whenever a stream ends before the group).
    ids = iter([first[-1].id])
    rest = list(follow(lambda last: lines_of(open_stream(alpha, group, last or next(ids)))))

    # Then its audit events are the group's, each once, in order; each child was seen starting, then ending.
    listed = alpha.events(group)
    seen = audit(first) + audit(rest)
    assert [e.data for e in seen] == listed
    assert [e.id for e in seen] == [e["id"] for e in listed]
    assert len({e.id for e in seen}) == len(seen) == 21
    assert rest[-1].event == "end" and rest[-1].data == {"job_id": group, "reason": "terminal", "status": "completed"}
    statuses: dict[int, list[str]] = {}
    for event in first + rest:
        if event.event == "child":
            statuses.setdefault(event.data["index"], []).append(event.data["status"])
    assert sorted(statuses) == list(range(20))
    for index, said in statuses.items():
        assert said[-1] == "completed", (index, said)
        assert said.count("completed") == 1, (index, said)
    # Starts are seen, not only ends.
    assert sum("processing" in said for said in statuses.values()) >= 10, sorted(statuses.items())
    progress = [e.data for e in first + rest if e.event == "progress"]
    assert progress[-1]["counts"]["completed"] == 20 and progress[-1]["status"] == "completed"


def test_more_streams_than_threads_stay_open_while_the_gateway_answers_others(alpha, beta, current_deployment):
    group = slow_group(beta, 4, 2000, max_parallel=1)
    streams = [open_stream(alpha, group) for _ in range(0)]  # alpha cannot see beta's group
    streams = [open_stream(beta, group) for _ in range(PER_TENANT)]  # three times gunicorn's four threads
    try:
        for response in streams:
            assert response.status_code == 200
            assert next(parse(lines_of(response))).event == "progress"

        # Every stream is open and waits; the gateway still answers, each request in a thread of its own.
        assert alpha.request("GET", "/healthz").status_code == 200
        single = accepted(alpha.post_json(slow_echo("meanwhile", 0)))
        assert alpha.job(single)["id"] == single
        assert_problem(open_stream(alpha, group), 404, "job_not_found")
    finally:
        for response in streams:
            response.close()


def test_a_version_header_is_a_header_and_its_streams_are_handed_off_like_the_others(alpha, beta):
    # HTTP/1.1 gives "Version: 2" to the app as HTTP_VERSION, the name gunicorn's HTTP/2 path sets: it must not
    # keep the stream in a request thread.
    group = slow_group(beta, 4, 2000, max_parallel=1)
    streams = [open_stream(beta, group, more={"Version": "2"}) for _ in range(PER_TENANT)]
    try:
        for response in streams:
            assert response.status_code == 200
            # The hub's streams are close-delimited; one a request thread writes is chunked by gunicorn.
            assert "Transfer-Encoding" not in response.headers and response.headers["Connection"] == "close"
            assert next(parse(lines_of(response))).event == "progress"
        assert alpha.request("GET", "/healthz").status_code == 200
    finally:
        for response in streams:
            response.close()


def test_streams_past_a_tenant_s_limit_or_the_process_s_are_429(alpha, beta):
    group = slow_group(alpha, 2, 3000, max_parallel=1)
    alpha_streams = [open_stream(alpha, group) for _ in range(PER_TENANT)]
    beta_group = slow_group(beta, 1, 3000)
    beta_streams: list[requests.Response] = []
    try:
        assert all(r.status_code == 200 for r in alpha_streams)
        refused = open_stream(alpha, group)
        assert assert_problem(refused, 429, "too_many_streams")["limit"] == "tenant"
        assert int(refused.headers["Retry-After"]) > 0

        beta_streams = [open_stream(beta, beta_group) for _ in range(PER_PROCESS - PER_TENANT)]
        assert all(r.status_code == 200 for r in beta_streams)
        assert assert_problem(open_stream(beta, beta_group), 429, "too_many_streams")["limit"] == "process"

        # A stream its client closed gives its place back.
        alpha_streams.pop().close()
        reopened = wait_until(
            lambda: (r := open_stream(beta, beta_group)).status_code == 200 and r, timeout=10, message="no place"
        )
        beta_streams.append(reopened)
    finally:
        for response in alpha_streams + beta_streams:
            response.close()


def test_a_stream_ends_at_its_maximum_duration_and_the_client_resumes_from_there(alpha):
    job = accepted(alpha.post_json(slow_echo("a long one", (MAX_SECONDS + 2) * 1000)))

    with open_stream(alpha, job) as response:
        lines = list(lines_of(response))  # the gateway ends it
    first = list(parse(lines))
    assert first[-1].event == "end" and first[-1].data["reason"] == "max_duration"
    assert ": heartbeat" in lines  # a quiet stream said it was alive meanwhile

    rest = list(follow(lambda last: lines_of(open_stream(alpha, job, last or first[-1].id))))

    assert rest[-1].data == {"job_id": job, "reason": "terminal", "status": "completed"}
    assert [e.data for e in audit(first) + audit(rest)] == alpha.events(job)


def test_a_bad_last_event_id_is_400(alpha):
    job = accepted(alpha.post_json(slow_echo("x", 0)))
    assert_problem(open_stream(alpha, job, "not-an-id"), 400, "invalid_last_event_id")


def test_submit_wait_follows_the_stream(alpha, current_deployment, tmp_path):
    files = []
    for i in range(3):
        path = tmp_path / f"part{i}.txt"
        path.write_text(f"part {i}")
        files.append(str(path))
    web = current_deployment.web()
    env = {"NO_PROXY": "127.0.0.1,localhost", "OCRGW_URL": web.base_url, "OCRGW_API_KEY": ALPHA_KEY}
    import os

    done = subprocess.run(
        [sys.executable, "-m", "cli", "submit", *files, "--model", "echo", "--max-parallel", "1", "--wait"],
        cwd=ROOT,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=ECHO_TIMEOUT,
    )

    assert done.returncode == 0, done.stderr
    group = done.stdout.strip().splitlines()[0]
    assert done.stderr.splitlines()[-1].startswith("completed 3/3")
    access = web.log_text()
    # One stream, or more when this deployment's 3 s maximum ends one first and the CLI resumes it.
    assert access.count(f"GET /jobs/{group}/events") >= 1
    assert access.count(f"GET /jobs/{group}") == access.count(f"GET /jobs/{group}/events") + 1
    assert access.count(f"GET /jobs/{group}?children=none") == 1  # the view once it ended: no polls


def test_a_gateway_that_stops_ends_its_streams_so_that_clients_resume_elsewhere(alpha, current_deployment, procs):
    # No drain window, and no stream ends at its maximum duration first.
    web = procs.web(db=current_deployment.db, env={**ENV, "OCRGW_DRAIN_SECONDS": "0", "OCRGW_STREAM_MAX_SECONDS": "60"})
    stopping = as_tenant(web.base_url, ALPHA_KEY)
    job = accepted(alpha.post_json(slow_echo("outlives a gateway", 4000)))

    with open_stream(stopping, job) as response:
        events = parse(lines_of(response))
        assert next(events).event == "progress"
        web.terminate()  # gunicorn's graceful stop
        rest = list(events)

    assert rest[-1].event == "end" and rest[-1].data["reason"] == "shutdown"
    assert web.wait(timeout=60) == 0
    resumed = list(follow(lambda last: lines_of(open_stream(alpha, job, last or rest[-1].id))))
    assert resumed[-1].data["reason"] == "terminal"
    assert [e.data for e in audit(rest) + audit(resumed)] == alpha.events(job)


def test_a_tenant_s_limit_holds_across_gateways(alpha, current_deployment, procs):
    other = as_tenant(procs.web(db=current_deployment.db, env=ENV).base_url, ALPHA_KEY)
    group = slow_group(alpha, 2, 3000, max_parallel=1)
    half = PER_TENANT // 2
    streams = [open_stream(alpha, group) for _ in range(half)] + [open_stream(other, group) for _ in range(half)]
    try:
        assert all(r.status_code == 200 for r in streams)
        for gateway in (alpha, other):
            assert assert_problem(open_stream(gateway, group), 429, "too_many_streams")["limit"] == "tenant"

        streams.pop(0).close()  # on the first gateway: the second may open one
        reopened = wait_until(
            lambda: (r := open_stream(other, group)).status_code == 200 and r, timeout=10, message="no place"
        )
        streams.append(reopened)
    finally:
        for response in streams:
            response.close()
