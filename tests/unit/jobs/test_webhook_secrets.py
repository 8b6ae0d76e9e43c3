"""Each tenant's webhook secret: the secrets file (OCRGW_WEBHOOK_SECRETS_FILE), and which secret signs what."""

from __future__ import annotations

import base64

import pytest

from jobs.config import InvalidSettings, Settings
from jobs.webhook_secrets import BadSecrets, read_secrets_file, secret_for, signing_key
from observability.logs import secrets_of

ALPHA = "whsec_" + base64.b64encode(b"a" * 32).decode()
BETA = "whsec_" + base64.b64encode(b"b" * 24).decode()


def secrets_file(tmp_path, text: str) -> str:
    path = tmp_path / "webhook-secrets"
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_the_file_gives_each_tenant_its_secret_and_allows_comments_and_blank_lines(tmp_path):
    path = secrets_file(tmp_path, f"# webhook secrets\n\nalpha:{ALPHA}\n  beta : {BETA}  # rotated in May\n")

    assert read_secrets_file(path) == (("alpha", ALPHA), ("beta", BETA))


@pytest.mark.parametrize(
    ("line", "why"),
    [
        (f"{ALPHA}", "line 2: expected tenant:whsec_<base64>"),
        (f"Alpha!:{ALPHA}", "line 2: not a tenant name"),
        ("alpha:s3cr3t-but-not-standard", "line 2: the secret must be whsec_ and base64"),
        ("alpha:whsec_%%%notbase64%%%", "line 2: the secret must be whsec_ and base64"),
        ("alpha:whsec_" + base64.b64encode(b"short").decode(), "line 2: the secret must be at least 24 bytes"),
        (f"alpha:{BETA}", "line 2: tenant alpha is given twice (first on line 1)"),
    ],
)
def test_a_bad_line_is_named_by_its_number_and_never_repeats_a_secret(tmp_path, line, why):
    path = secrets_file(tmp_path, f"alpha:{ALPHA}\n{line}\n")

    with pytest.raises(BadSecrets) as caught:
        read_secrets_file(path)

    assert str(caught.value).startswith(why)
    assert ALPHA[6:] not in str(caught.value) and BETA[6:] not in str(caught.value)


def test_the_settings_read_the_file_and_a_bad_one_stops_them_naming_the_variable_and_the_line(tmp_path):
    good = secrets_file(tmp_path, f"alpha:{ALPHA}\n")
    assert Settings.from_env({"OCRGW_WEBHOOK_SECRETS_FILE": good}).webhook_secrets == (("alpha", ALPHA),)
    assert ALPHA not in repr(Settings.from_env({"OCRGW_WEBHOOK_SECRETS_FILE": good}))

    bad = tmp_path / "bad"
    bad.write_text(f"alpha:{ALPHA}\nbeta {BETA}\n")
    with pytest.raises(InvalidSettings) as caught:
        Settings.from_env({"OCRGW_WEBHOOK_SECRETS_FILE": str(bad)})
    [problem] = caught.value.problems
    assert problem.startswith("OCRGW_WEBHOOK_SECRETS_FILE: ") and "line 2" in problem
    assert BETA[6:] not in problem and ALPHA[6:] not in problem


def test_an_unreadable_file_is_a_settings_error(tmp_path):
    with pytest.raises(InvalidSettings, match="OCRGW_WEBHOOK_SECRETS_FILE"):
        Settings.from_env({"OCRGW_WEBHOOK_SECRETS_FILE": str(tmp_path / "missing")})


def test_each_tenant_is_signed_with_its_own_secret_and_one_without_goes_unsigned():
    secrets = (("alpha", ALPHA), ("beta", BETA))

    assert secret_for(secrets, "", "alpha") == ALPHA
    assert secret_for(secrets, "", "beta") == BETA
    assert secret_for(secrets, "", "gamma") == ""
    # Never another tenant's, nor the single secret: that one is the default tenant's only.
    assert secret_for(secrets, "single-secret-0123456789", "gamma") == ""


def test_the_single_secret_is_the_default_tenant_s_unless_the_file_names_default():
    assert secret_for((), "single-secret-0123456789", "default") == "single-secret-0123456789"
    assert secret_for((("default", ALPHA),), "single-secret-0123456789", "default") == ALPHA
    assert secret_for((), "", "default") == ""


def test_a_whsec_secret_keys_with_its_decoded_bytes_any_other_with_its_text():
    assert signing_key(ALPHA) == b"a" * 32
    assert signing_key("single-secret-0123456789") == b"single-secret-0123456789"


def test_the_tenant_concurrency_is_two_by_default_and_at_least_one():
    assert Settings().webhook_tenant_concurrency == 2
    assert Settings.from_env({"OCRGW_WEBHOOK_TENANT_CONCURRENCY": "5"}).webhook_tenant_concurrency == 5
    with pytest.raises(InvalidSettings, match="OCRGW_WEBHOOK_TENANT_CONCURRENCY"):
        Settings.from_env({"OCRGW_WEBHOOK_TENANT_CONCURRENCY": "0"})


def test_no_log_line_may_show_a_tenant_s_secret(tmp_path):
    settings = Settings.from_env(
        {"OCRGW_WEBHOOK_SECRETS_FILE": secrets_file(tmp_path, f"alpha:{ALPHA}\nbeta:{BETA}\n")}
    )

    assert {ALPHA, BETA} <= set(secrets_of(settings))
