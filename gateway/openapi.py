"""The API on flask-smorest: the OpenAPI document, Swagger UI, and how errors are documented.

``/openapi.json`` is generated from the marshmallow schemas of
``gateway.schemas`` (requests) and ``gateway.responses`` (answers);
``/docs`` is Swagger UI, whose files come from the ``swagger-ui-bundle``
package and are served here, so the page loads with no internet access.

Every error is an RFC 9457 problem (``gateway.problems``), not
flask-smorest's own error shape: its handler is left out and each
operation documents the problem codes it may answer, per status, each
status referring to the one shared ``Problem`` schema.

Every operation asks for an API key (``bearerAuth``, see ``gateway.auth``)
unless it says ``security: []``, as the probes do.

Every operation has an ``operationId`` and one tag of ``TAGS`` (``operation``):
a client generated from the document names its functions and groups them
by these, so they are part of the API and never change.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from functools import reduce
from typing import Any

import flask_smorest
from flask import Flask, send_from_directory
from marshmallow import Schema
from swagger_ui_bundle import swagger_ui_path
from webargs.flaskparser import FlaskParser

from gateway import responses, schemas
from gateway.auth import SECURITY_SCHEME
from gateway.bodies import read_json_body
from gateway.problems import CATALOGUE, MEDIA_TYPE, OUTSIDE_API_CODES, PLAIN_HTTP_CODES, invalid_field
from gateway.responses import PROBLEM_CODE_SCHEMA, WEBHOOK_ERROR_CODE_SCHEMA
from gateway.submission import parse_json_object
from jobs import public_view
from jobs.contract import ErrorCode, JobStatus, WebhookErrorCode
from jobs.public_view import ERROR_CODE_SCHEMA, JOB_STATUS_SCHEMA, RESULT_SCHEMA

TITLE = "ocrgw"
VERSION = "1"
DOCS_PATH = "/docs"
SWAGGER_ASSETS = f"{DOCS_PATH}/static/"

#: The tags of the operations, in the order a client or Swagger UI lists them.
TAGS = (
    {"name": "jobs", "description": "Submit a document or a JSON job, read it, list the jobs, cancel one, its events."},
    {
        "name": "groups",
        "description": "Fan-out groups (and split PDFs): a page of a group's children, a new cap, a retry.",
    },
    {"name": "results", "description": "What a job made: its result as JSON, hOCR, ALTO, and its searchable PDF."},
    {"name": "usage", "description": "What a tenant's jobs used: pages, engine seconds, bytes, per model and period."},
    {"name": "models", "description": "The models a job may name, what each takes, the languages of the workers."},
    {"name": "health", "description": "The probes: liveness and readiness, open without an API key."},
)
_TAG_NAMES = frozenset(tag["name"] for tag in TAGS)
#: The one schema of every problem answer, whatever its status.
PROBLEM_SCHEMA = "Problem"
#: A problem response's member listing the codes it may carry (a subset of ``ProblemCode``'s enum).
PROBLEM_CODES_EXTENSION = "x-problem-codes"


class Api(flask_smorest.Api):
    # No "default" error response in the document: each operation lists its problems.
    DEFAULT_ERROR_RESPONSE_NAME = None

    def _register_error_handlers(self):
        """``gateway.problems`` renders every error; flask-smorest's JSON error shape is never used."""

    def _register_responses(self):
        """Nor documented: its per-status responses would name that shape."""

    def _register_pagination_header(self):
        """Pages are in the body (``children_page``, ``next_cursor``), not in a header."""


class QueryParser(FlaskParser):
    """webargs' parser made as strict as the rest of the API.

    A parameter given twice, or one the operation does not take, is refused
    like a bad value: ``422 invalid_field`` naming it.
    """

    def __init__(self):
        super().__init__(unknown=None)  # the schemas' own setting: unknown fields are refused

    def load_querystring(self, req, schema):
        repeated = {name: ["Given more than once."] for name, values in req.args.lists() if len(values) > 1}
        if repeated:
            raise invalid_field(repeated)
        return req.args.to_dict()

    def load_json(self, req, schema):
        # The same strict reading as POST /jobs (size, duplicate keys, NaN, depth); no body: no fields.
        body = read_json_body(req)
        return parse_json_object(body) if body else {}

    def handle_error(self, error, req, schema, *, error_status_code, error_headers):
        messages = error.messages
        if isinstance(messages, dict) and len(messages) == 1 and "query" in messages:
            messages = messages["query"]  # webargs files them under the location
        raise invalid_field(messages)


class Blueprint(flask_smorest.Blueprint):
    ARGUMENTS_PARSER = QueryParser()

    @staticmethod
    def _make_doc_response_schema(schema):
        """A schema that dumps one of several (``jobs.public_view.JobViewSchema``) is documented as what it
        says it is, a ``oneOf`` of their components, rather than as its own empty object."""
        return getattr(schema, "documented_as", None) or schema


def operation(operation_id: str, tag: str) -> Callable:
    """Names an operation (its ``operationId``, a generated client's function) and files it under ``tag``."""
    if tag not in _TAG_NAMES:
        raise ValueError(f"{operation_id}: unknown tag {tag!r}; one of {sorted(_TAG_NAMES)}")
    return flask_smorest.Blueprint.doc(operationId=operation_id, tags=[tag])


def problems(blueprint: Blueprint, *codes: str) -> Callable:
    """Documents the problems an operation may answer: per status, its codes and what each means.

    Every status refers to the one ``Problem`` component, so a generated client has one problem model;
    the codes a status may carry are listed beside it (``PROBLEM_CODES_EXTENSION``, and in words in its
    description) rather than in a copy of the schema narrowed to them.
    """
    by_status: dict[int, list[str]] = defaultdict(list)
    for code in codes:
        by_status[CATALOGUE[code][0]].append(code)
    decorators = [
        blueprint.alt_response(
            status,
            schema=PROBLEM_SCHEMA,
            content_type=MEDIA_TYPE,
            description="; ".join(f"`{code}`: {CATALOGUE[code][1]}" for code in sorted(status_codes)),
            headers=_CHALLENGE if status == 401 else None,
        )
        for status, status_codes in sorted(by_status.items())
    ]
    listed = blueprint.doc(
        responses={
            status: {PROBLEM_CODES_EXTENSION: sorted(status_codes)} for status, status_codes in by_status.items()
        }
    )
    return lambda view: listed(reduce(lambda wrapped, decorate: decorate(wrapped), decorators, view))


_CHALLENGE = {
    "WWW-Authenticate": {
        "description": 'How to authenticate: `Bearer realm="ocrgw"` (with `error="invalid_token"` for a wrong key).',
        "schema": {"type": "string"},
    }
}


def create_api(app: Flask) -> Api:
    app.config.update(
        API_TITLE=TITLE,
        API_VERSION=VERSION,
        OPENAPI_VERSION="3.0.3",
        OPENAPI_URL_PREFIX="/",
        OPENAPI_JSON_PATH="openapi.json",
        OPENAPI_SWAGGER_UI_PATH=DOCS_PATH,
        OPENAPI_SWAGGER_UI_URL=SWAGGER_ASSETS,
    )
    # The tags given here replace the one flask-smorest makes of the blueprint's name.
    api = Api(
        app,
        spec_kwargs={
            "info": {"description": _DESCRIPTION},
            "security": [{SECURITY_SCHEME: []}],
            "tags": [dict(tag) for tag in TAGS],
        },
    )
    api.spec.components.security_scheme(
        SECURITY_SCHEME,
        {
            "type": "http",
            "scheme": "bearer",
            "description": "An API key, as `Authorization: Bearer <key>`. Not asked when the gateway has no keys.",
        },
    )
    _register_components(api)
    app.add_url_rule(f"{SWAGGER_ASSETS}<path:filename>", "swagger_ui_asset", _swagger_asset)
    return api


def options_json_schema(api: Api) -> Callable[[type[Schema]], dict[str, Any]]:
    """Turns a model's options schema into the JSON schema that GET /models shows."""
    return lambda schema: api.ma_plugin.converter.schema2jsonschema(schema)


def _swagger_asset(filename: str):
    return send_from_directory(swagger_ui_path, filename, max_age=3600)


def _register_components(api: Api) -> None:
    """Schemas that operations refer to by name (a oneOf, the shared Problem), not through a decorator."""
    api.spec.components.schema(ERROR_CODE_SCHEMA, _error_code_schema())
    api.spec.components.schema(
        JOB_STATUS_SCHEMA,
        {
            "type": "string",
            "enum": [status.value for status in JobStatus],
            "description": "A job's status; "
            + ", ".join(status.value for status in JobStatus if status.terminal)
            + " are terminal.",
        },
    )
    api.spec.components.schema(PROBLEM_CODE_SCHEMA, _problem_code_schema())
    api.spec.components.schema(
        WEBHOOK_ERROR_CODE_SCHEMA,
        {
            "type": "string",
            "enum": [code.value for code in WebhookErrorCode],
            "description": "Why a webhook attempt failed, in its event (`operation: webhook`).",
        },
    )
    named: dict[str, type[Schema]] = {
        "Job": schemas.JobSchema,
        "Group": schemas.GroupSchema,
        PROBLEM_SCHEMA: responses.ProblemSchema,
        RESULT_SCHEMA: responses.ResultSchema,  # SingleJobView.result refers to it by name
        "MergedResult": responses.MergedResultSchema,
        "SingleJobView": public_view.SingleJobViewSchema,
        "ParentView": public_view.ParentViewSchema,
    }
    for name, schema in named.items():
        api.spec.components.schema(name, schema=schema)


def _error_code_schema() -> dict[str, Any]:
    """Why a job failed (or is being retried): ``jobs.contract.ErrorCode``, the one catalogue, with each meaning."""
    meanings = "\n".join(
        f"- `{code.value}`{' (retried)' if code.retried else ''}: {code.meaning}" for code in ErrorCode
    )
    return {
        "type": "string",
        "enum": [code.value for code in ErrorCode],
        "description": "Why a job failed, or why its current attempt is a retry. A retried code gives the job "
        f"another attempt while it has attempts left (OCRGW_MAX_ATTEMPTS).\n\n{meanings}",
    }


def _problem_code_schema() -> dict[str, Any]:
    """A problem's ``code``: the API's catalogue (``gateway.problems``) and the plain HTTP errors."""
    codes = {code: status for code, (status, _) in CATALOGUE.items() if code not in OUTSIDE_API_CODES}
    codes.update(PLAIN_HTTP_CODES)
    catalogue = "\n".join(
        f"- `{code}` ({status}): {CATALOGUE[code][1] if code in CATALOGUE else 'plain HTTP'}"
        for code, status in sorted(codes.items())
    )
    return {
        "type": "string",
        "enum": sorted(codes),
        "description": f"A problem's stable code; each always has the same HTTP status.\n\n{catalogue}",
    }


_DESCRIPTION = """\
OCR jobs over HTTP: submit a document (or a fan-out group of them), poll it, read its result.

Every error is an RFC 9457 problem (`application/problem+json`) with a stable `code`;
each operation lists the codes it may answer.

Send an API key as `Authorization: Bearer <key>`: a missing or unknown key is `401`.
Each key belongs to a tenant, which sees its own jobs only; another tenant's job is `404`."""
