"""Request builders and checks shared by the gateway tests."""

from __future__ import annotations

import base64
import io
import re
from typing import Any

from PIL import Image

PROBLEM_MEMBERS = {"type", "title", "status", "detail", "code"}
RFC3339_MICROS = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")


def png(width: int = 8, height: int = 8) -> bytes:
    """A real PNG: the gateway reads a document's header (its size) at submission."""
    buffer = io.BytesIO()
    Image.new("L", (width, height), 255).save(buffer, "PNG")
    return buffer.getvalue()


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def echo_job(text: str = "hello", **fields) -> dict:
    """A valid JSON job (or fan-out child) for the echo model."""
    return {"model": "echo", "payload": b64(text.encode()), "content_type": "text/plain", **fields}


def fanout(*children: Any, max_parallel=2) -> dict:
    """A fan-out body; a child may be any JSON, for the tests of what the gateway refuses."""
    return {"fanout": {"max_parallel": max_parallel, "children": list(children)}}


def assert_problem(response, status: int, code: str) -> dict:
    """The response is an RFC 9457 problem with this status and code; returns its body."""
    assert response.status_code == status, response.get_data(as_text=True)
    assert response.mimetype == "application/problem+json"
    body = response.get_json(force=True)
    assert body.keys() >= PROBLEM_MEMBERS
    assert body["status"] == status
    assert body["code"] == code
    assert body["type"] in ("about:blank", f"/manual/problems/{code}/")
    assert body["title"] and body["detail"]
    return body
