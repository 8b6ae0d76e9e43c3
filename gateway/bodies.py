"""A request body, refused past ``MAX_CONTENT_LENGTH`` however it is framed.

werkzeug refuses a too-long ``Content-Length`` up front, but cuts a chunked
body (gunicorn sets ``wsgi.input_terminated`` and decodes the chunks) at the
limit without a word: the cut body might even parse, as JSON padded with
spaces does.  One byte past the cut tells the two apart.  Every route that
reads a body reads it through here.

A JSON body must say so: ``Content-Type: application/json`` (or a ``+json``
type).  A browser sends a ``text/plain`` body, a form, or a body with no
type from any page to any site without asking first; a JSON type it sends
only after a CORS preflight, which the gateway never grants.  So with no
keys configured (anyone may call) a page elsewhere still cannot create or
change a job by sending JSON under another type: that is ``415
json_content_type_required``, refused before anything is read into the store.
"""

from __future__ import annotations

from flask import Request
from werkzeug.exceptions import RequestEntityTooLarge

from gateway.problems import Problem

JSON_TYPE = "application/json"
#: The body types a page of any site may send without a preflight (the Fetch standard's CORS-safelisted ones).
UNASKED_TYPES = frozenset({"text/plain", "application/x-www-form-urlencoded", "multipart/form-data"})


def is_json_type(mimetype: str) -> bool:
    """``application/json`` or a ``+json`` type (``mimetype``: without parameters, lower case)."""
    return mimetype == JSON_TYPE or (mimetype.startswith("application/") and mimetype.endswith("+json"))


def json_type_required(detail: str) -> Problem:
    return Problem("json_content_type_required", detail)


def read_body(request: Request, *, cache: bool = True) -> bytes:
    body = request.get_data(cache=cache)
    limit = request.max_content_length
    past_the_cut = request.content_length is None and limit is not None and len(body) >= limit
    if past_the_cut and request.environ["wsgi.input"].read(1):
        raise RequestEntityTooLarge()
    return body


def read_json_body(request: Request) -> bytes:
    """The body of a route that takes JSON (b'' for none), refused unless it comes as JSON.

    A request without a body and without a ``Content-Type`` is read as an empty JSON body (no fields),
    as a client sends a control without options; one that names another type is refused even empty.
    """
    body = read_body(request)
    if (body or request.mimetype) and not is_json_type(request.mimetype):
        named = f"as {request.mimetype!r}" if request.mimetype else "without a Content-Type"
        raise json_type_required(f"This operation takes a JSON body, sent as {JSON_TYPE}; this one came {named}.")
    return body
