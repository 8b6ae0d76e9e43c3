#!/usr/bin/env bash
# Set up, check the code (ruff lint and format, mypy, over jobs documents gateway
# workers coordinator observability cli tests bench docs/hooks; configured in pyproject.toml),
# then run the test suite. Arguments go to pytest unchanged:
#
#   scripts/test.sh                         everything
#   scripts/test.sh tests/unit -q           one folder
#   scripts/test.sh -m "not chaos"          skip the process-killing tests
#   OCRGW_TEST_STORE=cluster scripts/test.sh tests/integration/test_fanout.py
#                                           the stacks' store on a local Redis Cluster
#
# Without arguments (the CI run) pytest runs twice: the suite on a standalone
# Redis store, minus the tests marked `cluster`; then, with
# OCRGW_TEST_STORE=cluster, a smoke subset on a local Redis Cluster (the
# tests marked `cluster` and a handful of core, controls, fair-share, priority and reliability
# tests, CLUSTER_SMOKE below), so that the cluster starts in one pass only.
#
# Redis and the Celery/gunicorn processes are started by the test fixtures
# (tests/conftest.py), each on a free loopback port, so nothing needs to be
# running beforehand. A run that collects no test fails: a green run must
# mean tests actually ran. A failing check fails the run too, after pytest
# has run, so that one run reports both.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

"$ROOT/scripts/setup.sh" --tests
cd "$ROOT"

# Logs reach the fixtures' log files as they happen, and a hang dumps stacks.
export PYTHONUNBUFFERED=1
export PYTHONFAULTHANDLER=1
# Tesseract's OpenMP threads would oversubscribe the cores that the test
# workers already share.
export OMP_THREAD_LIMIT="${OMP_THREAD_LIMIT:-1}"

args=()
if [[ "${CI:-}" == "true" ]]; then
    # A fresh clone each run: no cache to keep, and a stuck test prints where; the slowest tests are
    # listed, so that the suite's budget (30 minutes on two cores) is watched where it is spent.
    args+=(-p no:cacheprovider -o faulthandler_timeout=600 --durations=25)
fi

CHECKED=(jobs documents gateway workers coordinator observability cli tests bench docs/hooks)
failed_checks=()
check() {
    local name="$1"
    shift
    echo "[test] $name"
    "$@" || failed_checks+=("$name")
}
check "ruff check" "$ROOT/.venv/bin/ruff" check "${CHECKED[@]}"
check "ruff format --check" "$ROOT/.venv/bin/ruff" format --check "${CHECKED[@]}"
check "mypy" "$ROOT/.venv/bin/mypy" "${CHECKED[@]}"

# The cluster pass: the stacks' store on a Redis Cluster (three primaries, a replica each), the
# broker a standalone redis-server. About two to three minutes on two cores.
CLUSTER_SMOKE=(
    tests/integration/test_redis_cluster_infra.py
    tests/integration/test_cluster_client.py
    tests/integration/test_cluster_store.py
    tests/integration/test_cluster_failover.py
    tests/integration/test_fair_share.py
    tests/integration/test_priority_lanes.py
    tests/integration/test_single_jobs.py::test_echo_with_a_delay_completes_with_its_text
    tests/integration/test_single_jobs.py::test_corrupt_png_fails_as_invalid_document_and_the_worker_keeps_serving
    tests/integration/test_fanout.py::test_max_parallel_caps_running_children_below_free_worker_slots
    tests/integration/test_fanout.py::test_idempotent_resubmit_returns_the_same_parent_and_creates_no_children
    tests/integration/test_fanout.py::test_sweep_republishes_a_queued_job_whose_message_was_never_sent
    tests/integration/test_controls.py::test_cancel_a_running_child_a_held_child_then_the_group
    tests/integration/test_controls.py::test_a_cap_raised_then_lowered_mid_run_holds_at_every_moment
    tests/integration/test_reliability.py::test_an_engine_crash_is_reclaimed_by_the_sweep_until_the_last_attempt
    tests/integration/test_reliability.py::test_an_attempt_that_lost_its_lease_cannot_overwrite_the_attempt_that_replaced_it
    tests/integration/test_reliability.py::test_the_drain_command_drains_every_gateway_until_it_is_turned_off
)

# pytest, where exit 5 (no test collected) is a failure too.
run_pytest() {
    local status=0
    "$ROOT/.venv/bin/python" -m pytest "$@" || status=$?
    if [[ $status -eq 5 ]]; then
        echo "[test] error: pytest collected no tests (exit 5); treating as a failure" >&2
        status=1
    fi
    return "$status"
}

rc=0
if [[ $# -gt 0 ]]; then
    run_pytest "${args[@]}" "$@" || rc=$?
else
    echo "[test] pytest: the suite on a standalone Redis store (the cluster's tests in the next pass)"
    OCRGW_TEST_STORE=standalone run_pytest "${args[@]}" -m "not cluster" || rc=$?
    # The store's transitions again with the keys spread over a cluster's 24 buckets (one bucket above),
    # beside the cluster pass: that one mostly waits on its processes, this one takes one core, and
    # running them one after the other would cost the suite a minute and a half.
    buckets_log="$(mktemp)"
    OCRGW_TEST_STORE_BUCKETS=24 run_pytest "${args[@]}" tests/unit/jobs >"$buckets_log" 2>&1 &
    buckets_pid=$!
    echo "[test] pytest: OCRGW_TEST_STORE=cluster, a smoke subset on a local Redis Cluster"
    OCRGW_TEST_STORE=cluster run_pytest "${args[@]}" "${CLUSTER_SMOKE[@]}" || rc=$?
    buckets_rc=0
    wait "$buckets_pid" || buckets_rc=$?
    echo "[test] pytest: OCRGW_TEST_STORE_BUCKETS=24, the store's unit tests (run beside the cluster pass)"
    cat "$buckets_log"
    rm -f "$buckets_log"
    [[ $buckets_rc -eq 0 ]] || rc=$buckets_rc
fi
for name in "${failed_checks[@]}"; do
    echo "[test] error: $name failed (see its output above the tests)" >&2
    rc=1
done
exit "$rc"
