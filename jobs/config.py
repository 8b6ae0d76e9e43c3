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

import ipaddress
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from marshmallow import EXCLUDE, Schema, ValidationError, validate
from marshmallow import fields as mf

from jobs.api_keys import ApiKey, BadKeys, parse_plain_keys, read_keys_file, require_distinct
from jobs.errors import OcrgwError
from jobs.registry import BUILT_IN_MODELS, DEFAULT_MODEL, MODELS, RemoteModel

DEFAULT_REDIS_URL = "redis://localhost:6379/0"
DEFAULT_LEASE_SECONDS = 30.0
DEFAULT_SWEEP_INTERVAL_SECONDS = 1.0
MIN_SWEEP_INTERVAL_SECONDS = 0.1
DEFAULT_MAX_ATTEMPTS = 3
DEFAULT_JOB_TIMEOUT_SECONDS = 300.0
DEFAULT_MAX_CHILDREN = 1000
DEFAULT_IDEMPOTENCY_TTL_SECONDS = 24 * 3600
# A finished root (single job or group) and every key of it are deleted this long after it ended.
DEFAULT_RESULT_TTL_SECONDS = 7 * 24 * 3600
DEFAULT_MAX_BODY_BYTES = 64 * 1024 * 1024
DEFAULT_MAX_PAGES = 10_000
# Pixels of one page image.  50 Mpx takes a 48 Mpx phone photo, an A4 page
# scanned at 600 dpi (35 Mpx) or an A3 one at 400 dpi (31 Mpx), and bounds a
# decoded page to 150 MB as RGB (a worker holds two or three copies of it);
# an image beyond that is a poster, a map or a decompression bomb.
DEFAULT_MAX_IMAGE_PIXELS = 50_000_000
# No setting goes beyond 1 Gpx (3 GB a page as RGB); Pillow's own check is set to it.
MAX_IMAGE_PIXELS_LIMIT = 1_000_000_000
# The address space of a worker's pool process (and of the tesseract it
# starts), in MiB: past it an allocation fails and the job with it
# (``resource_limit``), not the host.  0 sets no limit.
DEFAULT_WORKER_MEMORY_LIMIT_MB = 4096
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
# A root's call records are not indexed: they lapse on their own, and must be gone when the root is.
MIN_RESULT_TTL_SECONDS = CALL_RECORD_MS // 1000
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
# OCRGW_MIN_REPLICAS: how long the gateway waits for a creation to reach them before it answers 503.
DEFAULT_REPLICA_WAIT_MS = 2000
SENTINEL_BROKER_SCHEME = "sentinel"
UPSTREAM_URL_SCHEMES = frozenset({"http", "https"})
# A remote model's name becomes a Celery queue's (ocr.<name>) and a model name of the API.
_REMOTE_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,62}")
_UPSTREAM_MODEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,62}")
# What an Authorization header can carry: visible ASCII, no spaces.
_BEARER_KEY = re.compile(r"[\x21-\x7e]{1,4096}")
# Logs: the plain text lines gunicorn and Celery write by default, or one JSON object per line.
LOG_FORMATS = ("plain", "json")
# Where a Celery worker process serves its metrics when given a port: every interface, as the gateway listens.
DEFAULT_METRICS_ADDRESS = "0.0.0.0"
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
    # Seconds a finished root is kept; an Idempotency-Key is kept no longer (see from_env).
    result_ttl: int = DEFAULT_RESULT_TTL_SECONDS
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    max_pages: int = DEFAULT_MAX_PAGES
    max_image_pixels: int = DEFAULT_MAX_IMAGE_PIXELS
    worker_memory_limit_mb: int = DEFAULT_WORKER_MEMORY_LIMIT_MB
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
    # API keys, as sha256 digests: from the keys file, and (development) from plain keys in the
    # environment.  None at all: the gateway serves one tenant, ``default``, to anyone.
    file_api_keys: tuple[ApiKey, ...] = ()
    plain_api_keys: tuple[ApiKey, ...] = ()
    # Models served by an upstream ocrgw (their keys apart, below): see ``remotes``.
    remote_models: tuple[RemoteModel, ...] = ()
    # (model name, bearer key) of the remote models whose upstream wants one; kept out of logs.
    remote_keys: tuple[tuple[str, str], ...] = field(default=(), repr=False)
    # Redis Sentinel: (host, port) of each sentinel, and the name of the master they watch.  With
    # them the store finds its primary through the sentinels, and REDIS_URL gives only its
    # database number, password and TLS settings (see jobs.connections).
    redis_sentinels: tuple[tuple[str, int], ...] = ()
    redis_sentinel_master: str = ""
    # The sentinels' own password (their requirepass), if they have one; kept out of logs.
    redis_sentinel_password: str = field(default="", repr=False)
    # A creation is acknowledged (202) only once WAIT saw it on this many replicas.
    min_replicas: int = 0
    replica_wait_ms: int = DEFAULT_REPLICA_WAIT_MS

    def __post_init__(self):
        undeclared = sorted({name for name, _ in self.remote_keys} - {m.name for m in self.remote_models})
        if undeclared:
            raise InvalidSettings(
                f"OCRGW_REMOTE_KEYS_FILE: has keys for {', '.join(undeclared)}, not declared in OCRGW_REMOTE_MODELS"
            )

    log_format: str = "plain"
    # Celery task events (what Flower shows) from the start; off, Flower turns them on while it runs.
    task_events: bool = False
    # The ports the Celery processes serve /metrics on, by role; 0: none (see observability.celery_hooks).
    worker_metrics_port: int = 0
    coordinator_metrics_port: int = 0
    webhooks_metrics_port: int = 0
    metrics_address: str = DEFAULT_METRICS_ADDRESS
    # Where each process keeps its metrics files (prometheus_client's multiprocess mode); '': the temp dir's.
    metrics_dir: str = ""

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
                + (f" ({error.messages_dict[var.env][0]})" if var.explains else "")
                for var in VARIABLES
                if var.env in error.messages_dict
            ]
            raise InvalidSettings("; ".join(problems)) from None
        _check_sentinels(values, raw)
        if values.get("redis_sentinels") and "broker_url" not in values:
            values["broker_url"] = sentinel_broker_url(values["redis_sentinels"], values.get("redis_url", ""))
        values.setdefault("broker_url", values.get("redis_url", DEFAULT_REDIS_URL))
        try:
            require_distinct(values.get("file_api_keys", ()), values.get("plain_api_keys", ()))
        except BadKeys:
            raise InvalidSettings("OCRGW_API_KEYS: a key is also in OCRGW_API_KEYS_FILE") from None
        settings = cls(**values)
        _check_idempotency_within_retention(settings, raw)
        _check_tls_verification(raw)
        return settings

    @property
    def api_keys(self) -> tuple[ApiKey, ...]:
        return self.file_api_keys + self.plain_api_keys

    @property
    def lease_ms(self) -> int:
        return int(self.lease_seconds * 1000)

    @property
    def remotes(self) -> tuple[RemoteModel, ...]:
        """The remote models, each with its upstream's bearer key ('' for none)."""
        keys = dict(self.remote_keys)
        return tuple(replace(model, key=keys.get(model.name, "")) for model in self.remote_models)

    @property
    def result_ttl_ms(self) -> int:
        return self.result_ttl * 1000

    @property
    def broker_on_sentinels(self) -> bool:
        """True when Celery's broker is a Redis found through sentinels (kombu's sentinel transport)."""
        return self.broker_url.startswith(f"{SENTINEL_BROKER_SCHEME}://")


def sentinel_broker_url(sentinels: tuple[tuple[str, int], ...], redis_url: str) -> str:
    """kombu's URL of a Redis broker behind ``sentinels``: ``sentinel://[:password@]host:port/db;...``.

    The password and database are REDIS_URL's, as for the store; kombu reads
    them from the first entry and the master's name from the transport options.
    """
    parts = urlsplit(redis_url or DEFAULT_REDIS_URL)
    auth = f"{parts.username or ''}:{parts.password}@" if parts.password else ""
    db = parts.path.strip("/") or "0"
    return ";".join(f"{SENTINEL_BROKER_SCHEME}://{auth}{host}:{port}/{db}" for host, port in sentinels)


def _check_sentinels(values: Mapping[str, Any], raw: Mapping[str, str]) -> None:
    """The sentinels and their master's name go together; so do a sentinel:// broker and the name."""
    has_sentinels, has_master = bool(values.get("redis_sentinels")), bool(values.get("redis_sentinel_master"))
    if has_sentinels and not has_master:
        raise InvalidSettings("OCRGW_REDIS_SENTINEL_MASTER: must name the master the sentinels watch, got nothing")
    if has_master and not has_sentinels:
        raise InvalidSettings(
            "OCRGW_REDIS_SENTINELS: must list the sentinels of OCRGW_REDIS_SENTINEL_MASTER, got nothing"
        )
    if raw.get("CELERY_BROKER_URL", "").startswith(f"{SENTINEL_BROKER_SCHEME}://") and not has_master:
        raise InvalidSettings("OCRGW_REDIS_SENTINEL_MASTER: a sentinel:// CELERY_BROKER_URL needs the master's name")
    if raw.get("REDIS_URL", "").startswith("rediss://") and has_sentinels and "CELERY_BROKER_URL" not in raw:
        # kombu's sentinel transport would reach the master without TLS: better to say so than to do it.
        raise InvalidSettings(
            "CELERY_BROKER_URL: must be set when the master behind OCRGW_REDIS_SENTINELS takes TLS only "
            "(the sentinel broker derived from REDIS_URL would not use TLS), got nothing"
        )
    if raw.get("REDIS_URL", "").startswith("unix://") and has_sentinels:
        raise InvalidSettings(
            "REDIS_URL: with OCRGW_REDIS_SENTINELS it must be a redis:// or rediss:// URL, got a socket"
        )


def _check_idempotency_within_retention(settings: Settings, raw: Mapping[str, str]) -> None:
    """A key's record lives ``idempotency_ttl`` from its job's creation (or redrive), the job
    ``result_ttl`` from its end, which is later: so a replay never names a deleted job."""
    if settings.idempotency_ttl <= settings.result_ttl:
        return
    given = raw.get("OCRGW_IDEMPOTENCY_TTL")
    got = repr(given) if given is not None else f"its default, {settings.idempotency_ttl}"
    raise InvalidSettings(f"OCRGW_IDEMPOTENCY_TTL: must be at most OCRGW_RESULT_TTL ({settings.result_ttl}), got {got}")


def _check_tls_verification(raw: Mapping[str, str]) -> None:
    """A rediss:// URL must say how the server's certificate is checked: without it redis-py
    verifies it and kombu (the broker) does not, so the two would disagree silently."""
    for env in ("REDIS_URL", "CELERY_BROKER_URL"):
        url = raw.get(env, "")
        if url.startswith("rediss://") and "ssl_cert_reqs" not in parse_qs(urlsplit(url).query):
            shown = _PASSWORD_IN_URL.sub(":***@", url)
            raise InvalidSettings(
                f"{env}: a rediss:// URL must name ssl_cert_reqs (required, optional or none), got {shown!r}"
            )


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
    # What exactly is wrong follows, from the parser (a line of a file, say); never a secret.
    explains: bool = False

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


class _ApiKeys(mf.Field):
    """API keys, read by ``read`` (a keys file's path, or plain keys); its ``BadKeys`` says what is wrong."""

    def __init__(self, read: Callable[[str], tuple[ApiKey, ...]]):
        super().__init__()
        self.read = read

    def _deserialize(self, value: Any, attr: str | None, data: Mapping[str, Any] | None, **kwargs: Any):
        try:
            return self.read(str(value))
        except BadKeys as error:
            raise ValidationError(str(error)) from None


class _RemoteModels(mf.Field):
    """``cloudocr=tesseract@http://ocr.example:8000, ...`` -> (RemoteModel, ...), each name new and given once."""

    def _deserialize(self, value: Any, attr: str | None, data: Mapping[str, Any] | None, **kwargs: Any):
        remotes: list[RemoteModel] = []
        for entry in (entry.strip() for entry in str(value).split(",")):
            if not entry:
                continue
            name, _, rest = entry.partition("=")
            upstream_model, _, url = rest.partition("@")
            name, upstream_model, url = name.strip(), upstream_model.strip(), url.strip().rstrip("/")
            if not (_REMOTE_NAME.fullmatch(name) and _UPSTREAM_MODEL.fullmatch(upstream_model)):
                raise ValidationError("malformed entry")
            _upstream_url(url)
            if name in BUILT_IN_MODELS or any(remote.name == name for remote in remotes):
                raise ValidationError("name taken")
            remotes.append(RemoteModel(name, upstream_model, url))
        return tuple(remotes)


def _upstream_url(url: str) -> None:
    """An http(s) URL of a host, without credentials (they go in the keys file), query or fragment."""
    parts = urlsplit(url)
    try:
        parts.port  # noqa: B018 - raises on a port that is no number
    except ValueError:
        raise ValidationError("bad port") from None
    if parts.scheme not in UPSTREAM_URL_SCHEMES or not parts.hostname or "@" in parts.netloc:
        raise ValidationError("not an upstream URL")
    if parts.query or parts.fragment or "?" in url or "#" in url:
        raise ValidationError("not an upstream URL")


class _RemoteKeysFile(mf.Field):
    """The path of a file of ``name=key`` lines (blank lines and ``#`` comments skipped) -> ((name, key), ...)."""

    def _deserialize(self, value: Any, attr: str | None, data: Mapping[str, Any] | None, **kwargs: Any):
        try:
            text = Path(str(value)).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            raise ValidationError("unreadable") from None
        keys: dict[str, str] = {}
        for line in (line.strip() for line in text.splitlines()):
            if not line or line.startswith("#"):
                continue
            name, _, key = (part.strip() for part in line.partition("="))
            if not _REMOTE_NAME.fullmatch(name) or not _BEARER_KEY.fullmatch(key) or name in keys:
                raise ValidationError("malformed line")  # never repeated: the line holds a key
            keys[name] = key
        return tuple(sorted(keys.items()))


class _Sentinels(mf.Field):
    """``host:port, host:port`` -> (("host", port), ...); at least one, each given once."""

    def _deserialize(self, value: Any, attr: str | None, data: Mapping[str, Any] | None, **kwargs: Any):
        sentinels: list[tuple[str, int]] = []
        for entry in (entry.strip() for entry in str(value).split(",")):
            if not entry:
                continue
            host, _, port = entry.rpartition(":")
            host = host.strip().removeprefix("[").removesuffix("]")
            if not host or not port.strip().isdigit() or not 0 < int(port) < 65536:
                raise ValidationError("malformed entry")
            if (host, int(port)) in sentinels:
                raise ValidationError("given twice")
            sentinels.append((host, int(port)))
        if not sentinels:
            raise ValidationError("no sentinel")
        return tuple(sentinels)


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


def _port(setting: str, env: str) -> Variable:
    """A TCP port to listen on, 0 for none."""
    return Variable(setting, env, mf.Integer(validate=validate.Range(min=0, max=65535)), "a port (1-65535), or 0")


def _ip_address(text: str) -> None:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        raise ValidationError("not an IP address") from None


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
    Variable(
        "result_ttl",
        "OCRGW_RESULT_TTL",
        mf.Integer(validate=validate.Range(min=MIN_RESULT_TTL_SECONDS)),
        f"a whole number of seconds >= {MIN_RESULT_TTL_SECONDS}",
    ),
    _count("max_body_bytes", "OCRGW_MAX_BODY_BYTES", " of bytes"),
    _count("max_pages", "OCRGW_MAX_PAGES"),
    Variable(
        "max_image_pixels",
        "OCRGW_MAX_IMAGE_PIXELS",
        mf.Integer(validate=validate.Range(min=1, max=MAX_IMAGE_PIXELS_LIMIT)),
        f"a whole number of pixels from 1 to {MAX_IMAGE_PIXELS_LIMIT}",
    ),
    Variable(
        "worker_memory_limit_mb",
        "OCRGW_WORKER_MEMORY_LIMIT_MB",
        mf.Integer(validate=validate.Range(min=0)),
        "a whole number of MiB >= 0 (0: no limit)",
    ),
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
    Variable(
        "file_api_keys",
        "OCRGW_API_KEYS_FILE",
        _ApiKeys(read_keys_file),
        "a readable file of tenant:sha256-hex-of-key[:policy,...] lines",
        explains=True,
    ),
    Variable(
        "plain_api_keys",
        "OCRGW_API_KEYS",
        _ApiKeys(parse_plain_keys),
        "a comma-separated list of tenant:key",
        secret=True,
        explains=True,
    ),
    Variable(
        "remote_models",
        "OCRGW_REMOTE_MODELS",
        _RemoteModels(),
        "a comma-separated list of name=model@http(s)://host[:port][/path], each name new "
        f"(not {', '.join(sorted(BUILT_IN_MODELS))}) and given once, no credentials in the URL",
        hides_password=True,
    ),
    Variable(
        "remote_keys",
        "OCRGW_REMOTE_KEYS_FILE",
        _RemoteKeysFile(),
        "a readable UTF-8 file of name=key lines (# comments), each name once, each key visible ASCII",
    ),
    Variable("log_format", "OCRGW_LOG_FORMAT", mf.String(validate=validate.OneOf(LOG_FORMATS)), "plain or json"),
    Variable(
        "task_events", "OCRGW_TASK_EVENTS", mf.Boolean(truthy={"true", "1"}, falsy={"false", "0"}), "true or false"
    ),
    _port("worker_metrics_port", "OCRGW_WORKER_METRICS_PORT"),
    _port("coordinator_metrics_port", "OCRGW_COORDINATOR_METRICS_PORT"),
    _port("webhooks_metrics_port", "OCRGW_WEBHOOKS_METRICS_PORT"),
    Variable("metrics_address", "OCRGW_METRICS_ADDRESS", mf.String(validate=_ip_address), "an IP address"),
    Variable("metrics_dir", "OCRGW_METRICS_DIR", mf.String(validate=validate.Regexp("^/")), "an absolute path"),
    Variable(
        "redis_sentinels",
        "OCRGW_REDIS_SENTINELS",
        _Sentinels(),
        "a comma-separated list of host:port, each given once",
        explains=True,
    ),
    Variable(
        "redis_sentinel_master",
        "OCRGW_REDIS_SENTINEL_MASTER",
        mf.String(validate=validate.Regexp(r"[A-Za-z0-9._-]{1,128}\Z")),
        "a master name as the sentinels know it (letters, digits, . _ -)",
    ),
    Variable(
        "redis_sentinel_password",
        "OCRGW_REDIS_SENTINEL_PASSWORD",
        mf.String(),
        "the sentinels' password",
        secret=True,
    ),
    Variable(
        "min_replicas",
        "OCRGW_MIN_REPLICAS",
        mf.Integer(validate=validate.Range(min=0)),
        "a whole number >= 0",
    ),
    Variable(
        "replica_wait_ms",
        "OCRGW_REPLICA_WAIT_MS",
        mf.Integer(validate=validate.Range(min=1)),
        "a whole number of milliseconds >= 1",
    ),
)


def _schema() -> Schema:
    # Each field reads its variable's name and fills the setting of the same field name.
    for var in VARIABLES:
        var.parse.data_key = var.env
    schema_class = Schema.from_dict({var.setting: var.parse for var in VARIABLES}, name="SettingsSchema")
    return schema_class(unknown=EXCLUDE)


_SCHEMA = _schema()
