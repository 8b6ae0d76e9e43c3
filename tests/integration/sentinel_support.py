"""A Redis primary, its replica and three sentinels on loopback ports, for the failover tests.

``SentinelSet.start()`` runs Debian's ``redis-server`` twice (the replica
with ``--replicaof`` the primary) and ``redis-sentinel`` three times, each
sentinel with its own config file in a tmp dir (sentinels rewrite it) and
short timeouts, so that a killed primary is replaced within seconds.
``env()`` is what points an ocrgw process at them.  Nothing here asserts
how long anything takes: the waits only bound a hang.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import redis

from tests.harness import Proc, ProcGroup, RedisServer, free_port, wait_until

MASTER_NAME = "ocrgw-test"
QUORUM = 2
#: A primary that does not answer for this long is down for a sentinel.
DOWN_AFTER_MS = 1000
FAILOVER_TIMEOUT_MS = 5000
SETTLE_TIMEOUT = 60.0


def find_redis_sentinel() -> str | None:
    return shutil.which("redis-sentinel")


class Sentinel:
    """One redis-sentinel process watching ``MASTER_NAME``."""

    host = "127.0.0.1"

    def __init__(self, group: ProcGroup, directory: Path, binary: str, name: str) -> None:
        self.group, self.dir, self.binary, self.name = group, directory, binary, name
        self.port = free_port()
        self.proc: Proc | None = None

    def start(self, primary: RedisServer) -> Sentinel:
        self.dir.mkdir(parents=True, exist_ok=True)
        config = self.dir / "sentinel.conf"
        config.write_text(
            "\n".join(
                [
                    f"port {self.port}",
                    f"bind {self.host}",
                    "daemonize no",
                    f"dir {self.dir}",
                    f"sentinel monitor {MASTER_NAME} {primary.host} {primary.port} {QUORUM}",
                    f"sentinel down-after-milliseconds {MASTER_NAME} {DOWN_AFTER_MS}",
                    f"sentinel failover-timeout {MASTER_NAME} {FAILOVER_TIMEOUT_MS}",
                    f"sentinel parallel-syncs {MASTER_NAME} 1",
                    "",
                ]
            )
        )
        self.proc = self.group.start(self.name, [self.binary, str(config)], wait=False)
        self.proc.wait_ready(self.ping, timeout=30)
        return self

    def client(self) -> redis.Redis:
        return redis.Redis(host=self.host, port=self.port, socket_timeout=2, socket_connect_timeout=1)

    def ping(self) -> bool:
        try:
            with self.client() as client:
                return bool(client.ping())
        except (redis.ConnectionError, redis.TimeoutError):
            return False

    def master_port(self) -> int | None:
        """The port of the master this sentinel names now, or None while it cannot say."""
        try:
            with self.client() as client:
                address = client.sentinel_get_master_addr_by_name(MASTER_NAME)
        except (redis.ConnectionError, redis.TimeoutError, redis.ResponseError):
            return None
        return int(address[1]) if address else None


class SentinelSet:
    """A primary, one replica of it and three sentinels, all on 127.0.0.1."""

    def __init__(self, group: ProcGroup, work_dir: Path) -> None:
        redis_binary, sentinel_binary = shutil.which("redis-server"), find_redis_sentinel()
        assert redis_binary and sentinel_binary, "redis-server and redis-sentinel are needed (scripts/setup.sh --tests)"
        self.group = group
        self.primary = RedisServer(group, work_dir / "primary", binary=redis_binary, name="redis-primary")
        self.replica = RedisServer(group, work_dir / "replica", binary=redis_binary, name="redis-replica")
        self.sentinels = [
            Sentinel(group, work_dir / f"sentinel-{i}", sentinel_binary, f"sentinel-{i}") for i in range(3)
        ]

    def start(self) -> SentinelSet:
        self.primary.start()
        self.replica.extra_args = ["--replicaof", self.primary.host, str(self.primary.port)]
        self.replica.start()
        self.wait_replicated(self.primary, replicas=1)
        for sentinel in self.sentinels:
            sentinel.start(self.primary)
        # Every sentinel must know its peers and the replica before a failover can be agreed.
        wait_until(
            self._all_see_everyone,
            SETTLE_TIMEOUT,
            0.1,
            message="the sentinels never discovered each other and the replica",
        )
        return self

    def _all_see_everyone(self) -> bool:
        for sentinel in self.sentinels:
            try:
                with sentinel.client() as client:
                    master = client.sentinel_master(MASTER_NAME)
            except (redis.ConnectionError, redis.TimeoutError, redis.ResponseError):
                return False
            if int(master.get("num-other-sentinels", 0)) < 2 or int(master.get("num-slaves", 0)) < 1:
                return False
        return True

    @property
    def addresses(self) -> str:
        """``OCRGW_REDIS_SENTINELS``."""
        return ",".join(f"{s.host}:{s.port}" for s in self.sentinels)

    def env(self, min_replicas: int = 1) -> dict[str, str]:
        """What points an ocrgw process at the master through the sentinels (REDIS_URL: its database)."""
        return {
            "REDIS_URL": "redis://127.0.0.1:1/0",  # host and port unused behind sentinels
            "OCRGW_REDIS_SENTINELS": self.addresses,
            "OCRGW_REDIS_SENTINEL_MASTER": MASTER_NAME,
            "OCRGW_MIN_REPLICAS": str(min_replicas),
        }

    @staticmethod
    def wait_replicated(server: RedisServer, replicas: int) -> None:
        def synced() -> bool:
            with server.client() as client:
                info = client.info("replication")
            online = [
                v
                for k, v in info.items()
                if k.startswith("slave") and isinstance(v, dict) and v.get("state") == "online"
            ]
            return len(online) >= replicas

        wait_until(synced, SETTLE_TIMEOUT, 0.1, message=f"{replicas} replica(s) never came online")

    def wait_failover(self) -> RedisServer:
        """Waits until every sentinel names the replica as master and it takes writes; returns it."""

        def promoted() -> bool:
            if any(s.master_port() != self.replica.port for s in self.sentinels):
                return False
            with self.replica.client() as client:
                return client.info("replication").get("role") == "master"

        wait_until(promoted, SETTLE_TIMEOUT, 0.2, message="the sentinels never promoted the replica")
        return self.replica
