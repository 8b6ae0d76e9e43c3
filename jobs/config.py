"""Settings, read once from the environment, with every default named and in its unit."""

import os
from dataclasses import dataclass, fields

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
# How long a claim or complete remembers what it answered, for the same call
# sent again after a dropped connection: the store's client retries for about
# ten seconds, so a minute is plenty.
CALL_RECORD_MS = 60_000
ENV_PREFIX = "OCRGW_"


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
    # 1 lets the echo model's ``crash`` option kill the worker process that
    # runs it (fault-injection tests); 0 refuses that option.
    echo_allow_crash: int = 0
    default_model: str = "tesseract"

    @classmethod
    def from_env(cls, environ=None) -> "Settings":
        env = os.environ if environ is None else environ
        values = {}
        for f in fields(cls):
            raw = env.get(ENV_PREFIX + f.name.upper())
            if raw is not None and raw != "":
                values[f.name] = type(f.default)(raw)
        values["redis_url"] = env.get("REDIS_URL") or DEFAULT_REDIS_URL
        values["broker_url"] = env.get("CELERY_BROKER_URL") or values["redis_url"]
        sweep = values.get("sweep_interval", DEFAULT_SWEEP_INTERVAL_SECONDS)
        values["sweep_interval"] = max(MIN_SWEEP_INTERVAL_SECONDS, sweep)
        return cls(**values)

    @property
    def lease_ms(self) -> int:
        return int(self.lease_seconds * 1000)
