"""At a process's start: does Redis take its password, and can TLS to it be set up?

A wrong password, or a server certificate that cannot be verified, does not
mend with time, unlike a Redis that is down for a moment: the clients would
retry it for ever (Celery's broker connection retries without end, the
store's client on every call), with a traceback each time.  Every process
checks once, at start (``exit_if_refused``), and stops with one line
instead.  A Redis that does not answer at all is left to the usual retries.
"""

from __future__ import annotations

import ssl
import sys
from typing import Any
from urllib.parse import urlsplit

from redis import Redis
from redis.backoff import NoBackoff
from redis.exceptions import AuthenticationError, RedisClusterException
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.retry import Retry

from jobs import connections
from jobs.config import REDIS_URL_SCHEMES, Settings
from jobs.errors import OcrgwError

CHECK_TIMEOUT_SECONDS = 5.0


class RedisRefused(OcrgwError):
    """Raised when Redis refuses a process's credentials, or TLS to it cannot be set up."""

    code = "redis_refused"


def where(url: str) -> str:
    """The server a URL names, without its credentials: ``host:port``, or a socket's path."""
    parts = urlsplit(url)
    if parts.scheme == "unix":
        return parts.path
    return f"{parts.hostname}:{parts.port or 6379}"


def check(url: str, variable: str, settings: Settings | None = None) -> None:
    """Raises ``RedisRefused`` naming ``variable`` if Redis at ``url`` refuses it; nothing if it answers or is down.

    With ``settings`` naming sentinels, the Redis checked is their master; naming
    a cluster, its nodes (``url`` gives the credentials either way).
    """
    options: dict[str, Any] = {
        "socket_connect_timeout": CHECK_TIMEOUT_SECONDS,
        "socket_timeout": CHECK_TIMEOUT_SECONDS,
        "retry": Retry(NoBackoff(), 0),
    }
    if settings is not None and settings.redis_cluster:
        _check_cluster(settings, variable, options)
        return
    if settings is not None and settings.redis_sentinels:
        client = connections.redis_client(settings, **options)
        place = f"master {settings.redis_sentinel_master!r} (found through OCRGW_REDIS_SENTINELS)"
    else:
        client = Redis.from_url(url, **options)
        place = where(url)
    try:
        client.ping()
    except (AuthenticationError, RedisConnectionError) as error:
        _raise_if_refused(error, variable, place)
    finally:
        client.close()


def _check_cluster(settings: Settings, variable: str, options: dict[str, Any]) -> None:
    """The cluster's client asks its seeds for the map of the slots as it is made: a refusal shows there."""
    place = "the cluster of OCRGW_REDIS_CLUSTER"
    try:
        client = connections.cluster_client(settings, **options)
    except RedisClusterException as error:
        if isinstance(error.__cause__, (AuthenticationError, RedisConnectionError)):
            _raise_if_refused(error.__cause__, variable, place)
        return  # no seed answered: left to the usual retries
    try:
        client.ping()
    except (AuthenticationError, RedisConnectionError) as error:
        _raise_if_refused(error, variable, place)
    finally:
        client.close()


def _raise_if_refused(error: Exception, variable: str, place: str) -> None:
    """A ``RedisRefused`` for a refused password or a failed TLS setup; nothing for a Redis that is down."""
    if isinstance(error, AuthenticationError):
        raise RedisRefused(
            f"{variable}: Redis at {place} refused the connection's credentials (no password, or a wrong one): {error}"
        ) from None
    if isinstance(error.__cause__ or error.__context__, ssl.SSLError):
        raise RedisRefused(f"{variable}: TLS with Redis at {place} failed: {error}") from None


def check_settings(settings: Settings) -> None:
    """Checks the store's Redis, and the broker's when it is another Redis."""
    if settings.redis_sentinels or settings.redis_cluster:
        check(settings.redis_url, "REDIS_URL", settings)
    else:
        check(settings.redis_url, "REDIS_URL")
    broker = settings.broker_url
    if broker != settings.redis_url and urlsplit(broker).scheme in REDIS_URL_SCHEMES:
        check(broker, "CELERY_BROKER_URL")


def exit_if_refused(settings: Settings, exit_code: int = 1) -> None:
    """Stops the process with one line on stderr, and ``exit_code``, if Redis refuses it."""
    try:
        check_settings(settings)
    except RedisRefused as error:
        print(f"ocrgw: {error}", file=sys.stderr, flush=True)
        raise SystemExit(exit_code) from None
