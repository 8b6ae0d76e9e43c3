"""API keys for the gateway tests that run with keys: two tenants, one of them with two keys."""

from __future__ import annotations

import hashlib
from dataclasses import replace
from pathlib import Path

from jobs.api_keys import parse_plain_keys, read_keys_file
from jobs.config import Settings

ACME_KEY = "acme-live-6Qm2xv9TzL"
ACME_ROTATED_KEY = "acme-next-Pb71KcW0sd"  # acme's second key, with the on_prem_only policy
GLOBEX_KEY = "globex-dev-Yt4nR8aEqw"  # a development key, from OCRGW_API_KEYS
PLAIN_KEYS = (ACME_KEY, ACME_ROTATED_KEY, GLOBEX_KEY)


def key_id(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()[:12]


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def keyed_settings(base: Settings, directory: Path) -> Settings:
    """``base`` with acme's keys from a keys file and globex's from plain keys."""
    path = directory / "api-keys"
    path.write_text(
        "# tenant:sha256-hex-of-key[:policy,...]\n"
        f"acme:{hashlib.sha256(ACME_KEY.encode()).hexdigest()}\n"
        f"acme:{hashlib.sha256(ACME_ROTATED_KEY.encode()).hexdigest()}:on_prem_only\n"
    )
    return replace(
        base, file_api_keys=read_keys_file(str(path)), plain_api_keys=parse_plain_keys(f"globex:{GLOBEX_KEY}")
    )


def everything_stored(redis) -> bytes:
    """Every key name and every value in Redis (hash fields, set and stream members included), as one blob."""
    parts: list[bytes] = []
    for key in redis.keys("*"):
        parts.append(key)
        kind = redis.type(key)
        if kind == b"string":
            parts.append(redis.get(key))
        elif kind == b"hash":
            parts += [b for pair in redis.hgetall(key).items() for b in pair]
        elif kind == b"zset":
            parts += redis.zrange(key, 0, -1)
        elif kind == b"set":
            parts += list(redis.smembers(key))
        elif kind == b"stream":
            parts += [b for _, entry in redis.xrange(key) for pair in entry.items() for b in pair]
        else:
            raise AssertionError(f"{key!r} is a {kind!r}, which this check does not read")
    return b"\n".join(parts)
