"""Remote models in the registry: cloud models with a queue of their own, run by the remote adapter."""

from __future__ import annotations

import pytest

from jobs import registry
from jobs.registry import MODEL_NAMES, MODELS, Location, RemoteModel, install_remote_models
from tests.unit.remote_models import registry_restored
from workers.adapters import get_adapter
from workers.adapters.remote import RemoteAdapter

CLOUD = RemoteModel("cloudocr", "tesseract", "http://ocr.example:8000", "k3y")


@pytest.fixture(autouse=True)
def restored():
    with registry_restored():
        yield


def test_a_remote_model_is_a_cloud_model_with_its_own_queue():
    install_remote_models([CLOUD])

    model = MODELS["cloudocr"]
    assert model.location is Location.CLOUD
    assert model.queue == "ocr.cloudocr"
    assert model.remote == CLOUD
    assert model.content_types == {t for m in registry.BUILT_IN_MODELS for t in MODELS[m].content_types}
    # Options go to the upstream as they are; timeout_s is read here too.
    assert model.options_schema.load({"lang": "deu", "timeout_s": 5}) == {"lang": "deu", "timeout_s": 5}
    assert model.options_schema.validate({"timeout_s": 0}) != {}


def test_installing_keeps_the_names_sorted_in_the_one_list_the_schemas_show():
    names = MODEL_NAMES

    install_remote_models([RemoteModel("zz-cloud", "echo", "http://a"), RemoteModel("aa-cloud", "echo", "http://b")])
    install_remote_models([RemoteModel("aa-cloud", "tesseract", "http://c")])  # again: replaced, not added

    assert registry.MODEL_NAMES is names
    assert names == sorted(MODELS) == ["aa-cloud", "echo", "paddleocr", "tesseract", "zz-cloud"]
    remote = MODELS["aa-cloud"].remote
    assert remote is not None and remote.url == "http://c"


def test_a_remote_model_may_not_take_a_built_in_models_name():
    with pytest.raises(ValueError, match="built-in"):
        install_remote_models([RemoteModel("tesseract", "tesseract", "http://a")])

    assert MODELS["tesseract"].location is Location.ON_PREM


def test_the_worker_builds_the_remote_adapter_with_its_upstream():
    install_remote_models([CLOUD])

    adapter = get_adapter("cloudocr")

    assert isinstance(adapter, RemoteAdapter)
    assert (adapter.name, adapter.remote) == ("cloudocr", CLOUD)
    assert adapter.http.headers["Authorization"] == "Bearer k3y"


@pytest.mark.parametrize(
    "name, on_prem, allowed",
    [
        ("cloudocr", True, False),
        ("cloudocr", False, True),
        ("tesseract", True, True),
        ("echo", False, True),
    ],
)
def test_only_a_cloud_model_refuses_an_on_prem_document(name, on_prem, allowed):
    install_remote_models([CLOUD])

    assert MODELS[name].may_take(on_prem=on_prem) is allowed
