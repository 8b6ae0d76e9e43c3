"""Each setting declared once: the docs' table comes from the declarations, secrets come from files too.

The table of docs/operating/configuration.md is ``configuration_table()``; a secret
``X`` may be given as ``X_FILE``, the path of a file holding it (as Docker
and Kubernetes mount secrets); and a secret is shown nowhere: not in an
error, not in ``repr(settings)``, not in ``effective_settings``.
"""

from __future__ import annotations

import re
from dataclasses import fields

import pytest

from jobs.config import (
    VARIABLES,
    Effective,
    InvalidSettings,
    Settings,
    configuration_table,
    default_of,
    effective_settings,
)
from tests.harness import ROOT

SECRET = "a-webhook-secret-of-some-length"
SECRETS_WITH_FILES = {
    "REDIS_URL_FILE",
    "CELERY_BROKER_URL_FILE",
    "OCRGW_WEBHOOK_SECRET_FILE",
    "OCRGW_REDIS_SENTINEL_PASSWORD_FILE",
    "OCRGW_METRICS_TOKEN_FILE",
}


CONFIGURATION_PAGE = ROOT / "docs" / "operating" / "configuration.md"


def documented_table() -> str:
    page = CONFIGURATION_PAGE.read_text()
    table = re.search(r"^\| variable \| default \| accepts \| meaning \|\n(?:\|.*\n)+", page, flags=re.MULTILINE)
    assert table, "docs/operating/configuration.md has no table of variables"
    return table.group(0)


def test_the_configuration_page_s_table_is_the_one_the_declarations_give():
    assert documented_table() == configuration_table(), (
        "docs/operating/configuration.md's table differs from the declarations in jobs/config.py: "
        "replace it with the output of `ocrgw config --markdown`"
    )


def test_every_field_of_the_settings_is_declared_with_a_variable_of_its_own():
    assert [v.setting for v in VARIABLES] == [f.name for f in fields(Settings)]
    names = [v.env for v in VARIABLES] + [v.file_env for v in VARIABLES if v.file_env]
    assert len(names) == len(set(names))
    assert all(v.doc and v.kind.expects and v.kind.accepts for v in VARIABLES)


def test_the_declared_default_is_the_setting_s():
    settings = Settings()

    assert {v.setting: default_of(v.setting) for v in VARIABLES} == {
        f.name: getattr(settings, f.name) for f in fields(Settings)
    }
    assert (default_of("lease_seconds"), default_of("max_pages"), default_of("replica_wait_ms")) == (30.0, 10_000, 2000)


def test_each_secret_but_the_plain_api_keys_has_a_file_variant():
    assert {v.file_env for v in VARIABLES if v.file_env} == SECRETS_WITH_FILES
    assert {v.env for v in VARIABLES if v.secret and not v.file_env} == {"OCRGW_API_KEYS"}


# -- X_FILE -----------------------------------------------------------------------------------


SENTINELS = {"OCRGW_REDIS_SENTINELS": "h:26379", "OCRGW_REDIS_SENTINEL_MASTER": "m"}


@pytest.mark.parametrize(
    ("variable", "content", "value", "others"),
    [
        ("OCRGW_WEBHOOK_SECRET", f"{SECRET}\n", SECRET, {}),
        ("OCRGW_WEBHOOK_SECRET", f"{SECRET}\r\n", SECRET, {}),
        ("OCRGW_WEBHOOK_SECRET", SECRET, SECRET, {}),
        ("OCRGW_REDIS_SENTINEL_PASSWORD", "pw\n", "pw", SENTINELS),
        ("REDIS_URL", "redis://:pw@cache:6380/2\n", "redis://:pw@cache:6380/2", {}),
        ("CELERY_BROKER_URL", "amqp://ocrgw:pw@rabbit:5672//\n", "amqp://ocrgw:pw@rabbit:5672//", {}),
    ],
)
def test_a_secret_read_from_the_file_its_file_variable_names_is_as_good_as_the_variable(
    tmp_path, variable, content, value, others
):
    path = tmp_path / "secret"
    path.write_text(content, newline="")

    from_file = Settings.from_env({f"{variable}_FILE": str(path), **others})

    assert from_file == Settings.from_env({variable: value, **others})


def test_only_one_trailing_newline_is_taken_off_a_secret_s_file(tmp_path):
    path = tmp_path / "secret"
    path.write_text(f" {SECRET}\t\n\n")

    assert Settings.from_env({"OCRGW_WEBHOOK_SECRET_FILE": str(path)}).webhook_secret == f" {SECRET}\t\n"


def test_the_store_s_url_from_a_file_is_the_broker_s_too(tmp_path):
    path = tmp_path / "redis-url"
    path.write_text("redis://:pw@cache:6380/2\n")

    settings = Settings.from_env({"REDIS_URL_FILE": str(path)})

    assert (settings.redis_url, settings.broker_url) == ("redis://:pw@cache:6380/2", "redis://:pw@cache:6380/2")


def test_a_variable_and_its_file_variable_together_are_refused(tmp_path):
    path = tmp_path / "secret"
    path.write_text(SECRET)

    with pytest.raises(InvalidSettings) as caught:
        Settings.from_env({"OCRGW_WEBHOOK_SECRET": SECRET, "OCRGW_WEBHOOK_SECRET_FILE": str(path)})

    assert str(caught.value) == (
        "OCRGW_WEBHOOK_SECRET_FILE: must not be set together with OCRGW_WEBHOOK_SECRET (one or the other), got both"
    )


@pytest.mark.parametrize(
    ("make", "why"),
    [
        (lambda path: None, "No such file or directory"),
        (lambda path: path.mkdir(), "Is a directory"),
        (lambda path: path.write_bytes(b"\xff\xfe secret"), "not UTF-8"),
        (lambda path: path.write_text("\n"), "empty"),
    ],
)
def test_a_file_that_gives_no_value_is_refused_naming_its_variable(tmp_path, make, why):
    path = tmp_path / "secret"
    make(path)

    with pytest.raises(InvalidSettings) as caught:
        Settings.from_env({"OCRGW_REDIS_SENTINEL_PASSWORD_FILE": str(path)})

    expected = f"OCRGW_REDIS_SENTINEL_PASSWORD_FILE: must be a readable file, got {str(path)!r} ({why})"
    assert str(caught.value) == expected


def test_a_bad_value_in_a_file_names_the_file_variable_and_shows_no_secret(tmp_path):
    short, url = tmp_path / "short", tmp_path / "url"
    short.write_text("hunter2\n")
    url.write_text("http://user:hunter2@cache:6379/0\n")

    with pytest.raises(InvalidSettings) as caught:
        Settings.from_env({"OCRGW_WEBHOOK_SECRET_FILE": str(short), "REDIS_URL_FILE": str(url), "OCRGW_MAX_PAGES": "0"})

    assert caught.value.problems == (
        "REDIS_URL_FILE: must be a redis://, rediss:// or unix:// URL, got 'http://user:***@cache:6379/0'",
        "OCRGW_MAX_PAGES: must be a whole number >= 1, got '0'",
        "OCRGW_WEBHOOK_SECRET_FILE: must be at least 16 characters, got a secret of 7 characters",
    )
    assert str(caught.value) == "; ".join(caught.value.problems)
    assert "hunter2" not in str(caught.value)


def test_a_rule_across_settings_names_the_file_variable_that_gave_the_value(tmp_path):
    path = tmp_path / "redis-url"
    path.write_text("rediss://:hunter2@cache:6380/0\n")

    with pytest.raises(InvalidSettings) as caught:
        Settings.from_env({"REDIS_URL_FILE": str(path)})

    assert str(caught.value) == (
        "REDIS_URL_FILE: a rediss:// URL must name ssl_cert_reqs (required, optional or none), "
        "got 'rediss://:***@cache:6380/0'"
    )


def test_the_api_keys_file_stays_the_keys_file_not_a_file_of_plain_keys(tmp_path):
    path = tmp_path / "keys"
    path.write_text("acme:plain-key\n")

    with pytest.raises(InvalidSettings) as caught:
        Settings.from_env({"OCRGW_API_KEYS_FILE": str(path)})

    assert str(caught.value).startswith("OCRGW_API_KEYS_FILE: must be a readable file of tenant:sha256-hex-of-key")


# -- secrets are shown nowhere ------------------------------------------------------------------


def test_repr_masks_every_secret(tmp_path):
    keys = tmp_path / "remote-keys"
    keys.write_text("cloudocr=remote-hunter2\n")
    settings = Settings.from_env(
        {
            "REDIS_URL": "redis://:hunter2@cache:6379/0",
            "OCRGW_WEBHOOK_SECRET": f"hunter2-{SECRET}",
            "OCRGW_REDIS_SENTINELS": "h:26379",
            "OCRGW_REDIS_SENTINEL_MASTER": "m",
            "OCRGW_REDIS_SENTINEL_PASSWORD": "hunter2-sentinel",
            "CELERY_BROKER_URL": "amqp://ocrgw:hunter2@rabbit:5672//",
            "OCRGW_REMOTE_MODELS": "cloudocr=tesseract@http://ocr.example",
            "OCRGW_REMOTE_KEYS_FILE": str(keys),
            "OCRGW_API_KEYS": "acme:hunter2-key",
        }
    )

    shown = repr(settings)

    assert "hunter2" not in shown
    assert "redis_url='redis://:***@cache:6379/0'" in shown
    assert "broker_url='amqp://ocrgw:***@rabbit:5672//'" in shown
    assert "webhook_secret='***'" in shown and "redis_sentinel_password='***'" in shown
    assert "remote_keys='***'" in shown
    assert "lease_seconds=30.0" in shown and "redis_sentinel_master='m'" in shown


def test_the_effective_settings_say_where_each_value_came_from_and_mask_secrets(tmp_path):
    path = tmp_path / "secret"
    path.write_text(f"{SECRET}\n")

    effective = {
        e.variable: e
        for e in effective_settings(
            {
                "REDIS_URL": "redis://:hunter2@cache:6379/1",
                "OCRGW_WEBHOOK_SECRET_FILE": str(path),
                "OCRGW_MAX_PAGES": " 20 ",
                "OCRGW_PRELOAD_MODELS": "tesseract,echo",
            }
        )
    }

    assert list(effective) == [v.env for v in VARIABLES]
    assert effective["REDIS_URL"] == Effective("REDIS_URL", "redis://:***@cache:6379/1", "environment")
    assert effective["CELERY_BROKER_URL"] == Effective("CELERY_BROKER_URL", "redis://:***@cache:6379/1", "default")
    assert effective["OCRGW_WEBHOOK_SECRET"] == Effective("OCRGW_WEBHOOK_SECRET", "***", "file")
    assert effective["OCRGW_MAX_PAGES"] == Effective("OCRGW_MAX_PAGES", "20", "environment")
    assert effective["OCRGW_PRELOAD_MODELS"] == Effective("OCRGW_PRELOAD_MODELS", "tesseract,echo", "environment")
    assert effective["OCRGW_LEASE_SECONDS"] == Effective("OCRGW_LEASE_SECONDS", "30", "default")
    assert effective["OCRGW_TASK_EVENTS"] == Effective("OCRGW_TASK_EVENTS", "false", "default")
    assert effective["OCRGW_REDIS_SENTINEL_PASSWORD"] == Effective("OCRGW_REDIS_SENTINEL_PASSWORD", "", "default")
    assert SECRET not in repr(effective) and "hunter2" not in repr(effective)


def test_the_effective_settings_refuse_what_a_process_would():
    with pytest.raises(InvalidSettings) as caught:
        effective_settings({"OCRGW_LEASE_SECONDS": "soon", "OCRGW_MAX_PAGES": "0"})

    assert caught.value.problems == (
        "OCRGW_LEASE_SECONDS: must be a number of seconds > 0, got 'soon'",
        "OCRGW_MAX_PAGES: must be a whole number >= 1, got '0'",
    )
