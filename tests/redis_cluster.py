"""A local Redis Cluster on loopback ports: three primaries, a replica each.

``LocalCluster.start()`` runs Debian's ``redis-server --cluster-enabled yes``
six times, each node in its own directory with its own
``cluster-config-file`` and nothing persisted (``appendonly no``,
``save ""``), joins them with ``redis-cli --cluster create ...
--cluster-replicas 1``, and returns once every node says
``cluster_state:ok`` and every replica has synced with its primary.  What
it offers:

* ``seeds``: the nodes as ``host:port,host:port,...``, the value of
  ``OCRGW_REDIS_CLUSTER``; ``env()`` the environment of an ocrgw process
  pointed at the cluster;
* ``client()``: a redis-py ``RedisCluster`` of it;
* ``owner(key)``: the slot of a key and the nodes serving it, as the
  cluster itself says (its primary and that primary's replica);
* ``fail_over(key)``: SIGKILLs the primary of a key's slot and returns once
  its replica serves the slot; ``restore()`` starts the killed node again
  (it rejoins as a replica) and waits for the whole shape to be back.

Each node's cluster bus listens on its port + 10000, so a node's port is
picked with both free.  A node that misses ``cluster-node-timeout`` (1 s
here, 15 s by default) is failed by the others, which keeps a failover to
seconds.  Nothing here asserts how long anything takes: the waits only
bound a hang.

``python -m tests.redis_cluster`` runs such a cluster in the foreground for
a developer, prints its seeds and stops it on Ctrl-C.
"""

from __future__ import annotations

import argparse
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import redis
from redis.cluster import ClusterNode as SeedNode
from redis.cluster import RedisCluster

from tests.harness import ProcGroup, RedisServer, free_port, wait_until

SLOTS = 16384
#: Where a node's cluster bus listens: its port plus this (Redis's fixed offset).
BUS_PORT_OFFSET = 10000
#: A node unreachable this long is failed by the others and its replica promoted.
NODE_TIMEOUT_MS = 1000
SETTLE_TIMEOUT = 60.0
STOP_TIMEOUT = 10.0
CONFIG_FILE = "nodes.conf"

#: Ports (and bus ports) handed out in this process, so two nodes never pick each other's.
_taken_ports: set[int] = set()


def find_redis_cli() -> str | None:
    return shutil.which("redis-cli")


def _can_bind(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def cluster_port() -> int:
    """A loopback port free now whose bus port (port + 10000) is free too.

    As with ``free_port`` there is a window before the node binds both;
    ``ClusterNode.start`` retries on a new port if it lost the race.
    """
    for _ in range(200):
        port = free_port()
        bus = port + BUS_PORT_OFFSET
        if bus > 65535 or {port, bus} & _taken_ports or not _can_bind(bus):
            continue
        _taken_ports.update((port, bus))
        return port
    raise AssertionError("found no free port whose cluster bus port was free too")


class ClusterNode(RedisServer):
    """One ``redis-server --cluster-enabled yes``, its ``nodes.conf`` in its own directory."""

    def __init__(
        self,
        group: ProcGroup,
        data_dir: Path,
        *,
        name: str,
        password: str | None = None,
        node_timeout_ms: int = NODE_TIMEOUT_MS,
        binary: str | None = None,
    ) -> None:
        cluster_args = [
            *("--cluster-enabled", "yes"),
            *("--cluster-config-file", CONFIG_FILE),  # relative to --dir: one per node
            *("--cluster-node-timeout", str(node_timeout_ms)),
            # A replica's full sync starts at once, not after the default 5 s a primary waits for more replicas.
            *("--repl-diskless-sync-delay", "0"),
        ]
        if password:  # a replica authenticates to its primary with the same password
            cluster_args += ["--masterauth", password]
        super().__init__(group, data_dir, extra_args=cluster_args, binary=binary, name=name, password=password)

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    def start(self, timeout: float = 30) -> ClusterNode:
        """Start on new ports, retrying if another process took one; a restart keeps its ports and nodes.conf."""
        if self.port is not None:
            super().start(timeout)
            return self
        for attempt in range(5):
            self.port = cluster_port()
            try:
                super().start(timeout)
                return self
            except AssertionError:
                lost_race = self.proc is not None and "Address already in use" in self.proc.log_text()
                if not lost_race or attempt == 4:
                    raise
                (self.dir / CONFIG_FILE).unlink(missing_ok=True)  # it names the port it failed on
        raise AssertionError("unreachable")

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.alive

    def admin(self) -> redis.Redis:
        """A plain client of this node alone, replies decoded. Use it as a context manager."""
        return self.client(decode_responses=True, socket_timeout=5, socket_connect_timeout=2)

    def cluster_info(self) -> dict[str, str]:
        with self.admin() as client:
            text = client.execute_command("CLUSTER", "INFO")
        return dict(line.split(":", 1) for line in text.splitlines() if ":" in line)

    def replication(self) -> dict[str, Any]:
        with self.admin() as client:
            return client.info("replication")


@dataclass(frozen=True)
class Owner:
    """A hash slot and the nodes serving it: its primary and that primary's replicas."""

    slot: int
    primary: ClusterNode
    replicas: tuple[ClusterNode, ...]


@dataclass(frozen=True)
class NodeView:
    """One line of ``CLUSTER NODES``: a node as another node sees it."""

    node_id: str
    port: int
    flags: frozenset[str]
    primary_id: str | None  # for a replica, its primary's id
    slots: tuple[tuple[int, int], ...]

    @property
    def is_primary(self) -> bool:
        return "master" in self.flags

    @property
    def failing(self) -> bool:
        return bool(self.flags & {"fail", "fail?", "handshake", "noaddr"})

    @classmethod
    def parse(cls, line: str) -> NodeView:
        node_id, address, flags, primary, _ping, _pong, _epoch, _link, *slots = line.split()
        port = int(address.split("@", 1)[0].rsplit(":", 1)[1])
        ranges = []
        for item in slots:
            if item.startswith("["):  # a slot being migrated: none are here
                continue
            start, _, end = item.partition("-")
            ranges.append((int(start), int(end or start)))
        return cls(node_id, port, frozenset(flags.split(",")), None if primary == "-" else primary, tuple(ranges))


class LocalCluster:
    """``primaries`` primaries with ``replicas`` replicas each, on 127.0.0.1, stopped by ``stop()``."""

    def __init__(
        self,
        group: ProcGroup,
        work_dir: Path,
        *,
        primaries: int = 3,
        replicas: int = 1,
        password: str | None = None,
        node_timeout_ms: int = NODE_TIMEOUT_MS,
    ) -> None:
        server, cli = shutil.which("redis-server"), find_redis_cli()
        assert server and cli, "redis-server and redis-cli are needed (scripts/setup.sh installs them)"
        self.cli = cli
        self.primaries, self.replicas, self.password = primaries, replicas, password
        self.nodes = [
            ClusterNode(
                group,
                Path(work_dir) / f"node-{i}",
                name=f"cluster-node-{i}",
                password=password,
                node_timeout_ms=node_timeout_ms,
                binary=server,
            )
            for i in range(primaries * (1 + replicas))
        ]

    # -- lifecycle -------------------------------------------------------------

    def start(self) -> LocalCluster:
        for node in self.nodes:
            node.start()
        self._create()
        # The cluster calls a replica "loading", and leaves it out of CLUSTER SLOTS (so clients never learn
        # of it), while its replication offset is 0: one write on each primary moves the offsets on.
        self.flushall()
        self.wait_whole()
        return self

    def _create(self) -> None:
        argv = [
            *(self.cli, "--cluster", "create", *(n.address for n in self.nodes)),
            *("--cluster-replicas", str(self.replicas), "--cluster-yes"),
            *self._cli_auth(),
        ]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=SETTLE_TIMEOUT, stdin=subprocess.DEVNULL)
        if done.returncode != 0 or "[OK] All 16384 slots covered" not in done.stdout:
            raise AssertionError(f"redis-cli --cluster create failed ({done.returncode}):\n{done.stdout}{done.stderr}")

    def _cli_auth(self) -> list[str]:
        return ["-a", self.password, "--no-auth-warning"] if self.password else []

    def stop(self) -> None:
        """SIGTERM every live node at once, then SIGKILL whichever has not exited after STOP_TIMEOUT."""
        live = [n for n in self.nodes if n.alive]
        for node in live:
            assert node.proc is not None, "a live node has a process"
            node.proc.terminate()
        deadline = time.monotonic() + STOP_TIMEOUT
        for node in live:
            assert node.proc is not None, "a live node has a process"
            try:
                node.proc.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                node.proc.kill()
            node.proc.close()

    # -- what it offers --------------------------------------------------------

    @property
    def seeds(self) -> str:
        """Every node as ``host:port,host:port,...``: ``OCRGW_REDIS_CLUSTER``."""
        return ",".join(n.address for n in self.nodes)

    def env(self, min_replicas: int = 0) -> dict[str, str]:
        """What points an ocrgw process at this cluster (REDIS_URL: only its password counts)."""
        auth = f":{quote(self.password, safe='')}@" if self.password else ""
        return {
            "REDIS_URL": f"redis://{auth}{self.nodes[0].address}/0",
            "OCRGW_REDIS_CLUSTER": self.seeds,
            "OCRGW_MIN_REPLICAS": str(min_replicas),
        }

    def client(self, **kwargs: Any) -> RedisCluster:
        """A redis-py ``RedisCluster`` seeded with every node. Close it (or use it as a context manager)."""
        seeds = [SeedNode(n.host, n.port) for n in self.nodes]
        options: dict[str, Any] = {"socket_timeout": 5, "socket_connect_timeout": 2, **kwargs}
        if self.password:
            options.setdefault("password", self.password)
        return RedisCluster(startup_nodes=seeds, **options)

    def flushall(self) -> None:
        """Empty every primary (their replicas follow): each live node that calls itself one."""
        for node in self.nodes:
            if node.alive and node.replication().get("role") == "master":
                with node.admin() as client:
                    client.flushall()

    def by_port(self, port: int) -> ClusterNode:
        return next(n for n in self.nodes if n.port == port)

    def owner(self, key: str | bytes) -> Owner:
        """The slot of ``key`` and the nodes serving it, as a live node of the cluster sees them now."""
        node = self._any_live()
        with node.admin() as client:
            slot = int(client.execute_command("CLUSTER", "KEYSLOT", key))
        views = [v for v in self._views(node) if not v.failing]
        primary = next(v for v in views if v.is_primary and any(a <= slot <= b for a, b in v.slots))
        replicas = tuple(self.by_port(v.port) for v in views if v.primary_id == primary.node_id)
        return Owner(slot, self.by_port(primary.port), replicas)

    def primaries_now(self) -> list[ClusterNode]:
        """The nodes serving slots now, as a live node sees them."""
        return [self.by_port(v.port) for v in self._views(self._any_live()) if v.is_primary and v.slots]

    # -- failures --------------------------------------------------------------

    def fail_over(self, key: str | bytes) -> ClusterNode:
        """SIGKILL the primary of ``key``'s slot; return its replica once that serves the slot.

        Returns only when every live node says ``cluster_state:ok`` and names
        the former replica as the slot's primary, and the former replica
        calls itself a primary: from then on a client that follows MOVED
        reaches the slot again.
        """
        before = self.owner(key)
        assert before.replicas, f"slot {before.slot} has no replica to promote"
        before.primary.kill()
        candidates = {r.port for r in before.replicas}

        def promoted() -> ClusterNode | None:
            try:
                views = {n.port: self._views(n) for n in self.nodes if n.alive}
                if any(n.cluster_info().get("cluster_state") != "ok" for n in self.nodes if n.alive):
                    return None
            except (redis.ConnectionError, redis.TimeoutError):
                return None
            serving = {_serving(seen, before.slot) for seen in views.values()}
            port = serving.pop() if len(serving) == 1 else None
            if port is None or port not in candidates:  # not yet agreed by every live node on one of the replicas
                return None
            node = self.by_port(port)
            return node if node.replication().get("role") == "master" else None

        return wait_until(
            promoted,
            SETTLE_TIMEOUT,
            0.1,
            message=lambda: f"no replica of port {before.primary.port} took slot {before.slot} over\n{self.describe()}",
        )

    def restore(self) -> None:
        """Start every killed node again (each rejoins as a replica) and wait until the cluster is whole."""
        for node in self.nodes:
            if not node.alive:
                node.start()
        self.wait_whole()

    def wait_whole(self) -> None:
        """Wait until every node is up, says ``cluster_state:ok``, and every replica has synced.

        Synced as the replica says (``master_link_status:up``, no sync in progress) and as
        every node says (``CLUSTER SHARDS``: healthy), so clients are told of every replica.
        """
        wait_until(
            self._whole,
            SETTLE_TIMEOUT,
            0.1,
            message=lambda: f"the cluster never became whole\n{self.describe()}",
        )

    def _whole(self) -> bool:
        try:
            if not all(n.alive for n in self.nodes):
                return False
            if any(not _healthy(n.cluster_info()) for n in self.nodes):
                return False
            views = [self._views(n) for n in self.nodes]
            if any(_shape(v) != _shape(views[0]) for v in views):  # every node agrees on who is whose replica
                return False
            shape = _shape(views[0])
            if len(shape) != self.primaries or any(len(r) != self.replicas for r in shape.values()):
                return False
            if not all(_synced(n.replication()) for n in self.nodes if n.port not in shape):
                return False
            return all(_all_online(n) for n in self.nodes)  # as each node tells its clients
        except (redis.ConnectionError, redis.TimeoutError):
            return False

    # -- inspection --------------------------------------------------------------

    def _any_live(self) -> ClusterNode:
        for node in self.nodes:
            if node.alive:
                return node
        raise AssertionError("no node of the cluster is running")

    @staticmethod
    def _views(node: ClusterNode) -> list[NodeView]:
        with node.admin() as client:
            text = client.execute_command("CLUSTER", "NODES")
        return [NodeView.parse(line) for line in text.splitlines() if line.strip()]

    def describe(self) -> str:
        """Every node's state, its ``CLUSTER NODES`` view as the first live node has it: for failure messages."""
        lines = []
        for node in self.nodes:
            if not node.alive:
                lines.append(f"{node.name} {node.address}: not running")
                continue
            try:
                info, role = node.cluster_info(), node.replication()
                lines.append(
                    f"{node.name} {node.address}: cluster_state={info.get('cluster_state')} "
                    f"role={role.get('role')} link={role.get('master_link_status', '-')}"
                )
            except (redis.ConnectionError, redis.TimeoutError) as exc:
                lines.append(f"{node.name} {node.address}: {exc}")
        try:
            with self._any_live().admin() as client:
                lines.append(client.execute_command("CLUSTER", "NODES"))
        except (AssertionError, redis.ConnectionError, redis.TimeoutError):
            pass
        return "\n".join(lines)


def _healthy(info: dict[str, str]) -> bool:
    return info.get("cluster_state") == "ok" and info.get("cluster_slots_ok") == str(SLOTS)


def _shape(views: Iterable[NodeView]) -> dict[int, frozenset[int]]:
    """Each primary's port and its replicas' ports, or {} while a node is failing."""
    views = list(views)
    if any(v.failing for v in views):
        return {}
    ports = {v.node_id: v.port for v in views}
    return {
        v.port: frozenset(ports[r.primary_id] for r in views if r.primary_id == v.node_id)
        for v in views
        if v.is_primary
    }


def _all_online(node: ClusterNode) -> bool:
    """Whether ``node``'s ``CLUSTER SHARDS`` reports every node healthy (neither failed nor loading)."""
    with node.admin() as client:
        shards = client.execute_command("CLUSTER", "SHARDS")
    return all(member["health"] == "online" for shard in shards for member in shard["nodes"])


def _serving(views: Iterable[NodeView], slot: int) -> int | None:
    """The port of the primary that ``views`` (one node's) say serves ``slot``."""
    for view in views:
        if view.is_primary and not view.failing and any(a <= slot <= b for a, b in view.slots):
            return view.port
    return None


def _synced(replication: dict[str, Any]) -> bool:
    return (
        replication.get("role") == "slave"
        and replication.get("master_link_status") == "up"
        and not int(replication.get("master_sync_in_progress", 0))
    )


# -- a cluster for a developer ---------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.redis_cluster",
        description="Run a local Redis Cluster (3 primaries, 1 replica each) until Ctrl-C.",
    )
    parser.add_argument("--primaries", type=int, default=3)
    parser.add_argument("--replicas", type=int, default=1, help="replicas per primary")
    parser.add_argument("--password", help="requirepass and masterauth of every node")
    parser.add_argument("--dir", type=Path, help="where the nodes keep their files and logs (kept afterwards)")
    args = parser.parse_args(argv)
    work = args.dir or Path(tempfile.mkdtemp(prefix="ocrgw-cluster-"))
    group = ProcGroup(work, label="redis cluster")
    cluster = LocalCluster(group, work, primaries=args.primaries, replicas=args.replicas, password=args.password)
    # SIGTERM stops the cluster as Ctrl-C does; the nodes run in sessions of their own, so neither reaches them.
    # Ctrl-C's handler is set too: started from a background job of a shell without job control (`cmd &` in a
    # script), a process inherits SIGINT ignored, and Python then leaves it so: Ctrl-C would never stop it.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        cluster.start()
        print(f"Redis Cluster up, logs in {work / 'logs'}", flush=True)
        for name, value in cluster.env().items():
            print(f"export {name}={shlex.quote(value)}", flush=True)
        print("Ctrl-C stops it.", flush=True)
        while True:  # until a signal: a node killed meanwhile (to try a failover) is no reason to stop
            time.sleep(3600)
    except KeyboardInterrupt:
        return 0
    finally:
        cluster.stop()
        group.close()
        if args.dir is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
