"""A family of processes shares one fresh metrics directory, and one exposition sums them all.

Each case runs in a fresh interpreter: prometheus_client chooses multiprocess
mode once per process, and this test process has made its choice.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

ROOT = Path(__file__).resolve().parents[3]


def run(script: str, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "PROMETHEUS_MULTIPROC_DIR"}
    # The timeout only bounds a hang.
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script), *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def samples(text: str, name: str) -> dict[tuple, float]:
    return {
        tuple(sorted(s.labels.items())): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
        if s.name == name
    }


FAMILY = """
    import os, sys
    from prometheus_client import generate_latest
    from jobs.config import Settings
    from observability import metrics, multiprocess

    directory = multiprocess.use_directory("web", Settings(metrics_dir=sys.argv[1]))
    print(directory, flush=True)
    children = []
    for i in range(3):
        pid = os.fork()
        if pid == 0:
            metrics.submitted("single", "echo")
            os._exit(0)
        children.append(pid)
    for pid in children:
        os.waitpid(pid, 0)
        multiprocess.mark_dead(pid)
    metrics.submitted("group", "echo")
    sys.stdout.write(generate_latest(multiprocess.exposition_registry()).decode())
    multiprocess.remove_own_directory()
    print("removed" if not directory.exists() else "kept")
"""


def test_the_counts_of_every_process_of_the_family_are_summed_the_exited_ones_included(tmp_path):
    done = run(FAMILY, str(tmp_path))
    assert done.returncode == 0, done.stderr

    first, *exposition, last = done.stdout.splitlines()
    got = samples("\n".join(exposition) + "\n", "ocrgw_submissions_total")

    assert got == {(("model", "echo"), ("shape", "single")): 3, (("model", "echo"), ("shape", "group")): 1}
    assert Path(first).parent == tmp_path and Path(first).name.startswith("web-")
    assert last == "removed"


def test_a_new_family_removes_the_directories_of_exited_ones_and_keeps_those_of_live_ones(tmp_path):
    dead, live = tmp_path / "worker-999999999", tmp_path / f"worker-{os.getpid()}"
    # Not ours: another program's directory, and one of ours holding something else than metrics.
    foreign, odd = tmp_path / "build-999999999", tmp_path / "web-999999998"
    for directory in (dead, live, foreign, odd):
        directory.mkdir()
        (directory / "counter_1.db").write_bytes(b"")
    (odd / "notes.txt").write_text("kept")

    done = run(
        """
        import sys
        from jobs.config import Settings
        from observability import multiprocess
        print(multiprocess.use_directory("coordinator", Settings(metrics_dir=sys.argv[1])))
        """,
        str(tmp_path),
    )
    assert done.returncode == 0, done.stderr

    assert not dead.exists() and live.exists()
    assert foreign.exists() and odd.exists()
    made = Path(done.stdout.strip())
    assert made.exists() and list(made.iterdir()) == []  # the process exited without removing it: left for the next


def test_the_directory_must_be_chosen_before_any_metric_is_recorded(tmp_path):
    done = run(
        """
        import sys
        from jobs.config import Settings
        from observability import metrics, multiprocess
        metrics.submitted("single", "echo")
        multiprocess.use_directory("web", Settings(metrics_dir=sys.argv[1]))
        """,
        str(tmp_path),
    )

    assert done.returncode != 0
    assert "a metric was recorded before the process chose where metrics live" in done.stderr


def test_prometheus_client_imported_before_the_directory_is_chosen_writes_there_all_the_same(tmp_path):
    done = run(
        """
        import sys
        import prometheus_client
        from jobs.config import Settings
        from observability import metrics, multiprocess
        directory = multiprocess.use_directory("worker", Settings(metrics_dir=sys.argv[1]))
        metrics.page_done("echo", 0.5)
        print(sorted(p.name.split("_")[0] for p in directory.iterdir()))
        """,
        str(tmp_path),
    )

    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['histogram']"
