"""OCRGW_REMOTE_MODELS and OCRGW_REMOTE_KEYS_FILE: remote models and their upstreams' keys."""

from __future__ import annotations

import pytest

from jobs.config import InvalidSettings, Settings
from jobs.registry import RemoteModel


def test_each_entry_is_a_remote_model_of_an_upstream():
    settings = Settings.from_env(
        {"OCRGW_REMOTE_MODELS": " cloudocr=tesseract@http://ocr.example:8000/ , deep=paddleocr@https://10.0.0.5/ocrgw,"}
    )

    assert settings.remote_models == (
        RemoteModel("cloudocr", "tesseract", "http://ocr.example:8000"),
        RemoteModel("deep", "paddleocr", "https://10.0.0.5/ocrgw"),
    )
    assert settings.remotes == settings.remote_models  # no keys file: no keys


def test_the_keys_file_gives_an_upstream_its_key(tmp_path):
    keys = tmp_path / "remote-keys"
    keys.write_text("# the upstreams' bearer keys\n\ncloudocr = k3y/with+symbols=\n")

    settings = Settings.from_env(
        {
            "OCRGW_REMOTE_MODELS": "cloudocr=tesseract@http://ocr.example:8000,deep=paddleocr@http://deep.example",
            "OCRGW_REMOTE_KEYS_FILE": str(keys),
        }
    )

    assert {m.name: m.key for m in settings.remotes} == {"cloudocr": "k3y/with+symbols=", "deep": ""}
    assert "k3y" not in repr(settings) and "k3y" not in repr(settings.remotes)


REMOTE_EXPECTS = (
    "OCRGW_REMOTE_MODELS: must be a comma-separated list of name=model@http(s)://host[:port][/path], "
    "each name new (not echo, paddleocr, tesseract) and given once, no credentials in the URL, got "
)


@pytest.mark.parametrize(
    "raw",
    [
        "cloudocr",  # no model, no URL
        "cloudocr=tesseract",  # no URL
        "cloudocr=@http://ocr.example",  # no model
        "=tesseract@http://ocr.example",  # no name
        "Cloud OCR=tesseract@http://ocr.example",  # not a model name
        "cloudocr=tesseract@ftp://ocr.example",  # not http(s)
        "cloudocr=tesseract@http://",  # no host
        "cloudocr=tesseract@http://ocr.example:port",  # no port
        "cloudocr=tesseract@http://ocr.example/?key=1",  # a query
        "tesseract=tesseract@http://ocr.example",  # a built-in model's name
        "a=tesseract@http://one.example,a=echo@http://two.example",  # a name twice
    ],
)
def test_a_malformed_entry_stops_the_process(raw):
    with pytest.raises(InvalidSettings) as caught:
        Settings.from_env({"OCRGW_REMOTE_MODELS": raw})

    assert str(caught.value) == f"{REMOTE_EXPECTS}{raw!r}"


def test_credentials_in_an_upstream_url_are_refused_and_not_repeated():
    with pytest.raises(InvalidSettings) as caught:
        Settings.from_env({"OCRGW_REMOTE_MODELS": "cloudocr=tesseract@https://user:hunter2@ocr.example"})

    assert "hunter2" not in str(caught.value)
    assert str(caught.value).startswith(REMOTE_EXPECTS)


KEYS_EXPECTS = (
    "OCRGW_REMOTE_KEYS_FILE: must be a readable UTF-8 file of name=key lines (# comments), "
    "each name once, each key visible ASCII, got "
)


@pytest.mark.parametrize(
    "content",
    ["cloudocr\n", "cloudocr=\n", "=secret-one\n", "cloudocr=two words\n", "cloudocr=a\ncloudocr=b\n"],
)
def test_a_malformed_keys_file_stops_the_process_without_showing_a_key(tmp_path, content):
    keys = tmp_path / "remote-keys"
    keys.write_text(content)

    with pytest.raises(InvalidSettings) as caught:
        Settings.from_env({"OCRGW_REMOTE_MODELS": "cloudocr=x@http://h", "OCRGW_REMOTE_KEYS_FILE": str(keys)})

    assert str(caught.value) == f"{KEYS_EXPECTS}{str(keys)!r}"


def test_a_missing_keys_file_stops_the_process(tmp_path):
    missing = str(tmp_path / "nowhere")

    with pytest.raises(InvalidSettings) as caught:
        Settings.from_env({"OCRGW_REMOTE_KEYS_FILE": missing})

    assert str(caught.value) == f"{KEYS_EXPECTS}{missing!r}"


def test_a_key_for_a_model_that_is_not_declared_stops_the_process(tmp_path):
    keys = tmp_path / "remote-keys"
    keys.write_text("cloudocr=secret-one\nghost=secret-two\n")

    with pytest.raises(InvalidSettings) as caught:
        Settings.from_env({"OCRGW_REMOTE_MODELS": "cloudocr=x@http://h", "OCRGW_REMOTE_KEYS_FILE": str(keys)})

    assert str(caught.value) == "OCRGW_REMOTE_KEYS_FILE: has keys for ghost, not declared in OCRGW_REMOTE_MODELS"
    assert "secret" not in str(caught.value)
