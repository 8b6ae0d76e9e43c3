"""Every answer of the gateway's tests is checked against its OpenAPI document.

A test client whose every response must be documented for its operation:
its status among the operation's responses, its media type among that
response's, its body valid for that schema.  So the document cannot drift
from the views: any answer a test provokes that the document does not
describe fails the test.  A document the gateway's views render outside a
request (a webhook's body) is checked the same way, as the answer of the
operation it stands for (``Document.check_document``).
"""

from __future__ import annotations

import re

import requests
import schemathesis
from flask import Flask
from flask.testing import FlaskClient
from schemathesis.core.transport import Response
from werkzeug.exceptions import HTTPException

from gateway.openapi import PROBLEM_CODES_EXTENSION
from gateway.problems import MEDIA_TYPE

_CONVERTER = re.compile(r"<(?:[^:<>]+:)?([^<>]+)>")


class Document:
    def __init__(self, app: Flask):
        with app.test_client() as client:
            self.spec = client.get("/openapi.json").get_json()
        self.schema = schemathesis.openapi.from_dict(self.spec)
        self.urls = app.url_map.bind("localhost")

    def operation(self, method: str, path: str) -> tuple[str, dict] | None:
        """(path template, operation) of the route that serves ``method path``, if it is documented."""
        try:
            rule, _ = self.urls.match(path, method=method, return_rule=True)
        except HTTPException:
            return None  # no such route or method: not an operation of the API
        template = _CONVERTER.sub(r"{\1}", rule.rule)
        operation = self.spec["paths"].get(template, {}).get(method.lower())
        return (template, operation) if operation is not None else None

    def check(self, method: str, path: str, response) -> None:
        found = self.operation(method, path)
        if found is None:
            return
        template, operation = found
        documented = operation["responses"].get(str(response.status_code))
        assert documented is not None, (
            f"{method} {template} answered {response.status_code}, which it does not document: "
            f"{response.get_data(as_text=True)[:300]}"
        )
        media_types = documented.get("content", {})
        assert response.mimetype in media_types, (
            f"{method} {template} {response.status_code} is {response.mimetype}, documented {sorted(media_types)}"
        )
        self.schema[template][method].validate_response(_as_schemathesis(method, response))
        # Every status shares the one Problem schema: the codes it may carry are listed beside it.
        listed = documented.get(PROBLEM_CODES_EXTENSION)
        if listed is not None and response.mimetype == MEDIA_TYPE:
            code = response.get_json()["code"]
            assert code in listed, f"{method} {template} answered {code!r} under {response.status_code}: {listed}"

    def check_document(self, method: str, template: str, status: int, body: bytes) -> None:
        """``body`` is a valid JSON answer of ``method template`` with ``status``."""
        request = requests.Request(method=method, url=f"http://localhost{template}").prepare()
        answer = Response(status, {"Content-Type": ["application/json"]}, body, request, elapsed=0.0, verify=False)
        self.schema[template][method].validate_response(answer)


def _as_schemathesis(method: str, response) -> Response:
    """The test response as schemathesis reads it, without the request's headers (some tests send
    malformed ones on purpose, which the ``requests`` request it would build refuses)."""
    request = requests.Request(method=method, url=response.request.url).prepare()
    headers: dict[str, list[str]] = {}
    for name, value in response.headers.items():
        headers.setdefault(name, []).append(value)
    return Response(response.status_code, headers, response.get_data(), request, elapsed=0.0, verify=False)


class DocumentedClient(FlaskClient):
    """A test client that checks each answer against the app's OpenAPI document."""

    document: Document

    def open(self, *args, **kwargs):
        response = super().open(*args, **kwargs)
        request = response.request
        self.document.check(request.method, request.path, response)
        return response


def documented_client(app: Flask) -> FlaskClient:
    client_class = type("AppDocumentedClient", (DocumentedClient,), {"document": Document(app)})
    app.test_client_class = client_class
    return app.test_client()
