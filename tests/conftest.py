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

When a test fails, the last lines of every live process's log are attached
to its report.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests import harness
from tests.harness import ProcGroup, RedisServer

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

    def make(*, appendonly: bool = False, extra_args=()) -> RedisServer:
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
        return server.start()

    try:
        yield make
    finally:
        group.close()


@pytest.fixture
def procs(request, tmp_path) -> Iterator[ProcGroup]:
    """This test's own processes; everything still running is killed at teardown.

    Redis is only started if the test asks for an ocrgw process or a database.
    """
    group = ProcGroup(tmp_path / "procs", redis=lambda: request.getfixturevalue("redis_server"), label="test")
    try:
        yield group
    finally:
        group.close()


@pytest.fixture(scope="session")
def stack(redis_server: RedisServer, tmp_path_factory) -> Iterator[harness.Stack]:
    """Shared worker (concurrency 4), coordinator and beat on database 0.

    Never kill or stop these from a test: later tests rely on them.
    ``stack.web()`` starts a shared gateway on first call.
    """
    group = ProcGroup(tmp_path_factory.mktemp("stack"), redis=redis_server, label="session stack")
    try:
        session_stack = group.stack(db=0, concurrency=4, env={"OCRGW_SWEEP_INTERVAL": SWEEP_INTERVAL})
        session_stack.shared = True
        yield session_stack
    finally:
        group.close()
