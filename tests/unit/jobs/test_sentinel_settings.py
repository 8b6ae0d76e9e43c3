"""Redis Sentinel and OCRGW_MIN_REPLICAS: how they are read, and the clients and broker they give."""

from __future__ import annotations

import pytest
from redis import Redis
from redis.exceptions import AuthenticationError
from redis.sentinel import SentinelConnectionPool

from jobs import connections, redis_access
from jobs.config import InvalidSettings, Settings, default_of
from jobs.connections import BROKER_SOCKET_TIMEOUT_SECONDS, broker_sentinel_options, master_options, redis_client
from workers.celery_app import make_celery

SENTINELS = {
    "OCRGW_REDIS_SENTINELS": "10.0.0.1:26379, 10.0.0.2:26380,sentinel-3:26379",
    "OCRGW_REDIS_SENTINEL_MASTER": "ocrgw",
}


def test_without_sentinels_nothing_changes():
    settings = Settings.from_env({})
    assert (settings.redis_sentinels, settings.redis_sentinel_master, settings.min_replicas) == ((), "", 0)
    assert settings.replica_wait_ms == default_of("replica_wait_ms")
    assert not settings.broker_on_sentinels


def test_the_sentinels_are_read_in_order_and_the_broker_follows_them_with_the_url_s_password_and_db():
    settings = Settings.from_env({**SENTINELS, "REDIS_URL": "redis://:pw@unused:6379/3"})
    assert settings.redis_sentinels == (("10.0.0.1", 26379), ("10.0.0.2", 26380), ("sentinel-3", 26379))
    assert settings.redis_sentinel_master == "ocrgw"
    assert settings.broker_url == (
        "sentinel://:pw@10.0.0.1:26379/3;sentinel://:pw@10.0.0.2:26380/3;sentinel://:pw@sentinel-3:26379/3"
    )
    assert settings.broker_on_sentinels


def test_a_broker_url_given_is_kept():
    settings = Settings.from_env({**SENTINELS, "CELERY_BROKER_URL": "amqp://guest@rabbit:5672//"})
    assert settings.broker_url == "amqp://guest@rabbit:5672//"
    assert not settings.broker_on_sentinels


@pytest.mark.parametrize(
    "env, named",
    [
        ({"OCRGW_REDIS_SENTINELS": "h:26379"}, "OCRGW_REDIS_SENTINEL_MASTER"),
        ({"OCRGW_REDIS_SENTINEL_MASTER": "ocrgw"}, "OCRGW_REDIS_SENTINELS"),
        ({"CELERY_BROKER_URL": "sentinel://h:26379"}, "OCRGW_REDIS_SENTINEL_MASTER"),
        ({**SENTINELS, "REDIS_URL": "unix:///run/redis.sock"}, "REDIS_URL"),
        ({**SENTINELS, "REDIS_URL": "rediss://m/0?ssl_cert_reqs=required"}, "CELERY_BROKER_URL"),
        ({**SENTINELS, "OCRGW_REDIS_SENTINELS": "h"}, "OCRGW_REDIS_SENTINELS"),
        ({**SENTINELS, "OCRGW_REDIS_SENTINELS": "h:0"}, "OCRGW_REDIS_SENTINELS"),
        ({**SENTINELS, "OCRGW_REDIS_SENTINELS": "h:x"}, "OCRGW_REDIS_SENTINELS"),
        ({**SENTINELS, "OCRGW_REDIS_SENTINELS": "h:1,h:1"}, "OCRGW_REDIS_SENTINELS"),
        ({**SENTINELS, "OCRGW_REDIS_SENTINELS": " , "}, "OCRGW_REDIS_SENTINELS"),
        ({**SENTINELS, "OCRGW_REDIS_SENTINEL_MASTER": "two words"}, "OCRGW_REDIS_SENTINEL_MASTER"),
        ({"OCRGW_MIN_REPLICAS": "-1"}, "OCRGW_MIN_REPLICAS"),
        ({"OCRGW_MIN_REPLICAS": "one"}, "OCRGW_MIN_REPLICAS"),
        ({"OCRGW_REPLICA_WAIT_MS": "0"}, "OCRGW_REPLICA_WAIT_MS"),
    ],
)
def test_what_cannot_be_used_is_refused_naming_its_variable(env, named):
    with pytest.raises(InvalidSettings) as caught:
        Settings.from_env(env)
    assert str(caught.value).startswith(f"{named}: ")


def test_the_sentinels_password_is_never_shown():
    settings = Settings.from_env({**SENTINELS, "OCRGW_REDIS_SENTINEL_PASSWORD": "hunter2-sentinel"})
    assert settings.redis_sentinel_password == "hunter2-sentinel"
    assert "hunter2" not in repr(settings)


def test_min_replicas_and_its_wait_are_read():
    settings = Settings.from_env({"OCRGW_MIN_REPLICAS": "2", "OCRGW_REPLICA_WAIT_MS": "750"})
    assert (settings.min_replicas, settings.replica_wait_ms) == (2, 750)


def test_the_master_gets_the_url_s_database_credentials_and_tls_not_its_host():
    assert master_options("redis://user:pw@unused:1/4") == {"db": 4, "username": "user", "password": "pw"}
    tls = master_options("rediss://unused/0?ssl_cert_reqs=required&ssl_ca_certs=/ca.crt")
    assert tls["ssl"] is True and tls["ssl_cert_reqs"] == "required" and tls["ssl_ca_certs"] == "/ca.crt"
    assert "host" not in tls and "port" not in tls


def test_with_sentinels_the_store_s_client_asks_them_for_the_named_master():
    settings = Settings.from_env(
        {**SENTINELS, "REDIS_URL": "redis://:pw@unused/2", "OCRGW_REDIS_SENTINEL_PASSWORD": "sentinel-secret"}
    )
    client = redis_client(settings, socket_timeout=1)
    assert isinstance(client, Redis)
    pool = client.connection_pool
    assert isinstance(pool, SentinelConnectionPool)
    assert pool.service_name == "ocrgw" and pool.is_master
    assert (pool.connection_kwargs["db"], pool.connection_kwargs["password"]) == (2, "pw")
    sentinels = pool.sentinel_manager.sentinels
    assert [
        (s.connection_pool.connection_kwargs["host"], s.connection_pool.connection_kwargs["port"]) for s in sentinels
    ] == [("10.0.0.1", 26379), ("10.0.0.2", 26380), ("sentinel-3", 26379)]
    assert all(s.connection_pool.connection_kwargs["password"] == "sentinel-secret" for s in sentinels)


def test_celery_gets_the_master_s_name_and_keeps_its_other_transport_options():
    settings = Settings.from_env({**SENTINELS, "OCRGW_REDIS_SENTINEL_PASSWORD": "sentinel-secret"})
    options = make_celery(settings).conf.broker_transport_options
    assert options["master_name"] == "ocrgw"
    assert options["sentinel_kwargs"]["password"] == "sentinel-secret"
    assert options["visibility_timeout"] == 3600
    assert "password" not in broker_sentinel_options(Settings.from_env(SENTINELS))["sentinel_kwargs"]


def test_no_broker_connection_to_the_master_or_a_sentinel_waits_for_ever():
    options = broker_sentinel_options(Settings.from_env(SENTINELS))
    for given in (options, options["sentinel_kwargs"]):
        assert given["socket_timeout"] == given["socket_connect_timeout"] == BROKER_SOCKET_TIMEOUT_SECONDS
    assert options["socket_keepalive"] is True
    # kombu batches publishes only when redis-py would not replay a pipeline on a timeout.
    assert not options.get("retry_on_timeout")


def test_without_sentinels_celery_gets_no_master_name():
    assert "master_name" not in make_celery(Settings.from_env({})).conf.broker_transport_options


def test_at_start_a_master_behind_sentinels_that_refuses_the_password_is_named_by_its_name(monkeypatch):
    class Refusing:
        def ping(self):
            raise AuthenticationError("invalid password")

        def close(self):
            pass

    made = []

    def refused_client(settings, **options):
        made.append(options)
        return Refusing()

    monkeypatch.setattr(connections, "redis_client", refused_client)
    with pytest.raises(redis_access.RedisRefused) as caught:
        redis_access.check_settings(Settings.from_env({**SENTINELS, "REDIS_URL": "redis://:wrong@unused/0"}))
    assert str(caught.value).startswith("REDIS_URL: Redis at master 'ocrgw' (found through OCRGW_REDIS_SENTINELS)")
    assert made and made[0]["retry"].get_retries() == 0
