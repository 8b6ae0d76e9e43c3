"""Tesseract languages at the gateway: GET /models lists the live workers' languages, and a
submission naming one no live worker has is 422 unsupported_language with nothing stored."""

from __future__ import annotations

import json
from typing import Any

import pytest

from gateway.languages import LiveLanguages
from gateway.problems import Problem
from gateway.submission import Parser
from jobs.config import Settings
from jobs.worker_reports import WorkerReports
from tests.pdfs import text_pdf

from .conftest import MAX_CHILDREN, MAX_PAGES
from .support import assert_problem, b64, echo_job, fanout, png

PNG = png()
PDF = text_pdf("one", "two", "three")


@pytest.fixture
def settings() -> Settings:
    return Settings(max_children=MAX_CHILDREN, max_pages=MAX_PAGES, max_body_bytes=1 << 20)


@pytest.fixture
def workers(store) -> WorkerReports:
    return store.workers


def tesseract_job(lang: str | None = None, **fields: Any) -> dict:
    options = {} if lang is None else {"options": {"lang": lang}}
    return {"model": "tesseract", "payload": b64(PNG), "content_type": "image/png", **options, **fields}


def models_by_name(client) -> dict[str, dict]:
    response = client.get("/models")
    assert response.status_code == 200
    return {m["name"]: m for m in response.get_json()["models"]}


# -- GET /models -----------------------------------------------------------------------------------


def test_models_list_the_union_of_the_live_workers_languages_on_tesseract_only(client, workers):
    workers.report("worker-a@h1:1", {"eng", "deu"}, 30)
    workers.report("worker-b@h2:2", {"eng", "fra"}, 30)

    models = models_by_name(client)

    assert models["tesseract"]["languages"] == ["deu", "eng", "fra"]
    assert "languages" not in models["echo"] and "languages" not in models["paddleocr"]


def test_models_list_no_language_while_no_worker_is_live(client):
    assert models_by_name(client)["tesseract"]["languages"] == []


def test_the_models_document_describes_the_languages(client):
    schema = client.get("/openapi.json").get_json()["components"]["schemas"]["Model"]

    assert "live workers" in schema["properties"]["languages"]["description"]


# -- refused: 422 unsupported_language, nothing stored ------------------------------------------------------

#: name -> (path, the request's keywords, the languages it misses, the child refused or None)
REFUSED: dict[str, tuple[str, dict[str, Any], list[str], int | None]] = {
    "json job": ("/jobs", {"json": tesseract_job("fra")}, ["fra"], None),
    "one part of several": ("/jobs", {"json": tesseract_job("deu+xyz+fra")}, ["fra", "xyz"], None),
    "raw document, English by default": ("/jobs?model=tesseract", {"data": PNG, "content_type": "image/png"}, ["eng"],
                                         None),
    "json job, English by default": ("/jobs", {"json": tesseract_job(lang=None)}, ["eng"], None),
    "child of a group": ("/jobs", {"json": fanout(echo_job(), tesseract_job("deu"), tesseract_job("fra"))}, ["fra"], 2),
    "split": ("/jobs", {"json": tesseract_job("fra", payload=b64(PDF), content_type="application/pdf",
                                              split_pages=1)}, ["fra"], None),
}  # fmt: skip


@pytest.mark.parametrize(("path", "request_kwargs", "missing", "child"), REFUSED.values(), ids=REFUSED.keys())
def test_a_language_no_live_worker_has_is_refused_and_nothing_is_stored(
    client, workers, keyspace, published, path, request_kwargs, missing, child
):
    workers.report("worker-a@h1:1", {"deu"}, 30)
    workers.report("worker-b@h2:2", {"deu", "ita"}, 30)
    before = keyspace()

    response = client.post(path, **request_kwargs)

    problem = assert_problem(response, 422, "unsupported_language")
    assert problem["missing_languages"] == missing
    assert problem["installed_languages"] == ["deu", "ita"]
    assert all(language in problem["detail"] for language in [*missing, "deu"])
    assert problem.get("child_index") == child
    assert keyspace() == before
    assert published == []


def test_a_worker_without_tesseract_makes_every_tesseract_job_refused(client, workers):
    workers.report("worker-a@h1:1", [], 30)

    problem = assert_problem(client.post("/jobs", json=tesseract_job("eng")), 422, "unsupported_language")

    assert problem["installed_languages"] == []
    assert "installed: none" in problem["detail"]


# -- accepted ------------------------------------------------------------------------------------------------


def test_every_language_is_accepted_while_no_worker_is_live(client, published):
    response = client.post("/jobs", json=tesseract_job("fra+xyz"))

    assert response.status_code == 202, response.get_data(as_text=True)
    assert len(published) == 1


def test_languages_that_live_workers_have_between_them_are_accepted(client, workers):
    workers.report("worker-a@h1:1", {"eng"}, 30)
    workers.report("worker-b@h2:2", {"deu"}, 30)

    for body in (tesseract_job("eng+deu"), tesseract_job(), fanout(tesseract_job("deu"), echo_job())):
        response = client.post("/jobs", json=body)
        assert response.status_code == 202, response.get_data(as_text=True)
    raw = client.post("/jobs?model=tesseract", data=PNG, content_type="image/png")
    assert raw.status_code == 202, raw.get_data(as_text=True)


def test_models_that_read_no_language_are_not_checked(client, workers):
    workers.report("worker-a@h1:1", [], 30)

    response = client.post("/jobs", json=echo_job(options={"lang": "fra"}))

    assert response.status_code == 202, response.get_data(as_text=True)


# -- the parser, on plain values --------------------------------------------------------------------------


def parse(body: dict, languages: frozenset[str] | None):
    parser = Parser(Settings(max_children=MAX_CHILDREN, max_pages=MAX_PAGES, max_body_bytes=1 << 20))
    return parser.parse(
        path="/jobs", content_type="application/json", args={}, body=json.dumps(body).encode(), languages=languages
    )


def test_the_parser_checks_the_languages_it_is_given():
    assert parse(tesseract_job("eng+deu"), frozenset({"eng", "deu"})).jobs[0].options == {"lang": "eng+deu"}
    assert parse(tesseract_job("xyz"), None).jobs[0].options == {"lang": "xyz"}
    with pytest.raises(Problem) as refused:
        parse(fanout(tesseract_job("eng"), tesseract_job("eng+deu")), frozenset({"eng"}))

    assert refused.value.code == "unsupported_language"
    assert refused.value.extra == {"missing_languages": ["deu"], "installed_languages": ["eng"], "child_index": 1}


# -- the gateway's memory of them ------------------------------------------------------------------------


class CountingReports(WorkerReports):
    def __init__(self, client):
        super().__init__(client)
        self.reads = 0

    def languages(self):
        self.reads += 1
        return super().languages()


@pytest.fixture
def counted(redis) -> CountingReports:
    return CountingReports(redis)


def test_the_languages_are_read_at_most_once_a_second_and_again_after(counted):
    now = [100.0]
    live = LiveLanguages(counted, max_age=1.0, clock=lambda: now[0])
    counted.report("w:1", {"eng"}, 30)

    assert live.get() == {"eng"}
    counted.report("w:2", {"fra"}, 30)  # a worker that has just started
    now[0] += 0.9
    assert (live.get(), counted.reads) == ({"eng"}, 1)

    now[0] += 0.2
    assert (live.get(), counted.reads) == ({"eng", "fra"}, 2)


def test_no_live_worker_is_remembered_as_long_and_the_first_report_counts_after_it(counted):
    now = [100.0]
    live = LiveLanguages(counted, max_age=1.0, clock=lambda: now[0])

    assert [live.get(), live.get()] == [None, None]  # a deployment with no Tesseract worker reads once a second
    assert counted.reads == 1
    counted.report("w:1", {"eng"}, 30)
    now[0] += 1.0

    assert live.get() == {"eng"}
    assert counted.reads == 2
