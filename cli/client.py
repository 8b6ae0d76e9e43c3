"""A small HTTP client of one gateway, for the command line.

Every answer that is not a success becomes an ``ApiError`` carrying the
RFC 9457 problem the gateway sent (or what could be read of a body that is
not one, such as a proxy's error page), and every failure to reach the
gateway becomes one ``Unreachable``: the commands print either in a line or
two, never a traceback.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any

import requests
import urllib3

from cli.event_stream import StreamUnavailable, lines

PROBLEM_TYPE = "application/problem+json"
DEFAULT_URL = "http://localhost:8000"
#: Seconds to connect, and then for each read of an answer; a large group's POST
#: is parsed and stored before the gateway answers, hence the long read.
TIMEOUTS = (10.0, 120.0)
#: The forms of a result: its text, its JSON, a searchable PDF, hOCR, ALTO XML, Markdown.
FORMATS = ("text", "json", "pdf", "hocr", "alto", "md")
#: The forms the gateway renders, by the suffix of their URL (``/jobs/{id}/result.<suffix>``).
RENDERED = ("pdf", "hocr", "alto", "md")
#: How long a searchable PDF being built (202 with Retry-After) is waited for before giving up.
PDF_WAIT_SECONDS = 300.0
#: The wait between asks when a 202 names none.
PDF_RETRY_SECONDS = 1.0


@dataclass
class ApiError(Exception):
    """The gateway answered an error: its problem document, or what stands in for one."""

    status: int
    title: str
    detail: str = ""
    code: str = ""
    problem: dict[str, Any] = field(default_factory=dict)

    def __str__(self) -> str:
        text = f"{self.title} ({self.status}"
        text += f", {self.code})" if self.code else ")"
        return f"{text}: {self.detail}" if self.detail else text


class Unreachable(Exception):
    """No answer from the gateway: nothing listens there, a timeout, a bad URL."""


class Gateway:
    def __init__(self, url: str = DEFAULT_URL, api_key: str | None = None, session: requests.Session | None = None):
        self.url = url.rstrip("/")
        self.http = session or requests.Session()
        if api_key:
            self.http.headers["Authorization"] = f"Bearer {api_key}"
        self.http.headers["User-Agent"] = "ocrgw-cli"

    # -- the API ------------------------------------------------------------------------

    def submit_raw(self, body: bytes, content_type: str, params: dict[str, Any], headers: dict[str, str]) -> dict:
        headers = {**headers, "Content-Type": content_type}
        return self.request("POST", "/jobs", data=body, params=params, headers=headers).json()

    def submit_json(self, document: dict[str, Any], headers: dict[str, str]) -> dict:
        return self.request("POST", "/jobs", json=document, headers=headers).json()

    def job(self, job_id: str, children: str = "page", limit: int = 20) -> dict:
        params = {"children": children} if children != "page" else {"limit": limit}
        return self.get(f"/jobs/{_segment(job_id)}", params)

    def children(self, job_id: str, status: str | None = None, limit: int = 20) -> dict:
        params: dict[str, Any] = {"limit": limit}
        if status:
            params["status"] = status
        return self.get(f"/jobs/{_segment(job_id)}/children", params)

    def result(self, job_id: str) -> dict:
        return self.get(f"/jobs/{_segment(job_id)}/result")

    def result_pdf(
        self,
        job_id: str,
        wait_seconds: float = PDF_WAIT_SECONDS,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> bytes:
        """The searchable PDF; while a worker builds it (202), asked again after each Retry-After, up to
        ``wait_seconds``."""
        give_up = clock() + wait_seconds
        while True:
            response = self.request("GET", f"/jobs/{_segment(job_id)}/result.pdf")
            if response.status_code != HTTPStatus.ACCEPTED:
                return response.content
            pause = _retry_after(response)
            if clock() + pause > give_up:
                raise ApiError(
                    HTTPStatus.ACCEPTED,
                    "Searchable PDF not built yet",
                    f"job {job_id}'s PDF was still being built after {wait_seconds:g} s; ask again later",
                    "pdf_building",
                )
            sleep(pause)

    def result_rendered(self, job_id: str, fmt: str) -> bytes:
        """The result as the gateway renders it in one of ``RENDERED``: the document's bytes as sent."""
        return self.request("GET", f"/jobs/{_segment(job_id)}/result.{fmt}").content

    def result_as(self, job_id: str, fmt: str) -> bytes:
        """The result in one of ``FORMATS``, as the bytes to write: text ends with a newline, JSON is indented."""
        if fmt == "pdf":
            return self.result_pdf(job_id)
        if fmt in RENDERED:
            return self.result_rendered(job_id, fmt)
        result = self.result(job_id)
        if fmt == "json":
            return (json.dumps(result, indent=2, ensure_ascii=False) + "\n").encode()
        text = result["text"]
        return (text if not text or text.endswith("\n") else text + "\n").encode()

    def events(self, job_id: str) -> dict:
        return self.get(f"/jobs/{_segment(job_id)}/events")

    def event_stream(self, job_id: str, last_event_id: str | None = None) -> Iterator[str]:
        """The lines of the job's live stream, as they come (``cli.event_stream`` reads them).

        ``StreamUnavailable`` when the gateway answers anything but a stream (one without it, or a
        limit reached): the caller polls instead.
        """
        headers = {"Accept": "text/event-stream"}
        if last_event_id:
            headers["Last-Event-ID"] = last_event_id
        try:
            response = self.http.get(
                f"{self.url}/jobs/{_segment(job_id)}/events", headers=headers, stream=True, timeout=TIMEOUTS
            )
        except (requests.ConnectionError, requests.Timeout) as error:
            raise StreamUnavailable(f"no stream from the gateway at {self.url}: {error}") from None
        with response:
            media_type = response.headers.get("Content-Type", "").split(";", 1)[0].strip()
            if response.status_code != HTTPStatus.OK or media_type != "text/event-stream":
                raise StreamUnavailable(f"the gateway answered {response.status_code} {media_type}, not a stream")
            try:
                yield from lines(response.raw)
            except (
                requests.ConnectionError,
                requests.exceptions.ChunkedEncodingError,
                urllib3.exceptions.HTTPError,
            ) as error:
                raise OSError(f"the stream was cut: {error}") from None

    def cancel(self, job_id: str) -> dict:
        return self.request("DELETE", f"/jobs/{_segment(job_id)}").json()

    def jobs(self, status: str | None, kind: str | None, limit: int, cursor: str | None = None) -> dict:
        params = {"status": status, "kind": kind, "limit": limit, "cursor": cursor}
        return self.get("/jobs", {k: v for k, v in params.items() if v is not None})

    def usage(self, params: dict[str, str]) -> dict:
        return self.get("/usage", {k: v for k, v in params.items() if v})

    def models(self) -> dict:
        return self.get("/models")

    # -- plumbing -----------------------------------------------------------------------

    def get(self, path: str, params: dict[str, Any] | None = None) -> Any:
        return self.request("GET", path, params=params).json()

    def request(self, method: str, path: str, **kwargs: Any) -> requests.Response:
        try:
            response = self.http.request(method, self.url + path, timeout=TIMEOUTS, **kwargs)
        except requests.ConnectionError as error:
            raise Unreachable(f"cannot reach the gateway at {self.url}: {_reason(error)}") from None
        except requests.Timeout:
            raise Unreachable(f"the gateway at {self.url} did not answer in time") from None
        except (requests.exceptions.InvalidURL, requests.exceptions.MissingSchema, requests.exceptions.InvalidSchema):
            raise Unreachable(f"not a gateway URL: {self.url!r} (expected e.g. {DEFAULT_URL})") from None
        if response.status_code >= 400:
            raise api_error(response)
        return response


def _retry_after(response: requests.Response) -> float:
    """The seconds a 202 says to wait (Retry-After, in seconds); PDF_RETRY_SECONDS when it says none."""
    try:
        return max(0.0, float(response.headers.get("Retry-After", "")))
    except ValueError:
        return PDF_RETRY_SECONDS


def api_error(response: requests.Response) -> ApiError:
    """The problem in an error answer; a body that is not one still says what it can."""
    media_type = response.headers.get("Content-Type", "").split(";", 1)[0].strip()
    if media_type in (PROBLEM_TYPE, "application/json"):
        try:
            problem = response.json()
        except ValueError:
            problem = None
        if isinstance(problem, dict) and "title" in problem:
            return ApiError(
                status=response.status_code,
                title=str(problem.get("title")),
                detail=str(problem.get("detail") or ""),
                code=str(problem.get("code") or ""),
                problem=problem,
            )
    first_line = response.text.strip().splitlines()[0][:200] if response.text.strip() else ""
    try:
        title = HTTPStatus(response.status_code).phrase
    except ValueError:
        title = "HTTP error"
    return ApiError(status=response.status_code, title=title, detail=first_line)


def _segment(job_id: str) -> str:
    """A job id as one path segment: a slash or a question mark in it cannot reach another route."""
    return requests.utils.quote(job_id, safe="")


def _reason(error: requests.ConnectionError) -> str:
    """The innermost reason of a connection error, e.g. 'Connection refused'."""
    cause: object = error.args[0] if error.args else error
    cause = getattr(cause, "reason", cause)  # urllib3's MaxRetryError wraps the socket's error
    text = str(cause)
    if "] " in text:  # "...: [Errno 111] Connection refused"
        text = text.rsplit("] ", 1)[1]
    return text.strip() or "connection failed"
