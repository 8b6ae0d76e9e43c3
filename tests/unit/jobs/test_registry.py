"""jobs.registry: one entry per model is all the workers, the dispatcher and the gateway need."""

from __future__ import annotations

import importlib

import pytest

from jobs.contract import Priority
from jobs.registry import (
    MODELS,
    Location,
    RemoteModel,
    install_remote_models,
    is_interactive_queue,
    model_queues,
    with_interactive_lanes,
)
from tests.unit.remote_models import registry_restored
from workers import adapters
from workers.adapters import get_adapter
from workers.adapters.base import Adapter


@pytest.mark.parametrize("name", sorted(MODELS))
def test_each_model_names_an_adapter_class_of_its_own(name):
    module_name, _, class_name = MODELS[name].adapter.partition(":")

    adapter_class = getattr(importlib.import_module(module_name), class_name)

    assert issubclass(adapter_class, Adapter)
    assert adapter_class.name == name


@pytest.mark.parametrize("name", sorted(MODELS))
def test_each_model_has_a_queue_a_location_content_types_and_options(name):
    model = MODELS[name]

    assert model.queue == f"ocr.{name}"
    assert isinstance(model.location, Location)
    assert model.content_types and all("/" in t for t in model.content_types)
    assert model.options_schema.load({}) == {}  # every option is optional
    assert model.options_schema is MODELS[name].options_schema  # built once


def test_workers_resolve_adapters_from_the_registry(monkeypatch):
    monkeypatch.setattr(adapters, "_cache", {})
    monkeypatch.setitem(MODELS, "echo-again", MODELS["echo"])

    assert get_adapter("echo-again").name == "echo"


def test_the_model_queues_are_every_models_remote_models_included():
    with registry_restored():
        install_remote_models([RemoteModel("cloudocr", "tesseract", "https://ocr.example")])

        assert model_queues() == [
            "ocr.cloudocr.interactive",
            "ocr.echo.interactive",
            "ocr.paddleocr.interactive",
            "ocr.tesseract.interactive",
            "ocr.cloudocr",
            "ocr.echo",
            "ocr.paddleocr",
            "ocr.tesseract",
        ]


@pytest.mark.parametrize("name", sorted(MODELS))
def test_an_interactive_job_goes_to_its_models_interactive_queue_any_other_to_its_queue(name):
    model = MODELS[name]

    assert model.queue_for(Priority.INTERACTIVE.value) == f"ocr.{name}.interactive" == model.interactive_queue
    assert model.queue_for(Priority.BATCH.value) == f"ocr.{name}"
    assert model.queue_for("") == f"ocr.{name}"  # a job stored before lanes existed
    assert is_interactive_queue(model.interactive_queue) and not is_interactive_queue(model.queue)


def test_a_worker_named_a_models_queue_consumes_its_interactive_lane_first():
    assert with_interactive_lanes(["ocr.tesseract", "ocr.echo"]) == [
        "ocr.tesseract.interactive",
        "ocr.echo.interactive",
        "ocr.tesseract",
        "ocr.echo",
    ]


def test_queues_of_no_model_get_no_lane_and_a_lane_named_already_is_not_doubled():
    assert with_interactive_lanes(["coordinator"]) == ["coordinator"]
    assert with_interactive_lanes(["ocr.echo.interactive", "ocr.echo"]) == ["ocr.echo.interactive", "ocr.echo"]


@pytest.mark.parametrize(
    "name, options, valid",
    [
        ("echo", {"delay_ms": 1.5, "fail": False, "tag": [1]}, True),  # echo keeps unknown keys
        ("echo", {"delay_ms": -1}, False),
        ("echo", {"crash": "yes"}, False),
        ("tesseract", {"lang": "eng+deu", "psm": 6, "timeout_s": 30}, True),
        ("tesseract", {"psm": 14}, False),
        ("tesseract", {"lang": "eng; rm -rf /"}, False),
        ("tesseract", {"timeout_s": 0}, False),
        ("tesseract", {"lamg": "eng"}, False),  # a misspelt option fails loudly
        ("paddleocr", {"timeout_s": 2.5}, True),
        ("paddleocr", {"lang": "eng"}, False),
    ],
)
def test_options_are_checked_by_the_models_schema(name, options, valid):
    assert (MODELS[name].options_schema.validate(options) == {}) is valid


@pytest.mark.parametrize("queue", ["ocr.interactive", "ocr..interactive", "interactive", "webhooks.interactive"])
def test_only_a_models_interactive_lane_is_interactive(queue):
    """A model may be named ``interactive``: its batch queue ``ocr.interactive`` ends like a lane, and is none."""
    assert not is_interactive_queue(queue)


def test_a_remote_model_named_interactive_has_a_batch_queue_and_a_lane_like_any_other():
    with registry_restored():
        install_remote_models([RemoteModel("interactive", "tesseract", "https://ocr.example")])
        model = MODELS["interactive"]

        assert not is_interactive_queue(model.queue) and is_interactive_queue(model.interactive_queue)
        assert with_interactive_lanes([model.queue]) == ["ocr.interactive.interactive", "ocr.interactive"]
