"""The soak's checker: follows every job that got a ``202`` and checks each once it is over for good.

A root (a single job or a group) is checked as soon as it is terminal and
will not be redriven, since the retention (60 s in the soak) deletes it a
minute after its end.  What is checked, from what the system recorded:

* it ended, exactly once per run: one terminal audit event (``job``) per
  run of a single job or group (a redriven group has one per run), and for
  each child one ``job_child`` event in the first run and one in each later
  run that redrove it (it had failed), none after the group's last end;
* its outcome fits what was asked: a completed job's stored result is its
  own text, a failed one failed as its echo options asked (or ran out of
  attempts, ``lease_expired``, its workers killed under it), a cancelled
  one was cancelled by the client (itself or its group); a group's status
  follows its children's;
* the group's cap: the peak overlap of every attempt's recorded run
  (``started_at``/``finished_at``, Redis time) is at most the largest
  ``max_parallel`` the group ever had (its first, or one a PATCH asked for:
  a lowered cap only takes effect as running children finish);
* the tenant's cap, once every root is checked: the same over all of the
  tenant's children;
* its webhooks (``check_webhooks``): each job with a ``callback_url``
  reached the receiver with its final status (a redriven group's: its
  final status after its last run), deduplicated by job, status and run,
  those whose claim a crash left stuck included.
"""

from __future__ import annotations

import json
import random
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tests.integration.fanout_support import attempt_spans, peak_overlap
from tests.integration.polling import TERMINAL

if TYPE_CHECKING:
    from tests.integration.soak_support import Client
    from tests.webhook_receiver import Receiver

#: How long the checker waits, after the load stopped, for every root to end: it bounds a hang only.
SETTLE_TIMEOUT = 300.0
#: How long the webhooks of the last roots may take to arrive: it bounds a hang only.
WEBHOOK_TIMEOUT = 60.0
MAX_REDRIVES = 2


@dataclass(eq=False)
class Root:
    """A job that got a ``202``, as its client sent it, and what the client asked of it since."""

    id: str
    tenant: str
    kind: str  # "group" or "single"
    texts: list[str]  # each child's text, or the single job's
    faults: list[bool]  # whether its echo options make it fail (for good, or for a while)
    callback: bool
    child_callbacks: set[int]
    caps: set[int] = field(default_factory=set)  # every max_parallel it was created with or asked for
    cancel_asked: bool = False
    cancelled_children: set[int] = field(default_factory=set)
    no_redrive: bool = False


class Ledger:
    """The roots still to check, shared by the load threads and the checker."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._active: dict[str, Root] = {}

    def add(self, root: Root) -> None:
        with self._lock:
            self._active[root.id] = root  # a resent submission replayed: the same id, once

    def active(self, tenant: str | None = None) -> list[Root]:
        with self._lock:
            return [r for r in self._active.values() if tenant is None or r.tenant == tenant]

    def done(self, root: Root) -> None:
        with self._lock:
            self._active.pop(root.id, None)


class Checker(threading.Thread):
    def __init__(self, ledger: Ledger, clients: Mapping[str, Client], rng: random.Random) -> None:
        super().__init__(name="soak-checker", daemon=True)
        self.ledger, self.clients, self.rng = ledger, clients, rng
        self.stopping = threading.Event()
        self.violations: list[str] = []
        self.counts: Counter[str] = Counter()
        self.spans: dict[str, list[tuple[int, int]]] = defaultdict(list)  # per tenant
        self.expected_webhooks: set[tuple[str, str, int]] = set()
        self.error: BaseException | None = None

    def finish(self) -> None:
        """The load stopped: check what is left as it ends, then stop."""
        self.stopping.set()

    def run(self) -> None:
        try:
            self._follow_all()
            self._check_tenant_caps()
        except BaseException as error:  # reported by the soak
            self.error = error

    def _follow_all(self) -> None:
        deadline: float | None = None
        while True:
            roots = self.ledger.active()
            if self.stopping.is_set():
                if not roots:
                    return
                deadline = deadline or time.monotonic() + SETTLE_TIMEOUT
                if time.monotonic() > deadline:
                    self.violations += [f"{r.kind} {r.id} never ended" for r in roots]
                    return
            for root in roots:
                self.follow(root)
            time.sleep(0.3)

    def follow(self, root: Root) -> None:
        client = self.clients[root.tenant]
        response = client.call("GET", f"/jobs/{root.id}?children=none", patience=60)
        if response is None:
            return  # nothing answers for now: next round
        if response.status_code == 404:
            self.violations.append(f"{root.kind} {root.id} answered 202 and is not found before it was checked")
            self.ledger.done(root)
            return
        view = response.json()
        if view["status"] not in TERMINAL:
            return
        if root.kind == "group" and self._redrive_wanted(root, view):
            self.redrive(root, view)
            return
        self.settle(root)

    def _redrive_wanted(self, root: Root, view: Mapping[str, Any]) -> bool:
        if root.no_redrive or self.stopping.is_set() or view["redrives"] >= MAX_REDRIVES:
            return False
        if view["status"] != "failed" or view["counts"]["failed"] == 0:
            return False
        root.no_redrive = self.rng.random() < 0.4  # decided once per run
        return not root.no_redrive

    def redrive(self, root: Root, view: Mapping[str, Any]) -> None:
        key = f"soak-redrive-{root.id}-{view['redrives']}"
        client = self.clients[root.tenant]
        response = client.call("POST", f"/jobs/{root.id}/retry", {}, {"Idempotency-Key": key}, patience=60)
        if response is not None and response.status_code == 202:
            self.counts["redrives"] += response.headers.get("Idempotent-Replayed") != "true"
        elif response is not None:
            root.no_redrive = True  # a 409: settle it as it is
            if response.status_code != 409:
                self.violations.append(f"redrive of {root.id}: {response.status_code} {response.text[:200]}")

    def settle(self, root: Root) -> None:
        """Checks a root that is over for good, and forgets it."""
        client = self.clients[root.tenant]
        view = client.get(f"/jobs/{root.id}?limit=200")
        events = client.get(f"/jobs/{root.id}/events")
        result = client.get(f"/jobs/{root.id}/result") if view and view.get("result_url") else None
        if view is None or events is None:
            self.violations.append(f"{root.kind} {root.id} could not be read once it ended")
        else:
            found = check_root(root, view, events["events"], result)
            self.violations += [f"{root.kind} {root.id}: {v}" for v in found]
            self._count(root, view)
        self.ledger.done(root)

    def _count(self, root: Root, view: Mapping[str, Any]) -> None:
        self.counts[f"{root.kind}s {view['status']}"] += 1
        if root.callback:
            self.expected_webhooks.add((root.id, view["status"], view.get("redrives", 0)))
        for child in view.get("children", []):
            self.counts[f"children {child['status']}"] += 1
            if child["index"] in root.child_callbacks:
                self.expected_webhooks.add((child["id"], child["status"], 0))
            self.spans[root.tenant] += child_spans(child)

    def _check_tenant_caps(self) -> None:
        from tests.integration.soak_support import TENANT_CAP

        for tenant, spans in self.spans.items():
            peak = peak_overlap(spans)
            self.counts[f"tenant {tenant} peak running children"] = peak
            if peak > TENANT_CAP:
                self.violations.append(f"tenant {tenant}: {peak} children ran at once, its cap is {TENANT_CAP}")

    def check_webhooks(self, receiver: Receiver, stuck: set[str]) -> tuple[dict[str, int], list[str]]:
        """Waits for every expected webhook; returns the numbers, and the lost ones as violations.

        ``stuck`` are the jobs whose webhook claim a crash left unanswered
        (``soak_support.ClaimWatcher``): counted, and expected like the others.
        """
        deadline = time.monotonic() + WEBHOOK_TIMEOUT
        while True:
            received = [received_key(r.body) for r in list(receiver.received)]
            lost = self.expected_webhooks - set(received)
            if not lost or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        numbers = {
            "expected": len(self.expected_webhooks),
            "requests_received": len(received),
            "distinct": len(set(received)),
            "stuck_in_a_claim": len(stuck),
            "stuck_in_a_claim_and_lost": len({k for k in lost if k[0] in stuck}),
            "lost": len(lost),
        }
        return numbers, [f"webhook lost: {job_id} {status} (run {run})" for job_id, status, run in sorted(lost)]

    def numbers(self) -> dict[str, int]:
        return dict(sorted(self.counts.items()))


def received_key(body: bytes) -> tuple[str, str, int]:
    view = json.loads(body)
    return view["id"], view["status"], view.get("redrives", 0) if view.get("kind") == "parent" else 0


def child_spans(child: Mapping[str, Any]) -> list[tuple[int, int]]:
    return attempt_spans([child])


# -- the checks of one root -------------------------------------------------------------------------


def check_root(
    root: Root, view: Mapping[str, Any], events: Sequence[Mapping[str, Any]], result: Mapping[str, Any] | None
) -> list[str]:
    audit = [e for e in events if e["operation"] != "webhook"]
    if root.kind == "single":
        return single_audit(view, audit) + single_outcome(root, view)
    found = group_audit(view, audit) + group_outcome(root, view, result)
    try:
        peak = peak_overlap(attempt_spans(view["children"]))
    except AssertionError as error:
        return [*found, f"bad recorded runs: {error}"]
    if peak > max(root.caps):
        found.append(f"{peak} children ran at once, its largest max_parallel was {max(root.caps)}")
    return found


def single_audit(view: Mapping[str, Any], audit: Sequence[Mapping[str, Any]]) -> list[str]:
    ended = [(e["operation"], e["status"]) for e in audit]
    if ended != [("job", view["status"])]:
        return [f"audit events {ended}, expected one ('job', {view['status']!r})"]
    return []


def single_outcome(root: Root, view: Mapping[str, Any]) -> list[str]:
    status = view["status"]
    if status == "completed":
        pages = [p["text"] for p in view["result"]["pages"]]
        if pages != root.texts[0].split("\f"):
            return [f"completed with the pages {pages}, sent {root.texts[0]!r}"]
    elif status == "failed":
        return failure_unexplained(view["error_code"], root.faults[0])
    elif status == "cancelled" and not root.cancel_asked:
        return ["cancelled, and no cancel was asked"]
    return []


def failure_unexplained(error_code: str | None, fault: bool) -> list[str]:
    """A failure is explained by the job's echo options, or by its workers being killed under it every time."""
    if error_code == "lease_expired" or (error_code == "echo_failed" and fault):
        return []
    return [f"failed with {error_code}, and {'a fault' if fault else 'no fault'} was asked"]


def group_audit(view: Mapping[str, Any], audit: Sequence[Mapping[str, Any]]) -> list[str]:
    """One ``job`` event per run; each child's ``job_child`` events one per run it took part in."""
    found = []
    ends = [e["status"] for e in audit if e["operation"] == "job"]
    if len(ends) != view["redrives"] + 1 or ends[-1:] != [view["status"]]:
        found.append(f"the group's ends {ends}, {view['redrives']} redrive(s), status {view['status']}")
    run = 0
    per_run: dict[str, list[list[str]]] = {c["id"]: [[] for _ in range(len(ends) + 1)] for c in view["children"]}
    for event in audit:
        if event["operation"] == "job":
            run += 1
        elif event["job_id"] in per_run:
            per_run[event["job_id"]][run].append(event["status"])
        else:
            found.append(f"an event of no child of it: {event}")
    for child in view["children"]:
        found += child_audit(child, per_run[child["id"]])
    return found


def child_audit(child: Mapping[str, Any], runs: list[list[str]]) -> list[str]:
    last = None
    for run, statuses in enumerate(runs):
        took_part = run == 0 or (last == "failed" and run < len(runs) - 1)
        if len(statuses) != (1 if took_part else 0):
            return [f"child {child['index']} ended {statuses} in run {run} (before it: {last})"]
        last = statuses[-1] if statuses else last
    if last != child["status"]:
        return [f"child {child['index']} is {child['status']}, its last audit event says {last}"]
    return []


def group_outcome(root: Root, view: Mapping[str, Any], result: Mapping[str, Any] | None) -> list[str]:
    found = []
    texts = {c["index"]: c["text"] for c in (result or {}).get("children", [])}
    for child in view["children"]:
        index, status = child["index"], child["status"]
        if status == "completed" and texts.get(index) != root.texts[index]:
            found.append(f"child {index} completed with {texts.get(index)!r}, sent {root.texts[index]!r}")
        elif status == "failed":
            found += [f"child {index} {v}" for v in failure_unexplained(child["error_code"], root.faults[index])]
        elif status == "cancelled" and not (root.cancel_asked or index in root.cancelled_children):
            found.append(f"child {index} cancelled, and no cancel was asked")
    statuses = {c["status"] for c in view["children"]}
    if view["status"] == "completed" and statuses != {"completed"}:
        found.append(f"completed with children {sorted(statuses)}")
    if view["status"] == "failed" and not statuses & {"failed", "cancelled"}:
        found.append("failed with no failed or cancelled child")
    if view["status"] == "cancelled" and not root.cancel_asked:
        found.append("cancelled, and no cancel of the group was asked")
    return found
