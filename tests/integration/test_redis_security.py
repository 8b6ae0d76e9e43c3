"""Redis hygiene against real processes: a password, TLS, and the retention of ended jobs.

Every process reaches Redis through ``REDIS_URL`` alone: a password in the
URL (``redis://:<password>@host:port/0``) and TLS (``rediss://...?
ssl_cert_reqs=required&ssl_ca_certs=<CA file>``) reach the store's client,
Celery's broker and the coordinator's sweep alike.  A process that Redis
refuses (a wrong password, a certificate it cannot verify) stops at start
with one line.  Each deployment here has a redis-server of its own, with
``requirepass`` (and TLS from a CA made in the test), and a retention of a
minute, the shortest there is: an ended group must then vanish whole.
"""

from __future__ import annotations

import os
import subprocess
import sys
from typing import cast

import pytest
import redis

from tests.harness import ROOT, ProcGroup, RedisServer, TlsFiles, _gunicorn_isolation_args, wait_until
from tests.integration.fanout_support import Gateway, echo_child, echo_children, recorded_micros, submit_group
from tests.integration.polling import wait_for_job
from tests.keyspace import keys

pytestmark = pytest.mark.integration

PASSWORD = "s3cret:with@odd/chars"  # quoted in the URL, as any password with such characters must be
RESULT_TTL = 60
ENV = {"OCRGW_SWEEP_INTERVAL": "0.2", "OCRGW_RESULT_TTL": str(RESULT_TTL), "OCRGW_IDEMPOTENCY_TTL": "60"}
WAIT = 60.0  # bounds a hang; asserts no speed
START_TIMEOUT = 120  # bounds a process that would wrongly go on running

# The Procfile's processes, as a process that is refused runs them (no readiness to wait for).
COMMANDS = {
    "worker": ["-m", "celery", "-A", "workers", "worker", "--pool", "solo", "--without-gossip", "--without-mingle"],
    "coordinator": ["-m", "celery", "-A", "coordinator", "worker", "--pool", "solo", "--queues", "coordinator"],
    "beat": ["-m", "celery", "-A", "coordinator", "beat", "--schedule", "{tmp}/beat-schedule"],
    "webhooks": ["-m", "celery", "-A", "coordinator", "worker", "--pool", "threads", "--queues", "webhooks"],
    "web": ["-m", "gunicorn", "--bind", "127.0.0.1:0", "--workers", "1", "gateway:create_app()"],
}


def secured_deployment(redis_server: RedisServer, work, **security) -> tuple[ProcGroup, RedisServer, Gateway]:
    """A redis-server of its own (with ``security``: password, tls) and the whole stack on it."""
    server: RedisServer | None = None

    def started_server() -> RedisServer:
        assert server is not None, "the group reaches its redis only once it has started"
        return server

    group = ProcGroup(work, redis=started_server, label=work.name)
    server = RedisServer(group, work / "redis", binary=redis_server.binary, **security).start()
    stack = group.stack(db=1, env=ENV, concurrency=2, web=True)
    return group, server, Gateway(stack.web().base_url)


@pytest.fixture(scope="module")
def with_password(redis_server, tmp_path_factory):
    # The session's redis_server only decides whether redis-server is there (skip, or fail in CI).
    group, server, gateway = secured_deployment(redis_server, tmp_path_factory.mktemp("password"), password=PASSWORD)
    try:
        yield server, gateway
    finally:
        gateway.close()
        group.close()


@pytest.fixture(scope="module")
def with_tls(redis_server, tmp_path_factory):
    work = tmp_path_factory.mktemp("tls")
    tls = TlsFiles.make(work / "tls")
    group, server, gateway = secured_deployment(redis_server, work, password=PASSWORD, tls=tls)
    try:
        yield server, gateway
    finally:
        gateway.close()
        group.close()


def run_refused(role: str, redis_url: str, tmp_path) -> str:
    """Starts the ``role`` process with ``redis_url``; asserts it stops, and returns what it printed."""
    argv = [sys.executable, *(a.replace("{tmp}", str(tmp_path)) for a in COMMANDS[role])]
    if role == "web":
        argv[-1:-1] = _gunicorn_isolation_args()
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "REDIS_URL": redis_url}
    done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=START_TIMEOUT)
    output = done.stdout + done.stderr
    assert done.returncode != 0, output
    return output


def group_keys_and_entries(client: redis.Redis, root_id: str) -> list[str]:
    """Every key that names ``root_id`` (its children's ids start with it), and every index entry of them."""
    found = [k.decode() for k in client.scan_iter(count=1000) if root_id in k.decode()]
    for index in client.scan_iter(match=f"{keys.NAMESPACE}:*", count=1000, _type="zset"):
        # Members without scores, as bytes: the client does not decode, which redis-py's types cannot know.
        members = cast(list[bytes], client.zrange(index, 0, -1))
        found += [f"{index.decode()} -> {m.decode()}" for m in members if root_id in m.decode()]
    return found


def test_a_password_protected_redis_runs_jobs_end_to_end_and_refuses_clients_without_it(with_password):
    server, gateway = with_password
    single = gateway.post_json(echo_child("hello through a password"))
    assert single.status_code == 202, single.text
    parent = submit_group(gateway, echo_children(5), max_parallel=2).json()["id"]

    assert wait_for_job(gateway.job, single.json()["id"], timeout=WAIT)["result"]["text"] == "hello through a password"
    view = wait_for_job(gateway.job, parent, timeout=WAIT)
    assert view["status"] == "completed" and view["counts"]["completed"] == 5
    with pytest.raises(redis.AuthenticationError):
        redis.Redis(host=server.host, port=server.port).ping()


def test_an_ended_group_is_deleted_whole_once_its_retention_has_passed(with_password):
    server, gateway = with_password
    children = [*echo_children(3), echo_child("refused", fail=True)]
    parent = submit_group(gateway, children, max_parallel=2, idempotency_key="retention-group").json()["id"]
    ended = wait_for_job(gateway.job, parent, timeout=WAIT)
    assert ended["status"] == "failed"
    with server.client(1) as client:
        assert len(group_keys_and_entries(client, parent)) > 5
        # Polled for the recorded fact; the bound only ends a hang (the sweep runs every 0.2 s).
        wait_until(
            lambda: not client.exists(keys.job(parent)),
            RESULT_TTL + 120,
            interval=0.2,
            message=f"group {parent} still stored",
        )
        seconds, micro = client.time()
        assert group_keys_and_entries(client, parent) == []
    # Not before its time: Redis's clock when it was found gone, against the group's recorded end.
    assert seconds * 1_000_000 + micro >= recorded_micros(ended["finished_at"]) + RESULT_TTL * 1_000_000
    assert gateway.http.get(f"{gateway.base_url}/jobs/{parent}", timeout=30).status_code == 404
    listed = gateway.get("/jobs", {"kind": "parent", "limit": 200})["jobs"]
    assert parent not in {job["id"] for job in listed}


@pytest.mark.parametrize("role", sorted(COMMANDS))
def test_a_wrong_password_stops_each_process_at_start_with_one_line(role, with_password, tmp_path):
    server, _ = with_password
    wrong = f"redis://:nope@127.0.0.1:{server.port}/1"

    output = run_refused(role, wrong, tmp_path)

    line = f"ocrgw: REDIS_URL: Redis at 127.0.0.1:{server.port} refused the connection's credentials"
    assert output.count(line) == 1, output
    assert "Traceback" not in output, output


def test_no_password_at_all_stops_a_process_just_as_clearly(with_password, tmp_path):
    server, _ = with_password
    output = run_refused("worker", f"redis://127.0.0.1:{server.port}/1", tmp_path)
    assert f"ocrgw: REDIS_URL: Redis at 127.0.0.1:{server.port} refused the connection's credentials" in output
    assert "Traceback" not in output, output


def test_tls_with_a_password_runs_a_group_end_to_end(with_tls):
    server, gateway = with_tls
    assert server.url.startswith("rediss://")
    parent = submit_group(gateway, echo_children(4), max_parallel=2).json()["id"]
    view = wait_for_job(gateway.job, parent, timeout=WAIT)
    assert view["status"] == "completed" and [c["status"] for c in view["children"]] == ["completed"] * 4
    with pytest.raises(redis.ConnectionError):  # the port speaks TLS only
        redis.Redis(host=server.host, port=server.port, password=PASSWORD, socket_timeout=5).ping()


def test_a_server_certificate_from_another_ca_stops_a_process_at_start_with_one_line(with_tls, tmp_path):
    server, _ = with_tls
    stranger = TlsFiles.make(tmp_path / "other-ca", ca_name="some other CA")
    url = server.url_for(1).replace(str(server.tls.ca_cert), str(stranger.ca_cert))

    output = run_refused("worker", url, tmp_path)

    assert f"ocrgw: REDIS_URL: TLS with Redis at 127.0.0.1:{server.port} failed:" in output, output
    assert "CERTIFICATE_VERIFY_FAILED" in output and "Traceback" not in output, output
