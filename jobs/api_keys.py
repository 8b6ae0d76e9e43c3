"""API keys as the settings hold them: a tenant, the sha256 of the key (never the key), its policies.

The keys file (``OCRGW_API_KEYS_FILE``) has one key per line,
``tenant:sha256-hex-of-key[:policy,...]``; blank lines and ``#`` comments
are allowed.  For development, ``OCRGW_API_KEYS="tenant:key,tenant:key"``
names plain keys, hashed as they are read so that no plain key is kept.
``jobs.config`` reads both with the functions here (a ``BadKeys`` stops the
process at start); ``gateway.auth`` checks each request's key against them.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from jobs.ids import is_tenant
from jobs.line_files import numbered_lines

#: The policies a key may carry; any other name in the keys file is refused at start.
ON_PREM_ONLY = "on_prem_only"  # the tenant's documents never reach a cloud model
ADMIN = "admin"  # may read any tenant's usage (GET /usage?tenant=)
POLICIES = frozenset({ON_PREM_ONLY, ADMIN})
#: A key's id, in audit events and logs: the first hex digits of its sha256, as the keys file shows it.
KEY_ID_LENGTH = 12
LINE_SHAPE = "tenant:sha256-hex-of-key[:policy,...]"
_DIGEST = re.compile(r"[0-9a-f]{64}")


class BadKeys(ValueError):
    """Raised when a keys file or OCRGW_API_KEYS cannot be used; the message never holds a plain key."""


@dataclass(frozen=True)
class ApiKey:
    tenant: str
    digest: str = field(repr=False)  # sha256 of the key, lower-case hex
    policies: frozenset[str] = frozenset()

    @property
    def key_id(self) -> str:
        return self.digest[:KEY_ID_LENGTH]


def digest_of(key: bytes) -> str:
    return hashlib.sha256(key).hexdigest()


def read_keys_file(path: str) -> tuple[ApiKey, ...]:
    """Every key of the file at ``path``, in order."""
    entries = [
        (f"line {number}", _parse_line(content, f"line {number}")) for number, content in numbered_lines(path, BadKeys)
    ]
    return _unique(entries)


def parse_plain_keys(text: str) -> tuple[ApiKey, ...]:
    """The keys of ``tenant:key,tenant:key`` (a key may hold ':', never ','), hashed."""
    entries: list[tuple[str, ApiKey]] = []
    for number, item in enumerate(text.split(","), 1):
        item = item.strip()
        if not item:
            continue
        where = f"entry {number}"
        tenant, colon, key = item.partition(":")
        if not colon or not key.strip():
            raise BadKeys(f"{where}: expected tenant:key")
        _check_tenant(tenant.strip(), where, shown=False)  # a misplaced key must not reach a log
        entries.append((where, ApiKey(tenant.strip(), digest_of(key.strip().encode()))))
    return _unique(entries)


def require_distinct(*sources: Iterable[ApiKey]) -> None:
    """``BadKeys`` when one key is given twice (say, in the file and in OCRGW_API_KEYS): whose would it be?"""
    _unique([("", key) for source in sources for key in source])


def _parse_line(line: str, where: str) -> ApiKey:
    parts = [part.strip() for part in line.split(":")]
    if len(parts) not in (2, 3):
        raise BadKeys(f"{where}: expected {LINE_SHAPE}")
    tenant, digest = parts[0], parts[1].lower()
    _check_tenant(tenant, where)
    if not _DIGEST.fullmatch(digest):
        raise BadKeys(f"{where}: the key's sha256 must be 64 hex digits")
    policies = frozenset(p.strip() for p in parts[2].split(",") if p.strip()) if len(parts) == 3 else frozenset()
    unknown = sorted(policies - POLICIES)
    if unknown:
        raise BadKeys(f"{where}: unknown policy {unknown[0]!r} (known: {', '.join(sorted(POLICIES))})")
    return ApiKey(tenant, digest, policies)


def _check_tenant(tenant: str, where: str, shown: bool = True) -> None:
    if not is_tenant(tenant):
        name = f"{tenant!r} is not" if shown else "not"
        raise BadKeys(f"{where}: {name} a tenant name (lower-case letters, digits, '_', '.', '-'; up to 63)")


def _unique(entries: list[tuple[str, ApiKey]]) -> tuple[ApiKey, ...]:
    seen: dict[str, str] = {}
    for where, key in entries:
        if key.digest in seen:
            first = seen[key.digest]
            said = f"{where}: the same key as {first}" if where and first else "the same key is given twice"
            raise BadKeys(said)
        seen[key.digest] = where
    return tuple(key for _, key in entries)
