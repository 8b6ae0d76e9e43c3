"""The local Redis Cluster the store's cluster tests run on (``tests/redis_cluster.py``).

Three primaries with a replica each, made by ``redis-cli --cluster create``:
these tests check that it is what it claims to be before anything is built
on it.  Every slot is served, keys spread over the primaries, keys sharing
a hash tag stay together, a script touching two slots is refused with
``CROSSSLOT`` (what every transition on a cluster must avoid), and a
primary SIGKILLed after ``WAIT 1`` loses nothing: its replica takes the
slot over, and the killed node comes back as a replica.  The developer's
``python -m tests.redis_cluster`` is run once, with a password.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys

import pytest
import redis
from redis.cluster import RedisCluster
from redis.exceptions import ClusterCrossSlotError, RedisClusterException

from tests.harness import ROOT, Proc, wait_until
from tests.redis_cluster import SLOTS, ClusterNode, LocalCluster

pytestmark = [pytest.mark.integration, pytest.mark.cluster]

#: A script writing each of its keys, so it touches every slot its keys are in.
WRITE_EACH_KEY = "for i, key in ipairs(KEYS) do redis.call('SET', key, ARGV[1]) end return #KEYS"


def slot_ranges(node: ClusterNode) -> list[tuple[int, int, int, list[int]]]:
    """``CLUSTER SLOTS`` as ``node`` answers it: (first, last, primary port, replica ports)."""
    with node.admin() as client:
        reply = client.execute_command("CLUSTER", "SLOTS")
    return [(int(r[0]), int(r[1]), int(r[2][1]), [int(replica[1]) for replica in r[3:]]) for r in reply]


def keys_on_every_primary(cluster: LocalCluster, count: int = 30) -> list[str]:
    keys = [f"ocrgw:probe:{i}" for i in range(count)]
    assert {cluster.owner(k).primary.port for k in keys} == {n.port for n in cluster.primaries_now()}, (
        f"{count} keys did not reach every primary"
    )
    return keys


def test_three_primaries_each_with_one_synced_replica_serve_all_16384_slots(empty_cluster: LocalCluster):
    for node in empty_cluster.nodes:  # every node, replicas included, sees the same whole map
        ranges = sorted(slot_ranges(node))
        assert ranges[0][0] == 0 and ranges[-1][1] == SLOTS - 1
        assert all(later[0] == earlier[1] + 1 for earlier, later in zip(ranges, ranges[1:], strict=False))
        primaries = {r[2] for r in ranges}
        replicas = {r[2]: r[3] for r in ranges}
        assert len(primaries) == 3 and all(len(ports) == 1 for ports in replicas.values())
        assert primaries | {p for ports in replicas.values() for p in ports} == {n.port for n in empty_cluster.nodes}
        assert node.cluster_info()["cluster_state"] == "ok"
    for port, (replica,) in replicas.items():
        role = empty_cluster.by_port(replica).replication()
        assert (role["role"], role["master_port"], role["master_link_status"]) == ("slave", port, "up")
    assert empty_cluster.seeds == ",".join(f"127.0.0.1:{n.port}" for n in empty_cluster.nodes)


def test_keys_written_through_redis_cluster_read_back_from_the_node_serving_their_slot(empty_cluster: LocalCluster):
    keys = keys_on_every_primary(empty_cluster)
    with empty_cluster.client(decode_responses=True) as client:
        for key in keys:
            client.set(key, f"value of {key}")
        assert [client.get(k) for k in keys] == [f"value of {k}" for k in keys]
    for key in keys:
        with empty_cluster.owner(key).primary.admin() as node:
            assert node.get(key) == f"value of {key}"


def test_keys_sharing_a_hash_tag_share_a_slot_and_one_script_may_write_them_all(empty_cluster: LocalCluster):
    tagged = ["ocrgw:{b042}:job:1", "ocrgw:{b042}:job:2", "ocrgw:{b042}:leases", "ocrgw:{b042}:queued"]
    owners = {empty_cluster.owner(k) for k in tagged}
    assert len(owners) == 1
    (owner,) = owners
    with empty_cluster.client(decode_responses=True) as client:
        assert {client.keyslot(k) for k in tagged} == {owner.slot}
        assert client.eval(WRITE_EACH_KEY, len(tagged), *tagged, "x") == len(tagged)
    with owner.primary.admin() as node:
        assert node.execute_command("CLUSTER", "COUNTKEYSINSLOT", owner.slot) == len(tagged)


def test_a_script_touching_two_slots_is_refused_with_crossslot(empty_cluster: LocalCluster):
    first, second = "ocrgw:{b001}:job", "ocrgw:{b002}:job"
    assert empty_cluster.owner(first).slot != empty_cluster.owner(second).slot
    with empty_cluster.owner(first).primary.admin() as node:
        with pytest.raises(ClusterCrossSlotError, match="hash to the same slot"):
            node.eval(WRITE_EACH_KEY, 2, first, second, "x")
        # Naming one key and building the other inside the script is refused too, but only when the
        # script reaches it: what it wrote before stays written (a failing script is not rolled back).
        build_second = "redis.call('SET', KEYS[1], 'x') return redis.call('SET', ARGV[1], 'x')"
        with pytest.raises(redis.ResponseError, match="same slot|non local key"):
            node.eval(build_second, 1, first, second)
        assert node.get(first) == "x"
    with empty_cluster.client() as client:
        # redis-py refuses before sending, so a transition's keys must share a tag by construction.
        with pytest.raises(RedisClusterException, match="same key slot"):
            client.eval(WRITE_EACH_KEY, 2, first, second, "x")
        assert client.exists(second) == 0


def test_a_killed_primary_s_replica_takes_its_slot_over_with_every_write_it_acknowledged(empty_cluster: LocalCluster):
    key = "ocrgw:{failover}:probe"
    before = empty_cluster.owner(key)
    with empty_cluster.client(decode_responses=True) as client:
        counter = client.register_script("return redis.call('INCR', KEYS[1])")
        assert counter(keys=[f"{key}:count"]) == 1
        # WAIT counts the replicas that have this connection's writes: so on the primary that took the
        # write, in the same pipeline, never RedisCluster.wait() (which asks whichever node is its default).
        pipe = client.pipeline(transaction=False)
        pipe.set(key, "acknowledged")
        pipe.execute_command("WAIT", 1, 10_000, target_nodes=client.get_node(node_name=before.primary.address))
        assert pipe.execute() == [True, 1]

        promoted = empty_cluster.fail_over(key)

        assert promoted in before.replicas
        assert empty_cluster.owner(key).primary is promoted
        assert client.get(key) == "acknowledged"  # the same client, following the slot to its new primary
        assert counter(keys=[f"{key}:count"]) == 2  # the promoted replica may not know the script: reloaded
    empty_cluster.restore()
    after = empty_cluster.owner(key)
    assert (after.primary, after.replicas) == (promoted, (before.primary,))


def test_the_developer_command_runs_a_password_protected_cluster_until_interrupted(tmp_path):
    password = "s3cret:w/@"
    command = Proc(
        "redis-cluster-command",
        [sys.executable, "-m", "tests.redis_cluster", "--password", password, "--dir", str(tmp_path / "cluster")],
        tmp_path / "command.log",
        env={"PYTHONPATH": str(ROOT)},
    )
    pids: list[int] = []
    command.start()
    try:
        command.wait_ready("Ctrl-C stops it", timeout=120)
        seeds = re.search(r"^export OCRGW_REDIS_CLUSTER=(\S+)$", command.log_text(), re.MULTILINE)
        assert seeds, command.log_tail()
        ports = [int(address.rpartition(":")[2]) for address in seeds.group(1).split(",")]
        pids += [node_pid(port, password) for port in ports]
        with RedisCluster(host="127.0.0.1", port=ports[0], password=password, decode_responses=True) as client:
            assert client.set("ocrgw:{dev}:k", "v") and client.get("ocrgw:{dev}:k") == "v"
            assert len(client.get_primaries()) == 3 and len(client.get_replicas()) == 3
        os.kill(command.pid, signal.SIGINT)
        assert command.wait(timeout=60) == 0, command.log_tail()
        wait_until(lambda: not any(map(running, pids)), 30, message="a node outlived the command")
    finally:
        if command.alive:  # it stops its nodes on SIGTERM as on Ctrl-C; they are in sessions of their own
            command.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                command.wait(timeout=30)
        command.close()
        for pid in filter(running, pids):
            os.kill(pid, signal.SIGKILL)


def node_pid(port: int, password: str) -> int:
    with redis.Redis(host="127.0.0.1", port=port, password=password) as node:
        return int(node.info("server")["process_id"])


def running(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie no longer does: it waits only to be reaped)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False
