"""Tesseract languages end to end: the workers report theirs, GET /models lists them, a German page
comes back with its umlauts and ß, and a language no worker has is refused at submission.

A real gunicorn gateway, Celery worker (Tesseract with English and German), coordinator, beat and
Redis.  The module's stack has a database of its own, so the worker's report stays between tests
(the shared stack's database is emptied before each test, reports included).
"""

from __future__ import annotations

import io

import pytest
from PIL import Image, ImageDraw, ImageFont

from jobs.worker_reports import WorkerReports
from tests.harness import Stack, wait_until
from tests.integration.live import OCR_TIMEOUT, Api, accepted, assert_problem, b64, job_keys, ocrgw_keyspace
from tests.integration.polling import wait_for_job

pytestmark = pytest.mark.integration

DEJAVU_SANS = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"  # fonts-dejavu-core (scripts/setup.sh --tests)
DPI = 200
GERMAN = ["Größe und Übung", "Die Straße für schöne Äpfel", "Öl, Füße, weiß, süß und spät"]
REPORTED_WITHIN = 60.0  # a worker reports once it is ready; bounds a hang, not a speed check


@pytest.fixture(scope="module")
def deployment(stack_factory) -> Stack:
    return stack_factory(concurrency=1, web=True)


def german_page() -> bytes:
    """A PNG of the German lines in DejaVu Sans at 14 pt, drawn at 200 dpi: black on white."""
    font = ImageFont.truetype(DEJAVU_SANS, size=round(14 * DPI / 72))
    page = Image.new("L", (round(8.27 * DPI), 3 * DPI), 255)
    draw = ImageDraw.Draw(page)
    for index, line in enumerate(GERMAN):
        draw.text((100, 80 + index * round(font.size * 1.6)), line, font=font, fill=0)
    out = io.BytesIO()
    page.save(out, "PNG", dpi=(DPI, DPI))
    return out.getvalue()


def tesseract_job(payload: bytes, lang: str) -> dict:
    return {"model": "tesseract", "content_type": "image/png", "payload": b64(payload), "options": {"lang": lang}}


def listed_languages(api: Api) -> list[str]:
    models = {m["name"]: m for m in api.get("/models")["models"]}
    return models["tesseract"]["languages"]


@pytest.fixture
def reported(api) -> list[str]:
    """The languages GET /models lists, once the deployment's worker has reported them."""
    return wait_until(
        lambda: listed_languages(api) if {"eng", "deu"} <= set(listed_languages(api)) else None,
        REPORTED_WITHIN,
        message=lambda: f"GET /models lists {listed_languages(api)}",
    )


def test_models_list_the_languages_of_the_live_worker_without_osd(reported, db):
    assert {"eng", "deu"} <= set(reported)
    assert "osd" not in reported
    assert reported == sorted(reported)
    [report] = WorkerReports(db).live()
    assert sorted(report.languages) == reported


def test_a_german_page_read_in_german_keeps_its_umlauts_and_sharp_s(api, reported):
    job_id = accepted(api.post_json(tesseract_job(german_page(), "deu")))

    job = wait_for_job(api.job, job_id, timeout=OCR_TIMEOUT)

    assert job["status"] == "completed", job
    text = job["result"]["text"]
    assert text.splitlines() == GERMAN, text
    assert {"ä", "ö", "ü", "Ä", "Ö", "Ü", "ß"} <= set(text)


@pytest.mark.parametrize(("lang", "missing"), [("fra", ["fra"]), ("eng+xyz", ["xyz"]), ("deu+fra+ita", ["fra", "ita"])])
def test_a_language_no_worker_has_is_refused_at_submission_and_nothing_is_stored(api, db, reported, lang, missing):
    before, jobs_before = ocrgw_keyspace(db), job_keys(db)

    response = api.post_json(tesseract_job(german_page(), lang), headers={"Idempotency-Key": f"lang-{lang}"})

    problem = assert_problem(response, 422, "unsupported_language")
    assert problem["missing_languages"] == missing
    assert problem["installed_languages"] == reported
    assert ocrgw_keyspace(db) == before
    assert job_keys(db) == jobs_before


def live_pids(reports: WorkerReports) -> list[int]:
    """The main processes of the workers whose reports are live (a report is named ``<hostname>:<pid>``)."""
    return sorted(int(report.name.rpartition(":")[2]) for report in reports.live())


def test_a_worker_that_stops_withdraws_its_report_one_killed_lapses_and_with_none_live_jobs_wait(procs):
    db = procs.fresh_db()
    api = Api(procs.web(db=db).base_url)
    # Killed without a word: its report, renewed every half second, lapses 1.5 s after the last.
    killed = procs.worker(db=db, concurrency=1, env={"OCRGW_WORKER_REPORT_INTERVAL": "0.5"}, wait=False)
    # Stopped cleanly: its report would live 30 s, so its going at once is the withdrawal.
    stopped = procs.worker(db=db, concurrency=1, wait=False)
    with procs.redis.client(db) as client:
        reports = WorkerReports(client)
        both = sorted([killed.pid, stopped.pid])
        wait_until(lambda: live_pids(reports) == both, REPORTED_WITHIN, message=lambda: f"{reports.live()}")

        killed.kill()
        wait_until(lambda: live_pids(reports) == [stopped.pid], REPORTED_WITHIN, message=lambda: f"{reports.live()}")
        stopped.terminate()
        stopped.wait(timeout=REPORTED_WITHIN)

        assert reports.live() == []
        assert reports.languages() is None
    wait_until(lambda: listed_languages(api) == [], REPORTED_WITHIN, message="GET /models still lists languages")
    waiting = accepted(api.post_json(tesseract_job(german_page(), "fra")))
    assert api.job(waiting)["status"] == "queued"
