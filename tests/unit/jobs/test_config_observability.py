"""The settings of metrics and logs: what each variable takes, and what it refuses."""

from __future__ import annotations

import pytest

from jobs.config import InvalidSettings, Settings

PORT = "must be a port (1-65535), or 0"


@pytest.mark.parametrize(
    ("variable", "raw", "setting", "value"),
    [
        ("OCRGW_LOG_FORMAT", "json", "log_format", "json"),
        ("OCRGW_LOG_FORMAT", "plain", "log_format", "plain"),
        ("OCRGW_WORKER_METRICS_PORT", "9101", "worker_metrics_port", 9101),
        ("OCRGW_COORDINATOR_METRICS_PORT", "9102", "coordinator_metrics_port", 9102),
        ("OCRGW_WEBHOOKS_METRICS_PORT", "0", "webhooks_metrics_port", 0),
        ("OCRGW_METRICS_ADDRESS", "127.0.0.1", "metrics_address", "127.0.0.1"),
        ("OCRGW_METRICS_ADDRESS", "::", "metrics_address", "::"),
        ("OCRGW_METRICS_DIR", "/var/run/ocrgw/metrics", "metrics_dir", "/var/run/ocrgw/metrics"),
    ],
)
def test_each_variable_fills_its_setting(variable, raw, setting, value):
    assert getattr(Settings.from_env({variable: raw}), setting) == value


def test_by_default_logs_are_plain_and_no_celery_process_serves_metrics():
    settings = Settings.from_env({})

    assert settings.log_format == "plain"
    ports = (settings.worker_metrics_port, settings.coordinator_metrics_port, settings.webhooks_metrics_port)
    assert ports == (0, 0, 0)
    assert (settings.metrics_address, settings.metrics_dir) == ("0.0.0.0", "")


@pytest.mark.parametrize(
    ("variable", "raw", "message"),
    [
        ("OCRGW_LOG_FORMAT", "yaml", "OCRGW_LOG_FORMAT: must be plain or json, got 'yaml'"),
        ("OCRGW_WORKER_METRICS_PORT", "65536", f"OCRGW_WORKER_METRICS_PORT: {PORT}, got '65536'"),
        ("OCRGW_WEBHOOKS_METRICS_PORT", "http", f"OCRGW_WEBHOOKS_METRICS_PORT: {PORT}, got 'http'"),
        ("OCRGW_METRICS_ADDRESS", "localhost", "OCRGW_METRICS_ADDRESS: must be an IP address, got 'localhost'"),
        ("OCRGW_METRICS_DIR", "run/metrics", "OCRGW_METRICS_DIR: must be an absolute path, got 'run/metrics'"),
    ],
)
def test_a_bad_value_names_the_variable(variable, raw, message):
    with pytest.raises(InvalidSettings) as caught:
        Settings.from_env({variable: raw})

    assert str(caught.value) == message
