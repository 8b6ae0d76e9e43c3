"""Usage metering: what each tenant used, per model and hour (UTC), and what each job used.

The transitions that end an attempt record it in the same atomic step
(``includes/usage.lua``): ``complete`` (a success, a failure, a cancel that
stopped a running job), ``retry`` (a transient error) and ``reclaim`` (a
lease that ran out: its worker died or hung).  So every attempt counts its
engine seconds once, and every job counts its pages once, when it
completes; a retried, reclaimed or redriven job counts the pages of the
attempt that completed it, never those of an attempt that did not.

The units (``jobs.contract.UsageUnit``):

* ``ocr_pages``: pages of a completed job that its model's engine read;
* ``text_layer_pages``: pages of a completed job answered from the PDF's own
  text layer (``options.text_layer: prefer``), which no engine read;
* ``engine_us``: every attempt's run, from its start to its end as the
  job's ``runs`` record them (Redis time), whatever ended it.  An attempt
  killed with its worker ends when the sweep reclaims it, so it counts up to
  a lease (``OCRGW_LEASE_SECONDS``) and a sweep interval more than its
  worker lived: that is how long it held the job's slot;
* ``input_bytes``: the document of a completed job; a split PDF's, which its
  children share, once, with the child of its first pages (when that child
  completes);
* ``jobs``: single jobs and children completed (a parent is its children).

They are kept per tenant, per bucket (the slot of the transition that
writes them) and per UTC day, each day's record holding ``<hour>|<model>|<unit>``
fields; a reader sums the buckets (``UsageQueries``).  A record expires
``OCRGW_USAGE_RETENTION`` after its day ends, whatever the jobs' own
retention (``OCRGW_RESULT_TTL``): usage outlives the jobs it counts.

Each root also keeps its own sums (``Field.OCR_PAGES`` ... ``ENGINE_US``,
moved in the same steps) and each completed child its units, for the job's
view (``jobs.public_view``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from jobs.connections import StoreClient
from jobs.contract import Field, JobKind, UsageUnit
from jobs.ids import tenant_tag
from jobs.keys import Keyspace

HOUR, DAY = "hour", "day"
GRANULARITIES = (DAY, HOUR)
#: The longest range one read covers, by granularity: an hour's periods are many.
MAX_RANGE = {HOUR: timedelta(days=31), DAY: timedelta(days=400)}
#: The amounts a job's or a tenant's usage reports, as the API names them (engine seconds, not µs).
REPORTED = ("ocr_pages", "text_layer_pages", "engine_seconds", "input_bytes", "jobs")
_FIELD_SEPARATOR = "|"
_SECONDS_PER_DAY = 86400
#: Whole (days, hours) of the epoch a reader can ask for: the record keys name days since the epoch.
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class JobUnits:
    """What a completed job used beyond its seconds, as its worker knows it: what ``complete`` records."""

    ocr_pages: int = 0
    text_layer_pages: int = 0
    input_bytes: int = 0

    @classmethod
    def of(cls, result: Mapping[str, Any], input_bytes: int = 0) -> JobUnits:
        """The units of a result: each page read by the engine or answered from a text layer (its ``source``)."""
        pages = result.get("pages")
        if not isinstance(pages, list):  # no pages to count (a result made by hand)
            return cls(0, 0, input_bytes)
        from_layer = sum(1 for page in pages if isinstance(page, Mapping) and page.get("source") == "text_layer")
        return cls(len(pages) - from_layer, from_layer, input_bytes)

    def as_arg(self) -> dict[str, int]:
        return {
            UsageUnit.OCR_PAGES.value: self.ocr_pages,
            UsageUnit.TEXT_LAYER_PAGES.value: self.text_layer_pages,
            UsageUnit.INPUT_BYTES.value: self.input_bytes,
        }


def input_bytes_of(document_size: int, source_pages: tuple[int, int] | None) -> int:
    """The bytes a completed job counts: its own document's, or for a split's child, the whole split
    document's if its pages are the first ones (once per document), else none."""
    if source_pages is None:
        return document_size
    return document_size if source_pages[0] == 1 else 0


def reported(amounts: Mapping[str, int]) -> dict[str, Any]:
    """Stored amounts (any of the units, µs for time) as the API reports them."""
    return {
        "ocr_pages": int(amounts.get(UsageUnit.OCR_PAGES.value, 0)),
        "text_layer_pages": int(amounts.get(UsageUnit.TEXT_LAYER_PAGES.value, 0)),
        "engine_seconds": int(amounts.get(UsageUnit.ENGINE_US.value, 0)) / 1_000_000,
        "input_bytes": int(amounts.get(UsageUnit.INPUT_BYTES.value, 0)),
        "jobs": int(amounts.get(UsageUnit.JOBS.value, 0)),
    }


def job_units(record: Mapping[str, Any], run_us: Iterable[int]) -> dict[str, Any]:
    """A job's own usage from its hash: a root's sums (a single job's own), or a child's units and the
    runs of its attempts (``run_us``, µs each), which only the child's intervals keep."""
    amounts = {f.value: int(record.get(f.value) or 0) for f in (Field.OCR_PAGES, Field.TEXT_LAYER_PAGES)}
    amounts[Field.INPUT_BYTES.value] = int(record.get(Field.INPUT_BYTES.value) or 0)
    if record.get(Field.KIND.value) == JobKind.CHILD.value:
        amounts[Field.ENGINE_US.value] = sum(run_us)
    else:
        amounts[Field.ENGINE_US.value] = int(record.get(Field.ENGINE_US.value) or 0)
    out = reported(amounts)
    del out["jobs"]
    return out


# -- reading a tenant's usage ---------------------------------------------------------------------


def floor_to(moment: datetime, granularity: str) -> datetime:
    """The start of the hour or UTC day ``moment`` falls in."""
    moment = moment.astimezone(UTC)
    if granularity == HOUR:
        return moment.replace(minute=0, second=0, microsecond=0)
    return moment.replace(hour=0, minute=0, second=0, microsecond=0)


def day_number(moment: datetime) -> int:
    """UTC days since the epoch: the day a record key names."""
    return (moment.astimezone(UTC) - _EPOCH) // timedelta(days=1)


@dataclass(frozen=True)
class Period:
    """A tenant's usage of one model in one period (an hour or a UTC day, by its start)."""

    start: datetime
    model: str
    amounts: dict[str, int]


class UsageQueries:
    """Reads the tenants' usage records (never writes: the transitions do)."""

    def __init__(self, client: StoreClient, keyspace: Keyspace):
        self.redis = client
        self.keyspace = keyspace

    def periods(self, tenant: str, start: datetime, end: datetime, granularity: str) -> list[Period]:
        """The tenant's usage per period and model, for the hours from ``start`` (rounded down to its hour)
        to ``end`` (exclusive), summed over every bucket; periods with nothing used are left out."""
        tag = tenant_tag(tenant)
        first_hour = floor_to(start, HOUR)
        days = range(day_number(first_hour), day_number(end - timedelta(microseconds=1)) + 1)
        pipe = self.redis.pipeline(transaction=False)
        for day in days:
            for bucket in self.keyspace.buckets():
                pipe.hgetall(self.keyspace.usage(tag, bucket, day))
        replies = iter(pipe.execute())
        sums: dict[tuple[datetime, str], dict[str, int]] = {}
        for day in days:
            day_start = _EPOCH + timedelta(days=day)
            for _ in self.keyspace.buckets():
                for raw_field, raw_amount in next(replies).items():
                    hour, model, unit = _text(raw_field).split(_FIELD_SEPARATOR, 2)
                    moment = day_start + timedelta(hours=int(hour))
                    if not first_hour <= moment < end:
                        continue
                    period = floor_to(moment, granularity)
                    amounts = sums.setdefault((period, model), {})
                    amounts[unit] = amounts.get(unit, 0) + int(raw_amount)
        return [Period(start_, model, sums[start_, model]) for start_, model in sorted(sums)]


def totals(periods: Iterable[Period]) -> dict[str, dict[str, int]]:
    """The periods' amounts summed per model."""
    out: dict[str, dict[str, int]] = {}
    for period in periods:
        amounts = out.setdefault(period.model, {})
        for unit, amount in period.amounts.items():
            amounts[unit] = amounts.get(unit, 0) + amount
    return dict(sorted(out.items()))


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value
