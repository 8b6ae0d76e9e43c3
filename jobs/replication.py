"""Acknowledging a creation only once replicas have it (``OCRGW_MIN_REPLICAS``).

Redis replicates asynchronously: a primary that dies right after a write
may take it with it, and the replica the sentinels promote never saw it.
``WAIT n timeout`` blocks the calling connection until n replicas have
acknowledged every write that connection made, so the gateway answers 202
for a job only once a failover can no longer lose it.
"""

from __future__ import annotations

from typing import Any

from jobs import keys
from jobs.config import Settings
from jobs.connections import StoreClient
from jobs.contract import Reply
from jobs.errors import NotReplicated
from jobs.transitions import Scripts
from jobs.transitions.create import CREATE


def run_create(
    client: StoreClient, scripts: Scripts, settings: Settings, named_keys: dict[str, str], args: dict[str, Any]
):
    """Runs the create transition; with OCRGW_MIN_REPLICAS, returns only once that many replicas have it.

    The script, a mark and WAIT go in one pipeline, hence on one connection:
    WAIT counts the replicas that reached this connection's last write, the
    mark, which follows the creation (or, for a replay, which writes
    nothing, the original creation) in the replication stream.  A
    connection lost on the way re-runs the three, which is safe: a repeated
    create answers as a replay.  Raises ``NotReplicated`` when fewer
    replicas confirm within OCRGW_REPLICA_WAIT_MS; the job is then kept,
    not published, and a retry with the same Idempotency-Key replays it.
    """
    wanted = settings.min_replicas
    if wanted <= 0:
        return scripts.run(CREATE, keys=named_keys, args=args)
    pipe = client.pipeline(transaction=False)
    scripts.queue(pipe, CREATE, keys=named_keys, args=args)
    pipe.publish(keys.REPLICATION_MARK, args["root_id"])
    pipe.execute_command("WAIT", wanted, settings.replica_wait_ms)
    raw, _, confirmed = pipe.execute()
    reply = CREATE.decode(raw)
    if reply.code in (Reply.OK, Reply.REPLAYED) and int(confirmed) < wanted:
        raise NotReplicated(
            f"job {reply.job_id}: {confirmed} of {wanted} replicas confirmed its creation "
            f"within {settings.replica_wait_ms} ms"
        )
    return reply
