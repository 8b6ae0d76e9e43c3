"""Settings from the environment: every variable parsed and checked in one place.

A bad value must stop a process at start with one error that names the
variable, what it expects and what it got; the last tests start the real
commands of the Procfile with such a value and read what they print.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import fields, replace

import pytest

from jobs.config import VARIABLES, InvalidSettings, Settings
from jobs.errors import OcrgwError
from tests.harness import ROOT, _gunicorn_isolation_args

DEFAULTS = Settings(broker_url=Settings().redis_url)


def test_an_empty_environment_gives_every_default_and_the_broker_is_the_store():
    assert Settings.from_env({}) == DEFAULTS
    assert DEFAULTS.broker_url == "redis://localhost:6379/0"


def test_empty_and_blank_values_count_as_unset():
    assert Settings.from_env({"REDIS_URL": "", "OCRGW_LEASE_SECONDS": "  ", "OCRGW_PRELOAD_MODELS": ""}) == DEFAULTS


@pytest.mark.parametrize(
    ("variable", "raw", "setting", "value"),
    [
        ("OCRGW_LEASE_SECONDS", "2", "lease_seconds", 2.0),
        ("OCRGW_LEASE_SECONDS", " 0.5 ", "lease_seconds", 0.5),
        ("OCRGW_SWEEP_INTERVAL", "0.1", "sweep_interval", 0.1),
        ("OCRGW_MAX_ATTEMPTS", "1", "max_attempts", 1),
        ("OCRGW_JOB_TIMEOUT", "6", "job_timeout", 6.0),
        ("OCRGW_MAX_CHILDREN", "5", "max_children", 5),
        ("OCRGW_IDEMPOTENCY_TTL", "60", "idempotency_ttl", 60),
        ("OCRGW_RESULT_TTL", "86400", "result_ttl", 86400),
        ("OCRGW_MAX_BODY_BYTES", "1000", "max_body_bytes", 1000),
        ("OCRGW_MAX_PAGES", "3", "max_pages", 3),
        ("OCRGW_REQUEUE_SECONDS", "1", "requeue_seconds", 1.0),
        ("OCRGW_RELEASE_BATCH", "2", "release_batch", 2),
        ("OCRGW_SWEEP_BATCH", "10", "sweep_batch", 10),
        ("OCRGW_RETRY_BACKOFF", "0", "retry_backoff", 0.0),
        ("OCRGW_KEEP_SLOT_SECONDS", "0", "keep_slot_seconds", 0.0),
        ("OCRGW_DRAIN_SECONDS", "3", "drain_seconds", 3.0),
        ("OCRGW_ECHO_ALLOW_CRASH", "1", "echo_allow_crash", 1),
        ("OCRGW_DEFAULT_MODEL", "echo", "default_model", "echo"),
        ("OCRGW_ENGINE_THREADS", "4", "engine_threads", 4),
        ("OCRGW_PRELOAD_MODELS", "tesseract, paddleocr,", "preload_models", ("tesseract", "paddleocr")),
        ("CELERY_BROKER_URL", "amqp://guest@rabbit:5672//", "broker_url", "amqp://guest@rabbit:5672//"),
    ],
)
def test_each_variable_fills_its_setting(variable, raw, setting, value):
    settings = Settings.from_env({variable: raw})

    assert getattr(settings, setting) == value
    assert type(getattr(settings, setting)) is type(getattr(DEFAULTS, setting))
    assert settings == replace(DEFAULTS, **{setting: value})


@pytest.mark.parametrize(
    "url", ["redis://:secret@cache:6380/2", "rediss://cache/0?ssl_cert_reqs=required", "unix:///run/redis.sock"]
)
def test_the_redis_url_is_the_broker_too_unless_one_is_given(url):
    assert (Settings.from_env({"REDIS_URL": url}).broker_url) == url
    split = Settings.from_env({"REDIS_URL": url, "CELERY_BROKER_URL": "redis://broker/1"})
    assert (split.redis_url, split.broker_url) == (url, "redis://broker/1")


@pytest.mark.parametrize(
    ("variable", "raw", "message"),
    [
        ("OCRGW_LEASE_SECONDS", "abc", "OCRGW_LEASE_SECONDS: must be a number of seconds > 0, got 'abc'"),
        ("OCRGW_LEASE_SECONDS", "0", "OCRGW_LEASE_SECONDS: must be a number of seconds > 0, got '0'"),
        ("OCRGW_JOB_TIMEOUT", "nan", "OCRGW_JOB_TIMEOUT: must be a number of seconds > 0, got 'nan'"),
        ("OCRGW_REQUEUE_SECONDS", "inf", "OCRGW_REQUEUE_SECONDS: must be a number of seconds > 0, got 'inf'"),
        ("OCRGW_SWEEP_INTERVAL", "0.05", "OCRGW_SWEEP_INTERVAL: must be a number of seconds >= 0.1, got '0.05'"),
        ("OCRGW_RETRY_BACKOFF", "-1", "OCRGW_RETRY_BACKOFF: must be a number of seconds >= 0, got '-1'"),
        ("OCRGW_MAX_ATTEMPTS", "0", "OCRGW_MAX_ATTEMPTS: must be a whole number >= 1, got '0'"),
        ("OCRGW_MAX_CHILDREN", "2.5", "OCRGW_MAX_CHILDREN: must be a whole number >= 1, got '2.5'"),
        ("OCRGW_MAX_BODY_BYTES", "64M", "OCRGW_MAX_BODY_BYTES: must be a whole number of bytes >= 1, got '64M'"),
        ("OCRGW_IDEMPOTENCY_TTL", "1d", "OCRGW_IDEMPOTENCY_TTL: must be a whole number of seconds >= 1, got '1d'"),
        ("OCRGW_ECHO_ALLOW_CRASH", "yes", "OCRGW_ECHO_ALLOW_CRASH: must be 0 or 1, got 'yes'"),
        ("OCRGW_RESULT_TTL", "59", "OCRGW_RESULT_TTL: must be a whole number of seconds >= 60, got '59'"),
        (
            "OCRGW_RESULT_TTL",
            "3600",
            "OCRGW_IDEMPOTENCY_TTL: must be at most OCRGW_RESULT_TTL (3600), got its default, 86400",
        ),
        ("OCRGW_DEFAULT_MODEL", "gpt", "OCRGW_DEFAULT_MODEL: must be one of tesseract, paddleocr, echo, got 'gpt'"),
        ("OCRGW_ENGINE_THREADS", "many", "OCRGW_ENGINE_THREADS: must be a whole number >= 1, got 'many'"),
        (
            "OCRGW_PRELOAD_MODELS",
            "tesseract,gpt",
            "OCRGW_PRELOAD_MODELS: must be a comma-separated list of tesseract, paddleocr, echo, got 'tesseract,gpt'",
        ),
        (
            "REDIS_URL",
            "localhost:6379",
            "REDIS_URL: must be a redis://, rediss:// or unix:// URL, got 'localhost:6379'",
        ),
        ("CELERY_BROKER_URL", "broker", "CELERY_BROKER_URL: must be a URL such as redis://host:6379/0, got 'broker'"),
    ],
)
def test_a_bad_value_is_one_error_naming_the_variable_what_it_expects_and_what_it_got(variable, raw, message):
    with pytest.raises(InvalidSettings) as caught:
        Settings.from_env({variable: raw})

    assert str(caught.value) == message
    assert caught.value.code == "invalid_settings"
    assert isinstance(caught.value, OcrgwError) and isinstance(caught.value, ValueError)


def test_every_bad_value_is_named_in_the_one_error():
    with pytest.raises(InvalidSettings) as caught:
        Settings.from_env({"OCRGW_MAX_PAGES": "0", "OCRGW_LEASE_SECONDS": "soon", "OCRGW_MAX_ATTEMPTS": "3"})

    assert str(caught.value) == (
        "OCRGW_LEASE_SECONDS: must be a number of seconds > 0, got 'soon'; "
        "OCRGW_MAX_PAGES: must be a whole number >= 1, got '0'"
    )


def test_an_idempotency_key_is_never_kept_longer_than_the_job_it_names():
    assert Settings.from_env({"OCRGW_RESULT_TTL": "600", "OCRGW_IDEMPOTENCY_TTL": "600"}).result_ttl_ms == 600_000
    with pytest.raises(InvalidSettings) as caught:
        Settings.from_env({"OCRGW_RESULT_TTL": "600", "OCRGW_IDEMPOTENCY_TTL": "601"})
    assert str(caught.value) == "OCRGW_IDEMPOTENCY_TTL: must be at most OCRGW_RESULT_TTL (600), got '601'"


@pytest.mark.parametrize("variable", ["REDIS_URL", "CELERY_BROKER_URL"])
def test_a_tls_url_must_say_how_the_server_certificate_is_checked(variable):
    # kombu would not check it at all, redis-py would: the setting is made explicit for both.
    with pytest.raises(InvalidSettings) as caught:
        Settings.from_env({variable: "rediss://:hunter2@cache:6380/0"})
    assert str(caught.value) == (
        f"{variable}: a rediss:// URL must name ssl_cert_reqs (required, optional or none), "
        "got 'rediss://:***@cache:6380/0'"
    )
    url = "rediss://:hunter2@cache:6380/0?ssl_cert_reqs=required&ssl_ca_certs=/etc/ocrgw/ca.pem"
    assert getattr(Settings.from_env({variable: url}), variable.lower().replace("celery_", "")) == url


def test_a_password_in_a_bad_url_is_not_repeated():
    with pytest.raises(InvalidSettings) as caught:
        Settings.from_env({"REDIS_URL": "http://user:hunter2@cache:6379/0"})

    assert "hunter2" not in str(caught.value)
    assert str(caught.value).endswith("got 'http://user:***@cache:6379/0'")


def test_every_setting_has_its_variable_and_every_variable_is_in_the_configuration_page():
    assert sorted(v.setting for v in VARIABLES) == sorted(f.name for f in fields(Settings))
    page = (ROOT / "docs" / "operating" / "configuration.md").read_text()
    documented = set(re.findall(r"^\| `([A-Z_]+)` \|", page, flags=re.MULTILINE))
    assert {v.env for v in VARIABLES} <= documented


# -- every process stops at start with that error --------------------------------------------------

BAD_ENV = {"OCRGW_LEASE_SECONDS": "abc", "REDIS_URL": "redis://127.0.0.1:9/0"}
BAD_ENV_MESSAGE = "OCRGW_LEASE_SECONDS: must be a number of seconds > 0, got 'abc'"
COMMANDS = {
    "worker": ["-m", "celery", "-A", "workers", "worker", "--pool", "solo"],
    "coordinator": ["-m", "celery", "-A", "coordinator", "worker", "--pool", "solo", "--queues", "coordinator"],
    "beat": ["-m", "celery", "-A", "coordinator", "beat"],
    "web": ["-m", "gunicorn", "--bind", "127.0.0.1:0", "--workers", "1", "gateway:create_app()"],
    "drain": ["-m", "gateway.drain", "status"],
}


@pytest.mark.parametrize("role", sorted(COMMANDS))
def test_every_process_stops_at_start_and_prints_the_error(role, tmp_path):
    argv = [sys.executable, *COMMANDS[role]]
    if role == "web":
        argv[-1:-1] = _gunicorn_isolation_args()
    ours = {variable.env for variable in VARIABLES}
    env = {name: value for name, value in os.environ.items() if name not in ours}

    # The timeout only bounds a process that would wrongly go on running.
    done = subprocess.run(
        argv, cwd=tmp_path, env={**env, **BAD_ENV, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True, timeout=120
    )

    assert done.returncode != 0, done
    assert BAD_ENV_MESSAGE in done.stdout + done.stderr, done
