"""options.layout at the gateway: a page's layout is found from its words, so a model that gives none
(echo, or a remote model whose upstream model is echo) refuses it with 422 invalid_options and nothing is
stored; a model that reads pages takes it, and a value that is not a boolean is an invalid_field."""

from __future__ import annotations

from typing import Any

import pytest

from jobs.config import Settings
from jobs.registry import MODELS, RemoteModel
from tests.unit.remote_models import registry_restored

from .conftest import MAX_BODY_BYTES, MAX_CHILDREN, MAX_PAGES
from .support import assert_problem, b64, echo_job, fanout, png

PNG = png()
REMOTE_ECHO = RemoteModel("far-echo", "echo", "http://ocr.example:8000")
REMOTE_TESSERACT = RemoteModel("far-tesseract", "tesseract", "http://ocr.example:8000")
REMOTE_OTHER = RemoteModel("far-other", "their-own-model", "http://ocr.example:8000")


@pytest.fixture(autouse=True)
def restored():
    with registry_restored():
        yield


@pytest.fixture
def settings() -> Settings:
    return Settings(
        max_children=MAX_CHILDREN,
        max_pages=MAX_PAGES,
        max_body_bytes=MAX_BODY_BYTES,
        remote_models=(REMOTE_ECHO, REMOTE_TESSERACT, REMOTE_OTHER),
    )


def page_job(model: str, **options: Any) -> dict:
    return {"model": model, "payload": b64(PNG), "content_type": "image/png", "options": options}


def remote_echo_job(**options: Any) -> dict:
    return {"model": "far-echo", "payload": b64(b"hello"), "content_type": "text/plain", "options": options}


REFUSED: dict[str, tuple[dict, int | None]] = {
    "echo": (echo_job(options={"layout": True}), None),
    "a remote model reading with echo upstream": (remote_echo_job(layout=True), None),
    "a group's child": (fanout(page_job("tesseract", layout=True), echo_job(options={"layout": True})), 1),
}


@pytest.mark.parametrize(("body", "child"), REFUSED.values(), ids=REFUSED.keys())
def test_layout_on_a_model_without_words_is_invalid_options_and_nothing_is_stored(
    client, keyspace, published, body, child
):
    before = keyspace()

    response = client.post("/jobs", json=body)

    problem = assert_problem(response, 422, "invalid_options")
    assert problem["options"] == ["layout"]
    assert "words" in problem["detail"]
    assert problem.get("child_index") == child
    assert keyspace() == before
    assert published == []


@pytest.mark.parametrize("model", ["tesseract", "paddleocr", "far-tesseract", "far-other"])
def test_a_model_that_reads_pages_takes_layout(client, published, model):
    response = client.post("/jobs", json=page_job(model, layout=True))

    assert response.status_code == 202, response.get_data(as_text=True)
    assert len(published) == 1


def test_layout_off_is_taken_by_every_model(client):
    for body in (echo_job(options={"layout": False}), remote_echo_job(layout=False), page_job("tesseract")):
        response = client.post("/jobs", json=body)
        assert response.status_code == 202, response.get_data(as_text=True)


@pytest.mark.parametrize("value", ["yes", 1, None])
def test_a_layout_that_is_not_a_boolean_is_an_invalid_field(client, keyspace, value):
    before = keyspace()

    response = client.post("/jobs", json=page_job("tesseract", layout=value))

    assert assert_problem(response, 422, "invalid_field")["errors"].keys() == {"options"}
    assert keyspace() == before


def test_the_registry_says_which_models_give_words(client):  # the app installs the remote models
    assert {name: MODELS[name].gives_words for name in ("tesseract", "paddleocr", "echo")} == {
        "tesseract": True,
        "paddleocr": True,
        "echo": False,
    }
    assert MODELS["far-echo"].gives_words is False
    assert MODELS["far-other"].gives_words is True  # its upstream judges its own model


def test_the_options_document_describes_layout(client):
    models = {m["name"]: m for m in client.get("/models").get_json()["models"]}

    described = str(models["tesseract"]["options"])

    assert "blocks" in described and "invalid_options" in described
