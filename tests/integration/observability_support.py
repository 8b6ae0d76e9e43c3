"""The Procfile's processes, run as the Procfile runs them, for the metrics, logs and Flower tests.

These tests check what an operator sees, so the commands are read from the
Procfile itself (gunicorn with its config module, beat ``--quiet``...), with
only what a test must change: loopback ports, node names, the schedule
file, the log levels that show readiness, and the settings of ``env``.
``scrape`` reads a /metrics answer with prometheus_client's own parser.
"""

from __future__ import annotations

import urllib.request
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

from bench.processes import procfile_argv, set_option
from tests.harness import BEAT_READY, CELERY_READY, Proc, ProcGroup, WebProc, free_port, uniq

WAIT = 90.0  # bounds a hang; asserts no speed
#: What a test's Celery processes skip: neighbours they would wait for at start.
QUIET_START = ("--without-gossip", "--without-mingle", "--without-heartbeat")

_no_proxy = urllib.request.build_opener(urllib.request.ProxyHandler({}))


@dataclass
class ProcfileStack:
    """Processes of the Procfile against one database, each with the env it was given."""

    group: ProcGroup
    db: int
    env: dict[str, str]
    procs: dict[str, Proc] = field(default_factory=dict)
    ports: dict[str, int] = field(default_factory=dict)

    def process_env(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        url = self.group.url(self.db)
        return {"REDIS_URL": url, "CELERY_BROKER_URL": url, **self.env, **(extra or {})}

    def celery(self, name: str, *, metrics_env: str | None = None, quiet_start: bool = True) -> Proc:
        """worker, coordinator, webhooks or beat, started (call ``ready`` to wait for it).

        ``quiet_start=False`` keeps the Procfile's own options: gossip and heartbeat on, as a
        deployment runs them, which is what lets Flower turn task events on.
        """
        env = self.process_env(
            {"OCRGW_COORDINATOR_LOGLEVEL": "INFO", "OCRGW_BEAT_LOGLEVEL": "INFO", "OCRGW_WEBHOOKS_LOGLEVEL": "INFO"}
        )
        if metrics_env is not None:
            self.ports[name] = free_port()
            env[metrics_env] = str(self.ports[name])
        argv = procfile_argv(name, env)
        if name == "beat":
            argv = set_option(argv, "--schedule", str(self.group.work_dir / f"beat-{uniq()}"))
        else:
            argv = set_option(argv, "--hostname", f"{name}-{uniq()}@%h") + list(QUIET_START if quiet_start else ())
        self.procs[name] = self.group.start(name, argv, env=env, wait=False)
        return self.procs[name]

    def web(self, *, workers: int = 2, extra_args: Iterable[str] = ()) -> WebProc:
        port = free_port()
        env = self.process_env({"PORT": str(port), "WEB_CONCURRENCY": str(workers)})
        argv = set_option(procfile_argv("web", env), "--bind", f"127.0.0.1:{port}")
        argv[3:3] = ["--no-control-socket", *extra_args]
        web = self.group.start("web", argv, env=env, proc_class=WebProc, port=port, wait=False)
        self.procs["web"] = web
        return web  # type: ignore[return-value]

    def ready(self) -> ProcfileStack:
        for name, proc in self.procs.items():
            if name == "web":
                proc.wait_ready(proc.healthy, WAIT)  # type: ignore[attr-defined]
            elif name == "beat":
                proc.wait_ready(BEAT_READY, WAIT)
            else:
                proc.wait_ready(CELERY_READY, WAIT)
        return self

    def metrics_url(self, name: str) -> str:
        if name == "web":
            return f"{self.procs['web'].base_url}/metrics"  # type: ignore[attr-defined]
        return f"http://127.0.0.1:{self.ports[name]}/metrics"

    def logs(self) -> dict[str, str]:
        return {name: proc.log_text() for name, proc in self.procs.items()}


def get(url: str, timeout: float = WAIT) -> tuple[int, str, str]:
    """(status, content type, body) of a GET; the timeout bounds a hang (a gunicorn worker booting, say)."""
    with _no_proxy.open(url, timeout=timeout) as response:
        return response.status, response.headers.get("Content-Type", ""), response.read().decode()


def scrape(url: str) -> dict[tuple[str, tuple], float]:
    """A /metrics answer, parsed: (sample name, sorted labels) -> value."""
    status, content_type, body = get(url)
    assert status == 200 and content_type.startswith("text/plain"), (status, content_type)
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(body)
        for s in family.samples
    }


def value(samples: Mapping[tuple[str, tuple], float], name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def metrics_dirs(base: Path, role: str) -> list[Path]:
    return sorted(p for p in base.iterdir() if p.name.startswith(f"{role}-"))
