#!/usr/bin/env bash
# Compile the lock files in requirements/ from pyproject.toml (`make lock`): every package pinned,
# with its hashes, resolved for the Python that runs this (3.11, as scripts/setup.sh's .venv):
#
#   requirements/cli.txt      the command line only (`pip install ocrgw`)
#   requirements/server.txt   the extras `server`, `docs` (the manual it serves) and `otel` (traces, off
#                             until configured): every server role and `ocrgw up`
#   requirements/test.txt     every extra (server, test, flower, ...), the server's packages at the
#                             versions of server.txt: what scripts/setup.sh --tests installs
#
# The locks must install on every 3.11: a package needed only on some 3.11 releases (async-timeout, for
# redis below 3.11.3) is required in pyproject.toml unconditionally, or the resolver here leaves it out.
#
# A new extra is in test.txt at once; one that server machines install with the server joins
# server.txt with `--extra NAME` on its line below.
#
# A rerun keeps the pins the files already have and adds what pyproject.toml gained since; to move
# every pin to the newest release that fits: make lock ARGS=--upgrade (or --upgrade-package NAME).
#
#   PYTHON=...   the interpreter with pip-tools (default: .venv/bin/python, which --tests installs it into)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON="${PYTHON:-$ROOT/.venv/bin/python}"

die() { printf '[lock] error: %s\n' "$*" >&2; exit 1; }

[[ -x "$PYTHON" ]] || die "$PYTHON not found: run scripts/setup.sh --tests first, or set PYTHON=..."
"$PYTHON" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' \
    || die "$("$PYTHON" -V 2>&1) would lock for another Python: the lock is for 3.11 (set PYTHON=...)"
"$PYTHON" -c 'import piptools' 2>/dev/null || die "$PYTHON has no pip-tools: pip install pip-tools"

# The lock is the public index's releases only: a machine's own pip configuration (a constraints
# file, local indexes or wheel folders) must not shape it.
export PIP_CONFIG_FILE=/dev/null
unset PIP_CONSTRAINT PIP_FIND_LINKS PIP_INDEX_URL PIP_EXTRA_INDEX_URL
# The header of each file names the command that remakes it.
export CUSTOM_COMPILE_COMMAND="make lock"

compile() {
    local output="$1"
    shift
    printf '[lock] %s\n' "$output"
    "$PYTHON" -m piptools compile --quiet --resolver backtracking --generate-hashes --allow-unsafe \
        --strip-extras --no-emit-index-url --no-emit-find-links \
        --output-file "$output" "$@" pyproject.toml
}

cd "$ROOT"
mkdir -p requirements
compile requirements/cli.txt "$@"
compile requirements/server.txt --extra server --extra docs --extra otel "$@"
compile requirements/test.txt --all-extras --constraint requirements/server.txt "$@"
