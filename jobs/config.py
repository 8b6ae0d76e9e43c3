"""Settings, read once from the environment: each declared once, with its variable, kind, default and meaning.

``Settings.from_env`` is the one place where ocrgw reads its configuration.
Each field of ``Settings`` is one ``setting(...)`` declaration (see
``jobs.settings_declaration``), and the rest follows from it: a value ocrgw
cannot use stops the process at start with one ``InvalidSettings`` that
names every such variable, what it expects and what it got, e.g.
``OCRGW_LEASE_SECONDS: must be a number of seconds > 0, got 'abc'``; an
unset or empty variable takes its default; a secret is never shown, and may
be read from the file its ``_FILE`` variable names; and the table of
docs/operating/configuration.md is ``configuration_table()``.

The Procfile's own variables (``PORT``, ``OCRGW_WORKER_QUEUES``,
``OCRGW_WORKER_CONCURRENCY``, ...) are not read here: the shell turns them
into command-line options, which gunicorn and celery check themselves.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from marshmallow import ValidationError, validate
from marshmallow import fields as mf

from jobs.api_keys import ApiKey, BadKeys, parse_plain_keys, read_keys_file, require_distinct, tenant_weights
from jobs.errors import OcrgwError
from jobs.keys import MAX_BUCKETS
from jobs.registry import BUILT_IN_MODELS, DEFAULT_MODEL, MODELS, RemoteModel
from jobs.settings_declaration import (
    Given,
    Kind,
    absolute_path,
    as_text,
    boolean,
    declared,
    ip_address,
    markdown_table,
    one_of,
    port,
    read,
    seconds,
    setting,
    switch,
    url,
    whole_number,
    without_password,
)
from jobs.webhook_secrets import BadSecrets, read_secrets_file

# A host name or an IP address (an IPv6 one without brackets), as OCRGW_ALLOWED_HOSTS lists them.
_ALLOWED_HOST = re.compile(r"[a-z0-9_:.-]{1,253}")
# No setting goes beyond 1 Gpx (3 GB a page as RGB); Pillow's own check is set to it.
MAX_IMAGE_PIXELS_LIMIT = 1_000_000_000
# How long a claim or complete remembers what it answered, for the same call
# sent again after a dropped connection: the store's client retries for about
# ten seconds, so a minute is plenty.
CALL_RECORD_MS = 60_000
# A root's call records are not indexed: they lapse on their own, and must be gone when the root is.
MIN_RESULT_TTL_SECONDS = CALL_RECORD_MS // 1000
# A webhook secret shorter than this is refused: an HMAC key is only as strong as it is long.
MIN_WEBHOOK_SECRET_CHARS = 16
# The same for the token /metrics asks for: sent in a header, so visible ASCII only.
MIN_METRICS_TOKEN_CHARS = 16
_REDIS_SCHEMES = ("redis", "rediss", "unix")
# OCRGW_STORE_BUCKETS's default with OCRGW_REDIS_CLUSTER: divides evenly among 1, 2, 3, 4, 6, 8 and 12 primaries.
CLUSTER_BUCKETS = 24
REDIS_URL_SCHEMES = frozenset(_REDIS_SCHEMES)
SENTINEL_BROKER_SCHEME = "sentinel"
UPSTREAM_URL_SCHEMES = frozenset({"http", "https"})
# A remote model's name becomes a Celery queue's (ocr.<name>) and a model name of the API.
_REMOTE_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,62}")
_UPSTREAM_MODEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,62}")
# What an Authorization header can carry: visible ASCII, no spaces.
_BEARER_KEY = re.compile(r"[\x21-\x7e]{1,4096}")
# Logs: the plain text lines gunicorn and Celery write by default, or one JSON object per line.
LOG_FORMATS = ("plain", "json")
# The settings that hold API keys: set, each must name one (see _keys_naming_none).
_KEY_SETTINGS = ("file_api_keys", "plain_api_keys")


class InvalidSettings(OcrgwError, ValueError):
    """Raised when an environment variable holds a value ocrgw cannot use."""

    code = "invalid_settings"

    def __init__(self, *problems: str):
        super().__init__("; ".join(problems))
        # One line each, naming its variable.
        self.problems = problems


# -- the kinds of value only one setting takes ---------------------------------------------------


class _CommaSeparatedModels(mf.Field):
    """``tesseract, paddleocr`` -> ("tesseract", "paddleocr"); every name a known model."""

    def _deserialize(self, value: Any, attr: str | None, data: Mapping[str, Any] | None, **kwargs: Any):
        names = tuple(name.strip() for name in str(value).split(",") if name.strip())
        if any(name not in MODELS for name in names):
            raise ValidationError("unknown model")
        return names


class _ExecutionProviders(mf.Field):
    """``CUDAExecutionProvider, CPUExecutionProvider`` -> the tuple, in order of preference; each a name ONNX
    Runtime knows (whether this host's build has it is the engine's check when it loads)."""

    def _deserialize(self, value: Any, attr: str | None, data: Mapping[str, Any] | None, **kwargs: Any):
        names = tuple(name.strip() for name in str(value).split(",") if name.strip())
        if not names or len(set(names)) != len(names):
            raise ValidationError("empty or repeated")
        # Imported only when the variable is set: the default needs no check, and ONNX Runtime is large.
        from onnxruntime import get_all_providers

        unknown = [name for name in names if name not in get_all_providers()]
        if unknown:
            raise ValidationError(f"unknown to ONNX Runtime: {', '.join(unknown)}")
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


class _WebhookSecrets(mf.Field):
    """The path of the webhook secrets file -> ((tenant, secret), ...); its ``BadSecrets`` says what is wrong."""

    def _deserialize(self, value: Any, attr: str | None, data: Mapping[str, Any] | None, **kwargs: Any):
        try:
            return read_secrets_file(str(value))
        except BadSecrets as error:
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


class _AllowedHosts(mf.Field):
    """``ocr.example.org, .example.net`` -> ("ocr.example.org", ".example.net"); ``*`` alone for any host."""

    def _deserialize(self, value: Any, attr: str | None, data: Mapping[str, Any] | None, **kwargs: Any):
        names = [name.strip().lower() for name in str(value).split(",") if name.strip()]
        if "*" in names and len(names) > 1:
            raise ValidationError("* stands alone")
        for name in names:
            bare = name.removeprefix(".").rstrip(".").removeprefix("[").removesuffix("]")
            if name != "*" and not _ALLOWED_HOST.fullmatch(bare):
                raise ValidationError(f"{name!r} is no host name")
        return tuple(names)


class _HostPorts(mf.Field):
    """``host:port, host:port`` -> (("host", port), ...); at least one, each given once (sentinels, cluster nodes)."""

    def __init__(self, what: str):
        super().__init__()
        self.what = what

    def _deserialize(self, value: Any, attr: str | None, data: Mapping[str, Any] | None, **kwargs: Any):
        places: list[tuple[str, int]] = []
        for entry in (entry.strip() for entry in str(value).split(",")):
            if not entry:
                continue
            host, _, port = entry.rpartition(":")
            host = host.strip().removeprefix("[").removesuffix("]")
            if not host or not port.strip().isdigit() or not 0 < int(port) < 65536:
                raise ValidationError("malformed entry")
            if (host, int(port)) in places:
                raise ValidationError("given twice")
            places.append((host, int(port)))
        if not places:
            raise ValidationError(f"no {self.what}")
        return tuple(places)


def _host_ports(what: str) -> Kind:
    return Kind(
        _HostPorts(what),
        "a comma-separated list of host:port, each given once",
        "`host:port,host:port,...`",
        explains=True,
    )


_REMOTE_MODELS = Kind(
    _RemoteModels(),
    "a comma-separated list of name=model@http(s)://host[:port][/path], each name new "
    f"(not {', '.join(sorted(BUILT_IN_MODELS))}) and given once, no credentials in the URL",
    "`name=model@http(s)://host[:port][/path]`, comma-separated",
    hides_password=True,
)
_REMOTE_KEYS_FILE = Kind(
    _RemoteKeysFile(),
    "a readable UTF-8 file of name=key lines (# comments), each name once, each key visible ASCII",
    "a path",
    holds_secrets=True,
)


# -- the settings ---------------------------------------------------------------------------------


@dataclass(frozen=True, repr=False)
class Settings:
    """Every setting of ocrgw, in the order of docs/operating/configuration.md's table (generated from them)."""

    redis_url: str = setting(
        "REDIS_URL",
        url(_REDIS_SCHEMES),
        "redis://localhost:6379/0",
        "the job store (and broker); a password and TLS go in it (see Security)",
        secret=True,
        accepts="`redis://`, `rediss://` (with `ssl_cert_reqs`), `unix://` URL",
    )
    # '' until from_env fills it: REDIS_URL's, or one through the sentinels.
    broker_url: str = setting(
        "CELERY_BROKER_URL", url(), "", "the Celery broker, if split off", secret=True, default_doc="`REDIS_URL`"
    )
    lease_seconds: float = setting(
        "OCRGW_LEASE_SECONDS", seconds(), 30.0, "a claimed job's lease, renewed by a heartbeat every third of it"
    )
    sweep_interval: float = setting("OCRGW_SWEEP_INTERVAL", seconds(at_least=0.1), 1.0, "seconds between sweeps")
    gauge_interval: float = setting(
        "OCRGW_GAUGE_INTERVAL",
        seconds(at_least=0.1),
        5.0,
        "seconds between the coordinator's counts of the job gauges `/metrics` serves: how late they may be",
    )
    max_attempts: int = setting(
        "OCRGW_MAX_ATTEMPTS", whole_number(), 3, "attempts per job (lease expiries and transient errors)"
    )
    retry_backoff: float = setting(
        "OCRGW_RETRY_BACKOFF", seconds(at_least=0), 1.0, "seconds before the 2nd attempt; doubles each time"
    )
    # A worker that finishes a job takes its model's next ready job itself (any
    # group's, in the order they were queued), without a Celery message, for up
    # to this long from the task's start; then it goes back to its queues, where
    # a wake-up brings it to the next.  What a tiny job saves is a broker round
    # trip; a time budget keeps one task from running without end.
    keep_slot_seconds: float = setting(
        "OCRGW_KEEP_SLOT_SECONDS",
        seconds(at_least=0),
        1.0,
        "how long a worker goes on from job to job itself, taking the next ready one with no message; `0`: never",
    )
    job_timeout: float = setting(
        "OCRGW_JOB_TIMEOUT", seconds(), 300.0, "seconds a job may run before it fails with `timeout`"
    )
    # The claim transition makes the duplicate message harmless, so erring short is cheap.
    requeue_seconds: float = setting(
        "OCRGW_REQUEUE_SECONDS", seconds(), 60.0, "a queued job unclaimed this long gets a fresh message"
    )
    max_children: int = setting("OCRGW_MAX_CHILDREN", whole_number(), 1000, "children per group")
    max_body_bytes: int = setting(
        "OCRGW_MAX_BODY_BYTES", whole_number(unit="bytes"), 64 * 1024 * 1024, "request body limit"
    )
    max_pages: int = setting(
        "OCRGW_MAX_PAGES",
        whole_number(),
        10_000,
        "largest accepted `pages`, and the most pages a document may have (see Security)",
    )
    # 50 Mpx takes a 48 Mpx phone photo, an A4 page scanned at 600 dpi (35 Mpx)
    # or an A3 one at 400 dpi (31 Mpx), and bounds a decoded page to 150 MB as
    # RGB (a worker holds two or three copies of it); an image beyond that is a
    # poster, a map or a decompression bomb.
    max_image_pixels: int = setting(
        "OCRGW_MAX_IMAGE_PIXELS",
        whole_number(1, MAX_IMAGE_PIXELS_LIMIT, unit="pixels"),
        50_000_000,
        "pixels of one page image (see Security)",
    )
    # A request's documents are checked before anything is stored, in the gateway thread that answers it;
    # these bound what one request may have that thread spend on them (gateway.document_checks).
    inspection_seconds: float = setting(
        "OCRGW_INSPECTION_SECONDS",
        seconds(),
        1.0,
        "wall time one request's document checks may take in all (opening each PDF, reading image headers); "
        "past it `413 inspection_budget_exceeded` (see Security)",
    )
    inspection_max_documents: int = setting(
        "OCRGW_INSPECTION_MAX_DOCUMENTS",
        whole_number(),
        1000,
        "distinct documents one request may have checked (identical bytes are checked once); past it "
        "`413 inspection_budget_exceeded`",
    )
    # Past it an allocation fails and the job with it (``resource_limit``), not the host.
    worker_memory_limit_mb: int = setting(
        "OCRGW_WORKER_MEMORY_LIMIT_MB",
        whole_number(0, unit="MiB", zero="no limit"),
        4096,
        "address space of each worker pool process (and of the `tesseract` it starts), in MiB; `0`: no limit "
        "(see Security)",
    )
    # An Idempotency-Key is kept no longer than the job it names (see _check_idempotency_within_retention).
    idempotency_ttl: int = setting(
        "OCRGW_IDEMPOTENCY_TTL",
        whole_number(unit="seconds"),
        24 * 3600,
        "seconds an Idempotency-Key is remembered",
        accepts=">= 1, at most `OCRGW_RESULT_TTL`",
    )
    # A finished root (single job or group) and every key of it are deleted this long after it ended.
    result_ttl: int = setting(
        "OCRGW_RESULT_TTL",
        whole_number(MIN_RESULT_TTL_SECONDS, unit="seconds"),
        7 * 24 * 3600,
        "seconds an ended job or group is kept, with its documents, results and events; then the sweep deletes "
        "it whole (see Security)",
        default_doc="`604800` (7 days)",
    )
    # Usage records (jobs.usage) outlive the jobs they count: billing looks back further than results are kept.
    usage_retention: int = setting(
        "OCRGW_USAGE_RETENTION",
        whole_number(unit="seconds"),
        400 * 24 * 3600,
        "seconds a tenant's usage of a day is kept after that day ends (UTC), whatever the jobs' retention",
        default_doc="`34560000` (400 days)",
    )
    # Bounds the time a script holds Redis and the messages one POST publishes
    # for an uncapped group; the rest is released by completions and the sweep.
    release_batch: int = setting("OCRGW_RELEASE_BATCH", whole_number(), 256, "children one transition releases at most")
    sweep_batch: int = setting(
        "OCRGW_SWEEP_BATCH",
        whole_number(),
        500,
        "leases / queued jobs / parents / webhooks / ended roots to delete one sweep handles per index",
    )
    # The fair share between tenants rests on it (docs/security/fair-share.md).
    tenant_max_inflight: int = setting(
        "OCRGW_TENANT_MAX_INFLIGHT",
        whole_number(0, 1_000_000, zero="no cap"),
        0,
        "children one tenant may have queued or processing at once, across all its groups (see Fair share); "
        "`0`: no cap",
    )
    # Who may use the interactive lane, and how much of it (docs/security/fair-share.md): a key's own
    # interactive_max_inflight policy overrides it.
    interactive_max_inflight: int = setting(
        "OCRGW_INTERACTIVE_MAX_INFLIGHT",
        whole_number(0, 1_000_000, zero="0: may not use it"),
        16,
        "interactive jobs one tenant may have queued or processing at once, for a key without an "
        "`interactive_max_inflight` policy and with no keys configured (see Fair share); a group counts as many "
        "as its children; `0`: the interactive lane is refused",
    )
    # New jobs get 503, /readyz 503, polls as usual: load balancers take the
    # gateway out of rotation before it stops listening.
    drain_seconds: float = setting(
        "OCRGW_DRAIN_SECONDS",
        seconds(at_least=0),
        5.0,
        "how long a gateway keeps answering after SIGTERM (at most half of gunicorn's graceful timeout)",
    )
    # A job's live stream (GET /jobs/{id}/events as text/event-stream, gateway.streaming): what bounds them.
    stream_max_per_process: int = setting(
        "OCRGW_STREAM_MAX_PER_PROCESS",
        whole_number(),
        1000,
        "live event streams one gateway process keeps open at once; past it a new one is `429 too_many_streams`",
    )
    stream_max_per_tenant: int = setting(
        "OCRGW_STREAM_MAX_PER_TENANT",
        whole_number(),
        100,
        "live event streams one tenant may keep open at once, on every gateway together; past it "
        "`429 too_many_streams`",
    )
    stream_heartbeat_seconds: float = setting(
        "OCRGW_STREAM_HEARTBEAT_SECONDS",
        seconds(at_least=0.1),
        15.0,
        "seconds between the comments a quiet live event stream sends, so that proxies keep it open",
    )
    stream_max_seconds: float = setting(
        "OCRGW_STREAM_MAX_SECONDS",
        seconds(at_least=1),
        600.0,
        "seconds a live event stream stays open at most; then it ends cleanly and the client reconnects "
        "with `Last-Event-ID`",
    )
    stream_poll_seconds: float = setting(
        "OCRGW_STREAM_POLL_SECONDS",
        seconds(at_least=0.05),
        0.5,
        "seconds between a gateway process's looks at the jobs its live event streams watch",
    )
    default_model: str = setting(
        "OCRGW_DEFAULT_MODEL", one_of(tuple(MODELS)), DEFAULT_MODEL, "the model of a request that names none"
    )
    # Several worker processes share the host's cores: one ONNX Runtime thread each by default.
    engine_threads: int = setting(
        "OCRGW_ENGINE_THREADS",
        whole_number(),
        1,
        "ONNX Runtime threads per worker process (at most the core count)",
    )
    paddleocr_providers: tuple[str, ...] = setting(
        "OCRGW_PADDLEOCR_PROVIDERS",
        Kind(
            _ExecutionProviders(),
            "a comma-separated list of ONNX Runtime execution providers, "
            "e.g. CUDAExecutionProvider,CPUExecutionProvider",
            "provider names, comma-separated",
            explains=True,
        ),
        ("CPUExecutionProvider",),
        "ONNX Runtime execution providers of PP-OCRv4's sessions, in order of preference; each must be "
        "available in the worker's ONNX Runtime build (the GPU path is untested)",
    )
    preload_models: tuple[str, ...] = setting(
        "OCRGW_PRELOAD_MODELS",
        Kind(_CommaSeparatedModels(), f"a comma-separated list of {', '.join(MODELS)}", "model names, comma-separated"),
        (),
        "engines a worker process loads at start, so that its first job does not wait for them, "
        "e.g. `tesseract,paddleocr`",
    )
    # Short enough that GET /models and the submission check soon see a worker that died without
    # a word (its report lapses three intervals after the last), long enough to cost Redis nothing.
    worker_report_interval: float = setting(
        "OCRGW_WORKER_REPORT_INTERVAL",
        seconds(at_least=0.1),
        10.0,
        "seconds between an OCR worker's reports of the Tesseract languages it has; a report lapses "
        "after three intervals (see `GET /models`)",
    )
    echo_allow_crash: int = setting(
        "OCRGW_ECHO_ALLOW_CRASH",
        switch(),
        0,
        "`1` lets the `echo` model's `crash` option end its worker process (fault-injection tests only)",
    )
    webhook_secret: str = setting(
        "OCRGW_WEBHOOK_SECRET",
        Kind(
            mf.String(validate=validate.Length(min=MIN_WEBHOOK_SECRET_CHARS)),
            f"at least {MIN_WEBHOOK_SECRET_CHARS} characters",
            f"{MIN_WEBHOOK_SECRET_CHARS} characters or more",
        ),
        "",
        "the `default` tenant's webhook secret (no API keys), unless `OCRGW_WEBHOOK_SECRETS_FILE` has a `default` "
        "line; unset: its webhooks go out unsigned (with a warning at start)",
        secret=True,
    )
    webhook_secrets: tuple[tuple[str, str], ...] = setting(
        "OCRGW_WEBHOOK_SECRETS_FILE",
        Kind(
            _WebhookSecrets(),
            "a readable UTF-8 file of tenant:whsec_<base64> lines (# comments), each tenant once",
            "a readable file",
            explains=True,
            holds_secrets=True,
        ),
        (),
        "each tenant's webhook secret, one `tenant:whsec_<base64>` per line (`#` comments); a tenant without one "
        "gets unsigned webhooks (see Webhooks); read at start",
    )
    webhook_allow_private: int = setting(
        "OCRGW_WEBHOOK_ALLOW_PRIVATE",
        switch(),
        0,
        "`1` lets a `callback_url` name loopback and private addresses (tests, a private network)",
    )
    # Each attempt may take this long to connect and to get an answer; a failed
    # attempt is retried after the backoff, doubling up to its cap, for as long
    # as the retry window after the job became terminal lasts.
    webhook_timeout: float = setting(
        "OCRGW_WEBHOOK_TIMEOUT",
        seconds(),
        10.0,
        "seconds a webhook attempt may take in all: to resolve the host name, connect, send and get the answer's "
        "status and headers",
    )
    webhook_tenant_concurrency: int = setting(
        "OCRGW_WEBHOOK_TENANT_CONCURRENCY",
        whole_number(1),
        2,
        "webhook deliveries one tenant may have in flight at once, across all deliverers and buckets; its others wait",
    )
    # A deliverer that died holding an attempt never records its answer: the claim is taken for lost
    # this long after the attempt's own timeout.  Generous by default, since a claimed attempt waits on
    # the deliverers' queue behind other deliveries before it runs; it holds one of the tenant's slots.
    webhook_claim_margin: float = setting(
        "OCRGW_WEBHOOK_CLAIM_MARGIN",
        seconds(),
        300.0,
        "seconds past `OCRGW_WEBHOOK_TIMEOUT` after which a claimed attempt with no answer (its deliverer died) "
        "is claimed again",
    )
    webhook_backoff: float = setting(
        "OCRGW_WEBHOOK_BACKOFF",
        seconds(),
        10.0,
        "seconds before a failed webhook's 2nd attempt; doubles each time",
    )
    webhook_backoff_max: float = setting(
        "OCRGW_WEBHOOK_BACKOFF_MAX", seconds(), 3600.0, "the longest wait between two attempts"
    )
    webhook_give_up_after: float = setting(
        "OCRGW_WEBHOOK_GIVE_UP_AFTER",
        seconds(),
        24 * 3600.0,
        "seconds after a job became terminal when its webhook is given up",
    )
    # API keys, as sha256 digests: from the keys file, and (development) from plain keys in the
    # environment.  None at all: the gateway serves one tenant, ``default``, to anyone.
    file_api_keys: tuple[ApiKey, ...] = setting(
        "OCRGW_API_KEYS_FILE",
        Kind(
            _ApiKeys(read_keys_file),
            "a readable file of tenant:sha256-hex-of-key[:policy,...] lines",
            "a readable file",
            explains=True,
        ),
        (),
        "the API keys, one `tenant:sha256-hex-of-key[:policy,...]` per line (see Security); read at start. Set, "
        "it must name a key",
    )
    plain_api_keys: tuple[ApiKey, ...] = setting(
        "OCRGW_API_KEYS",
        Kind(
            _ApiKeys(parse_plain_keys),
            "a comma-separated list of tenant:key",
            "`tenant:key,tenant:key`",
            explains=True,
        ),
        (),
        "plain API keys, for development; hashed as they are read. Set, it must name a key. With neither set, "
        "there are no keys and one `default` tenant",
        secret=True,
        from_file=False,  # OCRGW_API_KEYS_FILE is the keys file, of digests
    )
    # The Host names the gateway answers to (gateway.browser); () for its defaults.
    allowed_hosts: tuple[str, ...] = setting(
        "OCRGW_ALLOWED_HOSTS",
        Kind(
            _AllowedHosts(),
            "a comma-separated list of host names, .domain for a domain and its subdomains, or *",
            "`name,.domain,...` or `*`",
            explains=True,
        ),
        (),
        "the `Host` names the gateway answers to (`.example.org`: the domain and its subdomains; `*`: any); any "
        "other is `400 host_not_allowed`. An IP address is always accepted, and the probes answer any `Host` "
        "(see Browsers)",
        default_doc="`localhost`, `.localhost` and this machine's host names",
    )
    # Models served by an upstream ocrgw (their keys apart, below): see ``remotes``.
    remote_models: tuple[RemoteModel, ...] = setting(
        "OCRGW_REMOTE_MODELS",
        _REMOTE_MODELS,
        (),
        "remote models, each served by `model` of the upstream ocrgw at the URL (no credentials in it); each "
        "`name` is a new model of location `cloud`, queue `ocr.<name>` (see Security)",
    )
    # (model name, bearer key) of the remote models whose upstream wants one.
    remote_keys: tuple[tuple[str, str], ...] = setting(
        "OCRGW_REMOTE_KEYS_FILE",
        _REMOTE_KEYS_FILE,
        (),
        "a file of `name=key` lines (`#` comments): the bearer key sent to the upstream of remote model `name`; "
        "a name not in `OCRGW_REMOTE_MODELS` is an error",
    )
    log_format: str = setting(
        "OCRGW_LOG_FORMAT",
        one_of(LOG_FORMATS),
        "plain",
        "`json`: every process writes one JSON object per line (see Metrics, logs and Flower)",
    )
    task_events: bool = setting(
        "OCRGW_TASK_EVENTS",
        boolean(),
        False,
        "Celery task events from the start, for Flower; off, Flower turns them on while it runs (see Flower)",
    )
    # The ports the Celery processes serve /metrics on, by role (see observability.celery_hooks).
    worker_metrics_port: int = setting(
        "OCRGW_WORKER_METRICS_PORT", port(), 0, "where an OCR worker serves `/metrics`; `0`: it serves none"
    )
    coordinator_metrics_port: int = setting("OCRGW_COORDINATOR_METRICS_PORT", port(), 0, "the same for the coordinator")
    webhooks_metrics_port: int = setting("OCRGW_WEBHOOKS_METRICS_PORT", port(), 0, "the same for the webhook deliverer")
    # Every interface, as the gateway listens.
    metrics_address: str = setting(
        "OCRGW_METRICS_ADDRESS", ip_address(), "0.0.0.0", "the address those three listen on"
    )
    metrics_token: str = setting(
        "OCRGW_METRICS_TOKEN",
        Kind(
            mf.String(validate=validate.Regexp(rf"[!-~]{{{MIN_METRICS_TOKEN_CHARS},}}\Z")),
            f"at least {MIN_METRICS_TOKEN_CHARS} visible ASCII characters",
            f"{MIN_METRICS_TOKEN_CHARS} visible ASCII characters or more",
        ),
        "",
        "the bearer token the gateway's `/metrics` asks for; unset: `/metrics` is open (see Metrics, logs and Flower)",
        secret=True,
    )
    # prometheus_client's multiprocess mode.
    metrics_dir: str = setting(
        "OCRGW_METRICS_DIR",
        absolute_path(),
        "",
        "where each process family keeps its metrics files, in a directory of its own",
        default_doc="the temp dir's `ocrgw-metrics`",
    )
    # With them the store finds its primary through the sentinels (see jobs.connections).
    redis_sentinels: tuple[tuple[str, int], ...] = setting(
        "OCRGW_REDIS_SENTINELS",
        _host_ports("sentinel"),
        (),
        "Redis Sentinel: the store (and a Redis broker) find their master through these sentinels; `REDIS_URL` "
        "then gives only its database, password and TLS (see Redis Sentinel)",
    )
    redis_sentinel_master: str = setting(
        "OCRGW_REDIS_SENTINEL_MASTER",
        Kind(
            mf.String(validate=validate.Regexp(r"[A-Za-z0-9._-]{1,128}\Z")),
            "a master name as the sentinels know it (letters, digits, . _ -)",
            "a name",
        ),
        "",
        "the master's name as the sentinels know it (`sentinel monitor <name> ...`); required with "
        "`OCRGW_REDIS_SENTINELS`",
    )
    redis_sentinel_password: str = setting(
        "OCRGW_REDIS_SENTINEL_PASSWORD",
        Kind(mf.String(), "the sentinels' password", "a string"),
        "",
        "the sentinels' own password (their `requirepass`), if they have one",
        secret=True,
    )
    # With them the store's client is redis-py's RedisCluster (see jobs.connections).
    redis_cluster: tuple[tuple[str, int], ...] = setting(
        "OCRGW_REDIS_CLUSTER",
        _host_ports("node"),
        (),
        "Redis Cluster: the store runs on the cluster these seed nodes belong to; `REDIS_URL` then gives only its "
        "username, password and TLS (database 0), and the broker is set apart (`CELERY_BROKER_URL`). Not with "
        "`OCRGW_REDIS_SENTINELS`",
    )
    # Each bucket's keys share one hash slot; a transition touches one bucket (see jobs.keys).
    store_buckets: int = setting(
        "OCRGW_STORE_BUCKETS",
        whole_number(1, MAX_BUCKETS),
        1,
        "how many buckets (hash slots) the store's keys are spread over, so that a Redis Cluster shares the work "
        "among its primaries (24 divides evenly among 1, 2, 3, 4, 6, 8 and 12). The store records the count it "
        "was first written with, and a process of another count refuses to start: to change it, stop every "
        "process and run `ocrgw store migrate` with the new count (see Redis Cluster). Above "
        "`1`, `OCRGW_TENANT_MAX_INFLIGHT` is dealt out to the buckets by each tenant's quota ledger (see Fair share)",
        default_doc="`1`; `24` with `OCRGW_REDIS_CLUSTER`",
    )
    min_replicas: int = setting(
        "OCRGW_MIN_REPLICAS",
        whole_number(0),
        0,
        "the gateway answers `202` only once Redis `WAIT` saw the creation on this many replicas; else "
        "`503 store_unavailable`",
    )
    replica_wait_ms: int = setting(
        "OCRGW_REPLICA_WAIT_MS",
        whole_number(unit="milliseconds"),
        2000,
        "how long the gateway waits for those replicas (the store client's socket timeout, 5 s otherwise, "
        "becomes this plus 5 s, so a long wait is not taken for a lost connection)",
    )

    def __post_init__(self):
        undeclared = sorted({name for name, _ in self.remote_keys} - {m.name for m in self.remote_models})
        if undeclared:
            raise InvalidSettings(
                f"OCRGW_REMOTE_KEYS_FILE: has keys for {', '.join(undeclared)}, not declared in OCRGW_REMOTE_MODELS"
            )

    def __repr__(self) -> str:
        # Secrets masked: settings end up in logs and tracebacks.
        shown = (
            f"{variable.setting}={variable.represented(getattr(self, variable.setting))}" for variable in VARIABLES
        )
        return f"Settings({', '.join(shown)})"

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """The settings in ``environ`` (default: this process's environment).

        Raises ``InvalidSettings`` naming every variable whose value is unusable.
        """
        return _settings_and_given(environ)[0]

    @property
    def api_keys(self) -> tuple[ApiKey, ...]:
        return self.file_api_keys + self.plain_api_keys

    @property
    def lease_ms(self) -> int:
        return int(self.lease_seconds * 1000)

    @property
    def worker_report_lifetime(self) -> float:
        """Seconds a worker's report stays live unless renewed: three intervals, so one late renewal is no gap."""
        return self.worker_report_interval * 3

    @property
    def remotes(self) -> tuple[RemoteModel, ...]:
        """The remote models, each with its upstream's bearer key ('' for none)."""
        keys = dict(self.remote_keys)
        return tuple(replace(model, key=keys.get(model.name, "")) for model in self.remote_models)

    @property
    def result_ttl_ms(self) -> int:
        return self.result_ttl * 1000

    @property
    def webhook_owed_ms(self) -> int:
        """How long after a job ended its webhook may still be owed: its retry window, and one claim of
        an attempt begun at its end, whose deliverer may have died holding it."""
        return int((self.webhook_give_up_after + self.webhook_timeout + self.webhook_claim_margin) * 1000)

    @property
    def broker_on_sentinels(self) -> bool:
        """True when Celery's broker is a Redis found through sentinels (kombu's sentinel transport)."""
        return self.broker_url.startswith(f"{SENTINEL_BROKER_SCHEME}://")


VARIABLES = declared(Settings)
_DEFAULTS = {variable.setting: variable.default for variable in VARIABLES}


def default_of(name: str) -> Any:
    """The default of setting ``name``, as declared."""
    return _DEFAULTS[name]


def configuration_table() -> str:
    """The table of docs/operating/configuration.md: every variable, its default, what it accepts and what it means."""
    return markdown_table(VARIABLES)


@dataclass(frozen=True)
class Effective:
    """A setting as ``ocrgw config`` shows it: its variable, its value (a secret's masked) and where it came from."""

    variable: str
    value: str
    source: str  # "environment", "file" (its _FILE variable) or "default"


def effective_settings(environ: Mapping[str, str] | None = None) -> tuple[Effective, ...]:
    """Every setting ``environ`` gives; raises ``InvalidSettings`` as ``Settings.from_env`` does."""
    settings, given = _settings_and_given(environ)
    shown = []
    for variable in VARIABLES:
        if variable.env in given.texts:
            text = given.texts[variable.env]
            source = "environment" if given.given_as[variable.env] == variable.env else "file"
        else:
            text, source = as_text(getattr(settings, variable.setting)), "default"
        shown.append(Effective(variable.env, variable.masked(text), source))
    return tuple(shown)


def _settings_and_given(environ: Mapping[str, str] | None) -> tuple[Settings, Given]:
    environ = os.environ if environ is None else environ
    given = read(VARIABLES, environ)
    given.problems += _keys_naming_none(environ, given)
    if given.problems:
        raise InvalidSettings(*given.problems)
    values, raw = given.values, given.texts
    _check_sentinels(values, raw)
    _check_cluster(values, raw)
    values.setdefault("store_buckets", CLUSTER_BUCKETS if values.get("redis_cluster") else 1)
    if values.get("redis_sentinels") and "broker_url" not in values:
        values["broker_url"] = sentinel_broker_url(values["redis_sentinels"], values.get("redis_url", ""))
    values.setdefault("broker_url", values.get("redis_url", default_of("redis_url")))
    try:
        require_distinct(values.get("file_api_keys", ()), values.get("plain_api_keys", ()))
    except BadKeys:
        raise InvalidSettings("OCRGW_API_KEYS: a key is also in OCRGW_API_KEYS_FILE") from None
    try:
        tenant_weights(values.get("file_api_keys", ()))
    except BadKeys as error:
        raise InvalidSettings(f"OCRGW_API_KEYS_FILE: {error}") from None
    settings = Settings(**values)
    _check_idempotency_within_retention(settings, raw)
    _check_tls_verification(raw, given.given_as)
    return settings, given


def sentinel_broker_url(sentinels: tuple[tuple[str, int], ...], redis_url: str) -> str:
    """kombu's URL of a Redis broker behind ``sentinels``: ``sentinel://[:password@]host:port/db;...``.

    The password and database are REDIS_URL's, as for the store; kombu reads
    them from the first entry and the master's name from the transport options.
    """
    parts = urlsplit(redis_url or default_of("redis_url"))
    auth = f"{parts.username or ''}:{parts.password}@" if parts.password else ""
    db = parts.path.strip("/") or "0"
    return ";".join(f"{SENTINEL_BROKER_SCHEME}://{auth}{host}:{port}/{db}" for host, port in sentinels)


# -- rules across settings ------------------------------------------------------------------------


def _keys_naming_none(environ: Mapping[str, str], given: Given) -> list[str]:
    """A problem for each keys variable that is set but names no key.

    Unset, there are no keys and the gateway serves anyone; set, keys were
    meant, so a file emptied or commented out during a rotation, a list of
    nothing but commas, or a template's value that came out blank stops the
    process rather than opening the gateway to everyone.
    """
    problems = []
    for variable in VARIABLES:
        if variable.setting not in _KEY_SETTINGS:
            continue
        if variable.env in given.texts:
            if given.values.get(variable.setting) == ():
                problems.append(_names_no_key(given.given_as[variable.env], variable.shown(given.texts[variable.env])))
            continue
        for env in (variable.env, variable.file_env):
            said = any(problem.startswith(f"{env}:") for problem in given.problems)
            if env and env in environ and not said:
                problems.append(_names_no_key(env, "nothing"))
    return problems


def _names_no_key(env: str, got: str) -> str:
    return (
        f"{env}: must name at least one API key, got {got} (unset, there are no keys and anyone who reaches the "
        "gateway is tenant 'default')"
    )


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


def _check_cluster(values: Mapping[str, Any], raw: Mapping[str, str]) -> None:
    """A cluster is the store alone: not with sentinels, REDIS_URL only for its credentials and TLS
    (a cluster has database 0 only, and no socket), and a broker of its own (Celery's Redis transport
    cannot use a cluster)."""
    if not values.get("redis_cluster"):
        return
    if values.get("redis_sentinels"):
        raise InvalidSettings(
            "OCRGW_REDIS_CLUSTER: must not be set together with OCRGW_REDIS_SENTINELS (one or the other), got both"
        )
    redis_url = raw.get("REDIS_URL", "")
    if redis_url.startswith("unix://"):
        raise InvalidSettings(
            "REDIS_URL: with OCRGW_REDIS_CLUSTER it must be a redis:// or rediss:// URL, got a socket"
        )
    if redis_url and urlsplit(redis_url).path.strip("/") not in ("", "0"):
        raise InvalidSettings(
            f"REDIS_URL: with OCRGW_REDIS_CLUSTER its database must be 0 (a cluster has no other), "
            f"got {without_password(redis_url)!r}"
        )
    if "CELERY_BROKER_URL" not in raw:
        raise InvalidSettings(
            "CELERY_BROKER_URL: must be set with OCRGW_REDIS_CLUSTER (Celery cannot use a Redis Cluster as its "
            "broker: a standalone or Sentinel Redis, or RabbitMQ), got nothing"
        )


def _check_idempotency_within_retention(settings: Settings, raw: Mapping[str, str]) -> None:
    """A key's record lives ``idempotency_ttl`` from its job's creation (or redrive), the job
    ``result_ttl`` from its end, which is later: so a replay never names a deleted job."""
    if settings.idempotency_ttl <= settings.result_ttl:
        return
    given = raw.get("OCRGW_IDEMPOTENCY_TTL")
    got = repr(given) if given is not None else f"its default, {settings.idempotency_ttl}"
    raise InvalidSettings(f"OCRGW_IDEMPOTENCY_TTL: must be at most OCRGW_RESULT_TTL ({settings.result_ttl}), got {got}")


def _check_tls_verification(raw: Mapping[str, str], given_as: Mapping[str, str]) -> None:
    """A rediss:// URL must say how the server's certificate is checked: without it redis-py
    verifies it and kombu (the broker) does not, so the two would disagree silently."""
    for env in ("REDIS_URL", "CELERY_BROKER_URL"):
        url = raw.get(env, "")
        if url.startswith("rediss://") and "ssl_cert_reqs" not in parse_qs(urlsplit(url).query):
            raise InvalidSettings(
                f"{given_as.get(env, env)}: a rediss:// URL must name ssl_cert_reqs (required, optional or none), "
                f"got {without_password(url)!r}"
            )
