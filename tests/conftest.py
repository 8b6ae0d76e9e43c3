"""Fixtures for tests against real processes; the machinery is in tests/harness.py.

Scopes, and why:

* ``redis_server`` (session): one redis-server for the whole run; starting
  one per test would dominate the run time.
* ``redis_url`` (function): database 0 of that server, emptied before the
  test, so every test starts from a known state.
* ``stack`` (session, started on first use): worker, coordinator and beat on
  database 0, shared by the tests that only submit work and read results.
  Use it together with ``redis_url`` to get a clean database (the
  integration tests' ``gateway``, ``api`` and ``db`` fixtures do).
* ``procs`` (function): processes of the test's own, killed at teardown. A
  test that kills, stops or restarts anything must use these, on a database
  of its own (``procs.fresh_db()``), never the shared stack.
* ``redis_server_factory`` (function): private redis-servers, for example
  with ``appendonly=True`` to test what survives a restart.

``redis_cluster`` (session, started on first use) is a Redis Cluster of three
primaries and three replicas (``tests/redis_cluster.py``).  With
``OCRGW_TEST_STORE=cluster`` every stack these fixtures start keeps its store
on it (``cluster_tenancy``; its broker stays a database of ``redis_server``),
and tests marked ``standalone(reason)`` are deselected, their reasons listed
at the end of the run.

When a test fails, the last lines of every live process's log are attached
to its report.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests import harness
from tests.harness import ClusterTenancy, ProcGroup, RedisServer
from tests.redis_cluster import LocalCluster, find_redis_cli

SWEEP_INTERVAL = "0.2"


def _require_redis_server() -> str:
    binary = harness.find_redis_server()
    if binary is None:
        why = "redis-server is not installed (scripts/setup.sh installs it)"
        if harness.in_ci():
            pytest.fail(why, pytrace=False)
        pytest.skip(why)
    return binary


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """Attach process log tails to a failed setup or call, while they still run."""
    report = yield
    if report.failed and report.when in ("setup", "call"):
        for group in list(harness.OPEN_GROUPS):
            for title, text in group.tails():
                report.sections.append((title, text))
    return report


def pytest_collection_modifyitems(config, items):
    """On the cluster store (``OCRGW_TEST_STORE=cluster``), deselect the tests marked ``standalone``."""
    if not harness.on_cluster():
        return
    kept, deselected = [], []
    for item in items:
        marker = item.get_closest_marker("standalone")
        if marker is None:
            kept.append(item)
            continue
        reason = marker.kwargs.get("reason") or (marker.args[0] if marker.args else "")
        if not reason:
            raise pytest.UsageError(f"{item.nodeid}: @pytest.mark.standalone needs a reason")
        deselected.append(item)
        _STANDALONE_ONLY.append((item.nodeid, reason))
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = kept


#: (test, reason) of each test the cluster run deselected, for the summary.
_STANDALONE_ONLY: list[tuple[str, str]] = []


def pytest_report_header(config):
    return f"ocrgw test store: {harness.test_store()} ({harness.TEST_STORE_VARIABLE})"


def pytest_terminal_summary(terminalreporter):
    if _STANDALONE_ONLY:
        terminalreporter.section("deselected: standalone Redis only")
        for nodeid, reason in _STANDALONE_ONLY:
            terminalreporter.write_line(f"{nodeid}: {reason}")


def pytest_sessionfinish(session, exitstatus):
    """Kill processes of any group a test opened by hand and never closed."""
    for group in list(harness.OPEN_GROUPS):
        group.close()


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory) -> Iterator[RedisServer]:
    """A redis-server on a free loopback port: ``.url``, ``.port``, ``.restart()``, ``.stop()``."""
    binary = _require_redis_server()
    work = tmp_path_factory.mktemp("redis-session")
    group = ProcGroup(work, label="session")
    server = RedisServer(group, work / "data", binary=binary)
    try:
        server.start()
        yield server
    finally:
        group.close()


@pytest.fixture
def redis_url(redis_server: RedisServer) -> str:
    """URL of database 0 on the session server, emptied for this test."""
    redis_server.clean()
    return redis_server.url


@pytest.fixture
def redis_server_factory(tmp_path):
    """Start private redis-servers: ``make(appendonly=False, extra_args=()) -> RedisServer``.

    Each gets its own port and data dir and is killed at teardown; its
    ``restart()`` keeps both, which is what an AOF restart test needs.
    """
    binary = _require_redis_server()
    group = ProcGroup(tmp_path / "redis-factory", label="test")
    count = 0

    def make(*, appendonly: bool = False, extra_args=(), port: int | None = None) -> RedisServer:
        nonlocal count
        count += 1
        server = RedisServer(
            group,
            tmp_path / f"redis-{count}",
            appendonly=appendonly,
            extra_args=extra_args,
            binary=binary,
            name=f"redis-{count}",
        )
        server.port = port  # None: any free port
        return server.start()

    try:
        yield make
    finally:
        group.close()


@pytest.fixture
def procs(request, tmp_path) -> Iterator[ProcGroup]:
    """This test's own processes; everything still running is killed at teardown.

    Redis (and the cluster, on the cluster store) is only started if the test asks
    for an ocrgw process or a database.
    """
    group = ProcGroup(
        tmp_path / "procs",
        redis=lambda: request.getfixturevalue("redis_server"),
        label="test",
        cluster=lambda: harness.cluster_of(request),
    )
    try:
        yield group
    finally:
        group.close()


@pytest.fixture(scope="session")
def stack(request, redis_server: RedisServer, tmp_path_factory) -> Iterator[harness.Stack]:
    """Shared worker (concurrency 4), coordinator and beat on database 0.

    Never kill or stop these from a test: later tests rely on them.
    ``stack.web()`` starts a shared gateway on first call.  On the cluster
    store another stack may stop them: ``stack.resume()`` starts them again.
    """
    group = ProcGroup(
        tmp_path_factory.mktemp("stack"), redis=redis_server, label="session stack", cluster=harness.cluster_of(request)
    )
    try:
        session_stack = group.stack(db=0, concurrency=4, env={"OCRGW_SWEEP_INTERVAL": SWEEP_INTERVAL})
        session_stack.shared = True
        yield session_stack
    finally:
        group.close()


@pytest.fixture(scope="session")
def redis_cluster(tmp_path_factory) -> Iterator[LocalCluster]:
    """Three primaries and a replica each on loopback ports, stopped at the session's end.

    A test that kills a node leaves it killed; ``empty_cluster`` restarts it for the next.
    """
    if harness.find_redis_server() is None or find_redis_cli() is None:
        why = "redis-server and redis-cli are not installed (scripts/setup.sh installs them)"
        if harness.in_ci():
            pytest.fail(why, pytrace=False)
        pytest.skip(why)
    work = tmp_path_factory.mktemp("redis-cluster")
    group = ProcGroup(work, label="redis cluster")
    cluster = LocalCluster(group, work)
    try:
        yield cluster.start()
    finally:
        cluster.stop()
        group.close()


@pytest.fixture(scope="session")
def cluster_tenancy(redis_cluster: LocalCluster) -> ClusterTenancy:
    """The session's cluster as the store of the stacks, one stack at a time (``OCRGW_TEST_STORE=cluster``)."""
    return ClusterTenancy(redis_cluster)
