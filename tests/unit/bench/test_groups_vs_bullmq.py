"""groups_vs_bullmq's arithmetic and its Node side's pins, without Node, Redis or a stack.

The benchmark itself runs in the bench smoke test (tests/integration/test_bench_smoke.py);
here: which children count as started through a message, what a round's
breakdown per child says, that a missing node says how to get it, and that
BullMQ is pinned exactly, by a lock that names no registry.
"""

from __future__ import annotations

import json

import pytest

from bench import groups_vs_bullmq
from bench.capacity_stats import NO_LUA, Usage
from bench.groups_vs_bullmq import NODE_DIR, Round, breakdown, message_starts, node_tools


def test_a_start_at_no_childs_end_is_one_through_a_message():
    # Given two kept-slot hand-offs (each start is its predecessor's end, to the µs) and two first starts
    starts = [10.000001, 10.000002, 10.5, 10.7]
    ends = [10.5, 10.7, 10.9, 11.0]

    # Then only the two first starts came through a message
    assert message_starts(starts, ends) == 2


def test_a_rounds_breakdown_divides_its_span_over_the_worker_processes():
    # Given 4 children on 2 processes over 10 ms, each 4 ms in its job, and a store that ran 400 µs for them
    one = Round(
        started=100.0,
        parent_ends=[100.013],
        child_starts=[100.002, 100.002, 100.007, 100.008],
        child_ends=[100.006, 100.006, 100.011, 100.012],
        usage=Usage({"evalsha": [8.0, 400.0], "hset": [4.0, 40.0]}, cpu_seconds=0.002, wall_seconds=0.013),
        worker_cpu_seconds=0.004,
    )

    # When it is broken down per child
    figures = breakdown(one, workers=2, inner=frozenset({"hset"}), side="ocrgw")

    # Then a child held a process 5 ms, 4 of them in its job; the script's inner HSET counts once
    assert figures["seconds"] == pytest.approx(0.013)
    assert figures["submit_to_first_start_ms"] == pytest.approx(2.0)
    assert figures["slot_ms_per_child"] == pytest.approx(5.0)
    assert figures["in_job_ms_per_child"] == pytest.approx(4.0)
    assert figures["between_jobs_ms_per_child"] == pytest.approx(1.0)
    assert figures["store_exec_us_per_child"] == pytest.approx(100.0)
    assert figures["outside_redis_ms_per_child"] == pytest.approx(4.9)
    assert figures["store_commands_per_child"] == pytest.approx(3.0)
    assert figures["worker_cpu_ms_per_child"] == pytest.approx(1.0)
    assert figures["last_child_to_parent_ms"] == pytest.approx(1.0)
    assert figures["message_starts"] == 4


def test_bullmqs_breakdown_has_no_message_count():
    one = Round(100.0, [100.01], [100.001], [100.002], Usage({}, 0.0, 0.01), 0.0)
    assert breakdown(one, workers=2, inner=NO_LUA, side="bullmq")["message_starts"] is None


def test_without_node_the_benchmark_says_how_to_get_it(monkeypatch):
    monkeypatch.setattr(groups_vs_bullmq.shutil, "which", lambda name: None if name == "node" else f"/usr/bin/{name}")
    with pytest.raises(RuntimeError, match=r"node not found on PATH.*apt-get install nodejs npm"):
        node_tools()


def test_bullmq_is_pinned_exactly_by_a_lock_that_names_no_registry():
    package = json.loads((NODE_DIR / "package.json").read_text())
    lock = json.loads((NODE_DIR / "package-lock.json").read_text())
    assert set(package["dependencies"]) == {"bullmq", "ioredis"}
    for name, version in package["dependencies"].items():
        assert version[0].isdigit(), f"{name} is pinned to a range, {version!r}"
        assert lock["packages"][f"node_modules/{name}"]["version"] == version
        assert lock["packages"][""]["dependencies"][name] == version
    assert not any("resolved" in entry for entry in lock["packages"].values())
