"""API keys in the settings: the keys file and OCRGW_API_KEYS, read at start, refused with one line that
says where, and never holding (or repeating) a plain key."""

from __future__ import annotations

import hashlib

import pytest

from jobs.api_keys import ApiKey, tenant_weights
from jobs.config import InvalidSettings, Settings


def sha(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def keys_file(tmp_path, text: str | bytes) -> str:
    path = tmp_path / "keys"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return str(path)


def refusal(environ: dict[str, str]) -> str:
    with pytest.raises(InvalidSettings) as caught:
        Settings.from_env(environ)
    message = str(caught.value)
    assert "\n" not in message
    return message


def test_a_keys_file_gives_each_key_its_tenant_digest_and_policies(tmp_path):
    path = keys_file(
        tmp_path,
        "# acme's keys\n"
        f"acme:{sha('acme-1')}\n"
        "\n"
        f"  acme : {sha('acme-2').upper()} : on_prem_only  # rotated in May\n"
        f"globex.eu-2:{sha('globex')}:\n",
    )

    settings = Settings.from_env({"OCRGW_API_KEYS_FILE": path})

    assert settings.api_keys == (
        ApiKey("acme", sha("acme-1")),
        ApiKey("acme", sha("acme-2"), frozenset({"on_prem_only"})),
        ApiKey("globex.eu-2", sha("globex")),
    )
    assert [k.key_id for k in settings.api_keys] == [sha("acme-1")[:12], sha("acme-2")[:12], sha("globex")[:12]]


def test_plain_keys_for_development_are_hashed_as_they_are_read():
    settings = Settings.from_env({"OCRGW_API_KEYS": "acme:s3cret:with:colons, globex:other ,"})

    assert settings.plain_api_keys == (ApiKey("acme", sha("s3cret:with:colons")), ApiKey("globex", sha("other")))
    assert "s3cret" not in repr(settings)


def test_both_sources_add_up_and_neither_means_no_keys(tmp_path):
    path = keys_file(tmp_path, f"acme:{sha('a')}\n")

    both = Settings.from_env({"OCRGW_API_KEYS_FILE": path, "OCRGW_API_KEYS": "globex:g"})

    assert [k.tenant for k in both.api_keys] == ["acme", "globex"]
    assert Settings.from_env({}).api_keys == ()


@pytest.mark.parametrize(
    ("content", "why"),
    [
        (f"acme {sha('a')}\n", "line 1: expected tenant:sha256-hex-of-key[:policy,...]"),
        (f"# keys\nacme:{sha('a')}:on_prem_only:extra\n", "line 2: expected tenant:sha256-hex-of-key[:policy,...]"),
        ("acme:not-a-digest\n", "line 1: the key's sha256 must be 64 hex digits"),
        (f"acme:{sha('a')[:-1]}\n", "line 1: the key's sha256 must be 64 hex digits"),
        (f"Acme:{sha('a')}\n", "line 1: 'Acme' is not a tenant name"),
        (f":{sha('a')}\n", "line 1: '' is not a tenant name"),
        (f"{'a' * 64}:{sha('a')}\n", "is not a tenant name"),
        (
            f"acme:{sha('a')}:on_prem_only,cloud_ok\n",
            "line 1: unknown policy 'cloud_ok' (known: admin, on_prem_only, weight=N, interactive_max_inflight=N)",
        ),
        (
            f"acme:{sha('a')}:speed=2\n",
            "line 1: unknown policy 'speed'=... (known: weight=N, interactive_max_inflight=N)",
        ),
        (f"acme:{sha('a')}:weight=0\n", "line 1: weight must be a whole number from 1 to 1000"),
        (f"acme:{sha('a')}:weight=1001\n", "line 1: weight must be a whole number from 1 to 1000"),
        (f"acme:{sha('a')}:weight=two\n", "line 1: weight must be a whole number from 1 to 1000"),
        (f"acme:{sha('a')}:interactive_max_inflight=-1\n", "interactive_max_inflight must be a whole number from 0"),
        (f"acme:{sha('a')}\n\nglobex:{sha('a')}\n", "line 3: the same key as line 1"),
    ],
)
def test_a_bad_line_stops_the_process_naming_the_file_and_the_line(tmp_path, content, why):
    path = keys_file(tmp_path, content)

    message = refusal({"OCRGW_API_KEYS_FILE": path})

    assert message.startswith(
        f"OCRGW_API_KEYS_FILE: must be a readable file of tenant:sha256-hex-of-key[:policy,...] lines, got '{path}' ("
    )
    assert why in message


def test_a_missing_or_unreadable_keys_file_stops_the_process(tmp_path):
    assert "it cannot be read: No such file or directory" in refusal({"OCRGW_API_KEYS_FILE": str(tmp_path / "none")})
    assert "it cannot be read" in refusal({"OCRGW_API_KEYS_FILE": str(tmp_path)})  # a directory
    binary = keys_file(tmp_path, b"acme:\xff\xfe\n")
    assert "it is not UTF-8 text" in refusal({"OCRGW_API_KEYS_FILE": binary})


@pytest.mark.parametrize(
    ("raw", "why"),
    [
        ("acme-only-a-secret-value", "entry 1: expected tenant:key"),
        ("acme:k1,globex:", "entry 2: expected tenant:key"),
        ("Secret-Looking:k1", "entry 1: not a tenant name (lower-case letters, digits, '_', '.', '-'; up to 63)"),
        ("acme:k1,globex:k1", "entry 2: the same key as entry 1"),
    ],
)
def test_bad_plain_keys_stop_the_process_without_repeating_any_key(raw, why):
    message = refusal({"OCRGW_API_KEYS": raw})

    assert message == (
        f"OCRGW_API_KEYS: must be a comma-separated list of tenant:key, got a secret of {len(raw)} characters ({why})"
    )
    assert "secret-value" not in message and "k1" not in message and "Secret-Looking" not in message


def test_a_key_in_the_file_and_in_the_environment_is_refused(tmp_path):
    path = keys_file(tmp_path, f"acme:{sha('shared')}\n")

    message = refusal({"OCRGW_API_KEYS_FILE": path, "OCRGW_API_KEYS": "globex:shared"})

    assert message == "OCRGW_API_KEYS: a key is also in OCRGW_API_KEYS_FILE"


NO_KEY = "(unset, there are no keys and anyone who reaches the gateway is tenant 'default')"


@pytest.mark.parametrize("content", ["", "\n\n", "# acme's keys, being rotated\n", "   # none yet\n\n  \n"])
def test_a_keys_file_that_names_no_key_stops_the_process_rather_than_opening_the_gateway(tmp_path, content):
    path = keys_file(tmp_path, content)

    message = refusal({"OCRGW_API_KEYS_FILE": path})

    assert message == f"OCRGW_API_KEYS_FILE: must name at least one API key, got '{path}' {NO_KEY}"


@pytest.mark.parametrize("raw", [" , ", ",", ",,,"])
def test_plain_keys_that_name_no_key_stop_the_process(raw):
    message = refusal({"OCRGW_API_KEYS": raw})

    got = f"a secret of {len(raw.strip())} characters"
    assert message == f"OCRGW_API_KEYS: must name at least one API key, got {got} {NO_KEY}"


@pytest.mark.parametrize("variable", ["OCRGW_API_KEYS", "OCRGW_API_KEYS_FILE"])
@pytest.mark.parametrize("blank", ["", "   "])
def test_a_keys_variable_set_to_nothing_stops_the_process_as_well(variable, blank):
    # A template that lost its value (KEYS=${UNDEFINED}) means keys were meant; unset means none.
    message = refusal({variable: blank})

    assert message == f"{variable}: must name at least one API key, got nothing {NO_KEY}"


def test_keys_in_one_variable_do_not_excuse_the_other_naming_none(tmp_path):
    message = refusal({"OCRGW_API_KEYS_FILE": keys_file(tmp_path, "# rotated out\n"), "OCRGW_API_KEYS": "acme:k"})

    assert message.startswith("OCRGW_API_KEYS_FILE: must name at least one API key")


def test_numbered_policies_give_a_key_its_tenant_s_weight_and_its_interactive_allowance(tmp_path):
    path = keys_file(
        tmp_path,
        f"acme:{sha('a')}:on_prem_only,weight=3,interactive_max_inflight=0\n"
        f"acme:{sha('b')}:weight=3\n"
        f"globex:{sha('c')}:interactive_max_inflight=4\n",
    )

    keys = Settings.from_env({"OCRGW_API_KEYS_FILE": path}).api_keys

    assert [(k.tenant, k.policies, k.weight, k.interactive_max_inflight) for k in keys] == [
        ("acme", frozenset({"on_prem_only"}), 3, 0),
        ("acme", frozenset(), 3, None),
        ("globex", frozenset(), None, 4),
    ]
    assert tenant_weights(keys) == {"acme": 3, "globex": 1}


def test_a_tenant_whose_keys_give_different_weights_stops_the_process(tmp_path):
    path = keys_file(tmp_path, f"acme:{sha('a')}:weight=2\nacme:{sha('b')}\nacme:{sha('c')}:weight=1\n")

    message = refusal({"OCRGW_API_KEYS_FILE": path})

    assert message == "OCRGW_API_KEYS_FILE: tenant 'acme': its keys give weights 2 and 1; give one weight"
