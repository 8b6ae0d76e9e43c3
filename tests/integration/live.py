"""Helpers of the single-job and HTTP API tests against a real gunicorn gateway.

``Api`` is a thin ``requests`` client of one gateway (a test waits for its
jobs with ``tests.integration.polling.wait_for_job(api.job, ...)``);
``ocrgw_keyspace`` snapshots what the job store holds so a test can prove a
rejected request stored nothing; the sample builders draw pages whose text
the OCR engines read back reliably.
"""

from __future__ import annotations

import base64
import io
import re
from datetime import datetime
from pathlib import Path
from typing import Any

import requests
from PIL import Image
from redis import Redis

from tests.harness import make_sample
from tests.keyspace import keys

PROBLEM_TYPE = "application/problem+json"
#: OCR of a page can take a while on a loaded two-core machine, and the first
#: PP-OCRv4 job of a worker process loads its models: generous on purpose.
OCR_TIMEOUT = 120.0
ECHO_TIMEOUT = 60.0
RFC3339_MICROS = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z")


class Api:
    """A small HTTP client of one gateway."""

    def __init__(self, base_url: str, timeout: float = 30.0):
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self.http = requests.Session()
        self.http.trust_env = False  # loopback: no proxy from the environment applies

    def url(self, path: str) -> str:
        return self.base_url + path

    def request(self, method: str, path: str, **kwargs: Any) -> requests.Response:
        return self.http.request(method, self.url(path), timeout=self.timeout, **kwargs)

    def post_raw(
        self, body: bytes, content_type: str | None, model: str | None = None, headers: dict[str, str] | None = None
    ) -> requests.Response:
        """POST a document as the body itself; ``content_type=None`` sends no Content-Type."""
        headers = dict(headers or {})
        if content_type is not None:
            headers["Content-Type"] = content_type
        params = {"model": model} if model is not None else None
        return self.request("POST", "/jobs", data=body, params=params, headers=headers)

    def post_json(self, body: dict[str, Any], headers: dict[str, str] | None = None) -> requests.Response:
        return self.request("POST", "/jobs", json=body, headers=headers)

    def job(self, job_id: str) -> dict[str, Any]:
        response = self.request("GET", f"/jobs/{job_id}")
        assert response.status_code == 200, response.text
        return response.json()

    def get(self, path: str, params: dict[str, Any] | None = None) -> Any:
        """GET an answer the test expects to be 200; its JSON."""
        response = self.request("GET", path, params=params)
        assert response.status_code == 200, f"GET {path}: {response.status_code} {response.text}"
        return response.json()

    def result(self, job_id: str) -> dict[str, Any]:
        return self.get(f"/jobs/{job_id}/result")

    def events(self, job_id: str) -> list[dict[str, Any]]:
        response = self.request("GET", f"/jobs/{job_id}/events")
        assert response.status_code == 200, response.text
        return response.json()["events"]


def accepted(response: requests.Response) -> str:
    """The id of a job the gateway accepted (202, with its Location)."""
    assert response.status_code == 202, f"{response.status_code}: {response.text}"
    job_id = response.json()["id"]
    assert response.headers["Location"].endswith(f"/jobs/{job_id}")
    return job_id


def assert_problem(response: requests.Response, status: int, code: str) -> dict[str, Any]:
    """An RFC 9457 problem document with this status and code; returns its body."""
    assert response.status_code == status, f"{response.status_code}: {response.text}"
    assert response.headers["Content-Type"].split(";")[0] == PROBLEM_TYPE, response.headers
    problem = response.json()
    assert problem["status"] == status
    assert problem["code"] == code
    assert problem["title"]
    return problem


def parse_time(value: str) -> datetime:
    """An RFC 3339 UTC time with exactly six fractional digits, as the API writes them."""
    assert RFC3339_MICROS.fullmatch(value), value
    return datetime.fromisoformat(value)


# -- the job store, read directly ------------------------------------------------------


def ocrgw_keyspace(client: Redis) -> dict[bytes, bytes | None]:
    """Every job-store key with its serialized value (DUMP).

    Only keys under the ``ocrgw:`` namespace count: the Celery worker and beat
    of the shared stack write their own bookkeeping in the same database
    (``_kombu.binding.*``, ``unacked*``), so DBSIZE and a plain KEYS * move
    on their own.  The sweep lock is excluded too: beat's sweep takes and
    drops it several times a second whatever the gateway does; and so are
    the call records of claims and completions, which expire on their own,
    and the workers' reports of their languages, which they renew on their own, and the job gauges, which
    the sweep counts again on its own, and the store's layout, which a process starting records in a store
    emptied for the test.
    A key that expires between the scan and its DUMP maps to None.
    """
    prefix = f"{keys.NAMESPACE}:".encode()
    return {
        key: client.dump(key)
        for key in sorted(client.scan_iter(match=prefix + b"*", count=1000))
        if not keys.is_sweep_lock(key)
        and not keys.is_call_record(key.decode())
        and not keys.is_worker_report(key.decode())
        and key not in (keys.GAUGES.encode(), keys.LAYOUT.encode())
    }


def job_keys(client: Redis) -> list[bytes]:
    """The job records in the store (payload, result and index keys excluded)."""
    return sorted(k for k in client.scan_iter(match=f"{keys.NAMESPACE}:*", count=1000) if b":job:" in k)


# -- sample documents ------------------------------------------------------------------


def b64(data: bytes | str) -> str:
    return base64.b64encode(data.encode() if isinstance(data, str) else data).decode()


def png_bytes(tmp_path: Path, text: str) -> bytes:
    return make_sample(tmp_path / f"sample-{abs(hash(text))}.png", text).read_bytes()


def pdf_bytes(tmp_path: Path, *texts: str) -> bytes:
    """A PDF with one page per text, at 200 dpi so that the workers' render is 1:1."""
    pages = [Image.open(io.BytesIO(png_bytes(tmp_path, t))).convert("RGB") for t in texts]
    buf = io.BytesIO()
    pages[0].save(buf, "PDF", save_all=True, append_images=pages[1:], resolution=200)
    return buf.getvalue()


def squashed(text: str) -> str:
    """Text without whitespace, upper-cased: how PP-OCRv4 text is compared."""
    return re.sub(r"\s+", "", text).upper()
