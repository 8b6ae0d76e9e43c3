#!/usr/bin/env bash
# Start the whole ocrgw stack on this machine: set up what is missing, then
# `ocrgw up` (cli/stack.py), which runs the Procfile's processes (web, worker,
# coordinator, beat, webhooks) under honcho.
#
# With REDIS_URL set, that Redis is used as is. Without it, a private
# redis-server runs for this stack on a free port, with its data in
# .run/redis (AOF on, so queued jobs survive a restart of the stack), and is
# stopped after the other processes. Ctrl-C stops everything.
#
#   PORT=8000              the gateway's HTTP port
#   OCRGW_REDIS_PORT=...   the private Redis's port (default: a free one)
#   OCRGW_WORKER_METRICS_PORT=9101, OCRGW_COORDINATOR_METRICS_PORT=9102,
#   OCRGW_WEBHOOKS_METRICS_PORT=9103
#                          where the Celery processes serve /metrics (the gateway's is
#                          http://localhost:$PORT/metrics); files under .run/metrics
#
# Arguments go to `ocrgw up` (see `ocrgw up --help`).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

"$ROOT/scripts/setup.sh"
cd "$ROOT"
export OCRGW_METRICS_DIR="${OCRGW_METRICS_DIR:-$ROOT/.run/metrics}"
export OCRGW_WORKER_METRICS_PORT="${OCRGW_WORKER_METRICS_PORT:-9101}"
export OCRGW_COORDINATOR_METRICS_PORT="${OCRGW_COORDINATOR_METRICS_PORT:-9102}"
export OCRGW_WEBHOOKS_METRICS_PORT="${OCRGW_WEBHOOKS_METRICS_PORT:-9103}"
exec "$ROOT/.venv/bin/ocrgw" up --data-dir "$ROOT/.run/redis" "$@"
