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
import shutil
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from jobs.config import Settings
from observability import metrics

ENV = "PROMETHEUS_MULTIPROC_DIR"
BASE_NAME = "ocrgw-metrics"

_own: dict[str, Any] = {}  # the directory this process made, and its pid


def base_directory(settings: Settings) -> Path:
    return Path(settings.metrics_dir) if settings.metrics_dir else Path(tempfile.gettempdir()) / BASE_NAME


def use_directory(role: str, settings: Settings) -> Path:
    """Makes a fresh directory for this process and those it forks; call it before any metric exists."""
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
    """Removes the directories whose process has exited (killed ones leave theirs behind)."""
    for entry in base.iterdir():
        _role, _, pid = entry.name.rpartition("-")
        if entry.is_dir() and pid.isdigit() and not _alive(int(pid)):
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
