"""Where a family of processes keeps its metrics, and how they are exposed.

gunicorn's workers and a Celery worker's pool processes each count their
own events, but a scrape reaches one of them: prometheus_client's
multiprocess mode has every process write its values to files in one
directory (``PROMETHEUS_MULTIPROC_DIR``), and the exposition sums the
files of the directory, the processes that died included (a counter does
not go back when a worker is replaced).

Each family gets a fresh directory of its own, ``<OCRGW_METRICS_DIR>/<role>-<pid>``
(the temp dir's ``ocrgw-metrics`` by default), made by its first process
(gunicorn's master, a Celery worker's main process) before any metric
exists, so that the processes it forks inherit it.  Of its own, because
two families sharing one would each expose the other's counts: a gateway
and a worker on one host would be counted twice.  Fresh, because files left
by an earlier run would add its counts to this one's.  Directories of
families whose process is gone are removed when the next one starts.
"""

from __future__ import annotations

import errno
import os
import re
import shutil
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from jobs.config import Settings
from observability import metrics

ENV = "PROMETHEUS_MULTIPROC_DIR"
BASE_NAME = "ocrgw-metrics"
#: The families: the Procfile's processes that keep metrics.
ROLES = ("web", "worker", "coordinator", "webhooks")
_FAMILY = re.compile(rf"(?:{'|'.join(ROLES)})-([0-9]+)")

_own: dict[str, Any] = {}  # the directory this process made, and its pid


def base_directory(settings: Settings) -> Path:
    return Path(settings.metrics_dir) if settings.metrics_dir else Path(tempfile.gettempdir()) / BASE_NAME


def use_directory(role: str, settings: Settings) -> Path:
    """Makes a fresh directory for this process and those it forks; call it before any metric exists."""
    if role not in ROLES:
        raise ValueError(f"no such family of processes: {role!r}")
    if metrics.created():
        raise RuntimeError("a metric was recorded before the process chose where metrics live")
    base = base_directory(settings)
    base.mkdir(parents=True, exist_ok=True)
    remove_abandoned(base)
    directory = base / f"{role}-{os.getpid()}"
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir()
    os.environ[ENV] = str(directory)
    _own.update(directory=directory, pid=os.getpid())
    _values_follow_the_environment()
    return directory


def _values_follow_the_environment() -> None:
    # prometheus_client picks its value class when first imported; if something imported it
    # before the directory was chosen, it picks again (no metric of ocrgw exists yet: checked above).
    import sys

    values = sys.modules.get("prometheus_client.values")
    if values is not None:
        values.ValueClass = values.get_value_class()  # type: ignore[attr-defined]


def remove_abandoned(base: Path) -> None:
    """Removes the directories whose process has exited (killed ones leave theirs behind).

    Only directories this module makes: ``<role>-<pid>`` holding metrics files and nothing else,
    whatever else the base directory holds.
    """
    for entry in base.iterdir():
        found = _FAMILY.fullmatch(entry.name)
        if found is None or not entry.is_dir() or _alive(int(found[1])):
            continue
        if all(f.is_file() and f.suffix == ".db" for f in entry.iterdir()):
            shutil.rmtree(entry, ignore_errors=True)


def remove_own_directory() -> None:
    """At the end of the process that made it (not of a child that inherited the call)."""
    if _own and _own["pid"] == os.getpid():
        shutil.rmtree(_own["directory"], ignore_errors=True)


def mark_dead(pid: int) -> None:
    """A worker of the family exited: its live gauges go; its counters stay, as counters do."""
    if os.environ.get(ENV):
        from prometheus_client import multiprocess as prometheus_multiprocess

        prometheus_multiprocess.mark_process_dead(pid)


def in_use() -> bool:
    return bool(os.environ.get(ENV))


def exposition_registry(extra: Iterable[Any] = ()) -> Any:
    """A registry that exposes the family's metrics (or this process's own, outside multiprocess mode)
    and the ``extra`` collectors."""
    from prometheus_client import CollectorRegistry
    from prometheus_client.multiprocess import MultiProcessCollector

    # No auto-describe: registering would otherwise run every collector once, store reads included.
    out = CollectorRegistry(auto_describe=False)
    if in_use():
        MultiProcessCollector(out)
    else:
        out.register(metrics.registry())
    for collector in extra:
        out.register(collector)
    return out


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except OSError as error:
        return error.errno == errno.EPERM
    return True
