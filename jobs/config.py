"""Settings, read once from the environment, with every default named and in its unit.

``Settings.from_env`` is the one place where ocrgw reads its configuration.
A marshmallow schema parses and checks every variable, and a value ocrgw
cannot use stops the process at start with one ``InvalidSettings`` that
names the variable, what it expects and what it got, e.g.
``OCRGW_LEASE_SECONDS: must be a number of seconds > 0, got 'abc'``.
An unset or empty variable takes its default.

The Procfile's own variables (``PORT``, ``OCRGW_WORKER_QUEUES``,
``OCRGW_WORKER_CONCURRENCY``, ...) are not read here: the shell turns them
into command-line options, which gunicorn and celery check themselves.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from marshmallow import EXCLUDE, Schema, ValidationError, validate
from marshmallow import fields as mf

from jobs.errors import OcrgwError
from jobs.registry import DEFAULT_MODEL, MODELS

DEFAULT_REDIS_URL = "redis://localhost:6379/0"
DEFAULT_LEASE_SECONDS = 30.0
DEFAULT_SWEEP_INTERVAL_SECONDS = 1.0
MIN_SWEEP_INTERVAL_SECONDS = 0.1
DEFAULT_MAX_ATTEMPTS = 3
DEFAULT_JOB_TIMEOUT_SECONDS = 300.0
DEFAULT_MAX_CHILDREN = 1000
DEFAULT_IDEMPOTENCY_TTL_SECONDS = 24 * 3600
DEFAULT_MAX_BODY_BYTES = 64 * 1024 * 1024
DEFAULT_MAX_PAGES = 10_000
# A queued job nobody claimed for this long gets a fresh Celery message; the
# claim transition makes the duplicate harmless, so erring short is cheap.
DEFAULT_REQUEUE_SECONDS = 60.0
# How many held children one transition releases at most.  Bounds the time a
# script holds Redis and the messages one POST publishes for an uncapped group;
# the rest is released by completions and the sweep.
DEFAULT_RELEASE_BATCH = 256
# How many leases, stale queued jobs and due parents one sweep tick handles.
DEFAULT_SWEEP_BATCH = 500
DEFAULT_RETRY_BACKOFF_SECONDS = 1.0
# A worker that finishes a child runs the next child released into its slot
# itself, without a Celery message, for up to this long from the task's
# start; then the next child takes its turn on the queue like any job.
# What a tiny child saves is a broker round trip; what a long one would
# cost is fairness to other groups, hence a time budget.  0 turns it off.
DEFAULT_KEEP_SLOT_SECONDS = 1.0
# After SIGTERM a gateway keeps answering this long (new jobs 503, /readyz
# 503, polls as usual) so that load balancers take it out of rotation before
# it stops listening.  Capped at half of gunicorn's --graceful-timeout.
DEFAULT_DRAIN_SECONDS = 5.0
# A tenant's children queued or processing at once, across all its groups;
# 0: no cap.  The fair share between tenants rests on it (README, Fair share).
DEFAULT_TENANT_MAX_INFLIGHT = 0
# Several worker processes share the host's cores: one ONNX Runtime thread each.
DEFAULT_ENGINE_THREADS = 1
# How long a claim or complete remembers what it answered, for the same call
# sent again after a dropped connection: the store's client retries for about
# ten seconds, so a minute is plenty.
CALL_RECORD_MS = 60_000
# Webhooks: each attempt may take this long to connect and to get an answer;
# a failed attempt is retried after the backoff, doubling up to its cap, for
# as long as the retry window after the job became terminal lasts.
DEFAULT_WEBHOOK_TIMEOUT_SECONDS = 10.0
DEFAULT_WEBHOOK_BACKOFF_SECONDS = 10.0
DEFAULT_WEBHOOK_BACKOFF_MAX_SECONDS = 3600.0
DEFAULT_WEBHOOK_GIVE_UP_AFTER_SECONDS = 24 * 3600.0
# A webhook secret shorter than this is refused: an HMAC key is only as strong as it is long.
MIN_WEBHOOK_SECRET_CHARS = 16
REDIS_URL_SCHEMES = frozenset({"redis", "rediss", "unix"})
_PASSWORD_IN_URL = re.compile(r":[^:@/]*@")  # the ":password@" of a URL's user info


class InvalidSettings(OcrgwError, ValueError):
    """Raised when an environment variable holds a value ocrgw cannot use."""

    code = "invalid_settings"


@dataclass(frozen=True)
class Settings:
    redis_url: str = DEFAULT_REDIS_URL
    broker_url: str = ""
    lease_seconds: float = DEFAULT_LEASE_SECONDS
    sweep_interval: float = DEFAULT_SWEEP_INTERVAL_SECONDS
    max_attempts: int = DEFAULT_MAX_ATTEMPTS
    job_timeout: float = DEFAULT_JOB_TIMEOUT_SECONDS
    max_children: int = DEFAULT_MAX_CHILDREN
    idempotency_ttl: int = DEFAULT_IDEMPOTENCY_TTL_SECONDS
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    max_pages: int = DEFAULT_MAX_PAGES
    requeue_seconds: float = DEFAULT_REQUEUE_SECONDS
    release_batch: int = DEFAULT_RELEASE_BATCH
    sweep_batch: int = DEFAULT_SWEEP_BATCH
    retry_backoff: float = DEFAULT_RETRY_BACKOFF_SECONDS
    keep_slot_seconds: float = DEFAULT_KEEP_SLOT_SECONDS
    drain_seconds: float = DEFAULT_DRAIN_SECONDS
    tenant_max_inflight: int = DEFAULT_TENANT_MAX_INFLIGHT
    # 1 lets the echo model's ``crash`` option kill the worker process that
    # runs it (fault-injection tests); 0 refuses that option.
    echo_allow_crash: int = 0
    default_model: str = DEFAULT_MODEL
    # ONNX Runtime intra-op threads per worker process (PP-OCRv4).
    engine_threads: int = DEFAULT_ENGINE_THREADS
    # Engines a worker process loads at start, so its first job does not wait for them.
    preload_models: tuple[str, ...] = ()
    # The HMAC key of X-Ocrgw-Signature; '' sends webhooks unsigned (with a warning at start).
    webhook_secret: str = field(default="", repr=False)  # kept out of logs
    # 1 lets callback URLs name loopback and private addresses (tests, a private network).
    webhook_allow_private: int = 0
    webhook_timeout: float = DEFAULT_WEBHOOK_TIMEOUT_SECONDS
    webhook_backoff: float = DEFAULT_WEBHOOK_BACKOFF_SECONDS
    webhook_backoff_max: float = DEFAULT_WEBHOOK_BACKOFF_MAX_SECONDS
    webhook_give_up_after: float = DEFAULT_WEBHOOK_GIVE_UP_AFTER_SECONDS

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """The settings in ``environ`` (default: this process's environment).

        Raises ``InvalidSettings`` naming every variable whose value is unusable.
        """
        env = os.environ if environ is None else environ
        raw = {var.env: env[var.env].strip() for var in VARIABLES if env.get(var.env, "").strip()}
        try:
            values: dict[str, Any] = _SCHEMA.load(raw)
        except ValidationError as error:
            problems = [
                f"{var.env}: must be {var.expects}, got {var.shown(raw[var.env])}"
                for var in VARIABLES
                if var.env in error.messages_dict
            ]
            raise InvalidSettings("; ".join(problems)) from None
        values.setdefault("broker_url", values.get("redis_url", DEFAULT_REDIS_URL))
        return cls(**values)

    @property
    def lease_ms(self) -> int:
        return int(self.lease_seconds * 1000)


# -- the variables ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Variable:
    """One environment variable: the setting it fills, how it is parsed, and what it must be."""

    setting: str
    env: str
    parse: mf.Field
    expects: str
    # A URL's password is not repeated in the error: it would end up in logs.
    hides_password: bool = False
    # Nor is a secret: only its length is shown.
    secret: bool = False

    def shown(self, raw: str) -> str:
        if self.secret:
            return f"a secret of {len(raw)} characters"
        return repr(_PASSWORD_IN_URL.sub(":***@", raw) if self.hides_password else raw)


class _CommaSeparatedModels(mf.Field):
    """``tesseract, paddleocr`` -> ("tesseract", "paddleocr"); every name a known model."""

    def _deserialize(self, value: Any, attr: str | None, data: Mapping[str, Any] | None, **kwargs: Any):
        names = tuple(name.strip() for name in str(value).split(",") if name.strip())
        if any(name not in MODELS for name in names):
            raise ValidationError("unknown model")
        return names


def _url(schemes: frozenset[str] | None):
    """A validator of a URL with one of ``schemes`` (any scheme if None), as redis-py and kombu take them."""

    def check(text: str) -> None:
        parts = urlsplit(text)
        scheme_known = parts.scheme in schemes if schemes is not None else bool(parts.scheme)
        if not (scheme_known and "://" in text and (parts.netloc or parts.path)):
            raise ValidationError("not a URL of a known scheme")

    return check


def _count(setting: str, env: str, unit: str = "") -> Variable:
    """A whole number >= 1."""
    return Variable(setting, env, mf.Integer(validate=validate.Range(min=1)), f"a whole number{unit} >= 1")


def _seconds(setting: str, env: str, *, at_least: float | None = None) -> Variable:
    """A duration: above 0, or ``at_least`` and more where that bound is part of its meaning."""
    if at_least is None:
        bound, expects = validate.Range(min=0, min_inclusive=False), "a number of seconds > 0"
    else:
        bound, expects = validate.Range(min=at_least), f"a number of seconds >= {at_least:g}"
    return Variable(setting, env, mf.Float(allow_nan=False, validate=bound), expects)


VARIABLES: tuple[Variable, ...] = (
    Variable(
        "redis_url",
        "REDIS_URL",
        mf.String(validate=_url(REDIS_URL_SCHEMES)),
        "a redis://, rediss:// or unix:// URL",
        hides_password=True,
    ),
    Variable(
        "broker_url",
        "CELERY_BROKER_URL",
        mf.String(validate=_url(None)),
        "a URL such as redis://host:6379/0",
        hides_password=True,
    ),
    _seconds("lease_seconds", "OCRGW_LEASE_SECONDS"),
    _seconds("sweep_interval", "OCRGW_SWEEP_INTERVAL", at_least=MIN_SWEEP_INTERVAL_SECONDS),
    _count("max_attempts", "OCRGW_MAX_ATTEMPTS"),
    _seconds("job_timeout", "OCRGW_JOB_TIMEOUT"),
    _count("max_children", "OCRGW_MAX_CHILDREN"),
    _count("idempotency_ttl", "OCRGW_IDEMPOTENCY_TTL", " of seconds"),
    _count("max_body_bytes", "OCRGW_MAX_BODY_BYTES", " of bytes"),
    _count("max_pages", "OCRGW_MAX_PAGES"),
    _seconds("requeue_seconds", "OCRGW_REQUEUE_SECONDS"),
    _count("release_batch", "OCRGW_RELEASE_BATCH"),
    _count("sweep_batch", "OCRGW_SWEEP_BATCH"),
    _seconds("retry_backoff", "OCRGW_RETRY_BACKOFF", at_least=0),
    _seconds("keep_slot_seconds", "OCRGW_KEEP_SLOT_SECONDS", at_least=0),
    _seconds("drain_seconds", "OCRGW_DRAIN_SECONDS", at_least=0),
    Variable(
        "tenant_max_inflight",
        "OCRGW_TENANT_MAX_INFLIGHT",
        mf.Integer(validate=validate.Range(min=0, max=1_000_000)),
        "a whole number from 0 (no cap) to 1000000",
    ),
    Variable("echo_allow_crash", "OCRGW_ECHO_ALLOW_CRASH", mf.Integer(validate=validate.OneOf([0, 1])), "0 or 1"),
    Variable(
        "default_model",
        "OCRGW_DEFAULT_MODEL",
        mf.String(validate=validate.OneOf(sorted(MODELS))),
        f"one of {', '.join(MODELS)}",
    ),
    _count("engine_threads", "OCRGW_ENGINE_THREADS"),
    Variable(
        "preload_models",
        "OCRGW_PRELOAD_MODELS",
        _CommaSeparatedModels(),
        f"a comma-separated list of {', '.join(MODELS)}",
    ),
    Variable(
        "webhook_secret",
        "OCRGW_WEBHOOK_SECRET",
        mf.String(validate=validate.Length(min=MIN_WEBHOOK_SECRET_CHARS)),
        f"at least {MIN_WEBHOOK_SECRET_CHARS} characters",
        secret=True,
    ),
    Variable(
        "webhook_allow_private",
        "OCRGW_WEBHOOK_ALLOW_PRIVATE",
        mf.Integer(validate=validate.OneOf([0, 1])),
        "0 or 1",
    ),
    _seconds("webhook_timeout", "OCRGW_WEBHOOK_TIMEOUT"),
    _seconds("webhook_backoff", "OCRGW_WEBHOOK_BACKOFF"),
    _seconds("webhook_backoff_max", "OCRGW_WEBHOOK_BACKOFF_MAX"),
    _seconds("webhook_give_up_after", "OCRGW_WEBHOOK_GIVE_UP_AFTER"),
)


def _schema() -> Schema:
    # Each field reads its variable's name and fills the setting of the same field name.
    for var in VARIABLES:
        var.parse.data_key = var.env
    schema_class = Schema.from_dict({var.setting: var.parse for var in VARIABLES}, name="SettingsSchema")
    return schema_class(unknown=EXCLUDE)


_SCHEMA = _schema()
