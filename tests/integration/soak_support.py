"""The chaos soak: tenants send a mixed load while a random process is SIGKILLed every few seconds.

``run_soak`` starts a whole deployment on a redis-server of its own (AOF
on, so a killed Redis comes back with its data): two workers, the
coordinator, beat, two gateways and the webhook deliverer, with API keys
for three tenants and a cap per tenant.  Then, for the given time:

* each tenant's client sends groups (some children made to fail, some
  with callbacks), single jobs (some of several pages), cancels of groups,
  children and single jobs, and PATCHes of a group's ``max_parallel``.
  Every submission carries an ``Idempotency-Key`` and is sent again, to
  whichever gateway is up, until it gets an answer: only the jobs that got a
  ``202`` are checked (one that never did may or may not exist);
* the checker (``tests/integration/soak_checks.py``) follows every job that
  got a ``202``, redrives some failed groups, and checks each root as soon as
  it is over for good, before the retention deletes it;
* the chaos monkey SIGKILLs one process every few seconds, each kind in turn
  (a random one of its kind, kinds in a random order each round), and starts
  it again; it also restarts any process that exits on its own (a Celery
  process can give up when Redis goes away twice), as a supervisor would.

Then the load stops, every process is brought back, and once every root is
checked and every webhook in, the keyspace must empty itself within the
retention (``OCRGW_RESULT_TTL`` at its minimum, 60 s) but for the keys that
lapse or are renewed on their own (``ALLOWED_KEYS``).  The report holds the
numbers and every violation found; none is expected.
"""

from __future__ import annotations

import itertools
import json
import random
import signal
import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import redis
import requests

from tests.harness import BEAT_READY, CELERY_READY, Proc, ProcGroup, RedisServer, WebProc, find_redis_server
from tests.integration.chaos_support import FAST, b64
from tests.integration.soak_checks import Checker, Ledger, Root
from tests.keyspace import keys
from tests.webhook_receiver import Receiver

TENANTS = {"acme": "soak-key-acme-5f1c", "globex": "soak-key-globex-93d0", "initech": "soak-key-initech-2b7e"}
#: Children one tenant may have queued or processing across its groups: below the four worker slots, so it binds.
TENANT_CAP = 3
RESULT_TTL = 60  # the retention's floor
KINDS = ("worker", "coordinator", "beat", "gateway", "webhooks", "redis")
#: A claim holds OCRGW_WEBHOOK_TIMEOUT plus this: a crash between a webhook's claim and its answer
#: delays that webhook so long (5 minutes by default; short here, so the soak waits for it).
CLAIM_MARGIN_SECONDS = 10
#: A webhook due this far ahead is claimed: a failed attempt's backoff is at most 2 s here, a claim 15 s.
CLAIMED_BEYOND_SECONDS = 4
#: A webhook claimed this long without an answer recorded is stuck: a delivery to the receiver takes
#: milliseconds, so its claim was lost in a crash and holds until it runs out.
STUCK_SECONDS = 8

ENV: dict[str, str] = {
    **FAST,
    "OCRGW_MAX_ATTEMPTS": "5",  # a child whose worker is killed again and again still gets through, mostly
    "OCRGW_API_KEYS": ",".join(f"{tenant}:{key}" for tenant, key in TENANTS.items()),
    "OCRGW_TENANT_MAX_INFLIGHT": str(TENANT_CAP),
    "OCRGW_RESULT_TTL": str(RESULT_TTL),
    "OCRGW_IDEMPOTENCY_TTL": str(RESULT_TTL),  # at most the retention
    "OCRGW_WEBHOOK_ALLOW_PRIVATE": "1",  # the receiver is on loopback
    "OCRGW_WEBHOOK_SECRET": "soak-webhook-secret-0123456789",
    "OCRGW_WEBHOOK_BACKOFF": "0.5",
    "OCRGW_WEBHOOK_BACKOFF_MAX": "2",
    "OCRGW_WEBHOOK_TIMEOUT": "5",
    "OCRGW_WEBHOOK_CLAIM_MARGIN": str(CLAIM_MARGIN_SECONDS),
}

#: ``ocrgw:*`` keys that may outlive every job, and why.
ALLOWED_KEYS = {
    "worker reports (ocrgw:{workers}, ocrgw:{workers}:<name>)": "renewed by each live worker, lapse 3 intervals "
    "after it",
    "the sweep locks (ocrgw:{<bucket>}:sweep:lock)": "held during each sweep, with a TTL in case its holder dies",
    "call records (ocrgw:{<bucket>}:<root>:call:<token>, ocrgw:{<bucket>}:pull_call:<token>)": "a transition "
    "call's answer, kept one minute (with a TTL) for a retry",
    "the gauges' count (ocrgw:gauges)": "one key, rewritten by the coordinator every OCRGW_GAUGE_INTERVAL, dated",
    "the tenants' usage records (ocrgw:{<bucket>}:usage:<tenant tag>:<day>)": "what the jobs used, kept "
    "OCRGW_USAGE_RETENTION after its day (with a TTL), whatever the jobs' retention",
    "the store's layout (ocrgw:{layout}:layout)": "one key, recorded at the first start, which every process checks",
    "the lanes' turns (ocrgw:{<bucket>}:turns)": "each lane's clock and its tenants' finishes and weights: a few "
    "fields per tenant, the lanes' state rather than any job's",
}


def allowed_key(name: str, ttl_ms: int) -> bool:
    """Whether ``name`` may stay once every job is gone: see ``ALLOWED_KEYS``."""
    if keys.is_worker_report(name) or keys.is_turns(name) or name in (keys.GAUGES, keys.LAYOUT):
        return True
    return (keys.is_sweep_lock(name) or keys.is_call_record(name) or keys.is_usage_record(name)) and ttl_ms > 0


# -- the deployment -------------------------------------------------------------------------------


class Deployment:
    """Every process of one ocrgw deployment, restartable one by one, on a redis-server of its own."""

    def __init__(self, work_dir: Path, env: dict[str, str]) -> None:
        self.env = env
        self.group = ProcGroup(work_dir / "procs", redis=lambda: self.redis, label="soak")
        binary = find_redis_server()
        assert binary is not None, "redis-server is not installed"
        self.redis = RedisServer(self.group, work_dir / "redis", appendonly=True, binary=binary)
        self.procs: dict[str, list[Proc]] = {}
        self.lock = threading.Lock()

    def start(self) -> None:
        self.redis.start()
        starters = {"worker": 2, "coordinator": 1, "beat": 1, "gateway": 2, "webhooks": 1}
        for kind, count in starters.items():
            self.procs[kind] = [self.launch(kind) for _ in range(count)]
        self.wait_ready()

    def launch(self, kind: str) -> Proc:
        """Starts one process of ``kind`` without waiting for it."""
        g, env = self.group, self.env
        if kind == "worker":
            return g.worker(concurrency=2, db=0, env=env, wait=False)
        if kind == "coordinator":
            return g.coordinator(db=0, env=env, wait=False)
        if kind == "beat":
            return g.beat(db=0, env=env, wait=False)
        if kind == "gateway":
            return g.web(db=0, env=env, threads=8, wait=False)
        if kind == "webhooks":
            return g.webhooks(db=0, env=env, wait=False)
        raise ValueError(kind)

    def wait_ready(self) -> None:
        for kind, procs in self.procs.items():
            for proc in procs:
                if isinstance(proc, WebProc):
                    proc.wait_ready(proc.healthy)
                else:
                    proc.wait_ready(BEAT_READY if kind == "beat" else CELERY_READY)

    def gateway_urls(self) -> list[str]:
        with self.lock:
            return [p.base_url for p in self.procs["gateway"] if isinstance(p, WebProc) and p.alive]

    def kill(self, kind: str, rng: random.Random) -> None:
        """SIGKILLs one process of ``kind`` (its whole process group) and starts another in its place."""
        if kind == "redis":
            self.redis.restart(hard=True)
            return
        with self.lock:
            procs = self.procs[kind]
            index = rng.randrange(len(procs))
            procs[index].kill(signal.SIGKILL)
            procs[index].close()
            procs[index] = self.launch(kind)

    def revive(self) -> Counter[str]:
        """Starts again every process that exited on its own; returns how many of each kind."""
        revived: Counter[str] = Counter()
        if self.redis.proc is not None and not self.redis.proc.alive:
            self.redis.restart(hard=True)
            revived["redis"] += 1
        with self.lock:
            for kind, procs in self.procs.items():
                for index, proc in enumerate(procs):
                    if not proc.alive:
                        proc.close()
                        procs[index] = self.launch(kind)
                        revived[kind] += 1
        return revived

    def close(self) -> None:
        self.group.close()


class ChaosMonkey(threading.Thread):
    """Kills a process every ``interval`` seconds (each kind in turn) and revives what exits on its own."""

    def __init__(self, deployment: Deployment, interval: float, rng: random.Random) -> None:
        super().__init__(name="chaos-monkey", daemon=True)
        self.deployment = deployment
        self.interval = interval
        self.rng = rng
        self.stop = threading.Event()
        self.kills: Counter[str] = Counter()
        self.exits: Counter[str] = Counter()
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            order = self._kinds()
            next_kill = time.monotonic() + self.interval
            while not self.stop.wait(0.3):
                self.exits.update(self.deployment.revive())
                if time.monotonic() >= next_kill:
                    kind = next(order)
                    self.deployment.kill(kind, self.rng)
                    self.kills[kind] += 1
                    next_kill = time.monotonic() + self.interval * self.rng.uniform(0.5, 1.5)
        except BaseException as error:  # reported by the soak: a monkey that died would kill nothing more
            self.error = error

    def _kinds(self):
        """Every kind once per round, the rounds each in a random order."""
        while True:
            round_ = list(KINDS)
            self.rng.shuffle(round_)
            yield from round_


class ClaimWatcher(threading.Thread):
    """Notes the webhooks stuck in a claim: claimed, and no answer recorded, for ``STUCK_SECONDS``.

    A crash between a webhook's claim and its answer (its deliverer killed
    while it held the message, the coordinator killed between claiming and
    handing it over, Redis restarted in the hand-off) leaves it claimed until
    the claim runs out, ``OCRGW_WEBHOOK_TIMEOUT`` plus
    ``OCRGW_WEBHOOK_CLAIM_MARGIN`` on, and its job is kept past its retention
    until the next attempt delivers it.  Counted, to show the soak met the
    case; such a webhook missing is a violation like any other.
    """

    def __init__(self, deployment: Deployment) -> None:
        super().__init__(name="claim-watcher", daemon=True)
        self.deployment = deployment
        self.stop = threading.Event()
        self.stuck: set[str] = set()
        self.error: BaseException | None = None

    def run(self) -> None:
        claimed_since: dict[str, float] = {}
        try:
            while not self.stop.wait(0.5):
                claimed = self._claimed()
                if claimed is None:
                    continue  # Redis is away: the claims seen so far still hold
                now = time.monotonic()
                claimed_since = {job_id: claimed_since.get(job_id, now) for job_id in claimed}
                self.stuck |= {job_id for job_id, since in claimed_since.items() if now - since >= STUCK_SECONDS}
        except BaseException as error:  # reported by the soak
            self.error = error

    def _claimed(self) -> set[str] | None:
        later_ms = int((time.time() + CLAIMED_BEYOND_SECONDS) * 1000)
        try:
            with self.deployment.redis.client(0, socket_timeout=2, socket_connect_timeout=2) as client:
                return {
                    m.decode() for b in keys.buckets() for m in client.zrangebyscore(keys.webhooks(b), later_ms, "+inf")
                }
        except redis.RedisError:
            return None


# -- talking to the gateways ----------------------------------------------------------------------


class Client:
    """One tenant's HTTP client: each request goes to a live gateway, again until something answers."""

    def __init__(self, deployment: Deployment, tenant: str, rng: random.Random) -> None:
        self.deployment = deployment
        self.tenant = tenant
        self.rng = rng
        self.http = requests.Session()
        self.http.trust_env = False
        self.http.headers["Authorization"] = f"Bearer {TENANTS[tenant]}"
        self.resent = 0  # requests sent again after no answer, or a 5xx
        self.server_errors: list[str] = []  # a 500 is a bug (a 503 is an outage, and says so)

    def call(
        self, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None, patience: float = 120
    ) -> requests.Response | None:
        """The first answer below 500 from any gateway, or None once ``patience`` seconds have passed.

        A request that got no answer, or a 5xx, may have been carried out: it is sent again
        as it was (a submission with its Idempotency-Key), which is what a client must do.
        """
        deadline = time.monotonic() + patience
        data = None if body is None else json.dumps(body)
        sent = {"Content-Type": "application/json", **(headers or {})} if data is not None else headers
        while time.monotonic() < deadline:
            urls = self.deployment.gateway_urls()
            if urls:
                try:
                    response = self.http.request(
                        method, self.rng.choice(urls) + path, data=data, headers=sent, timeout=10
                    )
                    if response.status_code < 500:
                        return response
                    if response.status_code == 500:
                        self.server_errors.append(f"{method} {path} answered 500: {response.text[:200]}")
                except requests.RequestException:
                    pass
                self.resent += 1
            time.sleep(0.2)
        return None

    def get(self, path: str) -> dict[str, Any] | None:
        """A GET's JSON, or None when it found nothing (a 404: expired, or not there) or nothing answered."""
        response = self.call("GET", path, patience=60)
        if response is None or response.status_code != 200:
            return None
        return response.json()

    def close(self) -> None:
        self.http.close()


# -- the load ---------------------------------------------------------------------------------------


@dataclass
class LoadCounts:
    groups: int = 0
    children: int = 0
    singles: int = 0
    unanswered: int = 0  # submissions that never got an answer: they may or may not exist
    refused: list[str] = field(default_factory=list)  # a 4xx to a submission: the soak's own bug
    cancels: int = 0
    child_cancels: int = 0
    patches: int = 0


def echo_options(rng: random.Random, text_delay: tuple[int, int]) -> tuple[dict[str, Any], bool]:
    """Random echo options, and whether they make the job fail (for good, or for a while)."""
    options: dict[str, Any] = {"delay_ms": rng.randint(*text_delay)}
    roll = rng.random()
    if roll < 0.07:
        options["fail"] = True
    elif roll < 0.17:
        options["fail_until"] = time.time() + rng.uniform(1, 6)  # fails at first, a redrive goes through
    return options, "fail" in options or "fail_until" in options


class Load(threading.Thread):
    """One tenant's client: submissions, cancels and PATCHes, keeping a few of its roots in flight."""

    MAX_ACTIVE = 5

    def __init__(self, client: Client, ledger: Ledger, callback: str, stop: threading.Event) -> None:
        super().__init__(name=f"load-{client.tenant}", daemon=True)
        self.client, self.ledger, self.callback, self.stop = client, ledger, callback, stop
        self.rng = client.rng
        self.counts = LoadCounts()
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            while not self.stop.is_set():
                self.step()
                self.stop.wait(self.rng.uniform(0.2, 0.6))
        except BaseException as error:  # reported by the soak
            self.error = error

    def step(self) -> None:
        active = self.ledger.active(self.client.tenant)
        roll = self.rng.random()
        if len(active) < self.MAX_ACTIVE and roll < 0.4:
            self.submit_group()
        elif len(active) < self.MAX_ACTIVE and roll < 0.65:
            self.submit_single()
        elif active and roll < 0.8:
            self.patch(self.rng.choice([r for r in active if r.kind == "group"] or active))
        elif active:
            self.cancel(self.rng.choice(active))

    def submit_group(self) -> None:
        n = self.rng.randint(2, 8)
        texts = [f"{self.client.tenant}-{uuid.uuid4().hex[:10]}-{i}" for i in range(n)]
        children, faults, callbacks = [], [], set()
        for index, text in enumerate(texts):
            options, fault = echo_options(self.rng, (30, 250))
            child = {"model": "echo", "content_type": "text/plain", "payload": b64(text), "options": options}
            if self.rng.random() < 0.15:
                child["callback_url"] = self.callback
                callbacks.add(index)
            children.append(child)
            faults.append(fault)
        cap = self.rng.randint(1, 4)
        fanout: dict[str, Any] = {"max_parallel": cap, "children": children}
        with_callback = self.rng.random() < 0.6
        if with_callback:
            fanout["callback_url"] = self.callback
        root = Root("", self.client.tenant, "group", texts, faults, with_callback, callbacks, caps={cap})
        if self.submit({"fanout": fanout}, root):
            self.counts.groups += 1
            self.counts.children += n

    def submit_single(self) -> None:
        pages = [f"{self.client.tenant}-{uuid.uuid4().hex[:10]}-p{p}" for p in range(self.rng.randint(1, 3))]
        options, fault = echo_options(self.rng, (50, 400))
        body: dict[str, Any] = {
            "model": "echo",
            "content_type": "text/plain",
            "payload": b64("\f".join(pages)),
            "options": options,
        }
        with_callback = self.rng.random() < 0.6
        if with_callback:
            body["callback_url"] = self.callback
        root = Root("", self.client.tenant, "single", ["\f".join(pages)], [fault], with_callback, set())
        if self.submit(body, root):
            self.counts.singles += 1

    def submit(self, body: dict[str, Any], root: Root) -> bool:
        """POSTs ``body`` until an answer comes, with one Idempotency-Key; only a 202's job is followed."""
        key = f"soak-{uuid.uuid4().hex}"
        response = self.client.call("POST", "/jobs", body, {"Idempotency-Key": key})
        if response is None:
            self.counts.unanswered += 1
            return False
        if response.status_code != 202:
            self.counts.refused.append(f"POST /jobs answered {response.status_code}: {response.text[:300]}")
            return False
        root.id = response.json()["id"]
        self.ledger.add(root)
        return True

    def patch(self, root: Root) -> None:
        if root.kind != "group":
            return
        cap = self.rng.randint(1, 5)
        root.caps.add(cap)  # before it is sent: it may be in force before the answer comes, or without one
        response = self.client.call("PATCH", f"/jobs/{root.id}", {"max_parallel": cap}, patience=30)
        if response is not None and response.status_code in (200, 409):
            self.counts.patches += response.status_code == 200

    def cancel(self, root: Root) -> None:
        target = root.id
        if root.kind == "group" and self.rng.random() < 0.5:
            index = self.rng.randrange(len(root.texts))
            root.cancelled_children.add(index)  # before it is sent, as for a PATCH
            target = keys.child_id(root.id, index)
            self.counts.child_cancels += 1
        else:
            root.cancel_asked = True
            self.counts.cancels += 1
        self.client.call("DELETE", f"/jobs/{target}", patience=30)


# -- the run --------------------------------------------------------------------------------------------


@dataclass
class SoakReport:
    seconds: float
    load: LoadCounts
    kills: Counter[str]
    exits: Counter[str]
    checked: dict[str, int]
    webhooks: dict[str, int]
    resent: int
    left_keys: list[str]
    violations: list[str]

    def summary(self) -> dict[str, Any]:
        return {
            "load_seconds": self.seconds,
            "jobs": {
                "groups": self.load.groups,
                "children": self.load.children,
                "singles": self.load.singles,
                "unanswered_submissions": self.load.unanswered,
            },
            "kills": dict(sorted(self.kills.items())),
            "kills_total": sum(self.kills.values()),
            "exited_on_their_own": dict(sorted(self.exits.items())),
            "cancels": {"roots": self.load.cancels, "children": self.load.child_cancels},
            "patches": self.load.patches,
            "checked": self.checked,
            "webhooks": self.webhooks,
            "requests_sent_again": self.resent,
            "keys_left": len(self.left_keys),
            "violations": len(self.violations),
        }


def run_soak(work_dir: Path, seconds: float, kill_every: float = 3.0, seed: int | None = None) -> SoakReport:
    """Runs the soak for ``seconds`` of load; see the module's docstring."""
    rng = random.Random(seed)
    with Receiver() as receiver:
        deployment = Deployment(work_dir, ENV)
        try:
            deployment.start()
            return _soak(deployment, receiver, seconds, kill_every, rng)
        finally:
            deployment.close()


def _soak(deployment: Deployment, receiver: Receiver, seconds: float, kill_every: float, rng: random.Random):
    ledger = Ledger()
    stop_load = threading.Event()
    clients = {t: Client(deployment, t, random.Random(rng.random())) for t in TENANTS}
    checker = Checker(ledger, {t: Client(deployment, t, random.Random(rng.random())) for t in TENANTS}, rng)
    loads = [Load(c, ledger, receiver.url(f"/hook/{t}"), stop_load) for t, c in clients.items()]
    monkey = ChaosMonkey(deployment, kill_every, random.Random(rng.random()))
    watcher = ClaimWatcher(deployment)
    for thread in (checker, monkey, watcher, *loads):
        thread.start()
    began = time.monotonic()
    stop_load.wait(seconds)
    stop_load.set()
    for load in loads:
        load.join()
    monkey.stop.set()
    monkey.join()
    loaded = time.monotonic() - began
    deployment.revive()
    deployment.wait_ready()
    checker.finish()
    checker.join()
    errors: list[tuple[str, BaseException | None]] = [(t.name, t.error) for t in loads]
    errors += [(monkey.name, monkey.error), (checker.name, checker.error), (watcher.name, watcher.error)]
    violations = [f"{name} raised {error!r}" for name, error in errors if error is not None]
    violations += [v for load in loads for v in load.counts.refused]
    violations += checker.violations
    violations += [e for c in (*clients.values(), *checker.clients.values()) for e in c.server_errors]
    webhooks, lost = checker.check_webhooks(receiver, watcher.stuck)
    watcher.stop.set()
    watcher.join()
    violations += lost
    left = wait_for_empty_keyspace(deployment)
    violations += [f"key left after the retention: {k}" for k in left]
    return SoakReport(
        seconds=round(loaded, 1),
        load=_sum_counts([load.counts for load in loads]),
        kills=monkey.kills,
        exits=monkey.exits,
        checked=checker.numbers(),
        webhooks=webhooks,
        resent=sum(c.resent for c in (*clients.values(), *checker.clients.values())),
        left_keys=left,
        violations=violations,
    )


def _sum_counts(counts: list[LoadCounts]) -> LoadCounts:
    total = LoadCounts()
    for c in counts:
        for name in ("groups", "children", "singles", "unanswered", "cancels", "child_cancels", "patches"):
            setattr(total, name, getattr(total, name) + getattr(c, name))
        total.refused += c.refused
    return total


def wait_for_empty_keyspace(deployment: Deployment, margin: float = 60.0) -> list[str]:
    """Waits for every ``ocrgw:*`` key but the allowed ones to go; returns those still there after
    the retention and ``margin`` seconds (the sweep deletes an ended root once its retention is over)."""
    deadline = time.monotonic() + RESULT_TTL + margin
    while True:
        left = _disallowed_keys(deployment.redis)
        if not left or time.monotonic() >= deadline:
            return left
        time.sleep(1.0)


def _disallowed_keys(server: RedisServer) -> list[str]:
    with server.client(0) as client:
        names = [k.decode() for k in client.scan_iter(match=f"{keys.NAMESPACE}:*", count=1000)]
        ttls = [client.pttl(name) for name in names]
    return sorted(name for name, ttl in zip(names, ttls, strict=True) if not allowed_key(name, ttl))


def format_report(report: SoakReport) -> str:
    lines = [json.dumps(report.summary(), indent=2)]
    lines += [f"VIOLATION: {v}" for v in itertools.islice(report.violations, 50)]
    return "\n".join(lines)
