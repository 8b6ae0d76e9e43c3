"""The adapters' shared result model, the registry, and the echo model."""

from __future__ import annotations

import pytest

import workers.adapters as adapters
from jobs.errors import AdapterError, EchoFailed, InvalidDocument
from tests.unit.workers.pages import Progress
from workers.adapters import echo as echo_module
from workers.adapters import get_adapter
from workers.adapters.base import Line, OcrResult, PageResult, Word

# --- result model ------------------------------------------------------------


def test_result_text_joins_pages_and_to_dict_is_json_ready():
    result = OcrResult(
        pages=[
            PageResult(
                1,
                "one\n  \n",
                [Line("one", 0.123456, (1, 2, 3, 4), (Word("one", 0.98765, (1, 2, 3, 4)),))],
                width=10,
                height=20,
                rotation=90,
                skew=-1.23456,
                orientation_by="classifier",
            ),
            PageResult(2, "two", [], source="text_layer"),
        ]
    )

    assert result.text == "one\n\ntwo"
    assert result.to_dict() == {
        "text": "one\n\ntwo",
        "pages": [
            {
                "page": 1,
                "text": "one\n  \n",
                "source": "ocr",
                "rotation": 90,
                "skew": -1.23,
                "orientation_by": "classifier",
                "lines": [
                    {
                        "text": "one",
                        "confidence": 0.1235,
                        "bbox": [1, 2, 3, 4],
                        "words": [{"text": "one", "confidence": 0.9877, "bbox": [1, 2, 3, 4]}],
                    }
                ],
                "width": 10,
                "height": 20,
            },
            {
                "page": 2,
                "text": "two",
                "source": "text_layer",
                "rotation": 0,
                "skew": 0.0,
                "orientation_by": None,
                "lines": [],
            },
        ],
    }


# --- registry ----------------------------------------------------------------


def test_get_adapter_returns_one_instance_per_process():
    assert get_adapter("echo") is get_adapter("echo")
    assert get_adapter("tesseract").name == "tesseract"


def test_unknown_model_is_a_permanent_adapter_error():
    with pytest.raises(AdapterError) as caught:
        get_adapter("no-such-engine")

    assert caught.value.code == "unknown_model"
    assert caught.value.transient is False


def test_a_forked_child_builds_its_own_adapters():
    before = get_adapter("echo")

    adapters._reset_after_fork()

    assert get_adapter("echo") is not before


# --- echo --------------------------------------------------------------------


def test_echo_returns_the_payload_with_a_line_per_non_empty_line():
    progress = Progress()

    result = get_adapter("echo").run("héllo\n\n  \nworld 42\n".encode(), "text/plain", {}, progress)

    assert result.to_dict() == {
        "text": "héllo\n\n  \nworld 42",
        "pages": [
            {
                "page": 1,
                "text": "héllo\n\n  \nworld 42\n",
                "source": "ocr",
                "rotation": 0,
                "skew": 0.0,
                "orientation_by": None,
                "lines": [
                    {
                        "text": "héllo",
                        "confidence": 1.0,
                        "bbox": [0, 0, 0, 0],
                        "words": [{"text": "héllo", "confidence": 1.0, "bbox": [0, 0, 0, 0]}],
                    },
                    {
                        "text": "world 42",
                        "confidence": 1.0,
                        "bbox": [0, 0, 0, 0],
                        "words": [
                            {"text": "world", "confidence": 1.0, "bbox": [0, 0, 0, 0]},
                            {"text": "42", "confidence": 1.0, "bbox": [0, 0, 0, 0]},
                        ],
                    },
                ],
            }
        ],
    }
    assert progress == [(1, 1)]


class RecordedSleeps(list):
    """The echo model's ``time`` module, with each sleep recorded instead of slept, and a clock set by the test."""

    now = 1_000_000.0

    def sleep(self, seconds: float) -> None:
        self.append(seconds)

    def time(self) -> float:
        return self.now


@pytest.fixture
def sleeps(monkeypatch) -> RecordedSleeps:
    recorded = RecordedSleeps()
    monkeypatch.setattr(echo_module, "time", recorded)
    return recorded


def test_echo_sleeps_for_delay_ms(sleeps):
    result = get_adapter("echo").run(b"x", "text/plain", {"delay_ms": 60})

    assert sleeps == [0.06]
    assert result.text == "x"


def test_echo_fails_on_request_after_the_delay(sleeps):
    with pytest.raises(EchoFailed, match="echo asked to fail") as caught:
        get_adapter("echo").run(b"x", "text/plain", {"fail": True, "delay_ms": 30})

    assert sleeps == [0.03]
    assert caught.value.code == "echo_failed"
    assert caught.value.transient is False


def test_echo_reads_form_feeds_as_pages_reporting_each_after_its_delay(sleeps):
    seen = []
    result = get_adapter("echo").run(
        b"one\ftwo\fthree", "text/plain", {"delay_ms": 10}, lambda done, total: seen.append((done, total, len(sleeps)))
    )

    assert [(p.page, p.text) for p in result.pages] == [(1, "one"), (2, "two"), (3, "three")]
    assert seen == [(1, 3, 1), (2, 3, 2), (3, 3, 3)]


def test_echo_fails_until_the_time_it_was_given(sleeps):
    with pytest.raises(EchoFailed, match="for a while"):
        get_adapter("echo").run(b"x", "text/plain", {"fail_until": sleeps.now + 1})
    assert get_adapter("echo").run(b"x", "text/plain", {"fail_until": sleeps.now}).text == "x"


def test_echo_without_a_delay_does_not_sleep(sleeps):
    get_adapter("echo").run(b"x", "text/plain", {})

    assert sleeps == []


@pytest.mark.parametrize("delay", [-1, "10", True, float("inf")])
def test_echo_rejects_a_bad_delay(delay):
    with pytest.raises(AdapterError, match="delay_ms") as caught:
        get_adapter("echo").run(b"x", "text/plain", {"delay_ms": delay})
    assert caught.value.code == "invalid_options"
    assert caught.value.transient is False


def test_echo_refuses_bad_options_at_every_job_that_carries_them():
    for _ in range(2):
        with pytest.raises(AdapterError, match="delay_ms") as caught:
            get_adapter("echo").run(b"x", "text/plain", {"delay_ms": -5, "tag": "refused twice"})
        assert caught.value.code == "invalid_options"


def test_echo_loads_a_set_of_options_once_and_applies_it_at_every_job(monkeypatch, sleeps):
    loads = []
    load = echo_module._load

    def counted(options: dict) -> dict:
        loads.append(options)
        return load(options)

    monkeypatch.setattr(echo_module, "_load", counted)
    options = {"delay_ms": 5, "tag": "loaded once"}

    for _ in range(3):
        get_adapter("echo").run(b"x", "text/plain", options)
    for _ in range(2):
        with pytest.raises(EchoFailed):
            get_adapter("echo").run(b"x", "text/plain", {"fail": True, "tag": "loaded once"})

    assert loads == [options, {"fail": True, "tag": "loaded once"}]
    assert sleeps == [0.005] * 3


def test_echo_accepts_text_plain_only():
    with pytest.raises(InvalidDocument, match="text/plain"):
        get_adapter("echo").run(b"x", "image/png", {})
    assert get_adapter("echo").run(b"x", "text/plain; charset=utf-8", {}).text == "x"


def test_echo_rejects_bytes_that_are_not_utf8():
    with pytest.raises(InvalidDocument, match="UTF-8"):
        get_adapter("echo").run(b"\xff\xfe\x00", "text/plain", {})


def test_echo_keeps_nothing_from_one_run_to_the_next():
    """Benchmarks run thousands of echo jobs through one instance per process."""
    echo = get_adapter("echo")
    progress = Progress()

    results = [echo.run(b"line one\nline two", "text/plain", {}, progress).to_dict() for _ in range(1000)]

    assert results == [results[0]] * 1000
    assert results[0]["text"] == "line one\nline two"
    assert progress == [(1, 1)] * 1000


def test_echo_reads_a_page_range_of_its_form_feed_pages():
    result = get_adapter("echo").run(b"one\ftwo\fthree", "text/plain", {}, pages=(2, 3))

    assert [p.text for p in result.pages] == ["two", "three"]
