"""A tenant's open live event streams, counted across every gateway: OCRGW_STREAM_MAX_PER_TENANT.

Each open stream holds a lease in its tenant's set (``keys.tenant_streams``,
in the tenant's ledger slot): its id, scored by when the lease runs out.
The gateway process serving the stream renews it while the stream is open
and gives it back when it ends; a process that dies without a word leaves
leases that run out ``LEASE_MS`` later, so a crash holds a tenant's places
for a minute at most.

Admitting adds the lease first and counts after, each command atomic: two
gateways admitting at once both count both, so past the limit both may
refuse (the client retries after ``Retry-After``), and never are there more
open than the limit.  Expired leases are dropped first.  The set itself
expires with its newest lease, so a tenant that stops streaming leaves no
key behind.  Lease times are the gateways' clocks, which a minute's lease
tolerates being a little apart.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable

from jobs import keys
from jobs.connections import StoreClient
from jobs.ids import tenant_tag

#: How long a lease lasts unless renewed (ms); renewed every third of it.
LEASE_MS = 60_000


class StreamLeases:
    """The leases of the streams one gateway process admits, in the store."""

    def __init__(self, client: StoreClient, lease_ms: int = LEASE_MS, clock: Callable[[], float] = time.time):
        self.client, self.lease_ms, self.clock = client, lease_ms, clock

    def admit(self, tenant: str, stream_id: str, limit: int) -> bool:
        """Takes a lease for the stream if the tenant holds fewer than ``limit``; False (and none taken) if not."""
        key = keys.tenant_streams(tenant_tag(tenant))
        now = self._now_ms()
        pipe = self.client.pipeline(transaction=False)
        pipe.zremrangebyscore(key, "-inf", now)
        pipe.zadd(key, {stream_id: now + self.lease_ms})
        pipe.zcard(key)
        pipe.pexpire(key, self.lease_ms)
        _, _, count, _ = pipe.execute()
        if count <= limit:
            return True
        self.client.zrem(key, stream_id)
        return False

    def renew(self, leases: Iterable[tuple[str, str]]) -> None:
        """Extends the leases of open streams, (tenant, stream id) each, in one round trip (per slot)."""
        now = self._now_ms()
        pipe = self.client.pipeline(transaction=False)
        renewed = False
        for tenant, stream_id in leases:
            key = keys.tenant_streams(tenant_tag(tenant))
            pipe.zadd(key, {stream_id: now + self.lease_ms}, xx=True)
            pipe.pexpire(key, self.lease_ms)
            renewed = True
        if renewed:
            pipe.execute()

    def release(self, tenant: str, stream_id: str) -> None:
        self.client.zrem(keys.tenant_streams(tenant_tag(tenant)), stream_id)

    def held(self, tenant: str) -> int:
        """The tenant's leases not yet run out."""
        return int(self.client.zcount(keys.tenant_streams(tenant_tag(tenant)), f"({self._now_ms()}", "+inf"))

    def _now_ms(self) -> int:
        return int(self.clock() * 1000)
