#!/usr/bin/env bash
# Set up, check the code (ruff lint and format, mypy, over jobs documents gateway
# workers coordinator observability cli tests bench docs/hooks; configured in pyproject.toml),
# then run the test suite. Arguments go to pytest unchanged:
#
#   scripts/test.sh                         everything
#   scripts/test.sh tests/unit -q           one folder
#   scripts/test.sh -m "not chaos"          skip the process-killing tests
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
    # A fresh clone each run: no cache to keep, and a stuck test prints where.
    args+=(-p no:cacheprovider -o faulthandler_timeout=600)
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

rc=0
"$ROOT/.venv/bin/python" -m pytest "${args[@]}" "$@" || rc=$?
if [[ $rc -eq 5 ]]; then
    echo "[test] error: pytest collected no tests (exit 5); treating as a failure" >&2
    rc=1
fi
for name in "${failed_checks[@]}"; do
    echo "[test] error: $name failed (see its output above the tests)" >&2
    rc=1
done
exit "$rc"
