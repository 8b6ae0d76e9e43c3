"""The test harness's switch of the stacks' store (OCRGW_TEST_STORE) and its one-stack-at-a-time cluster.

No process is started: the cluster and the processes are stand-ins that record what was done to them.
"""

from __future__ import annotations

import pytest

from tests import harness
from tests.harness import ClusterTenancy, ProcGroup


class FakeCluster:
    def __init__(self) -> None:
        self.done: list[str] = []

    def env(self, min_replicas: int = 0) -> dict[str, str]:
        return {"REDIS_URL": "redis://127.0.0.1:7000/0", "OCRGW_REDIS_CLUSTER": "127.0.0.1:7000"}

    def restore(self) -> None:
        self.done.append("restore")

    def flushall(self) -> None:
        self.done.append("flushall")


class FakeProc:
    def __init__(self) -> None:
        self.closed = False

    def close(self) -> None:
        self.closed = True


class FakeRedis:
    def url_for(self, db: int) -> str:
        return f"redis://127.0.0.1:6379/{db}"


@pytest.mark.parametrize(
    ("value", "store"), [(None, "standalone"), ("", "standalone"), ("cluster", "cluster"), (" Cluster ", "cluster")]
)
def test_the_switch_names_the_store(monkeypatch, value, store):
    if value is None:
        monkeypatch.delenv(harness.TEST_STORE_VARIABLE, raising=False)
    else:
        monkeypatch.setenv(harness.TEST_STORE_VARIABLE, value)
    assert harness.test_store() == store
    assert harness.on_cluster() == (store == "cluster")


def test_an_unknown_store_is_refused(monkeypatch):
    monkeypatch.setenv(harness.TEST_STORE_VARIABLE, "sentinel")
    with pytest.raises(ValueError, match="OCRGW_TEST_STORE"):
        harness.test_store()


def test_another_database_s_stack_takes_the_cluster_over_and_empties_it():
    cluster = FakeCluster()
    tenancy = ClusterTenancy(cluster)  # type: ignore[arg-type]
    first = [FakeProc(), FakeProc()]
    tenancy.claim(3)
    for proc in first:
        tenancy.add(proc)  # type: ignore[arg-type]
    assert cluster.done == ["restore", "flushall"]

    tenancy.claim(3)  # the same stack's next process: nothing happens
    assert cluster.done == ["restore", "flushall"] and not any(p.closed for p in first)

    tenancy.claim(0)
    assert all(p.closed for p in first)
    assert tenancy.owner == 0 and cluster.done == ["restore", "flushall"] * 2


def test_a_group_on_the_cluster_gives_its_processes_the_cluster_as_store_and_its_database_as_broker(tmp_path):
    cluster = FakeCluster()
    tenancy = ClusterTenancy(cluster)  # type: ignore[arg-type]
    group = ProcGroup(tmp_path, redis=FakeRedis(), cluster=tenancy)  # type: ignore[arg-type]
    try:
        env = group._env(5, {"OCRGW_SWEEP_INTERVAL": "0.2"})
        assert env == {
            "REDIS_URL": "redis://127.0.0.1:7000/0",
            "OCRGW_REDIS_CLUSTER": "127.0.0.1:7000",
            "CELERY_BROKER_URL": "redis://127.0.0.1:6379/5",
            "OCRGW_SWEEP_INTERVAL": "0.2",
        }
        assert tenancy.owner == 5
    finally:
        group.close()


def test_a_group_without_a_cluster_keeps_its_store_in_the_database(tmp_path):
    group = ProcGroup(tmp_path, redis=FakeRedis())  # type: ignore[arg-type]
    try:
        assert group._env(5, None) == {"REDIS_URL": "redis://127.0.0.1:6379/5"}
        assert group.cluster_env(5) == {}
    finally:
        group.close()
