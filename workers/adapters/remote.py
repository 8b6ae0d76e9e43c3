"""A remote model: the document goes to an upstream ocrgw, speaking this same API, and its result comes back.

One run is one upstream job: POST /jobs (JSON, the document in base64,
``Authorization: Bearer`` when the upstream has a key), then GET /jobs/{id}
with a growing interval until the upstream job ends or the job's time is
up.  The upstream's pages (text, lines, boxes, page sizes, and with
``options.layout`` their blocks) become this job's result as they are.

What can go wrong, and what the job's ``error_code`` then is (whether each is
retried: the catalogue, ``jobs.contract.ErrorCode``):

=========================  ==================================================
upstream_unreachable       refused, DNS, a timed-out request, a dropped
                           connection (polls ride out a few of those)
upstream_unavailable       the upstream answered 5xx or 429 (draining, its
                           store away, overloaded)
upstream_rejected          the upstream answered 4xx to the submission (a bad
                           key, a model or option it refuses); the message
                           carries its problem's code
upstream_failed            the upstream job failed or was cancelled; the
                           message carries its error_code
upstream_bad_response      an answer that is not this API's
upstream_timeout           the upstream job did not end in the job's time (the
                           upstream job is then cancelled)
=========================  ==================================================

The runner retries those the catalogue retries, like any engine's; a redirect is
never followed, so a document goes to the configured URL and nowhere else.
Whether the document may leave at all is the runner's check, made before
this adapter is called (``jobs.registry.Model.may_take``).
"""

from __future__ import annotations

import base64
import contextlib
import re
import time
from collections.abc import Callable
from typing import Any

import requests

from documents.pages import PDF_TYPE, pdf_pages
from documents.resolution import DPI_SOURCES
from jobs.config import Settings
from jobs.contract import TERMINAL, ErrorCode, JobStatus
from jobs.errors import AdapterError, InvalidDocument
from jobs.registry import ORIENTATION_DECIDERS, RemoteModel
from workers.adapters.base import Adapter, Line, OcrResult, PageResult, Word

CONNECT_TIMEOUT_SECONDS = 5.0
# The longest one request may wait for its answer: the upstream answers a submission once it has stored it.
READ_TIMEOUT_SECONDS = 60.0
FIRST_POLL_SECONDS = 0.2
POLL_GROWTH = 1.5
MAX_POLL_SECONDS = 5.0
# Polls that may fail in a row (a restart of the upstream's gateway) before the attempt gives up.
POLL_FAILURES_TOLERATED = 5
CANCEL_TIMEOUT_SECONDS = 5.0
_PAGE_STAGE = re.compile(r"page (\d+)/(\d+)")


class RemoteAdapter(Adapter):
    name = "remote"

    def __init__(
        self,
        remote: RemoteModel,
        *,
        job_timeout: float | None = None,
        session: requests.Session | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.remote = remote
        self.name = remote.name
        self.job_timeout = Settings.from_env().job_timeout if job_timeout is None else job_timeout
        self.http = session or requests.Session()
        self.http.headers["Accept"] = "application/json"
        if remote.key:
            self.http.headers["Authorization"] = f"Bearer {remote.key}"
        self._sleep, self._clock = sleep, clock

    def run(self, document, content_type, options, on_page=None, *, pages=None):
        deadline = self._clock() + _budget(options, self.job_timeout)
        if pages is not None:
            # The upstream is sent the pages this job reads, and nothing more of the document.
            document = _cut(document, content_type, pages)
        upstream_id = self._submit(document, content_type, options)
        try:
            view = self._wait(upstream_id, deadline, on_page)
        except AdapterError as error:
            # no use knocking at a door that does not open
            if error.code not in (ErrorCode.UPSTREAM_UNREACHABLE, ErrorCode.UPSTREAM_UNAVAILABLE):
                self._cancel(upstream_id)
            raise
        except BaseException:
            # This job was cancelled, lost its lease or hit its time limit: the upstream's job is wasted work.
            self._cancel(upstream_id)
            raise
        return _result(view, upstream_id)

    # -- the upstream's API ------------------------------------------------------------------

    def _submit(self, document: bytes, content_type: str, options: dict[str, Any]) -> str:
        body: dict[str, Any] = {
            "model": self.remote.upstream_model,
            "content_type": content_type,
            "payload": base64.b64encode(document).decode("ascii"),
        }
        if options:
            body["options"] = options
        response = self._request("POST", "/jobs", json=body)
        if response.status_code != 202:
            raise _refusal(response, "submission")
        view = _json(response)
        upstream_id = view.get("id") if isinstance(view, dict) else None
        if not isinstance(upstream_id, str) or not upstream_id:
            raise AdapterError("the upstream accepted the job without an id", code=ErrorCode.UPSTREAM_BAD_RESPONSE)
        return upstream_id

    def _wait(self, upstream_id: str, deadline: float, on_page) -> dict[str, Any]:
        """The upstream job's view once it has ended; its progress is reported as this job's on the way."""
        interval, failures, shown = FIRST_POLL_SECONDS, 0, (0, 0)
        while True:
            try:
                view = self._view(upstream_id)
                failures = 0
            except AdapterError as error:
                failures += 1
                if not error.transient or failures > POLL_FAILURES_TOLERATED:
                    raise
                view = None
            if view is not None:
                if view.get("status") in TERMINAL:
                    return view
                shown = _report_progress(view, shown, on_page)
            left = deadline - self._clock()
            if left <= 0:
                raise AdapterError(
                    f"the upstream job {upstream_id} did not end within the job's time", code=ErrorCode.UPSTREAM_TIMEOUT
                )
            self._sleep(min(interval, left))
            interval = min(interval * POLL_GROWTH, MAX_POLL_SECONDS)

    def _view(self, upstream_id: str) -> dict[str, Any]:
        response = self._request("GET", f"/jobs/{upstream_id}", params={"children": "none"})
        if response.status_code != 200:
            raise _refusal(response, f"job {upstream_id}")
        view = _json(response)
        if not isinstance(view, dict) or not isinstance(view.get("status"), str):
            raise AdapterError(
                f"the upstream's view of job {upstream_id} has no status", code=ErrorCode.UPSTREAM_BAD_RESPONSE
            )
        return view

    def _cancel(self, upstream_id: str) -> None:
        # Best effort: the upstream job ends on its own anyway.
        with contextlib.suppress(requests.RequestException):
            self.http.delete(
                self._url(f"/jobs/{upstream_id}"),
                timeout=(CONNECT_TIMEOUT_SECONDS, CANCEL_TIMEOUT_SECONDS),
                allow_redirects=False,
            )

    def _request(self, method: str, path: str, **kwargs: Any) -> requests.Response:
        try:
            return self.http.request(
                method,
                self._url(path),
                timeout=(CONNECT_TIMEOUT_SECONDS, READ_TIMEOUT_SECONDS),
                allow_redirects=False,
                **kwargs,
            )
        except requests.RequestException as error:
            raise AdapterError(
                f"the upstream at {self.remote.url} cannot be reached: {type(error).__name__}: {error}",
                code=ErrorCode.UPSTREAM_UNREACHABLE,
            ) from None

    def _url(self, path: str) -> str:
        return self.remote.url + path


def _cut(document: bytes, content_type: str, pages: tuple[int, int]) -> bytes:
    """Pages ``pages`` (first and last, 1-based) of a PDF, as a PDF of their own."""
    if content_type.split(";", 1)[0].strip().lower() != PDF_TYPE:
        raise InvalidDocument(f"only a PDF's pages can be read one range at a time, not {content_type!r}'s")
    return pdf_pages(document, *pages)


def _budget(options: dict[str, Any], job_timeout: float) -> float:
    """How long the upstream job is waited for: the job's own timeout_s, within the worker's job time."""
    timeout_s = options.get("timeout_s")
    if isinstance(timeout_s, (int, float)) and not isinstance(timeout_s, bool) and 0 < timeout_s < job_timeout:
        return float(timeout_s)
    return job_timeout


def _report_progress(view: dict[str, Any], shown: tuple[int, int], on_page) -> tuple[int, int]:
    """Passes the upstream's "page d/t" on as this job's progress (which is also where a cancel is noticed)."""
    match = _PAGE_STAGE.fullmatch(str(view.get("stage", "")))
    if match is None or on_page is None:
        return shown
    done, total = int(match[1]), int(match[2])
    if (done, total) != shown and 0 < done < total:
        on_page(done, total)
        return done, total
    return shown


def _refusal(response: requests.Response, what: str) -> AdapterError:
    status = response.status_code
    problem = _json_or_none(response)
    code = problem.get("code") if isinstance(problem, dict) else None
    detail = problem.get("detail") if isinstance(problem, dict) else None
    said = f"{code}: {detail}" if code else response.reason or "no problem details"
    message = f"the upstream answered {status} to the {what} ({said})"
    if status == 429 or status >= 500:
        return AdapterError(message, code=ErrorCode.UPSTREAM_UNAVAILABLE)
    if 400 <= status < 500:
        return AdapterError(message, code=ErrorCode.UPSTREAM_REJECTED)
    # a redirect, or a 2xx this API never answers there
    return AdapterError(message, code=ErrorCode.UPSTREAM_BAD_RESPONSE)


def _json(response: requests.Response) -> Any:
    data = _json_or_none(response)
    if data is None:
        raise AdapterError(
            f"the upstream answered {response.status_code} without a JSON body", code=ErrorCode.UPSTREAM_BAD_RESPONSE
        )
    return data


def _json_or_none(response: requests.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return None


def _result(view: dict[str, Any], upstream_id: str) -> OcrResult:
    status = view["status"]
    if status != JobStatus.COMPLETED:
        why = f"{view.get('error_code') or 'no error_code'}: {view.get('error') or status}"
        raise AdapterError(f"the upstream job {upstream_id} ended {status} ({why})", code=ErrorCode.UPSTREAM_FAILED)
    try:
        return OcrResult(pages=[_page(page) for page in view["result"]["pages"]])
    except (KeyError, TypeError, ValueError) as error:
        raise AdapterError(
            f"the upstream job {upstream_id}'s result is not this API's: {type(error).__name__}: {error}",
            code=ErrorCode.UPSTREAM_BAD_RESPONSE,
        ) from None


def _page(page: dict[str, Any]) -> PageResult:
    """An upstream page as this API's; an older upstream's page has no words, rotation, skew, orientation_by or dpi."""
    lines = [
        Line(
            str(line["text"]),
            float(line["confidence"]),
            _bbox(line["bbox"]),
            tuple(Word(str(w["text"]), float(w["confidence"]), _bbox(w["bbox"])) for w in line.get("words", ())),
            source=str(line["source"]) if "source" in line else None,
        )
        for line in page["lines"]
    ]
    return PageResult(
        page=int(page["page"]),
        text=str(page["text"]),
        lines=lines,
        source=str(page.get("source", "ocr")),
        width=int(page.get("width", 0)),
        height=int(page.get("height", 0)),
        rotation=int(page.get("rotation", 0)),
        skew=float(page.get("skew", 0.0)),
        orientation_by=page.get("orientation_by") if page.get("orientation_by") in ORIENTATION_DECIDERS else None,
        # The resolution the upstream read it at: an image's searchable PDF is sized from it.
        dpi=float(page.get("dpi", 0.0)) if page.get("dpi_source") in DPI_SOURCES else 0.0,
        dpi_source=str(page["dpi_source"]) if page.get("dpi_source") in DPI_SOURCES else "",
        blocks=tuple(dict(block) for block in page["blocks"]) if isinstance(page.get("blocks"), list) else None,
        layout_error=str(page["layout_error"]) if page.get("layout_error") is not None else None,
    )


def _bbox(values: list[Any]) -> tuple[int, int, int, int]:
    x0, y0, x1, y1 = (int(v) for v in values)
    return x0, y0, x1, y1
