"""Bad input under load: a real gunicorn gets valid and invalid submissions at once.

Threads on loopback send a shuffled mix, a bounded number of each kind:
malformed JSON, bad base64, wrong or missing content types, bodies over
``OCRGW_MAX_BODY_BYTES`` (declared and chunked), page counts past
``OCRGW_MAX_PAGES``, ``max_parallel`` as a float, a string, a boolean or
null, and more.  Every bad request must get its 4xx problem with the
expected ``code`` (never a 500), leave nothing at all in Redis, and every
valid job must complete.  ``max_parallel <= 0`` is valid (no cap), so
negative values are among the valid requests.
"""

from __future__ import annotations

import json
import random
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
import requests

from tests.integration.chaos_support import (
    FAST,
    assert_group_settled,
    assert_single_settled,
    b64,
    echo,
    group,
    idempotency_records,
    root_ids,
)
from tests.integration.fanout_support import Gateway
from tests.keyspace import keys

pytestmark = pytest.mark.integration

MAX_BODY = 16 * 1024
MAX_PAGES = 100
MAX_CHILDREN = 20
ENV = {
    **FAST,
    "OCRGW_MAX_BODY_BYTES": str(MAX_BODY),
    "OCRGW_MAX_PAGES": str(MAX_PAGES),
    "OCRGW_MAX_CHILDREN": str(MAX_CHILDREN),
}
REPEATS = 4
# The first part of a bucket's own keys (its indexes, tenants' keys and usage records, idempotency records,
# replication mark) after its hash tag: anything else there is a root's id.
BUCKET_INDEXES = {
    part.split(":", 1)[0]
    for part in (
        keys.LEASES,
        keys.QUEUED,
        keys.DUE_PARENTS,
        keys.WEBHOOKS,
        keys.EXPIRING,
        keys.READY,
        keys.WAKEUPS,
        keys.PULL_CALL,
        keys.SWEEP_LOCK,
        keys.IDEMPOTENCY,
        keys.TENANT,
        keys.ROOTS,
        keys.USAGE,
        keys.TURNS,
        keys.LATER,
        keys.REDRIVEN,
        "replication-mark",
    )
}
THREADS = 8


@dataclass
class Case:
    name: str
    send: Callable[[requests.Session, str, str], requests.Response]  # (session, base_url, tag)
    status: int  # expected
    code: str | None = None  # expected problem code; None for a valid submission
    expect: Any = None  # valid: ("single", text) or ("group", texts, max_parallel)
    keyed: bool = False
    results: list = field(default_factory=list)


def post(body: bytes | str, content_type: str | None, params=None, headers=None):
    def send(http: requests.Session, base: str, tag: str):
        h = dict(headers or {})
        if content_type is not None:
            h["Content-Type"] = content_type
        data = body.replace("{tag}", tag) if isinstance(body, str) else body
        return http.post(f"{base}/jobs", data=data, params=params, headers=h, timeout=30)

    return send


def post_json(obj: Any, headers=None):
    return post(json.dumps(obj), "application/json", headers=headers)


def json_for(build: Callable[[str], Any], content_type: str = "application/json", key: bool = False):
    """A JSON body built for each send from its tag, optionally with an Idempotency-Key of its own."""

    def send(http, base, tag):
        headers = {"Content-Type": content_type}
        if key:
            headers["Idempotency-Key"] = f"key-{tag}"
        return http.post(f"{base}/jobs", data=json.dumps(build(tag)), headers=headers, timeout=30)

    return send


def chunked(total: int, content_type: str, params=None):
    def send(http, base, tag):
        pieces = (b"x" * 1024 for _ in range(total // 1024))
        return http.post(f"{base}/jobs", data=pieces, params=params, timeout=30, headers={"Content-Type": content_type})

    return send


def job(**overrides) -> dict[str, Any]:
    body = echo("text")
    body.update(overrides)
    return body


def cases() -> list[Case]:
    child = echo("c")

    def children(prefix: str, n: int) -> Callable[[str], list[str]]:
        return lambda tag: [f"{prefix}{i}-{tag}" for i in range(n)]

    def group_of(texts_of: Callable[[str], list[str]], cap: int) -> Callable[[str], Any]:
        return lambda tag: group([echo(t) for t in texts_of(tag)], cap)

    capped, uncapped, negative, huge = children("g", 3), children("u", 2), children("n", 2), children("h", 2)
    good = [
        Case(
            "json single",
            json_for(lambda tag: echo(f"single-{tag}")),
            202,
            expect=("single", lambda tag: f"single-{tag}"),
        ),
        Case(
            "raw single",
            post("raw-{tag}", "text/plain", params={"model": "echo", "pages": "1"}),
            202,
            expect=("single", lambda tag: f"raw-{tag}"),
        ),
        Case(
            "json with charset",
            json_for(lambda tag: echo(f"cs-{tag}"), "application/json; charset=utf-8"),
            202,
            expect=("single", lambda tag: f"cs-{tag}"),
        ),
        Case(
            "keyed single",
            json_for(lambda tag: echo(f"keyed-{tag}"), key=True),
            202,
            expect=("single", lambda tag: f"keyed-{tag}"),
            keyed=True,
        ),
        Case("group capped", json_for(group_of(capped, 2)), 202, expect=("group", capped, 2)),
        Case("group uncapped", json_for(group_of(uncapped, 0)), 202, expect=("group", uncapped, 0)),
        Case("group negative cap", json_for(group_of(negative, -3)), 202, expect=("group", negative, 0)),
        Case("group largest cap", json_for(group_of(huge, 10**6)), 202, expect=("group", huge, 10**6)),
    ]
    bad = [
        # the body cannot be read
        Case("truncated json", post('{"model": "echo", "payload":', "application/json"), 400, "malformed_json"),
        Case("json array", post("[1, 2]", "application/json"), 400, "malformed_json"),
        Case(
            "json duplicate key", post('{"model": "echo", "model": "echo"}', "application/json"), 400, "malformed_json"
        ),
        Case(
            "json NaN",
            post('{"fanout": {"max_parallel": NaN, "children": []}}', "application/json"),
            400,
            "malformed_json",
        ),
        Case("json not utf-8", post(b'{"model": "\xff"}', "application/json"), 400, "malformed_json"),
        Case("json nested deep", post("[" * 7000 + "]" * 7000, "application/json"), 400, "malformed_json"),
        Case(
            "json huge integer",
            post('{"fanout": {"max_parallel": 1' + "0" * 5000 + ', "children": []}}', "application/json"),
            400,
            "malformed_json",
        ),
        Case("bad base64", post_json(job(payload="not base64!")), 400, "invalid_base64"),
        Case("unpadded base64", post_json(job(payload="aGk")), 400, "invalid_base64"),
        Case("bad base64 in a child", post_json(group([child, job(payload="%%%")], 2)), 400, "invalid_base64"),
        Case(
            "bad idempotency key",
            post(json.dumps(echo("k")), "application/json", headers={"Idempotency-Key": "k" * 300}),
            400,
            "invalid_idempotency_key",
        ),
        Case(
            "json float out of range",
            post('{"model": "echo", "pages": 1e400}', "application/json"),
            400,
            "malformed_json",
        ),
        # wrong content types
        Case("nonsense content type", post(b"x", "///"), 415, "unsupported_content_type"),
        Case("form body", post("a=b", "application/x-www-form-urlencoded"), 415, "unsupported_content_type"),
        Case(
            "multipart body",
            post(b"--b\r\n\r\nx\r\n--b--\r\n", "multipart/form-data; boundary=b"),
            415,
            "unsupported_content_type",
        ),
        Case("no content type", post(b"hello", None), 415, "missing_content_type"),
        Case("raw gif", post(b"GIF89a", "image/gif", params={"model": "echo"}), 415, "unsupported_content_type"),
        Case("raw xml", post(b"<a/>", "application/xml"), 415, "unsupported_content_type"),
        Case(
            "text for tesseract",
            post(b"hello", "text/plain", params={"model": "tesseract"}),
            415,
            "unsupported_content_type",
        ),
        Case("png for echo", post_json(job(content_type="image/png")), 415, "unsupported_content_type"),
        # bodies too large
        Case(
            "oversized body",
            post(b"x" * (MAX_BODY + 1), "text/plain", params={"model": "echo"}),
            413,
            "payload_too_large",
        ),
        Case("oversized json", post_json(job(payload=b64("y" * MAX_BODY))), 413, "payload_too_large"),
        Case(
            "oversized chunked", chunked(MAX_BODY * 2, "text/plain", params={"model": "echo"}), 413, "payload_too_large"
        ),
        # pages
        Case("huge pages", post_json(job(pages=10**12)), 422, "invalid_field"),
        Case("pages over the limit", post_json(job(pages=MAX_PAGES + 1)), 422, "invalid_field"),
        Case("negative pages", post_json(job(pages=-1)), 422, "invalid_field"),
        Case("string pages", post_json(job(pages="3")), 422, "invalid_field"),
        Case(
            "huge raw pages",
            post(b"x", "text/plain", params={"model": "echo", "pages": "9" * 15}),
            422,
            "invalid_field",
        ),
        Case(
            "non-ascii raw pages",
            post(b"x", "text/plain", params={"model": "echo", "pages": "\u0663"}),
            422,
            "invalid_field",
        ),
        Case(
            "signed raw pages", post(b"x", "text/plain", params={"model": "echo", "pages": "+1"}), 422, "invalid_field"
        ),
        # max_parallel
        Case("float max_parallel", post_json(group([child], 2.5)), 422, "invalid_field"),
        Case("integral float max_parallel", post_json(group([child], 2.0)), 422, "invalid_field"),
        Case("string max_parallel", post_json(group([child], "2")), 422, "invalid_field"),
        Case("bool max_parallel", post_json(group([child], True)), 422, "invalid_field"),
        Case("max_parallel past the largest", post_json(group([child], 10**30)), 422, "invalid_field"),
        Case("null max_parallel", post_json(group([child], None)), 422, "invalid_field"),
        Case("missing max_parallel", post_json({"fanout": {"children": [child]}}), 422, "invalid_field"),
        # the rest of the shape
        Case("no children", post_json(group([], 2)), 422, "no_children"),
        Case("too many children", post_json(group([child] * (MAX_CHILDREN + 1), 2)), 422, "too_many_children"),
        Case("null child", post_json(group([child, None], 2)), 422, "invalid_field"),
        Case("unknown model", post_json(job(model="nope")), 422, "unknown_model"),
        Case("empty payload", post_json(job(payload="")), 422, "empty_document"),
        Case("empty raw body", post(b"", "text/plain", params={"model": "echo"}), 422, "empty_document"),
        Case("unknown field", post_json(job(colour="blue")), 422, "invalid_field"),
        Case(
            "unknown query", post(b"x", "text/plain", params={"model": "echo", "colour": "red"}), 422, "invalid_field"
        ),
        Case("repeated query", post(b"x", "text/plain", params={"model": ["echo", "echo"]}), 422, "invalid_field"),
        Case(
            "query on json",
            post(json.dumps(echo("q")), "application/json", params={"model": "echo"}),
            422,
            "invalid_field",
        ),
        Case("long doc_hash", post_json(job(doc_hash="x" * 500)), 422, "invalid_field"),
        Case("options not an object", post_json(job(options=[1])), 422, "invalid_field"),
        Case("fanout null", post_json({"fanout": None}), 422, "invalid_field"),
        Case("child a list", post_json(group([[1]], 2)), 422, "invalid_field"),
        Case("negative delay", post_json(job(options={"delay_ms": -5})), 422, "invalid_field"),
        Case("string crash option", post_json(job(options={"crash": "yes"})), 422, "invalid_field"),
        Case("numeric transient_fail", post_json(job(options={"transient_fail": 1})), 422, "invalid_field"),
        Case("bad child options", post_json(group([child, job(options={"fail": "no"})], 2)), 422, "invalid_field"),
        Case("keyed bad request", json_for(lambda tag: job(pages=-1), key=True), 422, "invalid_field", keyed=True),
    ]
    return good + bad


def test_bad_submissions_under_load_store_nothing_and_never_fail_the_server(procs, redis_server):
    db = procs.fresh_db()
    stack = procs.stack(db=db, env=ENV, web=True)
    web = stack.web()
    all_cases = cases()
    work = [(case, f"{case.name.replace(' ', '_')}-{n}") for case in all_cases for n in range(REPEATS)]
    random.Random(20261202).shuffle(work)
    lock = threading.Lock()
    errors: list[str] = []

    def client() -> None:
        http = requests.Session()
        http.trust_env = False
        try:
            while True:
                with lock:
                    if not work:
                        return
                    case, tag = work.pop()
                try:
                    response = case.send(http, web.base_url, tag)
                except requests.RequestException as exc:
                    with lock:
                        errors.append(f"{case.name}: {exc!r}")
                    continue
                with lock:
                    case.results.append(
                        (tag, response.status_code, response.headers.get("Content-Type"), response.text)
                    )
        finally:
            http.close()

    threads = [threading.Thread(target=client, name=f"client-{i}") for i in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
        assert not thread.is_alive(), "a client hung"
    assert errors == []

    statuses: Counter[int] = Counter()
    accepted: dict[str, tuple[Case, str]] = {}
    for case in all_cases:
        assert len(case.results) == REPEATS, case.name
        for tag, status, content_type, text in case.results:
            statuses[status] += 1
            assert status == case.status, f"{case.name}: {status} {text[:500]}"
            body = json.loads(text)
            if case.code is None:
                accepted[body["id"]] = (case, tag)
            else:
                assert content_type == "application/problem+json", f"{case.name}: {content_type}"
                assert (body["status"], body["code"]) == (case.status, case.code), f"{case.name}: {body}"
    assert 500 not in statuses and set(statuses) <= {202, 400, 413, 415, 422}, statuses

    with redis_server.client(db) as client_:
        # Exactly the accepted submissions exist, and nothing else of any kind:
        # every ocrgw key of a job or group belongs to an accepted root.
        assert sorted(root_ids(client_)) == sorted(accepted)
        # A bucket's keys are its indexes and a root's keys (``ocrgw:{<bucket>}:<root>:...``).
        after_tag = (
            k.decode().split("}:", 1)[1] for k in client_.scan_iter(match=f"{keys.NAMESPACE}:{{b*", count=1000)
        )
        owners = {part.split(":", 1)[0] for part in after_tag} - BUCKET_INDEXES
        assert owners <= set(accepted), owners - set(accepted)
        assert idempotency_records(client_) == sum(1 for c, _ in accepted.values() if c.keyed)

    with Gateway(web.base_url) as gateway:
        for job_id, (case, tag) in accepted.items():
            kind, texts_of, *cap = case.expect
            if kind == "single":
                assert_single_settled(gateway, job_id, texts_of(tag))
            else:
                assert_group_settled(gateway, job_id, texts_of(tag), cap[0])
    assert web.healthy()
    assert "Traceback" not in web.log_text(), web.log_tail()
