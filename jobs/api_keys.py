"""API keys as the settings hold them: a tenant, the sha256 of the key (never the key), its policies.

The keys file (``OCRGW_API_KEYS_FILE``) has one key per line,
``tenant:sha256-hex-of-key[:policy,...]``; blank lines and ``#`` comments
are allowed.  A policy is a name (``on_prem_only``) or a name and a whole
number: ``weight=N``, the tenant's share of each lane's turns (every key of
a tenant that gives one must give the same: ``tenant_weights``), and
``interactive_max_inflight=N``, how many interactive jobs the tenant may
have queued or processing when this key submits one (0: none; without it,
OCRGW_INTERACTIVE_MAX_INFLIGHT).  For development, ``OCRGW_API_KEYS="tenant:key,tenant:key"``
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
#: The policies that carry a whole number, and the range each accepts.
WEIGHT = "weight"  # the tenant's share of each lane's turns (jobs/transitions/includes/ready.lua)
INTERACTIVE_MAX_INFLIGHT = "interactive_max_inflight"
#: A weight divides a lane's turn of 1000 (ready.lua): at most 1000, so no tenant's turn rounds to nothing.
MAX_WEIGHT = 1000
NUMBERED_POLICIES = {WEIGHT: (1, MAX_WEIGHT), INTERACTIVE_MAX_INFLIGHT: (0, 1_000_000)}
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
    weight: int | None = None  # None: the tenant's other keys', or 1
    interactive_max_inflight: int | None = None  # None: OCRGW_INTERACTIVE_MAX_INFLIGHT

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


def tenant_weights(keys: Iterable[ApiKey]) -> dict[str, int]:
    """Each tenant's weight, from those of its keys that give one (1 for a tenant whose keys give none).

    ``BadKeys`` when two keys of one tenant give different weights: a turn is
    the tenant's, whichever key submitted the job, so which would hold?
    """
    said: dict[str, int] = {}
    weights: dict[str, int] = {}
    for key in keys:
        weights.setdefault(key.tenant, 1)
        if key.weight is None:
            continue
        if key.tenant in said and said[key.tenant] != key.weight:
            raise BadKeys(
                f"tenant {key.tenant!r}: its keys give weights {said[key.tenant]} and {key.weight}; give one weight"
            )
        said[key.tenant] = weights[key.tenant] = key.weight
    return weights


def _parse_line(line: str, where: str) -> ApiKey:
    parts = [part.strip() for part in line.split(":")]
    if len(parts) not in (2, 3):
        raise BadKeys(f"{where}: expected {LINE_SHAPE}")
    tenant, digest = parts[0], parts[1].lower()
    _check_tenant(tenant, where)
    if not _DIGEST.fullmatch(digest):
        raise BadKeys(f"{where}: the key's sha256 must be 64 hex digits")
    given = [p.strip() for p in parts[2].split(",") if p.strip()] if len(parts) == 3 else []
    numbers = dict(_numbered_policy(p, where) for p in given if "=" in p)
    policies = frozenset(p for p in given if "=" not in p)
    unknown = sorted(policies - POLICIES)
    if unknown:
        known = ", ".join([*sorted(POLICIES), *(f"{n}=N" for n in NUMBERED_POLICIES)])
        raise BadKeys(f"{where}: unknown policy {unknown[0]!r} (known: {known})")
    return ApiKey(tenant, digest, policies, numbers.get(WEIGHT), numbers.get(INTERACTIVE_MAX_INFLIGHT))


def _numbered_policy(policy: str, where: str) -> tuple[str, int]:
    name, _, value = (part.strip() for part in policy.partition("="))
    if name not in NUMBERED_POLICIES:
        raise BadKeys(f"{where}: unknown policy {name!r}=... (known: {', '.join(f'{n}=N' for n in NUMBERED_POLICIES)})")
    low, high = NUMBERED_POLICIES[name]
    if not value.isdigit() or not low <= int(value) <= high:
        raise BadKeys(f"{where}: {name} must be a whole number from {low} to {high}")
    return name, int(value)


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
