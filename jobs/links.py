"""The URLs a job's view links to: the job itself, its children's pages, its result.

A view is rendered by the gateway, for a request, and by the webhook
deliverer, which has no request and no Flask app; both give the view a
``Links`` and get the same URLs.  They are spelled as Flask's ``url_for``
builds them for the API's routes (``gateway.api``): a path under the app's
mount point (``prefix``, '' at the root, ``request.root_path`` in a
request), each id quoted as werkzeug quotes a path segment, the query in
the order given and without the parameters that are None.  A test holds
each of them to ``url_for``.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote, urlencode

# What werkzeug leaves unquoted: in a path segment (its converters' ``to_url``), in a query (``_urlencode``).
_SEGMENT_SAFE = "!$&'()*+,/:;=@"
_QUERY_SAFE = "!$'()*,/:;?@"


@dataclass(frozen=True)
class Links:
    """The API's URLs under ``prefix``: the path the app is mounted at, without its trailing '/'."""

    prefix: str = ""

    def job(self, job_id: str) -> str:
        """``GET /jobs/{id}``"""
        return f"{self.prefix}/jobs/{_segment(job_id)}"

    def result(self, job_id: str) -> str:
        """``GET /jobs/{id}/result``"""
        return f"{self.job(job_id)}/result"

    def children(self, job_id: str, *, status: str | None = None, offset: int, limit: int) -> str:
        """``GET /jobs/{id}/children``: a page of them, all or in one status."""
        return f"{self.job(job_id)}/children?{_query(status=status, offset=offset, limit=limit)}"


def _segment(value: str) -> str:
    return quote(value, safe=_SEGMENT_SAFE)


def _query(**params: object) -> str:
    return urlencode([(name, value) for name, value in params.items() if value is not None], safe=_QUERY_SAFE)
