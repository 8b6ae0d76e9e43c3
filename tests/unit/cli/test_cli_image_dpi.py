"""``--image-dpi`` on ``ocrgw submit`` and ``ocrgw ocr``: the option image_dpi, held to the gateway's range."""

from __future__ import annotations

import json

import pytest

from cli import ocr
from jobs.registry import MAX_IMAGE_DPI_OPTION, MIN_IMAGE_DPI_OPTION
from tests.keyspace import keys
from tests.unit.documents.test_pages import encode, solid


def test_the_command_lines_range_is_the_gateways():
    assert (ocr.MIN_IMAGE_DPI, ocr.MAX_IMAGE_DPI) == (MIN_IMAGE_DPI_OPTION, MAX_IMAGE_DPI_OPTION)


def test_ocr_sends_image_dpi_only_when_given_and_a_whole_number_as_one():
    assert "image_dpi" not in ocr.OcrRequest().options()
    assert ocr.OcrRequest(image_dpi=300.0).options()["image_dpi"] == 300
    assert ocr.OcrRequest(image_dpi=204.5).options()["image_dpi"] == 204.5


def test_submit_sends_image_dpi_as_the_option(served, ocrgw, tmp_path):
    served.worker.pause()  # only the options sent matter here
    document = tmp_path / "scan.png"
    document.write_bytes(encode(solid((40, 30)), "PNG"))

    given = ocrgw("submit", str(document), "--image-dpi", "300")
    plain = ocrgw("submit", str(document))

    assert given.exit_code == plain.exit_code == 0, given.output + plain.output
    options = [
        json.loads(served.redis.hget(keys.job(result.stdout.strip()), "options") or "{}") for result in (given, plain)
    ]
    assert options == [{"image_dpi": 300}, {}]


@pytest.mark.parametrize("command", ["submit", "ocr"])
@pytest.mark.parametrize("value", ["0", "-300", "10000", "many"])
def test_an_image_dpi_out_of_range_is_a_usage_error_and_sends_nothing(served, ocrgw, tmp_path, command, value):
    document = tmp_path / "scan.png"
    document.write_bytes(encode(solid((40, 30)), "PNG"))
    output = [str(tmp_path / "out.pdf")] if command == "ocr" else []

    result = ocrgw(command, str(document), *output, "--image-dpi", value)

    assert result.exit_code == 2
    assert "--image-dpi" in result.stderr
    assert not any(h.get("Content-Type") for h in served.requests)
