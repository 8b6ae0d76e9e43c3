"""How a process gets its redis-py client of the store: straight from REDIS_URL, or through Sentinel.

With ``OCRGW_REDIS_SENTINELS`` and ``OCRGW_REDIS_SENTINEL_MASTER`` set, the
client is redis-py's ``Sentinel.master_for``: each new connection asks the
sentinels where the master is.  A connection that fails is dropped, and the
store's retry (see ``JobStore.from_settings``) opens a new one, which finds
the master the sentinels elected meanwhile.  A demoted master answers a
write with READONLY; redis-py's sentinel connection turns that into a
``ConnectionError`` too, so the same retry carries the call to the new
master.  REDIS_URL then gives only the database number, the credentials
and the TLS settings of the master: its host and port are not used.
"""

from __future__ import annotations

from typing import Any, TypeAlias

from redis import Redis
from redis.cluster import ClusterNode, RedisCluster
from redis.connection import SSLConnection, parse_url
from redis.sentinel import Sentinel

from jobs.config import Settings

# What of REDIS_URL a client of the master behind sentinels keeps.
_MASTER_OPTIONS = ("db", "username", "password")
# Options of a single Redis client that a cluster's node clients do not take: the cluster client
# retries a connection error or a timeout itself (``retry``, given to it, not to the nodes), and
# checks a node's connections as it uses them.
_SINGLE_NODE_ONLY_OPTIONS = ("retry_on_error", "retry_on_timeout", "health_check_interval")

#: A client of the store: one Redis (perhaps found through sentinels), or a Redis Cluster.
StoreClient: TypeAlias = Redis | RedisCluster


def redis_client(settings: Settings, **options: Any) -> StoreClient:
    """A client of the store's Redis (the current master, with sentinels; the cluster, with
    OCRGW_REDIS_CLUSTER); ``options`` as redis-py's ``Redis`` takes them, ``retry`` included."""
    if settings.redis_cluster:
        return cluster_client(settings, **options)
    if not settings.redis_sentinels:
        return Redis.from_url(settings.redis_url, **options)
    return sentinel(settings, **options).master_for(
        settings.redis_sentinel_master, redis_class=Redis, **master_options(settings.redis_url), **options
    )


def cluster_client(settings: Settings, **options: Any) -> RedisCluster:
    """redis-py's ``RedisCluster`` seeded with OCRGW_REDIS_CLUSTER's nodes, with REDIS_URL's credentials and TLS.

    ``options`` as for a single client: the timeouts and reply decoding go to
    every node's connections, ``retry`` to the cluster client, which retries
    a command on a refreshed map of the slots.
    """
    node_options = {k: v for k, v in options.items() if k not in _SINGLE_NODE_ONLY_OPTIONS and k != "retry"}
    credentials = {k: v for k, v in master_options(settings.redis_url).items() if k != "db"}
    seeds = [ClusterNode(host, port) for host, port in settings.redis_cluster]
    return RedisCluster(startup_nodes=seeds, retry=options.get("retry"), **credentials, **node_options)


def sentinel(settings: Settings, **options: Any) -> Sentinel:
    """redis-py's ``Sentinel`` over the configured sentinels; their socket timeouts follow ``options``."""
    sentinel_options: dict[str, Any] = {k: v for k, v in options.items() if k.startswith("socket_")}
    if settings.redis_sentinel_password:
        sentinel_options["password"] = settings.redis_sentinel_password
    return Sentinel(list(settings.redis_sentinels), sentinel_kwargs=sentinel_options)


def master_options(redis_url: str) -> dict[str, Any]:
    """The database, credentials and TLS settings REDIS_URL gives for the master."""
    parsed = parse_url(redis_url)
    kept: dict[str, Any] = {k: parsed[k] for k in _MASTER_OPTIONS if parsed.get(k) is not None}
    if parsed.get("connection_class") is SSLConnection:
        kept["ssl"] = True
        kept.update({k: v for k, v in parsed.items() if k.startswith("ssl_")})
    return kept


# How long a broker connection (to the master, or to a sentinel) may take to open, or a reply to come,
# before it counts as lost.  kombu waits for ever by default: a master or a sentinel whose host went
# away without closing its connections would then hold a publish, an acknowledgement or the search
# for the new master until the kernel gave up, instead of the next sentinel being asked.
BROKER_SOCKET_TIMEOUT_SECONDS = 5.0


def broker_sentinel_options(settings: Settings) -> dict[str, Any]:
    """kombu's transport options for a sentinel:// broker: the master's name, the socket timeouts of the
    connections to the master and to the sentinels, the sentinels' password.

    No ``retry_on_timeout``: kombu publishes a batch in one pipeline only
    when redis-py would not replay it (``workers.dispatch`` batches).
    """
    timeouts = {
        "socket_timeout": BROKER_SOCKET_TIMEOUT_SECONDS,
        "socket_connect_timeout": BROKER_SOCKET_TIMEOUT_SECONDS,
    }
    # redis-py gives the sentinel connections these sentinel_kwargs only, not the master's options.
    sentinel_kwargs: dict[str, Any] = dict(timeouts)
    if settings.redis_sentinel_password:
        sentinel_kwargs["password"] = settings.redis_sentinel_password
    return {
        "master_name": settings.redis_sentinel_master,
        **timeouts,
        "socket_keepalive": True,
        "sentinel_kwargs": sentinel_kwargs,
    }


def text_of(value: bytes | str | int | float | None) -> str:
    """A value a store client answered, as text ('' for none): redis-py types a reply as bytes or str (it
    depends on ``decode_responses``), and these clients answer bytes."""
    if value is None:
        return ""
    return value.decode() if isinstance(value, bytes) else str(value)
