#!/usr/bin/env bash
# Start the whole ocrgw stack on this machine: web, worker, coordinator, beat
# (the Procfile), under honcho.
#
# With REDIS_URL set, that Redis is used as is. Without it, a private
# redis-server is started for this run (data in .run/redis, AOF on so queued
# jobs survive a restart of the stack) and shut down again when honcho exits.
#
#   PORT=8000              the gateway's HTTP port
#   OCRGW_REDIS_PORT=6379  the private Redis port (a free one is chosen if taken)
#   OCRGW_WORKER_METRICS_PORT=9101, OCRGW_COORDINATOR_METRICS_PORT=9102,
#   OCRGW_WEBHOOKS_METRICS_PORT=9103
#                          where the Celery processes serve /metrics (the gateway's is on PORT)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
RUN_DIR="$ROOT/.run"
REDIS_DIR="$RUN_DIR/redis"
REDIS_PIDFILE="$REDIS_DIR/redis.pid"
PY="$ROOT/.venv/bin/python"

export PORT="${PORT:-8000}"
REDIS_PORT="${OCRGW_REDIS_PORT:-6379}"
STARTED_REDIS=0
HONCHO_PID=""

say() { printf '[start] %s\n' "$*"; }
die() { printf '[start] error: %s\n' "$*" >&2; exit 1; }

port_in_use() {
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

free_port() {
    "$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

pid_alive() {
    [[ -n "${1:-}" ]] && kill -0 "$1" 2>/dev/null
}

# A redis left behind by a run that was killed outright (no trap ran) holds
# our data dir; stop it so this run owns .run/redis again.
stop_leftover_redis() {
    [[ -f "$REDIS_PIDFILE" ]] || return 0
    local pid
    pid="$(cat "$REDIS_PIDFILE" 2>/dev/null || true)"
    if pid_alive "$pid" && grep -q redis-server "/proc/$pid/cmdline" 2>/dev/null; then
        say "stopping redis left over from an earlier run (pid $pid)"
        kill -TERM "$pid"
        for _ in $(seq 50); do pid_alive "$pid" || break; sleep 0.1; done
    fi
    rm -f "$REDIS_PIDFILE"
}

start_private_redis() {
    mkdir -p "$REDIS_DIR"
    stop_leftover_redis
    if port_in_use "$REDIS_PORT"; then
        local wanted="$REDIS_PORT"
        REDIS_PORT="$(free_port)"
        say "port $wanted is taken by another program; using port $REDIS_PORT for redis"
    fi
    say "starting redis-server on 127.0.0.1:$REDIS_PORT (data in ${REDIS_DIR#"$ROOT"/})"
    redis-server --port "$REDIS_PORT" --bind 127.0.0.1 \
        --dir "$REDIS_DIR" --appendonly yes --save "" \
        --daemonize yes --pidfile "$REDIS_PIDFILE" \
        --logfile "$REDIS_DIR/redis.log" >/dev/null
    STARTED_REDIS=1
    wait_for_redis
    export REDIS_URL="redis://127.0.0.1:$REDIS_PORT/0"
}

wait_for_redis() {
    for _ in $(seq 100); do
        if [[ "$(redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping 2>/dev/null)" == PONG ]]; then
            return 0
        fi
        sleep 0.1
    done
    tail -n 20 "$REDIS_DIR/redis.log" >&2 || true
    die "redis-server did not answer PING on port $REDIS_PORT"
}

stop_private_redis() {
    [[ $STARTED_REDIS -eq 1 ]] || return 0
    STARTED_REDIS=0
    say "stopping private redis (port $REDIS_PORT)"
    # SHUTDOWN fsyncs the AOF before exiting; fall back to the pidfile.
    redis-cli -h 127.0.0.1 -p "$REDIS_PORT" shutdown >/dev/null 2>&1 \
        || { [[ -f "$REDIS_PIDFILE" ]] && kill -TERM "$(cat "$REDIS_PIDFILE")" 2>/dev/null; } \
        || true
}

on_signal() {
    # Ctrl-C reaches honcho from the terminal too; TERM covers a plain `kill`
    # of this script. honcho then stops its processes gracefully.
    if pid_alive "$HONCHO_PID"; then
        kill -TERM "$HONCHO_PID" 2>/dev/null || true
        wait "$HONCHO_PID" 2>/dev/null || true
    fi
    exit 130
}

print_usage() {
    cat <<EOF

  ocrgw is starting on http://localhost:$PORT  (Redis: $REDIS_URL)

  Make a sample page:
    .venv/bin/python scripts/make_sample.py page.png "Hello from ocrgw"

  Submit it and read the result:
    curl -s -X POST --data-binary @page.png -H 'Content-Type: image/png' "http://localhost:$PORT/jobs?model=tesseract"
    curl -s http://localhost:$PORT/jobs/<id>

  Metrics: http://localhost:$PORT/metrics (gateway), :$OCRGW_WORKER_METRICS_PORT (worker),
  :$OCRGW_COORDINATOR_METRICS_PORT (coordinator), :$OCRGW_WEBHOOKS_METRICS_PORT (webhooks)

  Stop with Ctrl-C.

EOF
}

main() {
    "$ROOT/scripts/setup.sh"
    cd "$ROOT"
    # The Procfile names celery and gunicorn bare: take them from the venv.
    export VIRTUAL_ENV="$ROOT/.venv"
    export PATH="$VIRTUAL_ENV/bin:$PATH"
    export OCRGW_BEAT_SCHEDULE="${OCRGW_BEAT_SCHEDULE:-$RUN_DIR/celerybeat-schedule}"
    # Metrics: each process family makes a fresh directory of its own under this one (see the README).
    export OCRGW_METRICS_DIR="${OCRGW_METRICS_DIR:-$RUN_DIR/metrics}"
    export OCRGW_WORKER_METRICS_PORT="${OCRGW_WORKER_METRICS_PORT:-9101}"
    export OCRGW_COORDINATOR_METRICS_PORT="${OCRGW_COORDINATOR_METRICS_PORT:-9102}"
    export OCRGW_WEBHOOKS_METRICS_PORT="${OCRGW_WEBHOOKS_METRICS_PORT:-9103}"
    export PYTHONUNBUFFERED=1
    if [[ -n "${REDIS_URL:-}" ]]; then
        print_usage
        exec "$ROOT/.venv/bin/honcho" start -f Procfile
    fi
    trap stop_private_redis EXIT
    trap on_signal INT TERM
    start_private_redis
    print_usage
    # Not exec: this shell stays to shut the private redis down afterwards.
    "$ROOT/.venv/bin/honcho" start -f Procfile &
    HONCHO_PID=$!
    local rc=0
    wait "$HONCHO_PID" || rc=$?
    exit "$rc"
}

main "$@"
