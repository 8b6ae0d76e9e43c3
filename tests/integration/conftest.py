"""Fixtures of the integration tests: the stack a module runs against, and clients of it.

They build on those of tests/conftest.py (the session's redis-server and its
shared ``stack``, a test's own ``procs``):

* ``deployment`` (module): the stack this module's tests run against, by
  default the session's shared one.  A module whose tests need settings of
  their own overrides it with a stack of its own::

      @pytest.fixture(scope="module")
      def deployment(stack_factory):
          return stack_factory(env=ENV, concurrency=1)

* ``stack_factory`` (module): starts such stacks, each a gateway, a worker,
  the coordinator and beat (and the webhook deliverer if asked) on a fresh
  database, killed after the module's last test; ``module_procs`` is the
  group they run in, for a module that starts other processes for its tests.
* ``gateway``, ``api`` (function): an HTTP client of the deployment's
  gateway (``fanout_support.Gateway``, ``live.Api``), and ``db`` a redis-py
  client of its database.  On the shared stack the database is emptied for
  each test first; a module's own stack keeps what its earlier tests left.

``redis_cluster`` (session, tests/conftest.py) is a Redis Cluster of three
primaries and three replicas (``tests/redis_cluster.py``); ``empty_cluster``
(function) is that cluster whole again, a node an earlier test killed
restarted, and emptied.

With ``OCRGW_TEST_STORE=cluster`` the stacks keep their store on that cluster
(one stack at a time, see ``harness.ClusterTenancy``): ``current_deployment``
starts a stack again that another stack stopped, and empties the cluster for
each test of the shared stack; ``db`` is then a ``RedisCluster`` client, this
process's bucket count set to the stack's.

A test that kills, stops or restarts a process starts its own with ``procs``
instead (``procs.stack(db=procs.fresh_db(), ...)``), and waits for its jobs
with ``tests.integration.polling.wait_for_job``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping

import pytest
from redis import Redis

from tests.harness import ProcGroup, RedisServer, Stack, cluster_of
from tests.integration.fanout_support import Gateway
from tests.integration.live import Api
from tests.redis_cluster import LocalCluster

StackFactory = Callable[..., Stack]


@pytest.fixture(scope="module")
def module_procs(request, redis_server: RedisServer, tmp_path_factory) -> Iterator[ProcGroup]:
    """Processes of this module's own on the session's redis-server, killed after its last test."""
    name = request.module.__name__.rpartition(".")[2].removeprefix("test_")
    group = ProcGroup(
        tmp_path_factory.mktemp(name), redis=redis_server, label=name.replace("_", " "), cluster=cluster_of(request)
    )
    try:
        yield group
    finally:
        group.close()


@pytest.fixture(scope="module")
def stack_factory(module_procs: ProcGroup) -> StackFactory:
    """``stack_factory(env=None, concurrency=2, web=True, webhooks=False) -> Stack`` on a fresh database."""

    def start(
        env: Mapping[str, str] | None = None, *, concurrency: int = 2, web: bool = True, webhooks: bool = False
    ) -> Stack:
        db = module_procs.fresh_db()
        return module_procs.stack(db=db, env=env, concurrency=concurrency, web=web, webhooks=webhooks)

    return start


@pytest.fixture(scope="module")
def deployment(stack: Stack) -> Stack:
    """The session's shared stack, unless the module overrides this fixture with a stack of its own."""
    return stack


@pytest.fixture
def current_deployment(request, deployment: Stack) -> Stack:
    """The deployment, its database (and cluster) emptied for this test if it is the shared stack.

    On the cluster store, a deployment another stack stopped is started again first.
    """
    deployment.resume()
    if deployment.shared:
        request.getfixturevalue("redis_url")
        if deployment.group.cluster is not None:
            deployment.group.cluster.empty()
    return deployment


@pytest.fixture
def gateway(current_deployment: Stack) -> Iterator[Gateway]:
    """A client of the deployment's gateway."""
    with Gateway(current_deployment.web().base_url) as client:
        yield client


@pytest.fixture
def api(current_deployment: Stack) -> Api:
    """A client of the deployment's gateway that reads views as the API serves them (a page at a time)."""
    return Api(current_deployment.web().base_url)


@pytest.fixture
def db(current_deployment: Stack) -> Iterator[Redis]:
    """A redis-py client of the deployment's store: its database, or a ``RedisCluster`` of its cluster."""
    with current_deployment.store_client() as client:
        yield client


@pytest.fixture
def empty_cluster(request, redis_cluster: LocalCluster) -> LocalCluster:
    """The session's cluster with every node up and every replica synced, and no key in it.

    On the cluster store, no stack's processes run on it any more (the next stack to start takes it over).
    """
    tenancy = cluster_of(request)
    if tenancy is not None:
        tenancy.claim(EVICTED)
    redis_cluster.restore()
    redis_cluster.flushall()
    return redis_cluster


#: The cluster's owner while a test uses it with processes of its own making (no broker database is -1).
EVICTED = -1
