"""Flower shows the work: a real ``celery -A workers flower`` beside a real stack sees a finished group's tasks.

The stack runs with the default settings, task events off: Flower turns
them on itself (its ``enable_events``).  A child is not a Celery task of
its own: a worker starts from an ``ocrgw.pull`` wake-up (its arguments the
model and the lane) and takes the model's next ready job.  Kept slots are
off here, so each wake-up's task runs exactly one child and answers what
became of it (with kept slots, a task goes on to the next ready jobs, and
Flower shows only the tasks there were).  Flower's HTTP API (``/api/tasks``,
open with ``FLOWER_UNAUTHENTICATED_API``) must list, under their name, one
succeeded task per child that answered ``completed``: ``ocrgw.pull``
wake-ups of the echo model's batch lane (or, should the sweep have given a
child a message of its own, ``ocrgw.run`` naming it).  A wake-up that found
nothing ready answers ``skipped`` and ran no child.
"""

from __future__ import annotations

import ast
import json
import sys

import pytest

from tests.harness import free_port, http_status, wait_until
from tests.integration.fanout_support import Gateway, echo_child, submit_group
from tests.integration.observability_support import WAIT, ProcfileStack, get
from tests.integration.polling import wait_for_job
from tests.keyspace import keys

pytestmark = pytest.mark.integration

RUN_TASK = "ocrgw.run"
PULL_TASK = "ocrgw.pull"
EVENTS_TURNED_ON = "Events of group {task} enabled by remote"  # what a worker logs on Flower's enable_events


@pytest.fixture(scope="module")
def stack_and_flower(module_procs):
    stack = ProcfileStack(
        module_procs, module_procs.fresh_db(), {"OCRGW_SWEEP_INTERVAL": "0.2", "OCRGW_KEEP_SLOT_SECONDS": "0"}
    )
    # The worker and coordinator as the Procfile runs them: a worker started without gossip and
    # heartbeats (and without OCRGW_TASK_EVENTS) has no event dispatcher for Flower to turn on.
    stack.celery("worker", quiet_start=False)
    stack.celery("coordinator", quiet_start=False)
    stack.celery("beat")
    stack.web()
    stack.ready()
    port = free_port()
    flower = module_procs.start(
        "flower",
        [sys.executable, "-m", "celery", "-A", "workers", "flower", f"--port={port}", "--address=127.0.0.1"],
        env={**stack.process_env(), "FLOWER_UNAUTHENTICATED_API": "true"},
        wait=False,
    )
    base = f"http://127.0.0.1:{port}"
    flower.wait_ready(lambda: http_status(f"{base}/healthcheck") == 200, WAIT)
    # Flower learns of a task from the events sent once it listens: wait until it knows the worker.
    wait_until(lambda: api(base, "/api/workers?refresh=1"), WAIT, interval=0.5, message="flower never saw a worker")
    # Task events are off by default (OCRGW_TASK_EVENTS); Flower turns them on itself, every 5 s.
    for name in ("worker", "coordinator"):
        stack.procs[name].wait_ready(EVENTS_TURNED_ON, WAIT)
    # And Flower hears them: the sweep's ticks show up, under their own name.
    wait_until(
        lambda: api(base, "/api/tasks?taskname=ocrgw.sweep"),
        WAIT,
        interval=0.5,
        message="flower never saw a sweep task",
    )
    return stack, base


def api(base: str, path: str):
    status, _, body = get(base + path, timeout=30)
    assert status == 200
    return json.loads(body)


def test_flower_lists_a_finished_group_s_tasks_by_name(stack_and_flower):
    stack, flower = stack_and_flower
    with Gateway(stack.procs["web"].base_url) as gateway:
        parent_id = submit_group(gateway, [echo_child(f"flower-{i}") for i in range(4)], 2).json()["id"]
        view = wait_for_job(gateway.job, parent_id, timeout=WAIT)
    children = {c["id"] for c in view["children"]}
    assert view["status"] == "completed"

    def children_s_tasks() -> list[dict] | None:
        tasks = [t for name in (PULL_TASK, RUN_TASK) for t in api(flower, f"/api/tasks?taskname={name}").values()]
        done = [t for t in tasks if t["state"] == "SUCCESS" and ast.literal_eval(t["result"]) == "completed"]
        return done if len(done) >= len(children) else None

    done = wait_until(children_s_tasks, WAIT, interval=0.5, message="flower did not show a task per child")

    # One task per child (kept slots are off): no more completed tasks than children.
    assert len(done) == len(children)
    pulls = [t for t in done if t["name"] == PULL_TASK]
    # A wake-up names its model, lane and bucket: the group's.
    assert {tuple(ast.literal_eval(t["args"])) for t in pulls} <= {("echo", "batch", keys.bucket_of(parent_id))}
    runs = {ast.literal_eval(t["args"])[0] for t in done if t["name"] == RUN_TASK}
    assert runs <= children
    assert len(pulls) + len(runs) == len(children)
