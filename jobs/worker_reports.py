"""What each live OCR worker says it can do: the Tesseract languages it has.

A worker reports when it starts and renews the report while it lives
(``workers.languages``); the gateway reads the union of the live reports to
refuse, at submission, a language no worker has, and ``GET /models`` shows it.

A report is one value per worker (``keys.worker_report``) that Redis expires
on its own when the worker stops renewing it, so a worker that died without
a word drops out once its report lapses, whatever the hosts' clocks say.
The names are also in a sorted set (``keys.WORKERS``), scored by when the
report lapses (ms, the reporter's clock), so that a read finds the reports
without scanning the keyspace; a reporter trims the names whose report
lapsed a whole lifetime ago (so a clock that is off by less than that
removes no live worker's), and a read skips any name whose value is gone.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from dataclasses import dataclass

from jobs import keys
from jobs.connections import StoreClient


@dataclass(frozen=True)
class WorkerReport:
    name: str
    languages: frozenset[str]  # the Tesseract languages it has (`osd` left out); empty without tesseract


class WorkerReports:
    """The reports of the live workers, over one Redis client."""

    def __init__(self, client: StoreClient, clock=time.time):
        self.redis = client
        self._clock = clock

    def report(self, name: str, languages: Iterable[str], lifetime_seconds: float) -> None:
        """Says (again) that worker ``name`` lives and has ``languages``, for ``lifetime_seconds``."""
        lifetime_ms = max(1, int(lifetime_seconds * 1000))
        now_ms = int(self._clock() * 1000)
        value = json.dumps({"tesseract_languages": sorted(set(languages))})
        with self.redis.pipeline(transaction=True) as pipe:
            pipe.set(keys.worker_report(name), value, px=lifetime_ms)
            pipe.zadd(keys.WORKERS, {name: now_ms + lifetime_ms})
            pipe.zremrangebyscore(keys.WORKERS, "-inf", f"({now_ms - lifetime_ms}")
            pipe.execute()

    def withdraw(self, name: str) -> None:
        """Worker ``name`` stops: its report goes at once rather than when it would lapse."""
        with self.redis.pipeline(transaction=True) as pipe:
            pipe.delete(keys.worker_report(name))
            pipe.zrem(keys.WORKERS, name)
            pipe.execute()

    def live(self) -> list[WorkerReport]:
        """The reports that have not lapsed, by worker name; two round trips."""
        names = sorted(n.decode() if isinstance(n, bytes) else str(n) for n in self.redis.zrange(keys.WORKERS, 0, -1))
        if not names:
            return []
        # One slot: the reports share the index's hash tag (jobs.keys.WORKERS).
        values = self.redis.mget([keys.worker_report(name) for name in names])
        return [_report(name, value) for name, value in zip(names, values, strict=True) if value is not None]

    def languages(self) -> frozenset[str] | None:
        """The Tesseract languages of the live workers (their union); None when no worker is live."""
        reports = self.live()
        if not reports:
            return None
        return frozenset().union(*(report.languages for report in reports))


@dataclass(frozen=True)
class Census:
    """The workers named in the index: ``live`` their report holds, ``lapsed`` it ran out unwithdrawn."""

    live: int = 0
    lapsed: int = 0


def census(client: StoreClient) -> Census:
    """How many reporting workers live and how many stopped renewing without withdrawing; two round trips.

    A lapsed worker (killed, hung, or cut off from the store) stays named in
    the index until a live worker's report trims it, a lifetime after its
    report ran out; a worker that stopped cleanly withdrew its name at once.
    Redis expired the report, so no host's clock decides which is which.
    """
    names = client.zrange(keys.WORKERS, 0, -1)
    if not names:
        return Census()
    values = client.mget([keys.worker_report(n.decode() if isinstance(n, bytes) else str(n)) for n in names])
    live = sum(value is not None for value in values)
    return Census(live, len(values) - live)


def _report(name: str, value: bytes | str) -> WorkerReport:
    try:
        languages = json.loads(value).get("tesseract_languages", [])
    except (ValueError, AttributeError):
        languages = []  # not a report this version wrote: the worker lives, its languages are unknown
    return WorkerReport(name, frozenset(str(language) for language in languages))
