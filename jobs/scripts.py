"""Loads the transition scripts in ``jobs/lua`` and registers them once per client.

A script names the shared Lua it needs with ``-- @include <name>`` lines; they
are inlined (from ``lua/includes/<name>.lua``) before registration, so Redis
sees one self-contained script per transition.  Calls go through redis-py's
``Script`` (EVALSHA, reloaded on NOSCRIPT), which also works inside pipelines.
"""

import re
from functools import cache
from pathlib import Path

from redis import Redis
from redis.commands.core import Script

LUA_DIR = Path(__file__).with_name("lua")
TRANSITIONS = (
    "create",
    "claim",
    "heartbeat",
    "progress",
    "complete",
    "retry",
    "reclaim",
    "republish",
    "release",
)
_INCLUDE = re.compile(r"^-- @include (\w+)\s*$", re.MULTILINE)


@cache
def source(name: str) -> str:
    """The script ``name`` with its includes inlined (each at most once)."""
    seen: set[str] = set()

    def inline(match: re.Match) -> str:
        include = match.group(1)
        if include in seen:
            return ""
        seen.add(include)
        return _INCLUDE.sub(inline, (LUA_DIR / "includes" / f"{include}.lua").read_text())

    return _INCLUDE.sub(inline, (LUA_DIR / f"{name}.lua").read_text())


class Scripts:
    """The registered transitions of one Redis client, as attributes: ``scripts.claim(keys, args)``."""

    def __init__(self, client: Redis):
        for name in TRANSITIONS:
            setattr(self, name, client.register_script(source(name)))

    create: Script
    claim: Script
    heartbeat: Script
    progress: Script
    complete: Script
    retry: Script
    reclaim: Script
    republish: Script
    release: Script
