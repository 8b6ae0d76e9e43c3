"""What one Redis server did over a window: ``INFO commandstats`` and ``INFO cpu``, less an idle background.

A ``Window`` starts with ``CONFIG RESETSTAT`` and a reading of the server's
CPU (``used_cpu_sys + used_cpu_user``), and ends with ``INFO commandstats``
and the CPU again.  ``Usage`` is what it read: calls and microseconds per
command, CPU seconds and the wall time between the two readings.

Two things the raw figures need before they say what a child costs:

* Commands run inside a Lua script are counted in their own rows *and*
  inside the EVALSHA that ran them (calls and microseconds both).  Commands
  per child count them all (what the server executed).  Microseconds count
  EVALSHA and the rows of commands that the scripts which ran there never
  call, so that no microsecond is counted twice: ``OCRGW_LUA`` is read from
  ``jobs/transitions``, ``CELERY_LUA`` from the chord script of Celery's
  Redis result backend.  A command that a client also sends directly (the
  sweep's TIME, Celery's GET of a result) is then missed for those direct
  calls: ``exec_us`` is a floor, ``exec_us_all_rows`` (every row, script
  commands twice) a ceiling.
* The processes of a stack talk to Redis when idle too (the beat's tick,
  the sweep, a Celery worker's BRPOP timing out).  ``Usage.minus`` takes off
  an idle window's rates times the window's length, command by command.

Commands the bench sends itself to wait for an end (XREAD, BLPOP) or to read
the figures (INFO, CONFIG) are left out of every figure.
"""

from __future__ import annotations

import inspect
import re
import time
from dataclasses import dataclass, field

import celery.backends.redis
import redis

from bench.common import ROOT

#: The bench's own commands: waiting for the end of a side, reading the figures.
BENCH_COMMANDS = frozenset({"xread", "blpop", "info", "config|resetstat", "config"})
_CALL = re.compile(r"redis\.p?call\(\s*['\"]([A-Za-z]+)")
SCRIPT_COMMANDS = frozenset({"eval", "evalsha", "eval_ro", "evalsha_ro", "fcall"})


def lua_commands(*sources: str) -> frozenset[str]:
    """The commands these Lua sources call (lower case)."""
    return frozenset(m.lower() for text in sources for m in _CALL.findall(text))


OCRGW_LUA = lua_commands(*(p.read_text() for p in (ROOT / "jobs" / "transitions").rglob("*.lua")))
CELERY_LUA = lua_commands(inspect.getsource(celery.backends.redis))
NO_LUA: frozenset[str] = frozenset()


@dataclass
class Usage:
    """Per command: [calls, usec]; the server's CPU seconds and the wall seconds of the window."""

    commands: dict[str, list[float]] = field(default_factory=dict)
    cpu_seconds: float = 0.0
    wall_seconds: float = 0.0

    def minus(self, idle: Usage) -> Usage:
        """This window less ``idle``'s rates over this window's length (never below zero)."""
        scale = self.wall_seconds / idle.wall_seconds if idle.wall_seconds else 0.0
        out = {}
        for name, (calls, usec) in self.commands.items():
            base = idle.commands.get(name, [0, 0])
            out[name] = [max(calls - base[0] * scale, 0.0), max(usec - base[1] * scale, 0.0)]
        return Usage(out, max(self.cpu_seconds - idle.cpu_seconds * scale, 0.0), self.wall_seconds)

    @property
    def calls(self) -> float:
        return sum(c for c, _ in self.commands.values())

    def usec(self, inner: frozenset[str]) -> float:
        """Execution microseconds, each counted once: ``inner`` names the commands scripts call."""
        skip = inner if any(self.commands.get(name, [0])[0] for name in SCRIPT_COMMANDS) else NO_LUA
        return sum(u for name, (_, u) in self.commands.items() if name not in skip)

    def per(self, children: float, inner: frozenset[str] = NO_LUA) -> dict:
        """The figures per child: commands, script calls, execution µs, CPU µs, and every command's share."""
        top = sorted(self.commands.items(), key=lambda kv: -kv[1][0])
        return {
            "commands": self.calls / children,
            "script_calls": sum(self.commands.get(n, [0])[0] for n in SCRIPT_COMMANDS) / children,
            "exec_us": self.usec(inner) / children,
            "exec_us_all_rows": self.usec(NO_LUA) / children,
            "cpu_us": 1e6 * self.cpu_seconds / children,
            "by_command": {name: {"calls": c / children, "usec": u / children} for name, (c, u) in top},
        }


def cpu_seconds(client: redis.Redis) -> float:
    info = client.info("cpu")
    return float(info["used_cpu_sys"]) + float(info["used_cpu_user"])


class Window:
    """One measured window on one server (``start`` then ``stop``)."""

    def __init__(self, client: redis.Redis):
        self.client = client
        self._cpu = 0.0
        self._t0 = 0.0

    def start(self) -> Window:
        self.client.config_resetstat()
        self._cpu = cpu_seconds(self.client)
        self._t0 = time.monotonic()
        return self

    def stop(self) -> Usage:
        wall = time.monotonic() - self._t0
        cpu = cpu_seconds(self.client) - self._cpu
        stats = self.client.info("commandstats")
        commands = {}
        for key, row in stats.items():
            name = key.removeprefix("cmdstat_").lower()
            if name not in BENCH_COMMANDS:
                commands[name] = [float(row["calls"]), float(row["usec"])]
        return Usage(commands, cpu, wall)
