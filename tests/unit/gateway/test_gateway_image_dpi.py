"""options.image_dpi at submission: a number in its range is taken, anything else refused before anything is stored."""

from __future__ import annotations

import pytest

from .support import assert_problem, b64, png


def image_job(**options) -> dict:
    return {"model": "tesseract", "payload": b64(png()), "content_type": "image/png", "options": options}


@pytest.mark.parametrize("value", [0, -300, 49.9, 4801, "300", True, None, [300]])
def test_a_bad_image_dpi_is_refused_naming_the_option_and_stores_nothing(client, keyspace, published, value):
    before = keyspace()

    body = assert_problem(client.post("/jobs", json=image_job(image_dpi=value)), 422, "invalid_field")

    assert "image_dpi" in str(body["errors"])
    assert keyspace() == before
    assert published == []


@pytest.mark.parametrize("value", [50, 204.5, 300, 4800])
def test_an_image_dpi_in_its_range_is_taken(client, value):
    response = client.post("/jobs", json=image_job(image_dpi=value))

    assert response.status_code == 202, response.get_json()


@pytest.mark.parametrize("model", ["tesseract", "paddleocr"])
def test_models_declare_image_dpi(client, model):
    options = {m["name"]: m for m in client.get("/models").get_json()["models"]}[model]["options"]

    assert "image_dpi" in str(options)
