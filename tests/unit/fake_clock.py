"""Moves a FakeRedis server's clock forward, so that retention and key expiry run without sleeping.

FakeRedis reads ``time.time()`` for its TIME command (which the Lua
transitions use), for the expiry of keys (EXPIRE, SET PX) and for stream
ids.  ``FakeClock.advance`` shifts all three at once, as if the seconds had
passed: a key whose TTL ran out is gone, and a transition reads the later
time.
"""

from __future__ import annotations

import time

import pytest
from fakeredis import _helpers
from fakeredis._socket import _base as fake_socket
from fakeredis.commands_mixins import server_mixin


class FakeClock:
    def __init__(self) -> None:
        self.offset = 0.0

    def advance(self, seconds: float) -> None:
        self.offset += seconds

    # What the patched modules call on their ``time``.
    def time(self) -> float:
        return time.time() + self.offset

    def __getattr__(self, name: str):
        return getattr(time, name)


def install(monkeypatch: pytest.MonkeyPatch) -> FakeClock:
    """A clock that every FakeRedis server reads until the test ends."""
    fake = FakeClock()
    for module in (fake_socket, server_mixin, _helpers):
        monkeypatch.setattr(module, "time", fake)
    return fake
