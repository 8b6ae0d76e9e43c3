"""Fan-out with every stateless role replicated: two gateways, two coordinators, two beats.

Both beats schedule the sweep and both coordinators run it, while the
completions of one worker release children too; both gateways create and
replay groups.  The cap and exactly-once finalization must hold regardless
of which process happens to release or finish what.
"""

from __future__ import annotations

import pytest

from tests.harness import BEAT_READY, CELERY_READY, wait_until
from tests.integration.fanout_support import (
    Gateway,
    assert_audited_once,
    echo_children,
    group_body,
    in_flight_of,
    intervals,
    peak_overlap,
    submit_group,
    wait_terminal,
)

pytestmark = pytest.mark.integration

N_CHILDREN = 40
MAX_PARALLEL = 3


def test_replicated_coordinators_and_gateways_keep_the_cap_and_finalize_once(procs):
    db = procs.fresh_db()
    env = {"OCRGW_SWEEP_INTERVAL": "0.2"}
    started = [
        procs.worker(concurrency=4, db=db, env=env, wait=False),
        procs.coordinator(db=db, env=env, wait=False),
        procs.coordinator(db=db, env=env, wait=False),
    ]
    beats = [procs.beat(db=db, env=env, wait=False) for _ in range(2)]
    webs = [procs.web(db=db, env=env, wait=False) for _ in range(2)]
    for proc in started:
        proc.wait_ready(CELERY_READY)
    for beat in beats:
        beat.wait_ready(BEAT_READY)
    for web in webs:
        web.wait_ready(web.healthy)
    coordinators = started[1:]

    gateways = [Gateway(web.base_url) for web in webs]
    try:
        # Each gateway creates one group; the other replays it with the same key.
        parents = []
        for g, gateway in enumerate(gateways):
            children = echo_children(N_CHILDREN, delay_ms=50)
            key = f"replicas-group-{g}"
            parent_id = submit_group(gateway, children, MAX_PARALLEL, idempotency_key=key).json()["id"]
            other = gateways[1 - g]
            replay = other.post_json(group_body(children, MAX_PARALLEL), {"Idempotency-Key": key})
            assert replay.status_code == 202, replay.text
            assert replay.headers.get("Idempotent-Replayed") == "true"
            assert replay.json()["id"] == parent_id
            parents.append(parent_id)

        def capped(view):
            assert in_flight_of(view) <= MAX_PARALLEL, view["counts"]

        views = []
        for g, parent_id in enumerate(parents):
            # Polled through the gateway that did not create it.
            views.append(wait_terminal(gateways[1 - g].job, parent_id, timeout=120, on_poll=capped))

        for parent_id, view in zip(parents, views):
            assert view["status"] == "completed", view["counts"]
            assert view["counts"]["completed"] == N_CHILDREN
            assert view["total"] == N_CHILDREN and len(view["children"]) == N_CHILDREN
            spans = intervals(view["children"])
            assert peak_overlap(spans) <= MAX_PARALLEL, f"peak {peak_overlap(spans)}: {spans}"
            assert all(c["attempts"] == 1 for c in view["children"])
            assert view["result"]["text"] == "\n\n".join(f"child-{i}" for i in range(N_CHILDREN))
            for gateway in gateways:
                assert_audited_once(gateway, parent_id, [c["id"] for c in view["children"]],
                                    "completed")
    finally:
        for gateway in gateways:
            gateway.close()

    # The replicas really were there: each coordinator ran sweeps of its own.
    for coordinator in coordinators:
        wait_until(lambda c=coordinator: "ocrgw.sweep" in c.log_text(), timeout=30,
                   message=f"{coordinator.name} never ran a sweep")
