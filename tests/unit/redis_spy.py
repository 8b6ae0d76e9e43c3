"""Records the round trips a Redis client makes: what a read costs, as commands, not as time."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from redis.client import Pipeline, Redis


class RoundTrips(list):
    """One entry per round trip: the names of the commands it carried."""

    @property
    def commands(self) -> list[str]:
        return [name for trip in self for name in trip]


@contextmanager
def round_trips(monkeypatch: pytest.MonkeyPatch) -> Iterator[RoundTrips]:
    trips = RoundTrips()
    execute_command, execute = Redis.execute_command, Pipeline.execute

    def one_command(self, *args, **options):
        if not isinstance(self, Pipeline):
            trips.append([str(args[0]).upper()])
        return execute_command(self, *args, **options)

    def pipelined(self, *args, **kwargs):
        if self.command_stack:
            trips.append([str(cmd[0][0]).upper() for cmd in self.command_stack])
        return execute(self, *args, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(Redis, "execute_command", one_command)
        patch.setattr(Pipeline, "execute", pipelined)
        yield trips
