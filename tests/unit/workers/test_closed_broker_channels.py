"""A kombu Redis channel used after its connection was closed fails as a lost connection (workers.broker)."""

from typing import Any

import pytest
from kombu import Connection
from kombu.transport import redis as kombu_redis

from jobs.config import Settings
from workers.broker import ClosedBrokerConnection, guard_closed_redis_channels
from workers.celery_app import make_celery

SENTINELS = {
    "REDIS_URL": "redis://127.0.0.1:1/0",
    "OCRGW_REDIS_SENTINELS": "127.0.0.1:1,127.0.0.1:2",
    "OCRGW_REDIS_SENTINEL_MASTER": "ocrgw",
}


def sentinel_connection() -> Connection:
    """The broker connection an ocrgw process makes behind sentinels (nothing is connected here)."""
    settings = Settings.from_env(SENTINELS)
    app = make_celery(settings)
    return app.connection_for_read()


def channel_of(connection: Connection) -> Any:
    """A channel of the connection as it is once the channel has closed: no pool (opening one pings the master)."""
    transport = connection.transport
    channel = object.__new__(transport.Channel)
    channel.connection = transport
    channel._pool = channel._async_pool = None
    for option in ("master_name", "sentinel_kwargs"):
        setattr(channel, option, transport.client.transport_options[option])
    return channel


def test_the_channel_of_an_open_connection_gets_the_master_through_the_sentinels():
    channel = channel_of(sentinel_connection())
    pool = channel.pool
    assert pool.service_name == "ocrgw"
    assert [s.connection_pool.connection_kwargs["port"] for s in pool.sentinel_manager.sentinels] == [1, 2]


@pytest.mark.parametrize("needs", ["pool", "client"])
def test_once_its_connection_is_closed_a_channel_that_needs_one_again_raises_a_connection_error(needs):
    connection = sentinel_connection()
    channel = channel_of(connection)
    transport = connection.transport
    # What Celery's consumer does with its connection at a connection loss (collect), and a close does.
    connection.collect()
    assert transport.client is None
    with pytest.raises(transport.connection_errors) as raised:
        getattr(channel, needs)
    assert isinstance(raised.value, ClosedBrokerConnection)


def test_a_channel_taken_off_its_closed_connection_raises_a_connection_error_too():
    channel = channel_of(sentinel_connection())
    channel.connection = None  # as kombu leaves a channel it closed
    with pytest.raises(ClosedBrokerConnection):
        getattr(channel, "pool")  # noqa: B009 (the property opens the pool)


def test_kombu_itself_still_raises_attribute_error_there():
    """celery/kombu#582: when kombu raises a connection error here itself, workers.broker's guard can go."""
    connection = sentinel_connection()
    channel = channel_of(connection)
    connection.collect()
    guarded: Any = kombu_redis.Channel._connparams
    unguarded = guarded.__wrapped__
    with pytest.raises(AttributeError, match="hostname"):
        unguarded(channel)


def test_the_guard_is_installed_once():
    guard_closed_redis_channels()
    guard_closed_redis_channels()
    guarded: Any = kombu_redis.Channel._connparams
    assert not hasattr(guarded.__wrapped__, "__wrapped__")
