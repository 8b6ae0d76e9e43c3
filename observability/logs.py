"""Log lines: the plain text gunicorn and Celery write (the default), or one JSON object per line.

``OCRGW_LOG_FORMAT=json`` gives every record one line: ``time``, ``level``,
``logger``, ``process``, ``pid``, ``message``, ``exception`` (a traceback,
as one string) when there is one, and the ids of the job it is about,
where the code knows them: ``job_id``, ``parent_id`` (a child's parent) and
``tenant`` (the tenant's name, known where a request was authenticated),
and with tracing on (``observability.tracing``) the ``trace_id`` and
``span_id`` of the span current where the record was made.
Each kind of process installs it once (``observability.celery_hooks``,
``observability.gunicorn_config``).

Where the ids come from: a job's code binds its id for as long as it runs
on it (``bind_job``: the runner, per attempt and per kept-slot child; a
Celery task, for its job; the webhook deliverer); a request's are read
from its route (``/jobs/<job_id>...``) and its authenticated principal.

What is never logged: a document or a result (no code passes one to a
logger; the end-to-end test of the JSON logs checks every process's
output), and keys.  As a guard behind that, the JSON formatter masks the
configured secrets (the webhook secret) and any ``Bearer`` credential
wherever they would appear.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Any

from jobs import keys
from jobs.ids import is_job_id
from observability import tracing

JOB_FIELDS = ("job_id", "parent_id", "tenant")
TRACE_FIELDS = ("trace_id", "span_id")
REDACTED = "[redacted]"
_BEARER = re.compile(r"(?i)\b(bearer\s+)[^\s\"',;]+")
_JOB_ID = r"[0-9a-f]{32}(?:-[0-9]{1,6})?"
_JOB_PATH = re.compile(rf"^/jobs/({_JOB_ID})(?:/|$)")
_FIRST_ARG = re.compile(rf"^[\[(]'({_JOB_ID})'")
#: The Celery tasks whose first argument is the id of the job they are about (set by ``celery_hooks``).
JOB_TASKS: set[str] = set()

_bound: ContextVar[dict[str, str] | None] = ContextVar("ocrgw_log_fields", default=None)


def ids_of(job_id: str) -> dict[str, str]:
    """``job_id``, and ``parent_id`` for a child."""
    fields = {"job_id": job_id}
    root = keys.root_of(job_id)
    if root != job_id:
        fields["parent_id"] = root
    return fields


def bind_job(job_id: str | None) -> None:
    """From now on, in this thread or task, records are about ``job_id`` (None: about no job)."""
    _bound.set(ids_of(job_id) if job_id else None)


def bound() -> dict[str, str] | None:
    """What is bound now, for ``restore`` to put back."""
    return _bound.get()


def restore(fields: dict[str, str] | None) -> None:
    _bound.set(fields)


@contextmanager
def about_job(job_id: str) -> Iterator[None]:
    token = _bound.set(ids_of(job_id))
    try:
        yield
    finally:
        _bound.reset(token)


class JobContext(logging.Filter):
    """Adds the ids of the job a record is about, from what is bound and from the request being served."""

    def filter(self, record: logging.LogRecord) -> bool:
        found = {
            **_from_request(),
            **_from_access(record),
            **_from_task(record),
            **(_bound.get() or {}),
            **tracing.log_ids(),
        }
        for name, value in found.items():
            if getattr(record, name, None) is None:
                setattr(record, name, value)
        return True


def _from_request() -> dict[str, str]:
    """The ids a Flask request names: its route's ``job_id``, and the tenant it was authenticated as."""
    try:
        from flask import g, has_request_context, request
    except ImportError:  # a process without Flask has no request to read
        return {}
    if not has_request_context():
        return {}
    fields: dict[str, str] = {}
    job_id = (request.view_args or {}).get("job_id")
    if isinstance(job_id, str) and is_job_id(job_id):
        fields.update(ids_of(job_id))
    tenant = getattr(g.get("principal"), "tenant", None)
    if isinstance(tenant, str):
        fields["tenant"] = tenant
    return fields


def _from_task(record: logging.LogRecord) -> dict[str, str]:
    """A Celery line about a task of a job (received, succeeded...): the job is its first argument."""
    data = getattr(record, "data", None)
    if not isinstance(data, dict) or data.get("name") not in JOB_TASKS:
        return {}
    match = _FIRST_ARG.match(str(data.get("args", "")))
    return ids_of(match[1]) if match else {}


def _from_access(record: logging.LogRecord) -> dict[str, str]:
    """A gunicorn access line's job, from its path."""
    if record.name != "gunicorn.access" or not isinstance(record.args, dict):
        return {}
    match = _JOB_PATH.match(str(record.args.get("U", "")))
    return ids_of(match[1]) if match else {}


class JsonFormatter(logging.Formatter):
    def __init__(self, secrets: Iterable[str] = ()):
        super().__init__()
        self.secrets = sorted({s for s in secrets if s}, key=len, reverse=True)

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "time": _utc(record.created),
            "level": record.levelname,
            "logger": record.name,
            "process": record.processName,
            "pid": record.process,
            "message": self.redact(_message(record)),
        }
        for name in (*JOB_FIELDS, *TRACE_FIELDS):
            value = getattr(record, name, None)
            if value:
                out[name] = str(value)
        if record.exc_info:
            out["exception"] = self.redact(self.formatException(record.exc_info))
        if record.stack_info:
            out["stack"] = self.redact(self.formatStack(record.stack_info))
        return json.dumps(out, ensure_ascii=False, default=str)

    def redact(self, text: str) -> str:
        for secret in self.secrets:
            text = text.replace(secret, REDACTED)
        return _BEARER.sub(lambda m: m[1] + REDACTED, text)


def _utc(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _message(record: logging.LogRecord) -> str:
    """The record's text; a gunicorn access line as method, path (its query left out) and status."""
    if record.name == "gunicorn.access" and isinstance(record.args, dict):
        atoms = record.args
        return f"{atoms.get('m', '-')} {atoms.get('U', '-')} {atoms.get('s', '-')} {atoms.get('M', '-')} ms"
    return record.getMessage()


def use_json(handlers: Iterable[logging.Handler], secrets: Iterable[str]) -> None:
    """Gives these handlers the JSON format and the job context."""
    secrets = list(secrets)
    for handler in handlers:
        handler.setFormatter(JsonFormatter(secrets))
        if not any(isinstance(f, JobContext) for f in handler.filters):
            handler.addFilter(JobContext())


def secrets_of(settings: Any) -> list[str]:
    """The configured secrets no log line may show."""
    tenants = [secret for _, secret in getattr(settings, "webhook_secrets", ())]
    return [s for s in (getattr(settings, "webhook_secret", ""), *tenants) if s]


def logconfig_dict(log_format: str, secrets: Iterable[str]) -> dict[str, Any]:
    """gunicorn's ``logconfig_dict``: JSON lines for its own loggers and the app's; {} leaves gunicorn's."""
    if log_format != "json":
        return {}
    formatter = {"()": JsonFormatter, "secrets": list(secrets)}
    handler = {"class": "logging.StreamHandler", "formatter": "json", "filters": ["job"]}
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "filters": {"job": {"()": JobContext}},
        "formatters": {"json": formatter},
        "handlers": {
            "stderr": {**handler, "stream": "ext://sys.stderr"},
            "stdout": {**handler, "stream": "ext://sys.stdout"},
        },
        "root": {"level": "INFO", "handlers": ["stderr"]},
        "loggers": {
            "gunicorn.error": {"handlers": ["stderr"], "propagate": False, "qualname": "gunicorn.error"},
            "gunicorn.access": {
                "level": "INFO",
                "handlers": ["stdout"],
                "propagate": False,
                "qualname": "gunicorn.access",
            },
        },
    }
