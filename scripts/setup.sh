#!/usr/bin/env bash
# Prepare this machine to run ocrgw: system packages (Redis, Tesseract with
# the languages of OCRGW_TESSERACT_LANGS, `eng` by default, and its
# orientation data `osd`) and a project virtualenv in .venv with the server's
# packages from the lock requirements/server.txt (no test packages).  With --tests,
# also what only the test suite needs (the lock requirements/test.txt: every
# extra, the test tools among them; German for Tesseract; Chromium with
# its driver, for the dashboard's browser test; redis-sentinel, for the
# failover test; redis-cli, for the cluster tests; rabbitmq-server, for the tests with RabbitMQ as the broker;
# prometheus, for promtool, which tests the alert rules):
# scripts/test.sh passes it, scripts/start.sh does not.  With --bench, what
# `make bench` needs besides: the real PDF its scan is made from, and
# OCRmyPDF (into .venv) with Ghostscript, the reference the scan benchmark
# is measured against (--tests installs them too: the suite runs the bench
# once, quick), and the test lock (the bench drives the test harness); OCRmyPDF
# is never a dependency of ocrgw itself; and Debian's nodejs and npm, with which
# the bench installs BullMQ, the reference of groups_vs_bullmq, into bench/bullmq/
# (never a dependency of ocrgw either).
#
# It also builds the manual (mkdocs.yml, docs/) into gateway/manual/, which
# the gateway serves at /manual, whenever its sources are newer than it.
#
# OCRGW_TESSERACT_LANGS: Tesseract's language codes, separated by spaces or
# commas (`eng deu`, `eng,fra,chi_sim`); each is the package
# tesseract-ocr-<code>, with `_` written `-` (tesseract-ocr-chi-sim).
#
# The locks are made from pyproject.toml by `make lock` (scripts/lock.sh).
#
# Idempotent: each step checks before it acts, so a rerun on a ready machine
# installs nothing and prints one line. Concurrent runs serialise on a lock so
# two pip installs never write into the same .venv at once.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv"
STAMP="$VENV/.installed"
LOCK="$ROOT/.run/setup.lock"
PYTHON="${PYTHON:-python3}"
REAL_PDF=/usr/share/doc/shared-mime-info/shared-mime-info-spec.pdf
# The TrueType font the German page of the language tests is drawn in (tests/integration/test_languages.py).
TEST_FONT=/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf
MIN_PY="3.11"

say() { printf '[setup] %s\n' "$*"; }
die() { printf '[setup] error: %s\n' "$*" >&2; exit 1; }

# Run a command as root: directly when we are root, through sudo otherwise.
as_root() {
    if [[ $(id -u) -eq 0 ]]; then
        "$@"
    elif command -v sudo >/dev/null 2>&1; then
        sudo "$@"
    else
        die "need root to run: $* (not root and sudo is not installed)"
    fi
}

APT_UPDATED=0
FOR_TESTS=0
FOR_BENCH=0
[[ "${1:-}" == "--tests" ]] && FOR_TESTS=1
[[ "${1:-}" == "--bench" ]] && FOR_BENCH=1
apt_install() {
    command -v apt-get >/dev/null 2>&1 \
        || die "apt-get not found; install these by hand: $*"
    if [[ $APT_UPDATED -eq 0 ]]; then
        say "apt-get update"
        as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null
        APT_UPDATED=1
    fi
    say "apt-get install $*"
    as_root env DEBIAN_FRONTEND=noninteractive \
        apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

# The tests run the server itself, as the current user (tests/integration/rabbitmq_support.py);
# Debian keeps it out of an ordinary user's PATH.
have_rabbitmq_server() {
    [[ -x /usr/lib/rabbitmq/bin/rabbitmq-server ]] || command -v rabbitmq-server >/dev/null 2>&1
}

# The languages Tesseract has data for, one a line, and whether it has one.
# (Tesseract 4 prints the list on stderr, Tesseract 5 on stdout.)
TESSDATA_LIST=""
list_tessdata() {
    TESSDATA_LIST="$(tesseract --list-langs 2>&1 || true)"
}
have_tessdata() {
    grep -qx -- "$1" <<<"$TESSDATA_LIST"
}

# The Tesseract data this machine needs: the languages of OCRGW_TESSERACT_LANGS,
# orientation detection (`osd`, for rotate_pages), and German for the tests.
WANTED_TESSDATA=()
read_wanted_tessdata() {
    local langs lang
    IFS=', ' read -ra langs <<<"${OCRGW_TESSERACT_LANGS:-eng}"
    for lang in "${langs[@]}"; do
        [[ -n $lang ]] || continue
        [[ $lang =~ ^[a-z0-9_]+$ ]] \
            || die "OCRGW_TESSERACT_LANGS: '$lang' is not a Tesseract language code (eng, deu, chi_sim...)"
        WANTED_TESSDATA+=("$lang")
    done
    WANTED_TESSDATA+=(osd)
    [[ $FOR_TESTS -eq 1 ]] && WANTED_TESSDATA+=(deu)
    return 0
}

# Debian's package of a language's data: chi_sim is tesseract-ocr-chi-sim.
tessdata_package() {
    printf 'tesseract-ocr-%s' "${1//_/-}"
}

install_system_packages() {
    local missing=()
    command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
    local lang
    TESSDATA_LIST=""
    if command -v tesseract >/dev/null 2>&1; then
        list_tessdata
    else
        missing+=(tesseract-ocr)
    fi
    for lang in "${WANTED_TESSDATA[@]}"; do
        have_tessdata "$lang" || missing+=("$(tessdata_package "$lang")")
    done
    # The dictionary a word hyphenated at a line's end is looked up in (documents/layout/paragraphs.py).
    [[ -f /usr/share/dict/american-english ]] || missing+=(wamerican)
    if [[ $FOR_TESTS -eq 1 ]]; then
        command -v chromium >/dev/null 2>&1 || missing+=(chromium)
        command -v chromedriver >/dev/null 2>&1 || missing+=(chromium-driver)
        # The failover test's three sentinels (tests/integration/test_failover.py).
        command -v redis-sentinel >/dev/null 2>&1 || missing+=(redis-sentinel)
        # redis-cli --cluster create joins the cluster tests' nodes (tests/redis_cluster.py).
        command -v redis-cli >/dev/null 2>&1 || missing+=(redis-tools)
        have_rabbitmq_server || missing+=(rabbitmq-server)
        # promtool, which checks and tests the alert rules (deploy/prometheus, tests/unit/deploy).
        command -v promtool >/dev/null 2>&1 || missing+=(prometheus)
        # The real born-digital PDF the scan tests are made from (tests/scans.py).
        [[ -f $REAL_PDF ]] || missing+=(shared-mime-info)
        [[ -f $TEST_FONT ]] || missing+=(fonts-dejavu-core)
    fi
    if [[ $FOR_BENCH -eq 1 || $FOR_TESTS -eq 1 ]]; then  # the tests run the bench once, --quick
        [[ -f $REAL_PDF ]] || missing+=(shared-mime-info)
        command -v gs >/dev/null 2>&1 || missing+=(ghostscript)
        # Node.js, which runs BullMQ, groups_vs_bullmq's reference (the bench npm-installs it into bench/bullmq/).
        command -v node >/dev/null 2>&1 || missing+=(nodejs)
        command -v npm >/dev/null 2>&1 || missing+=(npm)
    fi
    if [[ ${#missing[@]} -gt 0 ]]; then
        apt_install "${missing[@]}"
        verify_system_packages
    fi
}

verify_system_packages() {
    command -v redis-server >/dev/null 2>&1 || die "redis-server still not on PATH after installing it"
    command -v tesseract >/dev/null 2>&1 || die "tesseract still not on PATH after installing it"
    local lang
    list_tessdata
    for lang in "${WANTED_TESSDATA[@]}"; do
        have_tessdata "$lang" \
            || die "tesseract has no '$lang' language data after installing $(tessdata_package "$lang")"
    done
    if [[ $FOR_BENCH -eq 1 || $FOR_TESTS -eq 1 ]]; then
        command -v node >/dev/null 2>&1 || die "node still not on PATH after installing nodejs"
        command -v npm >/dev/null 2>&1 || die "npm still not on PATH after installing it"
    fi
    [[ $FOR_TESTS -eq 1 ]] || return 0
    command -v chromium >/dev/null 2>&1 || die "chromium still not on PATH after installing it"
    command -v chromedriver >/dev/null 2>&1 || die "chromedriver still not on PATH after installing chromium-driver"
    command -v redis-sentinel >/dev/null 2>&1 || die "redis-sentinel still not on PATH after installing it"
    command -v redis-cli >/dev/null 2>&1 || die "redis-cli still not on PATH after installing redis-tools"
    have_rabbitmq_server || die "rabbitmq-server still not found after installing it"
    command -v promtool >/dev/null 2>&1 || die "promtool still not on PATH after installing prometheus"
    [[ -f $REAL_PDF ]] || die "$REAL_PDF is missing: is /usr/share/doc excluded from this machine's packages?"
    [[ -f $TEST_FONT ]] || die "$TEST_FONT is still missing after installing fonts-dejavu-core"
}

check_python() {
    command -v "$PYTHON" >/dev/null 2>&1 \
        || die "$PYTHON not found; ocrgw needs Python >= $MIN_PY (set PYTHON=/path/to/python3.11)"
    "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
        || die "$("$PYTHON" -V 2>&1) is too old; ocrgw needs Python >= $MIN_PY (set PYTHON=...)"
}

# Debian splits venv/ensurepip into python3-venv; a fresh machine lacks it.
ensure_venv_module() {
    "$PYTHON" -c 'import venv, ensurepip' >/dev/null 2>&1 && return 0
    case "$(command -v "$PYTHON")" in
        /usr/bin/*) apt_install python3-venv ;;
        *) die "$PYTHON has no working venv/ensurepip module" ;;
    esac
}

venv_ok() {
    [[ -x "$VENV/bin/python" ]] \
        && "$VENV/bin/python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null
}

create_venv() {
    if venv_ok; then
        return 0
    fi
    ensure_venv_module
    say "creating .venv with $("$PYTHON" -V 2>&1)"
    rm -rf "$VENV"
    "$PYTHON" -m venv "$VENV"
}

# The lock of what this run needs: the server's packages (requirements/server.txt), or with
# --tests or --bench every extra's (requirements/test.txt, a superset at the same versions).
lock_profile() {
    if [[ $FOR_TESTS -eq 1 || $FOR_BENCH -eq 1 ]]; then
        echo test
    else
        echo server
    fi
}

# Installed from that lock since the lock and pyproject.toml last changed.
installed_from() {
    local stamp="$STAMP-$1"
    [[ -f "$stamp" && "$stamp" -nt "$ROOT/pyproject.toml" && "$stamp" -nt "$ROOT/requirements/$1.txt" ]]
}

# The locked packages (pinned, hash-checked), then ocrgw itself, editable, without resolving its
# dependencies again: what runs is exactly what the lock says (make lock remakes it).
install_project() {
    local profile
    profile="$(lock_profile)"
    if installed_from "$profile" || { [[ $profile == server ]] && installed_from test; }; then
        return 0
    fi
    say "pip install -r requirements/$profile.txt, then ocrgw (this takes a while on a fresh machine)"
    venv_pip_install -r "$ROOT/requirements/$profile.txt"
    venv_pip_install --no-deps -e "$ROOT"
    touch "$STAMP-$profile"
}

venv_pip_install() {
    PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1 "$VENV/bin/python" -m pip install -q "$@"
}

# The scan benchmark's reference (bench/scan.py), into the project's venv, for the bench (and the
# tests' quick run of it) only: ocrgw never imports it.
install_bench_reference() {
    [[ $FOR_BENCH -eq 1 || $FOR_TESTS -eq 1 ]] || return 0
    "$VENV/bin/python" -c 'import ocrmypdf' >/dev/null 2>&1 && return 0
    say "pip install ocrmypdf (the scan benchmark's reference)"
    venv_pip_install ocrmypdf
}

# The manual the gateway serves at /manual (gateway/manual.py): built again when a page, the site's
# configuration or a catalogue its code pages are made from is newer than the built site.
MANUAL="$ROOT/gateway/manual"
build_manual() {
    local built="$MANUAL/index.html"
    if [[ -f $built ]] && [[ -z $(find "$ROOT/docs" "$ROOT/mkdocs.yml" "$ROOT/gateway/problems.py" \
            "$ROOT/jobs/contract.py" "$ROOT/jobs/config.py" -newer "$built" -print -quit) ]]; then
        return 0
    fi
    say "mkdocs build (the manual, into gateway/manual/)"
    # A page that does not build must not stop the stack from starting: the gateway answers
    # 404 manual_not_built meanwhile, and `make docs` (or the test suite) shows the warnings.
    (cd "$ROOT" && NO_MKDOCS_2_WARNING=1 "$VENV/bin/python" -m mkdocs build --strict --quiet) \
        || say "warning: the manual did not build; run make docs to see why"
}

# Serialise concurrent runs (two shells, or tests racing a developer).
take_lock() {
    command -v flock >/dev/null 2>&1 || return 0
    mkdir -p "$(dirname "$LOCK")"
    exec 9>"$LOCK"
    if ! flock -n 9; then
        say "another setup is running; waiting for it"
        flock 9
    fi
}

main() {
    read_wanted_tessdata
    take_lock
    install_system_packages
    check_python
    create_venv
    install_project
    install_bench_reference
    build_manual
    list_tessdata
    say "ready ($("$VENV/bin/python" -V 2>&1), redis $(redis-server --version | sed -n 's/.* v=\([^ ]*\).*/\1/p'), tesseract $(tesseract --version 2>&1 | awk 'NR==1{print $2}') with $(grep -vx osd <<<"$TESSDATA_LIST" | grep -x '[a-z0-9_]*' | paste -sd ' '))"
}

main "$@"
