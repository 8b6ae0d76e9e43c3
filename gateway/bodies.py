"""A request body, refused past ``MAX_CONTENT_LENGTH`` however it is framed.

werkzeug refuses a too-long ``Content-Length`` up front, but cuts a chunked
body (gunicorn sets ``wsgi.input_terminated`` and decodes the chunks) at the
limit without a word: the cut body might even parse, as JSON padded with
spaces does.  One byte past the cut tells the two apart.  Every route that
reads a body reads it through here.
"""

from __future__ import annotations

from flask import Request
from werkzeug.exceptions import RequestEntityTooLarge


def read_body(request: Request, *, cache: bool = True) -> bytes:
    body = request.get_data(cache=cache)
    limit = request.max_content_length
    past_the_cut = request.content_length is None and limit is not None and len(body) >= limit
    if past_the_cut and request.environ["wsgi.input"].read(1):
        raise RequestEntityTooLarge()
    return body
