"""JSON log lines: one object per record, with the ids of the job it is about, and no secret."""

from __future__ import annotations

import json
import logging
import sys
from types import SimpleNamespace

from flask import Flask, g

from observability import logs

PARENT = "0123456789abcdef0123456789abcdef"
CHILD = f"{PARENT}-7"


def record(message: str = "hello %s", args=("world",), name: str = "workers.runner", **extra) -> logging.LogRecord:
    made = logging.LogRecord(name, logging.WARNING, __file__, 1, message, args, None)
    for key, value in extra.items():
        setattr(made, key, value)
    return made


def line(made: logging.LogRecord, secrets=()) -> dict:
    logs.JobContext().filter(made)
    text = logs.JsonFormatter(secrets).format(made)
    assert "\n" not in text
    return json.loads(text)


def test_a_record_is_one_json_object_with_its_level_logger_process_and_message():
    got = line(record())

    assert got["message"] == "hello world"
    assert (got["level"], got["logger"]) == ("WARNING", "workers.runner")
    assert got["pid"] > 0 and got["process"] and got["time"].endswith("Z")
    assert not set(logs.JOB_FIELDS) & set(got)  # about no job: the fields are left out


def test_a_traceback_stays_on_the_one_line():
    try:
        raise ValueError("bad page")
    except ValueError:
        made = record()
        made.exc_info = sys.exc_info()

    got = line(made)

    assert "ValueError: bad page" in got["exception"] and "Traceback" in got["exception"]


def test_a_bound_child_gives_its_id_and_its_parent_s():
    logs.bind_job(CHILD)
    try:
        got = line(record())
    finally:
        logs.bind_job(None)

    assert (got["job_id"], got["parent_id"]) == (CHILD, PARENT)
    assert "job_id" not in line(record())


def test_a_root_job_has_no_parent_and_a_binding_ends_with_its_block():
    with logs.about_job(PARENT):
        inside = line(record())
    outside = line(record())

    assert inside["job_id"] == PARENT and "parent_id" not in inside
    assert "job_id" not in outside


def test_ids_given_with_the_record_win_over_the_bound_ones():
    with logs.about_job(PARENT):
        got = line(record(**logs.ids_of(CHILD)))

    assert got["job_id"] == CHILD


def test_a_request_gives_the_job_of_its_route_and_the_tenant_it_was_authenticated_as():
    app = Flask(__name__)
    app.add_url_rule("/jobs/<job_id>", "job", lambda job_id: "")

    with app.test_request_context(f"/jobs/{CHILD}"):
        app.preprocess_request()
        g.principal = SimpleNamespace(tenant="acme")
        got = line(record())

    assert (got["job_id"], got["parent_id"], got["tenant"]) == (CHILD, PARENT, "acme")


def test_a_gunicorn_access_line_shows_method_path_status_and_time_and_its_job_but_no_query():
    atoms = {"m": "GET", "U": f"/jobs/{PARENT}/result", "q": "callback_url=http://x/?token=abc", "s": "200", "M": 12}
    made = logging.LogRecord("gunicorn.access", logging.INFO, __file__, 1, "%(r)s", (atoms,), None)

    got = line(made)

    assert got["message"] == f"GET /jobs/{PARENT}/result 200 12 ms"
    assert got["job_id"] == PARENT
    assert "token" not in json.dumps(got)


def test_a_celery_line_about_a_task_of_a_job_carries_the_job(monkeypatch):
    monkeypatch.setattr(logs, "JOB_TASKS", {"ocrgw.run"})
    received = {"id": "task-1", "name": "ocrgw.run", "args": f"['{CHILD}']", "kwargs": "{}"}
    sweep = {"id": "task-2", "name": "ocrgw.sweep", "args": f"['{CHILD}']", "kwargs": "{}"}

    assert line(record("Task %(name)s[%(id)s] received", (received,), data=received))["job_id"] == CHILD
    assert "job_id" not in line(record("Task %(name)s[%(id)s] received", (sweep,), data=sweep))


def test_secrets_and_bearer_credentials_are_masked_wherever_they_appear():
    secret = "webhook-secret-0123456789"
    made = record("sent with %s and Authorization: Bearer sk-live-abc.def", (secret,))

    got = line(made, secrets=[secret])

    assert secret not in json.dumps(got) and "sk-live-abc.def" not in json.dumps(got)
    assert got["message"] == f"sent with {logs.REDACTED} and Authorization: Bearer {logs.REDACTED}"


def test_gunicorn_keeps_its_own_logging_in_the_plain_format_and_gets_json_handlers_otherwise():
    assert logs.logconfig_dict("plain", []) == {}

    config = logs.logconfig_dict("json", ["a-secret-of-some-length"])

    formatter = config["formatters"]["json"]
    made = formatter["()"](secrets=formatter["secrets"])
    assert isinstance(made, logs.JsonFormatter) and made.secrets == ["a-secret-of-some-length"]
    assert {h["formatter"] for h in config["handlers"].values()} == {"json"}
    assert set(config["loggers"]) == {"gunicorn.error", "gunicorn.access"}
    assert config["root"]["handlers"] == ["stderr"]


def test_use_json_gives_handlers_the_format_and_the_job_context_once():
    handler = logging.StreamHandler()

    logs.use_json([handler], ["s3cr3t-s3cr3t-s3cr3t"])
    logs.use_json([handler], ["s3cr3t-s3cr3t-s3cr3t"])

    assert isinstance(handler.formatter, logs.JsonFormatter)
    assert sum(isinstance(f, logs.JobContext) for f in handler.filters) == 1
