"""OCRGW_REDIS_CLUSTER: how it is read and checked, and the store client it gives."""

from __future__ import annotations

from typing import Any

import pytest
from click.testing import CliRunner
from redis.crc import key_slot
from redis.exceptions import AuthenticationError, RedisClusterException

from cli.main import main
from jobs import connections, redis_access
from jobs.config import InvalidSettings, Settings
from jobs.connections import redis_client
from tests.harness import free_port
from tests.keyspace import keys

CLUSTER = {
    "OCRGW_REDIS_CLUSTER": "10.0.0.1:7000, 10.0.0.2:7001,node-3:7002",
    "CELERY_BROKER_URL": "redis://broker:6379/0",
}


class MadeCluster:
    """What ``RedisCluster`` was made with, in place of one that would connect to its seeds."""

    def __init__(self, **kwargs: Any):
        self.kwargs = kwargs


@pytest.fixture
def made(monkeypatch) -> list[MadeCluster]:
    clusters: list[MadeCluster] = []

    def make(**kwargs: Any) -> MadeCluster:
        clusters.append(MadeCluster(**kwargs))
        return clusters[-1]

    monkeypatch.setattr(connections, "RedisCluster", make)
    return clusters


def test_without_it_nothing_changes():
    assert Settings.from_env({}).redis_cluster == ()


def test_the_seed_nodes_are_read_in_order():
    settings = Settings.from_env({**CLUSTER, "REDIS_URL": "redis://:pw@unused:7000/0"})
    assert settings.redis_cluster == (("10.0.0.1", 7000), ("10.0.0.2", 7001), ("node-3", 7002))
    assert settings.broker_url == "redis://broker:6379/0"


@pytest.mark.parametrize(
    "env, named",
    [
        ({**CLUSTER, "OCRGW_REDIS_CLUSTER": "node"}, "OCRGW_REDIS_CLUSTER"),
        ({**CLUSTER, "OCRGW_REDIS_CLUSTER": "node:0"}, "OCRGW_REDIS_CLUSTER"),
        ({**CLUSTER, "OCRGW_REDIS_CLUSTER": "node:65536"}, "OCRGW_REDIS_CLUSTER"),
        ({**CLUSTER, "OCRGW_REDIS_CLUSTER": "node:x"}, "OCRGW_REDIS_CLUSTER"),
        ({**CLUSTER, "OCRGW_REDIS_CLUSTER": ":7000"}, "OCRGW_REDIS_CLUSTER"),
        ({**CLUSTER, "OCRGW_REDIS_CLUSTER": "a:1,a:1"}, "OCRGW_REDIS_CLUSTER"),
        ({**CLUSTER, "OCRGW_REDIS_CLUSTER": " , "}, "OCRGW_REDIS_CLUSTER"),
        (
            {**CLUSTER, "OCRGW_REDIS_SENTINELS": "s:26379", "OCRGW_REDIS_SENTINEL_MASTER": "ocrgw"},
            "OCRGW_REDIS_CLUSTER",
        ),
        ({**CLUSTER, "REDIS_URL": "unix:///run/redis.sock"}, "REDIS_URL"),
        ({**CLUSTER, "REDIS_URL": "redis://:pw@unused:7000/2"}, "REDIS_URL"),
        ({"OCRGW_REDIS_CLUSTER": "node:7000"}, "CELERY_BROKER_URL"),
    ],
)
def test_what_cannot_be_used_is_refused_naming_its_variable(env, named):
    with pytest.raises(InvalidSettings) as caught:
        Settings.from_env(env)
    assert str(caught.value).startswith(f"{named}: ")


def test_a_bad_seed_stops_the_process_with_one_line():
    result = CliRunner().invoke(main, ["config"], env={**CLUSTER, "OCRGW_REDIS_CLUSTER": "node-1:7000,node-2"})

    assert result.exit_code == 1
    assert result.stderr == (
        "ocrgw: OCRGW_REDIS_CLUSTER: must be a comma-separated list of host:port, each given once, "
        "got 'node-1:7000,node-2' (malformed entry)\n"
    )


def test_the_store_client_is_a_cluster_client_of_the_seeds_with_the_url_s_credentials_not_its_database(made):
    settings = Settings.from_env({**CLUSTER, "REDIS_URL": "redis://user:pw@unused:7000/0"})
    retry = object()
    redis_client(
        settings,
        socket_timeout=7.0,
        socket_connect_timeout=2,
        decode_responses=True,
        retry=retry,
        retry_on_error=[ConnectionError],
        health_check_interval=30,
    )

    (cluster,) = made
    seeds = cluster.kwargs.pop("startup_nodes")
    assert [(node.host, node.port) for node in seeds] == [("10.0.0.1", 7000), ("10.0.0.2", 7001), ("node-3", 7002)]
    # The retry is the cluster client's own: it retries a command on a refreshed map of the slots.
    assert cluster.kwargs == {
        "retry": retry,
        "username": "user",
        "password": "pw",
        "socket_timeout": 7.0,
        "socket_connect_timeout": 2,
        "decode_responses": True,
    }


def test_tls_comes_from_the_url_too(made):
    settings = Settings.from_env(
        {**CLUSTER, "REDIS_URL": "rediss://:pw@unused:7000/0?ssl_cert_reqs=required&ssl_ca_certs=/ca.crt"}
    )
    redis_client(settings)
    options = made[0].kwargs
    assert options["ssl"] is True and options["ssl_cert_reqs"] == "required" and options["ssl_ca_certs"] == "/ca.crt"
    assert "db" not in options and "host" not in options


def test_the_replication_mark_shares_the_slot_of_its_bucket():
    mark = keys.replication_mark(0)
    assert mark == f"ocrgw:{{{keys.bucket_tag(0)}}}:replication-mark"
    assert key_slot(mark.encode()) == key_slot(keys.leases(0).encode())


def test_at_start_a_cluster_that_refuses_the_password_is_named(monkeypatch):
    def refusing(settings, **options):
        assert options["retry"].get_retries() == 0
        try:
            raise AuthenticationError("invalid password")
        except AuthenticationError as refused:
            raise RedisClusterException("Redis Cluster cannot be connected") from refused

    monkeypatch.setattr(connections, "cluster_client", refusing)
    with pytest.raises(redis_access.RedisRefused) as caught:
        redis_access.check_settings(Settings.from_env({**CLUSTER, "REDIS_URL": "redis://:wrong@unused/0"}))
    assert str(caught.value).startswith("REDIS_URL: Redis at the cluster of OCRGW_REDIS_CLUSTER refused")


def test_at_start_a_cluster_no_seed_of_which_answers_is_left_to_the_usual_retries(monkeypatch):
    def unreachable(settings, **options):
        try:
            raise ConnectionRefusedError("refused")
        except ConnectionRefusedError as down:
            raise RedisClusterException("Redis Cluster cannot be connected") from down

    monkeypatch.setattr(connections, "cluster_client", unreachable)
    broker = f"redis://127.0.0.1:{free_port()}/0"  # nothing listens there either
    redis_access.check_settings(Settings.from_env({**CLUSTER, "CELERY_BROKER_URL": broker}))
