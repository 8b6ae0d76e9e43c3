"""Every error the gateway answers, rendered as RFC 9457 problem details.

Clients switch on ``code``: each one is listed in ``CATALOGUE`` with the one
HTTP status it always has, so a code never changes meaning between routes.
Errors that Flask and werkzeug raise themselves (unknown route, wrong method,
body too large) go through the same renderer, so no response of this API is
ever an HTML error page.
"""

from __future__ import annotations

import logging
import re
from http import HTTPStatus
from typing import Any

from flask import Flask, Response, current_app
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from werkzeug.exceptions import HTTPException

from jobs.contract import JobStatus

log = logging.getLogger(__name__)

MEDIA_TYPE = "application/problem+json"
#: Where the gateway serves its manual (gateway.manual), which has a page for every code.
MANUAL_PATH = "/manual"
# How long a client should wait before retrying a request refused because
# this gateway is draining or the job store does not answer.
RETRY_AFTER_SECONDS = 5

#: code -> (status, title).  The title is the same for every occurrence of a
#: code; what differs between occurrences goes in ``detail``.
CATALOGUE: dict[str, tuple[int, str]] = {
    "malformed_json": (400, "Malformed JSON body"),
    "invalid_base64": (400, "Payload is not valid base64"),
    "invalid_idempotency_key": (400, "Invalid Idempotency-Key header"),
    "host_not_allowed": (400, "Host not allowed"),
    "invalid_last_event_id": (400, "Invalid Last-Event-ID header"),
    "missing_api_key": (401, "API key required"),
    "invalid_api_key": (401, "Invalid API key"),
    "missing_metrics_token": (401, "Metrics token required"),
    "invalid_metrics_token": (401, "Invalid metrics token"),
    "on_prem_required": (403, "Document must stay on premises"),
    "admin_key_required": (403, "Admin key required"),
    "cross_site_request": (403, "Request from a page of another site"),
    "interactive_not_allowed": (403, "Interactive lane not allowed for this key"),
    "job_not_found": (404, "Job not found"),
    "table_not_found": (404, "Table not found"),
    "result_not_ready": (409, "Result not ready"),
    "job_finished": (409, "Job already finished"),
    "not_a_group": (409, "Not a fan-out group"),
    "group_not_finished": (409, "Group still running"),
    "nothing_to_retry": (409, "Nothing to retry"),
    "no_result": (409, "Job ended without a result"),
    "pdf_unavailable": (409, "No searchable PDF for this job"),
    "payload_too_large": (413, "Request body too large"),
    "inspection_budget_exceeded": (413, "Documents take too long to check"),
    # Answered by gunicorn's worker before the app sees the request (gateway.gunicorn_worker).
    "uri_too_long": (414, "Request line too long"),
    "missing_content_type": (415, "Missing Content-Type"),
    "unsupported_content_type": (415, "Content type not supported by the model"),
    "content_type_mismatch": (415, "Content type does not match the document"),
    "json_content_type_required": (415, "JSON body without a JSON Content-Type"),
    "invalid_field": (422, "Invalid field"),
    "unknown_model": (422, "Unknown model"),
    "empty_document": (422, "Empty document"),
    "invalid_document": (422, "Document cannot be read"),
    "encrypted_document": (422, "Document is encrypted"),
    "too_many_pages": (422, "Too many pages"),
    "too_many_pixels": (422, "Page image too large"),
    "no_children": (422, "Fan-out group without children"),
    "too_many_children": (422, "Too many children"),
    "idempotency_key_reused": (422, "Idempotency-Key reused for a different request"),
    "invalid_callback_url": (422, "Callback URL refused"),
    "unsupported_language": (422, "Language not installed on any worker"),
    "invalid_options": (422, "Option the model cannot honour"),
    "too_many_streams": (429, "Too many open event streams"),
    "interactive_limit_reached": (429, "Too many interactive jobs in flight"),
    "request_header_fields_too_large": (431, "Request headers too large"),
    "internal_error": (500, "Internal error"),
    "draining": (503, "Gateway draining"),
    "store_unavailable": (503, "Job store unavailable"),
    # The manual at /manual, when the site was never built on this host (gateway.manual).
    "manual_not_built": (404, "Manual not built"),
}

# werkzeug errors whose status this API gives a meaning of its own; any other
# keeps the plain HTTP semantics ("about:blank").
#: The codes of the routes outside the API and its OpenAPI document: GET /metrics, for Prometheus,
#: and the manual at /manual, for people.
OUTSIDE_API_CODES = frozenset({"missing_metrics_token", "invalid_metrics_token", "manual_not_built"})
_HTTP_CODES = {413: "payload_too_large", 500: "internal_error"}
#: The plain HTTP errors a client meets on a route that does not exist, a
#: method a route does not have, or a request that is not HTTP (answered by
#: gateway.gunicorn_worker); their code is the snake-cased reason phrase.
PLAIN_HTTP_CODES = {"bad_request": 400, "not_found": 404, "method_not_allowed": 405}


def type_of(code: str) -> str:
    """A problem's ``type``: its code's page in the manual this gateway serves.

    A relative URI reference (RFC 9457 allows one), resolved against the address the client asked, so it
    names this very gateway's manual whatever host or port the client reached it by.
    """
    return f"{MANUAL_PATH}/problems/{code}/"


class Problem(Exception):
    """An error answered to the client; ``extra`` become additional members."""

    def __init__(self, code: str, detail: str, *, headers: dict[str, str] | None = None, **extra: Any):
        super().__init__(detail)
        self.status, self.title = CATALOGUE[code]
        self.code = code
        self.detail = detail
        self.headers = headers or {}
        self.extra = extra


def invalid_field(errors: Any, detail: str | None = None) -> Problem:
    """``invalid_field`` naming each field in ``errors`` (marshmallow's messages)."""
    errors = _string_keys(errors if isinstance(errors, dict) else {"_schema": errors})
    names = sorted(name for name in errors if name != "_schema")
    if detail is None:
        detail = f"Invalid field(s): {', '.join(names)}." if names else "Expected a JSON object."
    return Problem("invalid_field", detail, errors=errors)


def for_child(problem: Problem, index: int) -> Problem:
    """The same problem, said of child ``index`` of a group."""
    return Problem(
        problem.code, f"Child {index}: {problem.detail}", headers=problem.headers, child_index=index, **problem.extra
    )


def _string_keys(value: Any) -> Any:
    """marshmallow keys list items by int; JSON objects (and sorted dumps) need str."""
    if isinstance(value, dict):
        return {str(k): _string_keys(v) for k, v in value.items()}
    return value


def render(
    status: int,
    code: str,
    title: str,
    detail: str,
    *,
    type_: str | None = None,
    headers: dict[str, str] | None = None,
    **extra: Any,
) -> Response:
    body = {
        "type": type_ or type_of(code),
        "title": title,
        "status": status,
        "detail": detail,
        "code": code,
        **extra,
    }
    response = Response(current_app.json.dumps(body), status=status, mimetype=MEDIA_TYPE)
    response.headers.update(headers or {})
    return response


def _problem(error: Problem) -> Response:
    return render(error.status, error.code, error.title, error.detail, headers=error.headers, **error.extra)


def _http_error(error: HTTPException) -> Response:
    status = error.code or 500
    # Keep what the exception says about itself, e.g. ``Allow`` on a 405.
    headers = {k: v for k, v in error.get_headers() if k.lower() != "content-type"}
    detail = error.description or HTTPStatus(status).description
    code = _HTTP_CODES.get(status)
    if code == "payload_too_large":
        limit = current_app.config["MAX_CONTENT_LENGTH"]
        return render(
            status,
            code,
            CATALOGUE[code][1],
            f"The request body exceeds the limit of {limit} bytes.",
            headers=headers,
            max_body_bytes=limit,
        )
    if code is not None:
        return render(status, code, CATALOGUE[code][1], detail, headers=headers)
    phrase = HTTPStatus(status).phrase
    return render(status, _snake(phrase), phrase, detail, type_="about:blank", headers=headers)


def _store_unavailable(error: Exception) -> Response:
    log.warning("job store unavailable: %s", error)
    return _problem(
        Problem(
            "store_unavailable",
            "The job store does not answer; retry later.",
            headers={"Retry-After": str(RETRY_AFTER_SECONDS)},
        )
    )


def _unexpected(error: Exception) -> Response:
    log.exception("unhandled error", exc_info=error)
    return _problem(Problem("internal_error", "The server hit an unexpected error; it has been logged."))


def _snake(phrase: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", phrase.lower()).strip("_")


def register(app: Flask) -> None:
    app.register_error_handler(Problem, _problem)
    app.register_error_handler(HTTPException, _http_error)
    app.register_error_handler(RedisConnectionError, _store_unavailable)
    app.register_error_handler(RedisTimeoutError, _store_unavailable)
    app.register_error_handler(Exception, _unexpected)


def require_terminal(job_id: str, status: str, what: str = "result") -> None:
    """``409 result_not_ready`` until the job (or group) has ended: what it made is there only then."""
    if not JobStatus(status).terminal:
        raise Problem(
            "result_not_ready", f"Job {job_id} is {status}; its {what} is there once it ends.", job_status=status
        )
