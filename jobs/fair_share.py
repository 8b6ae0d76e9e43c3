"""Fair share between tenants, on the Python side: the order in which the sweep releases and publishes.

The scripts do the rest (see docs/security/fair-share.md): a tenant's in-flight
count and cap, its waiting line of groups, and the ready index whose lanes
tenants take turns in, by weight.  What is left to Python is order: the broker serves its queue
first in, first out, so the messages one sweep tick sends are interleaved
so that tenants take turns, and within a tenant its groups.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

from jobs import keys
from jobs.ids import TENANT_TAG_LENGTH
from jobs.records import Dispatch

Item = TypeVar("Item")


def tenant_of(job_id: str) -> str:
    """The tag of the tenant a job belongs to: the first digits of its root id."""
    return keys.root_of(job_id)[:TENANT_TAG_LENGTH]


def round_robin(items: Iterable[Item], job_id: Callable[[Item], str]) -> list[Item]:
    """``items`` reordered so that tenants take turns, and each tenant's groups in turn.

    Each group keeps its own order; tenants, and a tenant's groups, come in
    the order they first appear.  One item of every tenant comes before the
    second of any.
    """
    by_tenant: dict[str, dict[str, list[Item]]] = {}
    for item in items:
        job = job_id(item)
        by_tenant.setdefault(tenant_of(job), {}).setdefault(keys.root_of(job), []).append(item)
    tenants = [_interleave(list(groups.values())) for groups in by_tenant.values()]
    return _interleave(tenants)


def fair_order(dispatches: Iterable[Dispatch]) -> list[Dispatch]:
    return round_robin(dispatches, lambda d: d.job_id)


def _interleave(queues: list[list[Item]]) -> list[Item]:
    """The first of each queue, then the second of each, and so on."""
    out: list[Item] = []
    for turn in range(max((len(q) for q in queues), default=0)):
        out += [q[turn] for q in queues if turn < len(q)]
    return out
