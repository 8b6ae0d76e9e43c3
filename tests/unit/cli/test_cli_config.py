"""``ocrgw config``: the settings this shell's environment gives, secrets masked, or why a process would refuse them."""

from __future__ import annotations

import pytest
from click.testing import CliRunner, Result

from cli.main import main
from jobs.config import VARIABLES, configuration_table

SECRET = "a-webhook-secret-of-some-length"


@pytest.fixture(autouse=True)
def no_settings_in_the_environment(monkeypatch):
    """Only what a test gives: none of the variables of the shell that runs the tests."""
    for variable in VARIABLES:
        monkeypatch.delenv(variable.env, raising=False)
        if variable.file_env:
            monkeypatch.delenv(variable.file_env, raising=False)


def config(*args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(main, ["config", *args], env=env, catch_exceptions=False)


def test_each_variable_is_a_line_with_its_value_and_where_it_came_from(tmp_path):
    secret = tmp_path / "webhook-secret"
    secret.write_text(f"{SECRET}\n")

    result = config(
        env={
            "REDIS_URL": "redis://:hunter2@cache:6379/1",
            "OCRGW_WEBHOOK_SECRET_FILE": str(secret),
            "OCRGW_MAX_PAGES": "20",
        }
    )

    assert result.exit_code == 0, result.output
    rows = [line.split("\t") for line in result.stdout.splitlines()]
    assert [row[0] for row in rows] == [v.env for v in VARIABLES]
    shown = {row[0]: row[1:] for row in rows}
    assert shown["REDIS_URL"] == ["redis://:***@cache:6379/1", "environment"]
    assert shown["CELERY_BROKER_URL"] == ["redis://:***@cache:6379/1", "default"]
    assert shown["OCRGW_WEBHOOK_SECRET"] == ["***", "file"]
    assert shown["OCRGW_MAX_PAGES"] == ["20", "environment"]
    assert shown["OCRGW_LEASE_SECONDS"] == ["30", "default"]
    assert shown["OCRGW_PRELOAD_MODELS"] == ["", "default"]
    assert "hunter2" not in result.output and SECRET not in result.output


def test_bad_settings_are_a_line_each_on_stderr_and_exit_status_1():
    result = config(env={"OCRGW_LEASE_SECONDS": "soon", "OCRGW_WEBHOOK_SECRET": "hunter2", "OCRGW_MAX_PAGES": "0"})

    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr.splitlines() == [
        "ocrgw: OCRGW_LEASE_SECONDS: must be a number of seconds > 0, got 'soon'",
        "ocrgw: OCRGW_MAX_PAGES: must be a whole number >= 1, got '0'",
        "ocrgw: OCRGW_WEBHOOK_SECRET: must be at least 16 characters, got a secret of 7 characters",
    ]


def test_a_rule_across_settings_is_refused_as_a_process_would():
    result = config(env={"OCRGW_RESULT_TTL": "600", "OCRGW_IDEMPOTENCY_TTL": "601"})

    assert result.exit_code == 1
    assert result.stderr == "ocrgw: OCRGW_IDEMPOTENCY_TTL: must be at most OCRGW_RESULT_TTL (600), got '601'\n"


def test_markdown_is_the_configuration_page_s_table_whatever_the_environment():
    result = config("--markdown", env={"OCRGW_LEASE_SECONDS": "soon"})

    assert result.exit_code == 0
    assert result.stdout == configuration_table()


def test_the_metrics_token_is_masked_and_a_short_one_refused_without_showing_it():
    token = "a-metrics-token-of-some-length"

    shown = config(env={"OCRGW_METRICS_TOKEN": token})
    refused = config(env={"OCRGW_METRICS_TOKEN": "hunter2"})

    assert shown.exit_code == 0 and token not in shown.output
    assert "OCRGW_METRICS_TOKEN\t***\tenvironment" in shown.stdout.splitlines()
    assert refused.exit_code == 1 and "hunter2" not in refused.output
    assert "OCRGW_METRICS_TOKEN: must be at least 16 visible ASCII characters" in refused.stderr
