"""``python -m bench --quick`` runs end to end and writes every result file in its shape;
a phase that runs past its deadline stops the run, naming the benchmark and the phase.

Only that the benchmarks work is checked here, on tiny sizes; no figure is
compared with its target and no time is asserted: a loaded CI machine says
nothing about ocrgw's speed.  The deadline tests use tiny deadlines on waits
that would otherwise never end.
"""

from __future__ import annotations

import json
import re
import shutil
import signal
import subprocess
import sys
import threading
import time

import pytest

from bench.deadline import DeadlineExceeded, Deadlines
from bench.processes import HELPERS
from tests.harness import ROOT, in_ci, tail

pytestmark = pytest.mark.integration

#: What every benchmark's JSON holds.
COMMON_KEYS = {
    "name",
    "quick",
    "reps",
    "concurrency",
    "figures",
    "checks",
    "passed",
    "context",
    "method",
    "seconds",
    "phases",
}
CHECK_KEYS = {"figure", "value", "target", "passed"}

#: The figures each benchmark must report (nested dicts name their own keys).
FIGURES: dict[str, dict[str, set[str] | None]] = {
    "fanout_vs_canvas": {
        "children": None,
        "max_parallel": None,
        "median_seconds": {"a_group", "b_chord", "c_ocrgw", "m_ocrgw_messages"},
        "per_child_ms": {"a_group", "b_chord", "c_ocrgw", "m_ocrgw_messages"},
        "c_over_b": None,
        "c_over_a": None,
        "m_over_b": None,
    },
    "groups_at_once": {
        "children": None,
        "max_parallel": None,
        "rounds": None,
        "group_counts": None,
        **{str(groups): {"ocrgw_seconds", "chords_seconds", "ocrgw_over_chords", "target"} for groups in (1, 2, 5, 10)},
    },
    "groups_vs_bullmq": {
        "children": None,
        "worker_processes": None,
        "rounds": None,
        "group_counts": None,
        "versions": {"node", "bullmq", "ioredis"},
        **{str(groups): {"ocrgw_seconds", "bullmq_seconds", "ocrgw_over_bullmq", "target"} for groups in (1, 5)},
        "per_child": {"1", "5"},
        "ocrgw_minus_bullmq_per_child": {"1", "5"},
    },
    "handoff": {
        "children": None,
        **{
            f"{path}_max_parallel_{cap}": {"p50_ms", "p99_ms", "max_ms", "released_p50_ms", "released_p99_ms"}
            for path in ("kept", "message")
            for cap in (1, 4)
        },
    },
    "ocr_efficiency": {
        "pages": None,
        "pool": None,
        "tesseract": {"pages_per_s", "b_over_a", "char_accuracy", "same_text_both_sides"},
        "paddleocr": {"pages_per_s", "b_over_a", "char_accuracy", "same_text_both_sides"},
    },
    "page_orientation": {
        "pages": None,
        "turned": None,
        "ms_per_page": {"a_osd", "b_classifier"},
        "time_b_over_a": None,
        "right": {"a_osd", "b_classifier"},
    },
    "pdf_split": {
        "pages": None,
        "workers": None,
        "median_seconds": {"a_one_process", "b_split"},
        "pages_per_s": {"a_one_process", "b_split"},
        "speedup": None,
        "efficiency": None,
        "same_text_both_sides": None,
        "worker_utilization": None,
        "seconds_per_page": {"a_one_process", "b_child_run"},
    },
    "scan_vs_ocrmypdf": {
        "pages": None,
        "turned": None,
        "skewed": None,
        "scan_bytes": None,
        "seconds": {"a_ocrmypdf", "b_ocrgw"},
        "time_b_over_a": None,
        "mean_page_accuracy": {"a_ocrmypdf", "b_ocrgw"},
        "accuracy_b_minus_a_points": None,
        "bytes": {"a_ocrmypdf", "b_ocrgw", "b_ocrgw_optimize_2"},
        "size_b_over_a": None,
        "size_b_over_scan": None,
        "optimized_size_b_over_a": None,
        "optimized_accuracy_b_minus_a_points": None,
        "optimize_seconds": None,
    },
    "tesseract_engine": {
        "pages": None,
        "seconds_per_page": {"a_binary", "b_resident"},
        "time_b_over_a": None,
        "mean_page_accuracy": {"a_binary", "b_resident"},
        "accuracy_b_minus_a_points": None,
    },
    "resolution_vs_ocrmypdf": {
        name: {
            "true_dpi",
            "true_inches",
            "accuracy",
            "accuracy_b_minus_a_points",
            "ocrgw_dpi",
            "ocrgw_dpi_source",
            "ocrgw_inches",
            "ocrgw_size_error",
            "seconds",
        }
        for name in ("slide_2400dpi", "region_2400dpi", "png_no_dpi_letter", "png_no_dpi_a4")
    },
    "submission": {
        "clients": None,
        "children_per_group": None,
        "post_p50_ms": None,
        "post_p99_ms": None,
        "groups_per_s": None,
        "children_per_s": None,
        "apply_async_median_ms": None,
        "post_p50_over_apply_async": None,
    },
    "sweep_scaling": {
        "sweep_batch": None,
        "sizes": None,
        "due_growth_exponent": None,
    },
    "memory": {
        "payload_bytes": None,
        "redis": {"used_memory_delta_per_child", "memory_usage_per_child"},
        "worker_pool_rss_mib": {
            "started",
            "after_echo",
            "after_tesseract",
            "after_layout",
            "after_rotate_pages",
            "after_paddleocr",
        },
        "tesseract_subprocess_peak_mib": None,
        "layout_growth_mib": None,
    },
    "priority_lanes": {
        "jobs_per_round": None,
        "batch_pages": None,
        "page_ms": None,
        "idle": {"p50_ms", "p99_ms", "wait_p50_ms"},
        **{
            kind: {"p50_ms", "p99_ms", "p50_limit_ms", "p99_limit_ms", "wait_p50_ms", "batch_lane_job_ms"}
            for kind in ("uncapped", "kept_slots")
        },
    },
    "capacity": {
        "per_child": {"kept_group", "message_group", "message_single", "reclaim_group", "reclaim_single", "chord"},
        "core_share": None,
        "kept_over_chord_exec_us": None,
        "kept_over_chord_commands": None,
        "kept_over_chord_cpu_us": None,
        "saturation": {
            "children_per_second",
            "server_cpu_share",
            "exec_us",
            "cpu_us",
            "predicted_from_side",
            "predicted_from_own",
            "ceiling_from_cpu",
            "ceiling_from_exec_us",
        },
    },
    "document_structure": {
        "pages": None,
        "sides": {"scan_layout", "scan_tesseract_order", "born_digital_layout", "born_digital_text_layer_order"},
        "scan_pages_read_worse_than_tesseract_order": None,
        "layout_cost_on_over_off": None,
        "layout_cpu_cost_on_over_off": None,
        "born_digital_speed_ocr_over_structure": None,
        "seconds_per_page": None,
        "worker_pool_rss_mib": {"before_layout", "after_layout"},
        "memory_growth_mib": None,
        "peer": None,
    },
    "capacity_cluster": {
        "buckets": None,
        "primaries": None,
        "kept_groups": {
            "one",
            "cluster",
            "cluster_over_one_commands",
            "cluster_over_one_exec_us",
            "cluster_over_one_cpu_us",
        },
        "message_single": {
            "one",
            "cluster",
            "cluster_over_one_commands",
            "cluster_over_one_exec_us",
            "cluster_over_one_cpu_us",
        },
        "keys_per_primary": None,
        "keys_share_per_primary": None,
        "startup": {"one", "cluster"},
    },
    "inspection_budget": {
        "rounds": None,
        **{f"{kind}_median_ms": None for kind in ("ref", "bombs", "slow", "copies", "different")},
        **{f"{kind}_worst_ms": None for kind in ("ref", "bombs", "slow", "copies", "different")},
        **{f"{kind}_over_ref": None for kind in ("bombs", "slow", "copies", "different")},
        "body_bytes_bombs": None,
        "slow_refused": None,
    },
    "event_streams": {
        key: None
        for key in (
            "streams",
            "rss_before_mib",
            "rss_with_streams_mib",
            "growth_mib",
            "growth_per_stream_kib",
            "open_all_s",
            "group_running_when_measured",
            "ended_terminal",
            "every_audit_event",
        )
    },
}
SWEEP_SIZE_KEYS = {"idle_ms", "due_pass_ms", "due_passes", "due_total_ms", "passes_needed"}
CAPACITY_PATH_KEYS = {
    f"{server}_{figure}"
    for server in ("store", "broker")
    for figure in ("commands", "script_calls", "exec_us", "cpu_us")
} | {"children"}
MACHINE_KEYS = {"nproc", "cpu_model", "python", "redis"}


def _require(binary: str) -> None:
    if shutil.which(binary) is None:
        why = f"{binary} is not installed (scripts/setup.sh installs it)"
        if in_ci():
            pytest.fail(why, pytrace=False)
        pytest.skip(why)


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    _require("redis-server")
    _require("tesseract")
    _require("node")  # groups_vs_bullmq's reference, BullMQ, runs on Node.js
    _require("npm")
    out = tmp_path_factory.mktemp("bench-results")
    proc = subprocess.run(
        [sys.executable, "-m", "bench", "--quick", "--out", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        stdin=subprocess.DEVNULL,
    )
    return proc, out


def test_quick_bench_exits_zero(quick_run):
    proc, _ = quick_run
    assert proc.returncode == 0, (
        f"python -m bench --quick exited {proc.returncode}\n"
        f"stdout:\n{tail(proc.stdout, 80)}\nstderr:\n{tail(proc.stderr, 80)}"
    )
    assert "summary" in proc.stdout


@pytest.mark.parametrize("name", sorted(FIGURES))
def test_result_file_has_expected_keys(quick_run, name):
    _, out = quick_run
    path = out / f"{name}.json"
    assert path.is_file(), f"{path.name} was not written; files: {sorted(p.name for p in out.iterdir())}"
    data = json.loads(path.read_text())
    assert "error" not in data, data.get("error")
    assert data.keys() >= COMMON_KEYS, f"{name}: missing {COMMON_KEYS - data.keys()}"
    assert data["name"] == name and data["quick"] is True
    assert isinstance(data["passed"], bool)
    assert data["checks"], f"{name} reports no target"
    for entry in data["checks"]:
        assert entry.keys() >= CHECK_KEYS, entry
        assert isinstance(entry["passed"], bool)
    figures = data["figures"]
    for key, inner in FIGURES[name].items():
        assert key in figures, f"{name}: figure {key!r} missing; has {sorted(figures)}"
        if inner is not None:
            assert inner <= figures[key].keys(), f"{name}.{key}: missing {inner - figures[key].keys()}"
    if name == "sweep_scaling":
        for size in figures["sizes"]:
            assert figures[str(size)].keys() >= SWEEP_SIZE_KEYS
    if name == "capacity":
        for path, per_child in figures["per_child"].items():
            missing = CAPACITY_PATH_KEYS - per_child.keys()
            assert not missing, f"capacity.{path}: missing {missing}"
    phases = {entry["phase"] for entry in data["phases"]}
    assert name in phases, f"{name} did not run under its own deadline: {sorted(phases)}"
    assert len(phases) > 1, f"{name} ran no phase under a deadline"


def test_summary_names_every_benchmark_and_the_machine(quick_run):
    _, out = quick_run
    summary = json.loads((out / "summary.json").read_text())
    assert set(summary["benchmarks"]) == set(FIGURES)
    assert summary["machine"].keys() >= MACHINE_KEYS
    assert all(b["error"] is None for b in summary["benchmarks"].values())


# -- deadlines -----------------------------------------------------------------------


def test_a_phase_past_its_deadline_raises_naming_the_benchmark_and_the_phase():
    deadlines = Deadlines()
    handler = signal.getsignal(signal.SIGALRM)
    with (
        pytest.raises(DeadlineExceeded) as raised,
        deadlines.phase("sweep_scaling", 600),
        deadlines.phase("create 10,000 parents", 0.2),
    ):
        threading.Event().wait(30)  # a wait nothing ends: the deadline must
    assert str(raised.value) == "sweep_scaling: phase 'create 10,000 parents' ran past its deadline of 0.2 s"
    assert raised.value.path == ("sweep_scaling", "create 10,000 parents")
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    assert signal.getsignal(signal.SIGALRM) is handler


def test_a_benchmark_past_its_deadline_names_the_phase_it_was_in():
    deadlines = Deadlines()
    with (
        pytest.raises(DeadlineExceeded) as raised,
        deadlines.phase("handoff", 0.2),
        deadlines.phase("kept, max_parallel 1, 300 children", 600),
    ):
        threading.Event().wait(30)
    assert str(raised.value) == (
        "handoff (the benchmark as a whole) ran past its deadline of 0.2 s, "
        "in phase 'kept, max_parallel 1, 300 children'"
    )


def test_a_helper_process_still_running_at_the_deadline_is_killed():
    deadlines = Deadlines()
    helper = HELPERS.Process(target=time.sleep, args=(600,))
    helper.start()
    try:
        with (
            pytest.raises(DeadlineExceeded),
            deadlines.phase("sweep_scaling", 600),
            deadlines.phase("stop the helper processes", 0.5),
        ):
            helper.join()
        helper.join(30)
        assert helper.exitcode == -signal.SIGKILL
    finally:
        if helper.is_alive():
            helper.kill()
            helper.join()


def test_phases_within_their_deadlines_are_recorded_with_the_scaled_deadline():
    deadlines = Deadlines(scale=2.0)
    for _ in range(2):
        with deadlines.phase("memory", 600), deadlines.phase("start the worker", 300):
            pass
    report = {entry["phase"]: entry for entry in deadlines.report("memory")}
    assert report.keys() == {"memory", "memory > start the worker"}
    assert report["memory > start the worker"]["deadline_seconds"] == 600
    assert report["memory"]["deadline_seconds"] == 1200
    assert report["memory"]["runs"] == 2
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


def test_a_run_past_a_deadline_stops_there_and_says_where(tmp_path):
    _require("redis-server")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench",
            "--quick",
            "--only",
            "sweep_scaling,memory",
            "--deadline-scale",
            "0.0001",
            "--out",
            str(tmp_path),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        stdin=subprocess.DEVNULL,
    )
    kept = re.search(r"logs kept in (\S+)", proc.stderr)
    if kept:
        shutil.rmtree(kept.group(1), ignore_errors=True)
    assert proc.returncode == 1, f"stdout:\n{tail(proc.stdout, 40)}\nstderr:\n{tail(proc.stderr, 40)}"
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["stopped"].startswith("sweep_scaling"), summary["stopped"]
    assert "ran past its deadline" in summary["stopped"]
    assert summary["not_run"] == ["memory"]
    assert f"the run stops here: {summary['stopped']}" in proc.stderr
    assert "DeadlineExceeded" in json.loads((tmp_path / "sweep_scaling.json").read_text())["error"]
