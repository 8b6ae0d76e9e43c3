"""The submission parser against whatever a client can send: a parsed submission or a 4xx problem, nothing else.

Hypothesis builds requests from the shapes of real ones (JSON jobs and groups with every field the
schema knows, wrong types and sizes in each, raw bodies with their query strings, arbitrary bytes
under every content type) and a few fully random ones. Parsing touches no store, so whatever the
parser answers, nothing can have been written; the gateway's keyspace checks cover the route.
"""

from __future__ import annotations

import base64
import io
import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PIL import Image

from gateway.problems import CATALOGUE, Problem
from gateway.submission import Parser, Submission
from jobs.config import Settings

from .conftest import MAX_BODY_BYTES, MAX_CHILDREN, MAX_PAGES


def _png() -> bytes:
    out = io.BytesIO()
    Image.new("L", (8, 8), 255).save(out, format="PNG")
    return out.getvalue()


PNG = _png()
PARSER = Parser(Settings(max_children=MAX_CHILDREN, max_pages=MAX_PAGES, max_body_bytes=MAX_BODY_BYTES))
CONTENT_TYPES = ["application/json", "text/plain", "image/png", "image/jpeg", "image/tiff", "application/pdf",
                 "application/octet-stream", "multipart/form-data", ""]  # fmt: skip

# Values of every JSON type, the awkward ones included: a field gets one of these or a plausible value.
ANY_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False) | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)  # fmt: skip


def either(plausible):
    """Mostly a plausible value (so that many requests parse), sometimes anything at all."""
    return st.integers(min_value=0, max_value=9).flatmap(lambda roll: plausible if roll < 8 else ANY_JSON)


def payload():
    return st.one_of(
        st.binary(min_size=1, max_size=64).map(lambda b: base64.b64encode(b).decode()),
        st.binary(max_size=64).map(lambda b: base64.b64encode(b).decode()),
        st.text(max_size=40),
    )


OPTIONAL_FIELDS = {
    "pages": st.integers(min_value=-2, max_value=MAX_PAGES + 2),
    "options": st.fixed_dictionaries({}, optional={"delay_ms": st.integers(0, 10), "text_layer": ANY_JSON}),
    "callback_url": st.sampled_from(["https://hooks.example/x", "http://127.0.0.1/x", "ftp://x"]),
    "split_pages": st.integers(min_value=-1, max_value=5),
    "max_parallel": st.integers(min_value=-3, max_value=3),
    "on_prem": st.booleans(),
    "unknown": ANY_JSON,
}


@st.composite
def job(draw):
    model, content_type, document = draw(
        st.sampled_from(
            [
                ("echo", "text/plain", payload()),
                ("tesseract", "image/png", st.just(base64.b64encode(PNG).decode())),
                ("tesseract", "application/pdf", payload()),
                ("nope", "text/plain", payload()),
            ]
        )
    )
    body = {
        "model": draw(either(st.just(model))),
        "content_type": draw(either(st.just(content_type))),
        "payload": draw(either(document)),
    }
    for name in sorted(draw(st.sets(st.sampled_from(sorted(OPTIONAL_FIELDS)), max_size=3))):
        body[name] = draw(either(OPTIONAL_FIELDS[name]))
    for name in draw(st.sets(st.sampled_from(["model", "content_type", "payload"]), max_size=1)):
        del body[name]
    return body


@st.composite
def group(draw):
    fanout = {
        "max_parallel": draw(either(st.integers(min_value=-2, max_value=10**7))),
        "children": draw(st.one_of(st.lists(job(), max_size=4), ANY_JSON)),
    }
    for name, values in {
        "tolerated_failures": st.integers(min_value=-1, max_value=10**7),
        "tolerated_failure_percentage": st.floats(min_value=-1, max_value=101),
        "fail_fast": st.booleans(),
        "on_prem": st.booleans(),
        "callback_url": st.just("https://hooks.example/g"),
    }.items():
        if draw(st.booleans()):
            fanout[name] = draw(either(values))
    return {"fanout": fanout}


def json_request():
    return st.one_of(job(), group(), ANY_JSON).map(lambda body: ("application/json", {}, json.dumps(body).encode()))


def raw_request():
    query = st.dictionaries(
        st.sampled_from(["model", "pages", "split_pages", "max_parallel", "callback_url", "on_prem", "other"]),
        st.lists(st.text(max_size=12) | st.integers(min_value=-5, max_value=10**20).map(str), min_size=1, max_size=2),
        max_size=4,
    )
    body = st.one_of(st.binary(max_size=128), st.just(PNG), st.just(b"%PDF-1.7\n%%EOF"))
    return st.tuples(st.sampled_from(CONTENT_TYPES), query, body)


def check(content_type: str, args: dict, body: bytes) -> None:
    try:
        parsed = PARSER.parse(path="/jobs", content_type=content_type, args=args, body=body, require_on_prem=False)
    except Problem as problem:
        status = CATALOGUE[problem.code][0]
        assert 400 <= status < 500, (problem.code, status)
    else:
        assert isinstance(parsed, Submission)
        assert parsed.jobs and all(j.payload for j in parsed.jobs)


@settings(max_examples=400, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck), database=None)
@given(json_request())
def test_any_json_submission_parses_or_is_a_4xx_problem(request):
    check(*request)


@settings(max_examples=300, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck), database=None)
@given(raw_request())
def test_any_raw_submission_parses_or_is_a_4xx_problem(request):
    check(*request)


@settings(max_examples=200, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck), database=None)
@given(st.sampled_from(CONTENT_TYPES), st.binary(max_size=256))
def test_any_bytes_under_any_content_type_parse_or_are_a_4xx_problem(content_type, body):
    check(content_type, {}, body)
